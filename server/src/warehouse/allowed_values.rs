//! The allowed-values provider (F17): the distinct values of low-cardinality text
//! columns, read from the clinical database and cached.
//!
//! - **Loaded with `SELECT DISTINCT`**, sorted by byte order on both backends, capped
//!   ([`AllowedValuesConfig::cap`], 500 by default). Past the cap the first values are
//!   kept, a warning is logged and the attribute is marked `truncated`, so the engine
//!   turns fuzzy matching off for it.
//! - **Cached with a TTL**; a read past the TTL is *stale-while-revalidate*: it returns
//!   the old values at once and starts exactly one background refresh, however many
//!   readers arrive at the same time. The first read of a column waits for its load,
//!   and concurrent first reads share one query.
//! - **Never an error because of the database**: when it cannot be reached, a warning is
//!   logged and the last known values are served, or the static fallback values given at
//!   construction. Failed loads are retried no more often than
//!   [`AllowedValuesConfig::retry_after`], and never while a reader waits.
//! - **Identifiers, never user text**: identifiers cannot be bound as parameters, so the
//!   provider only ever queries the columns registered at construction (the allow-list,
//!   taken from the semantic model), each checked against `^[a-z_][a-z0-9_]*$` and
//!   quoted. Anything else is refused before any SQL exists.
//! - **Time is injected** through [`Clock`], so tests move time forward by hand.
//!
//! What it must not do: write to the database, log values, or make a question fail.
//! The pure engine never calls it; the orchestrator hands the engine a snapshot
//! ([`AllowedValuesProvider::snapshot_all`]), taken once per question.

use crate::db::Database;
use crate::semantic::SemanticModel;
pub use crate::semantic::schema::is_valid_identifier;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};
use thiserror::Error;
use tokio::task::JoinSet;

/// Tuning for the provider; [`Default`] gives the production values.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AllowedValuesConfig {
    /// How long loaded values count as fresh.
    pub ttl: Duration,
    /// Most values kept per column; past it the column is marked truncated.
    pub cap: usize,
    /// Longest a load may take (connection included) before it counts as failed.
    pub load_timeout: Duration,
    /// After a failed load, how long to wait before trying the database again.
    pub retry_after: Duration,
}

impl Default for AllowedValuesConfig {
    fn default() -> Self {
        AllowedValuesConfig {
            ttl: Duration::from_secs(300),
            cap: 500,
            load_timeout: Duration::from_secs(2),
            retry_after: Duration::from_secs(30),
        }
    }
}

/// A source of "now", injectable so that tests control time.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current instant.
    fn now(&self) -> Instant;
}

/// The real monotonic clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }
}

/// A clock that only moves when told to (for tests).
#[derive(Debug)]
pub struct ManualClock {
    start: Instant,
    offset: Mutex<Duration>,
}

impl ManualClock {
    /// A clock standing at the current instant.
    pub fn new() -> Self {
        ManualClock {
            start: Instant::now(),
            offset: Mutex::new(Duration::ZERO),
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        *self.offset.lock().unwrap_or_else(|e| e.into_inner()) += by;
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        self.start + *self.offset.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A validated `table.column` pair: both parts match `^[a-z_][a-z0-9_]*$`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ColumnRef {
    table: String,
    column: String,
}

impl ColumnRef {
    /// Validates both identifiers; hostile or malformed names are refused.
    pub fn new(table: &str, column: &str) -> Result<Self, AllowedValuesError> {
        for name in [table, column] {
            if !is_valid_identifier(name) {
                return Err(AllowedValuesError::InvalidIdentifier(name.to_string()));
            }
        }
        Ok(ColumnRef {
            table: table.to_string(),
            column: column.to_string(),
        })
    }

    /// The table name.
    pub fn table(&self) -> &str {
        &self.table
    }

    /// The column name.
    pub fn column(&self) -> &str {
        &self.column
    }
}

impl fmt::Display for ColumnRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.table, self.column)
    }
}

/// Double-quotes an identifier. Only ever called on a [`ColumnRef`] part, which
/// cannot contain a quote; the quotes keep reserved words (`order`, `group`) working.
fn quote(ident: &str) -> String {
    debug_assert!(is_valid_identifier(ident));
    format!("\"{ident}\"")
}

/// One column the provider serves, with the static values to fall back on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnSpec {
    pub table: String,
    pub column: String,
    /// Served when the database has never answered (may be empty).
    pub fallback: Vec<String>,
}

impl ColumnSpec {
    /// A column with no static fallback values.
    pub fn new(table: &str, column: &str) -> Self {
        ColumnSpec {
            table: table.into(),
            column: column.into(),
            fallback: Vec::new(),
        }
    }

    /// The same column with static fallback values.
    pub fn with_fallback<I, S>(mut self, values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.fallback = values.into_iter().map(Into::into).collect();
        self
    }

    /// The model's database-sourced columns (`allowed = { source = "database" }`), each
    /// falling back on the text values the model already knows for it. A column named
    /// by two attributes is listed once.
    pub fn from_model(model: &SemanticModel) -> Vec<ColumnSpec> {
        let mut out: Vec<ColumnSpec> = Vec::new();
        for dc in model.database_sourced() {
            if out.iter().any(|c| c.table == dc.table && c.column == dc.column) {
                continue;
            }
            let known = model
                .allowed_values(&dc.attribute)
                .map(|a| a.listed())
                .unwrap_or_default();
            let fallback = known.iter().filter_map(|v| v.value.as_str().map(str::to_owned));
            out.push(ColumnSpec::new(&dc.table, &dc.column).with_fallback(fallback));
        }
        out
    }
}

/// Where a set of allowed values came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueSource {
    /// Loaded from the database within the TTL.
    Fresh,
    /// Older than the TTL; a refresh is under way or about to be retried.
    Stale,
    /// The database could not be reached at the last attempt; these are the last
    /// values it returned.
    LastKnown,
    /// The database has never answered for this column; these are the static values
    /// from the model (possibly none).
    Fallback,
}

/// The allowed values of one column as seen at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnValues {
    /// Distinct non-null values, sorted by byte order.
    pub values: Arc<[String]>,
    pub source: ValueSource,
    /// More distinct values exist than the cap; fuzzy matching must be off.
    pub truncated: bool,
}

impl ColumnValues {
    /// Whether the engine may fuzzy-match user words against these values.
    pub fn fuzzy_matching_allowed(&self) -> bool {
        !self.truncated
    }

    /// Whether `value` is one of the values (exact match).
    pub fn contains(&self, value: &str) -> bool {
        self.values.binary_search_by(|v| v.as_str().cmp(value)).is_ok()
    }
}

/// Every registered column's values, keyed by `table.column`. The orchestrator turns
/// it into the engine's snapshot with `engine::AllowedValuesSnapshot::from_table_columns(
/// model, snap.iter().map(|(k, v)| (k.as_str(), &v.values[..], v.truncated)))`.
pub type ValuesByColumn = BTreeMap<String, ColumnValues>;

/// Misuse of the provider. Database trouble is never an error (see the module doc).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum AllowedValuesError {
    #[error("{0:?} is not a valid identifier (expected ^[a-z_][a-z0-9_]*$)")]
    InvalidIdentifier(String),
    #[error("{0} is not a database-sourced column of the model")]
    NotAllowed(String),
    #[error("{0} is registered twice")]
    Duplicate(String),
}

/// Counters for tests and `/metrics`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllowedValuesStats {
    /// Reads answered from fresh cached values.
    pub hits: u64,
    /// Reads that found nothing cached and had to wait for a load.
    pub misses: u64,
    /// Reads answered with stale or last-known values.
    pub stale_reads: u64,
    /// Reads answered with the static fallback values.
    pub fallback_reads: u64,
    /// Background refreshes started.
    pub refreshes: u64,
    /// `SELECT DISTINCT` queries sent to the database.
    pub queries: u64,
    /// Loads that failed (unreachable database, timeout, missing table…).
    pub failures: u64,
}

#[derive(Debug, Default)]
struct Counters {
    hits: AtomicU64,
    misses: AtomicU64,
    stale_reads: AtomicU64,
    fallback_reads: AtomicU64,
    refreshes: AtomicU64,
    queries: AtomicU64,
    failures: AtomicU64,
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

/// Values from the last successful load.
#[derive(Debug, Clone)]
struct Known {
    values: Arc<[String]>,
    truncated: bool,
    loaded_at: Instant,
}

#[derive(Debug, Default)]
struct SlotState {
    known: Option<Known>,
    /// When the last load failed, if it failed after the last success.
    failed_at: Option<Instant>,
}

/// Everything about one registered column.
#[derive(Debug)]
struct Slot {
    column: ColumnRef,
    fallback: Arc<[String]>,
    /// Short critical sections only; never held across an `.await`.
    state: RwLock<SlotState>,
    /// Set while a background refresh is in flight: guarantees a single one.
    refreshing: AtomicBool,
    /// Serialises the waiting first load so concurrent first reads share one query.
    first_load: tokio::sync::Mutex<()>,
}

impl Slot {
    fn read_state(&self) -> std::sync::RwLockReadGuard<'_, SlotState> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write_state(&self) -> std::sync::RwLockWriteGuard<'_, SlotState> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }
}

#[derive(Debug)]
struct Inner {
    db: Database,
    config: AllowedValuesConfig,
    clock: Arc<dyn Clock>,
    slots: BTreeMap<ColumnRef, Arc<Slot>>,
    counters: Counters,
    /// Background refreshes; a std mutex because it is never held across an `.await`.
    tasks: Mutex<JoinSet<()>>,
}

/// The cached allowed values of the model's database-sourced columns. Cheap to clone.
#[derive(Clone, Debug)]
pub struct AllowedValuesProvider {
    inner: Arc<Inner>,
}

/// What a read decided while holding the state lock.
enum Decision {
    Serve(ColumnValues, bool),
    Load,
}

impl AllowedValuesProvider {
    /// A provider over `db` for exactly these columns (the allow-list), on the system clock.
    pub fn new(
        db: Database,
        columns: impl IntoIterator<Item = ColumnSpec>,
        config: AllowedValuesConfig,
    ) -> Result<Self, AllowedValuesError> {
        Self::with_clock(db, columns, config, Arc::new(SystemClock))
    }

    /// As [`Self::new`], reading time from `clock`.
    pub fn with_clock(
        db: Database,
        columns: impl IntoIterator<Item = ColumnSpec>,
        config: AllowedValuesConfig,
        clock: Arc<dyn Clock>,
    ) -> Result<Self, AllowedValuesError> {
        let mut slots = BTreeMap::new();
        for spec in columns {
            let column = ColumnRef::new(&spec.table, &spec.column)?;
            let mut fallback = spec.fallback;
            fallback.sort();
            fallback.dedup();
            let slot = Slot {
                column: column.clone(),
                fallback: fallback.into(),
                state: RwLock::new(SlotState::default()),
                refreshing: AtomicBool::new(false),
                first_load: tokio::sync::Mutex::new(()),
            };
            if slots.insert(column.clone(), Arc::new(slot)).is_some() {
                return Err(AllowedValuesError::Duplicate(column.to_string()));
            }
        }
        let inner = Inner {
            db,
            config,
            clock,
            slots,
            counters: Counters::default(),
            tasks: Mutex::new(JoinSet::new()),
        };
        Ok(AllowedValuesProvider {
            inner: Arc::new(inner),
        })
    }

    /// The registered columns, in `table.column` order.
    pub fn columns(&self) -> impl Iterator<Item = &ColumnRef> {
        self.inner.slots.keys()
    }

    /// The allowed values of one registered column. Only misuse is an error: a name
    /// that is not a valid identifier or not registered. The database being down is not.
    pub async fn get(&self, table: &str, column: &str) -> Result<ColumnValues, AllowedValuesError> {
        let key = ColumnRef::new(table, column)?;
        let slot = self
            .inner
            .slots
            .get(&key)
            .ok_or_else(|| AllowedValuesError::NotAllowed(key.to_string()))?;
        Ok(self.read_slot(slot).await)
    }

    /// Every registered column's values (loading those never loaded): what the
    /// orchestrator hands to the engine, keyed by `table.column`.
    pub async fn snapshot_all(&self) -> ValuesByColumn {
        let mut out = BTreeMap::new();
        for (key, slot) in &self.inner.slots {
            out.insert(key.to_string(), self.read_slot(slot).await);
        }
        out
    }

    /// Loads every registered column now, waiting for each (e.g. at startup).
    pub async fn refresh_all(&self) {
        for slot in self.inner.slots.values() {
            load_into(&self.inner, slot).await;
        }
    }

    /// Waits until every background refresh started so far has finished.
    pub async fn settle(&self) {
        loop {
            // Taken out of the mutex so readers can start new refreshes meanwhile.
            let mut tasks = std::mem::take(&mut *lock(&self.inner.tasks));
            if tasks.is_empty() {
                return;
            }
            while tasks.join_next().await.is_some() {}
        }
    }

    /// The counters so far.
    pub fn stats(&self) -> AllowedValuesStats {
        let c = &self.inner.counters;
        let get = |a: &AtomicU64| a.load(Ordering::Relaxed);
        AllowedValuesStats {
            hits: get(&c.hits),
            misses: get(&c.misses),
            stale_reads: get(&c.stale_reads),
            fallback_reads: get(&c.fallback_reads),
            refreshes: get(&c.refreshes),
            queries: get(&c.queries),
            failures: get(&c.failures),
        }
    }

    async fn read_slot(&self, slot: &Arc<Slot>) -> ColumnValues {
        match self.decide(slot) {
            Decision::Serve(values, refresh) => {
                if refresh {
                    self.spawn_refresh(slot);
                }
                values
            }
            Decision::Load => {
                let _guard = slot.first_load.lock().await;
                // Another reader may have finished the load while this one waited.
                if let Decision::Serve(values, refresh) = self.decide(slot) {
                    if refresh {
                        self.spawn_refresh(slot);
                    }
                    return values;
                }
                bump(&self.inner.counters.misses);
                load_into(&self.inner, slot).await;
                let state = slot.read_state();
                match &state.known {
                    Some(k) => fresh(k),
                    None => fallback(slot),
                }
            }
        }
    }

    /// Looks at the cached state and decides what to serve and whether to refresh.
    fn decide(&self, slot: &Slot) -> Decision {
        let inner = &self.inner;
        let now = inner.clock.now();
        let state = slot.read_state();
        let may_retry = |failed_at: Option<Instant>| {
            failed_at.is_none_or(|t| now.saturating_duration_since(t) >= inner.config.retry_after)
        };
        match (&state.known, state.failed_at) {
            (Some(k), failed_at) => {
                if failed_at.is_none() && now.saturating_duration_since(k.loaded_at) < inner.config.ttl {
                    bump(&inner.counters.hits);
                    return Decision::Serve(fresh(k), false);
                }
                bump(&inner.counters.stale_reads);
                let source = if failed_at.is_some() {
                    ValueSource::LastKnown
                } else {
                    ValueSource::Stale
                };
                let values = ColumnValues {
                    values: k.values.clone(),
                    source,
                    truncated: k.truncated,
                };
                Decision::Serve(values, may_retry(failed_at))
            }
            (None, Some(failed_at)) => {
                bump(&inner.counters.fallback_reads);
                Decision::Serve(fallback(slot), may_retry(Some(failed_at)))
            }
            (None, None) => Decision::Load,
        }
    }

    /// Starts a background refresh unless one is already in flight for this column.
    fn spawn_refresh(&self, slot: &Arc<Slot>) {
        if slot
            .refreshing
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        bump(&self.inner.counters.refreshes);
        let inner = Arc::clone(&self.inner);
        let slot = Arc::clone(slot);
        let mut tasks = lock(&self.inner.tasks);
        // Reap finished refreshes so the set does not grow without bound.
        while tasks.try_join_next().is_some() {}
        tasks.spawn(async move {
            // Cleared on drop, so even a panicking load cannot block refreshes for good.
            let _clear = ClearOnDrop(&slot.refreshing);
            load_into(&inner, &slot).await;
        });
    }
}

/// Resets a flag when dropped.
struct ClearOnDrop<'a>(&'a AtomicBool);

impl Drop for ClearOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn fresh(k: &Known) -> ColumnValues {
    ColumnValues {
        values: k.values.clone(),
        source: ValueSource::Fresh,
        truncated: k.truncated,
    }
}

fn fallback(slot: &Slot) -> ColumnValues {
    ColumnValues {
        values: slot.fallback.clone(),
        source: ValueSource::Fallback,
        truncated: false,
    }
}

/// Loads one column and records the outcome in its slot. Never fails: a failure is
/// logged and remembered so that reads degrade to the last known or static values.
async fn load_into(inner: &Inner, slot: &Slot) {
    bump(&inner.counters.queries);
    let cap = inner.config.cap;
    let outcome = tokio::time::timeout(inner.config.load_timeout, load_distinct(inner, &slot.column)).await;
    let now = inner.clock.now();
    let result = match outcome {
        Ok(Ok(values)) => Ok(values),
        Ok(Err(e)) => Err(one_line(&e)),
        Err(_) => Err(format!("timed out after {:?}", inner.config.load_timeout)),
    };
    match result {
        Ok(mut values) => {
            let truncated = values.len() > cap;
            if truncated {
                values.truncate(cap);
                tracing::warn!(
                    column = %slot.column,
                    cap,
                    "allowed values exceed the cap; keeping the first {cap} and disabling fuzzy matching"
                );
            }
            let mut state = slot.write_state();
            state.known = Some(Known {
                values: values.into(),
                truncated,
                loaded_at: now,
            });
            state.failed_at = None;
        }
        Err(reason) => {
            bump(&inner.counters.failures);
            let mut state = slot.write_state();
            let serving = if state.known.is_some() {
                "the last known values"
            } else {
                "the static values"
            };
            tracing::warn!(column = %slot.column, %reason, "cannot load allowed values; serving {serving}");
            state.failed_at = Some(now);
        }
    }
}

/// `SELECT DISTINCT` of one validated column, at most `cap + 1` values, in byte order.
async fn load_distinct(inner: &Inner, column: &ColumnRef) -> Result<Vec<String>, sqlx::Error> {
    let (t, c) = (quote(column.table()), quote(column.column()));
    let limit = i64::try_from(inner.config.cap).unwrap_or(i64::MAX - 1) + 1;
    let mut values: Vec<String> = match &inner.db {
        Database::Sqlite(pool) => {
            // SQLite compares text by bytes (BINARY) unless told otherwise.
            let sql = format!(
                "SELECT DISTINCT CAST({c} AS TEXT) AS v FROM {t} WHERE {c} IS NOT NULL ORDER BY v LIMIT $1"
            );
            sqlx::query_scalar(&sql).bind(limit).fetch_all(pool).await?
        }
        Database::Postgres(pool) => {
            // COLLATE "C" gives the same byte order as SQLite, whatever the locale.
            let sql = format!(
                "SELECT DISTINCT CAST({c} AS TEXT) COLLATE \"C\" AS v FROM {t} WHERE {c} IS NOT NULL \
                 ORDER BY v LIMIT $1"
            );
            let timeout_ms = inner.config.load_timeout.as_millis().to_string();
            let mut tx = pool.begin().await?;
            sqlx::query("SET TRANSACTION READ ONLY").execute(&mut *tx).await?;
            sqlx::query("SELECT set_config('statement_timeout', $1, true)")
                .bind(timeout_ms)
                .execute(&mut *tx)
                .await?;
            let rows = sqlx::query_scalar(&sql).bind(limit).fetch_all(&mut *tx).await?;
            tx.commit().await?;
            rows
        }
    };
    // Already ordered by the database; sorting again makes the order independent of it.
    values.sort();
    values.dedup();
    Ok(values)
}

fn one_line(e: &dyn fmt::Display) -> String {
    e.to_string().split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_lowercase_snake_case_only() {
        let cases = [
            ("wounds", true),
            ("_private", true),
            ("area_cm2", true),
            ("", false),
            ("2fast", false),
            ("Wounds", false),
            ("tissueType", false),
            ("status\"; DROP TABLE users; --", false),
            ("a b", false),
            ("wounds.status", false),
            ("naïve", false),
            (&"x".repeat(64), false),
            (&"x".repeat(63), true),
        ];
        for (name, ok) in cases {
            assert_eq!(is_valid_identifier(name), ok, "{name:?}");
        }
    }

    #[test]
    fn a_column_ref_refuses_hostile_names_and_quotes_good_ones() {
        assert_eq!(
            ColumnRef::new("wounds", "status; --"),
            Err(AllowedValuesError::InvalidIdentifier("status; --".into()))
        );
        let c = ColumnRef::new("order", "group").unwrap();
        assert_eq!(c.to_string(), "order.group");
        assert_eq!(quote(c.table()), "\"order\"");
    }

    #[test]
    fn a_manual_clock_moves_only_when_advanced() {
        let clock = ManualClock::new();
        let t0 = clock.now();
        assert_eq!(clock.now(), t0);
        clock.advance(Duration::from_secs(301));
        assert_eq!(clock.now() - t0, Duration::from_secs(301));
    }

    #[test]
    fn truncated_values_disable_fuzzy_matching_and_lookup_is_exact() {
        let v = ColumnValues {
            values: vec!["healed".to_string(), "open".to_string()].into(),
            source: ValueSource::Fresh,
            truncated: true,
        };
        assert!(!v.fuzzy_matching_allowed());
        assert!(v.contains("open") && !v.contains("Open"));
    }
}
