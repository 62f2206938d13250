//! An answer's rows, kept per (statement, clinical change version), so the same
//! question over unchanged clinical data is not run again.
//!
//! **The version.** The migrations of the demo schema keep a change counter,
//! `clinical_version.version`, that a trigger on every clinical table raises in the same
//! transaction as each change: on SQLite one per row inserted, updated or deleted
//! (`clinical_version_<table>_ins|upd|del`), on PostgreSQL one per `INSERT`, `UPDATE`,
//! `DELETE` or `TRUNCATE` statement (`clinical_version_bump`, enabled `ALWAYS`, so
//! logical replication and `session_replication_role = replica` count too). Every answer
//! reads the counter and, in the same statement, checks that those triggers are still in
//! place on every table of the semantic model (SQLite: each named trigger on its table,
//! with the counter's update in its text; PostgreSQL: the trigger on each table, after
//! every statement, for all four events, enabled `ALWAYS`). Only then may rows kept at
//! that number be reused; otherwise (no counter, a trigger missing or disabled, a failed
//! read) the answer's statement runs as if there were no cache. The counter is read
//! before the statement runs, so kept rows are never older than the counter that keys
//! them; a change committed meanwhile only makes them newer, and the next answer reads the
//! higher number and runs again.
//!
//! **What it cannot see**, and therefore the time to live (`CLARION_ANSWER_CACHE_TTL_SECS`,
//! default 60 s: no rows are reused longer than that, whatever the counter says): a change
//! made while the triggers were switched off for that connection (SQLite's
//! `SQLITE_DBCONFIG_ENABLE_TRIGGER` set off by another program; PostgreSQL has no
//! per-session switch for an `ALWAYS` trigger); a trigger or its function replaced by one
//! of the same name that does not raise the counter; the database file (SQLite) or the
//! database (PostgreSQL, e.g. a restore) replaced by one whose counter happens to equal the
//! kept one with other rows; the clinical tables written in a schema other than the one
//! Clarion reads through its search path with the same names. Clarion's own summaries
//! (`crate::warehouse::summary`) are not clinical tables and raise nothing: an answer read
//! from them has the same rows as the live query. A database without the counter (tables
//! Clarion did not create) never reuses an answer.
//!
//! Kept rows are shared by concurrent askers of the same statement (one run), at most
//! `CLARION_ANSWER_CACHE_CAP` of them (default 100; `0` turns the cache off). A failed or
//! timed-out statement is never kept. The key is the rendered statement with its bound
//! values (and the columns' types the cells are decoded by), so another question, scope (the
//! user's clinics are part of the statement), date or row cap is another entry.

use super::count_cache::{CountCacheConfig, VersionedCache};
use super::exec::{ExecError, QueryRows, Warehouse};
use crate::db::Database;
use crate::sql::Rendered;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Bounds of the answer cache.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AnswerCacheConfig {
    /// Longest an answer's rows are reused (`CLARION_ANSWER_CACHE_TTL_SECS`).
    pub ttl: Duration,
    /// Most answers kept (`CLARION_ANSWER_CACHE_CAP`); 0 turns the cache off.
    pub cap: usize,
}

impl Default for AnswerCacheConfig {
    fn default() -> Self {
        AnswerCacheConfig {
            ttl: Duration::from_secs(60),
            cap: 100,
        }
    }
}

/// The counter's name on PostgreSQL (one trigger of this name per clinical table).
const PG_TRIGGER: &str = "clinical_version_bump";

/// The trigger names SQLite must have for `tables` (insert, update, delete on each).
pub fn sqlite_trigger_names(tables: &[String]) -> Vec<String> {
    tables
        .iter()
        .flat_map(|t| ["ins", "upd", "del"].map(|e| format!("clinical_version_{t}_{e}")))
        .collect()
}

/// Reads the clinical change version, and whether every trigger raising it is in place.
#[derive(Clone, Debug)]
pub struct ClinicalVersion {
    db: Database,
    /// The semantic model's tables, sorted.
    tables: Vec<String>,
    /// SQLite: the trigger names, as a JSON array (bound).
    sqlite_names: String,
    /// Said once when the triggers are not all in place.
    warned: Arc<AtomicBool>,
}

/// SQLite: the counter, and how many of the expected triggers exist on their table with
/// the counter's update in their text.
const SQLITE_VERSION: &str = "SELECT (SELECT version FROM clinical_version WHERE id = 1), \
     (SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger' \
        AND name IN (SELECT value FROM json_each($1)) \
        AND name = 'clinical_version_' || tbl_name || '_' || substr(name, -3) \
        AND instr(sql, 'UPDATE clinical_version SET version = version + 1 WHERE id = 1') > 0)";

/// PostgreSQL: the counter, and on how many of the tables the trigger runs after every
/// INSERT, UPDATE, DELETE and TRUNCATE statement (tgtype 60: statement level, after,
/// those four events) and is enabled ALWAYS.
const PG_VERSION: &str = "SELECT (SELECT version FROM clinical_version WHERE id = 1), \
     (SELECT COUNT(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid \
        WHERE t.tgname = $2 AND t.tgenabled = 'A' AND (t.tgtype::int & 127) = 60 \
          AND c.relnamespace = to_regnamespace(current_schema()::text) AND c.relname = ANY($1))";

impl ClinicalVersion {
    pub fn new(db: Database, tables: impl IntoIterator<Item = String>) -> Self {
        let mut tables: Vec<String> = tables.into_iter().collect();
        tables.sort();
        tables.dedup();
        let sqlite_names = serde_json::to_string(&sqlite_trigger_names(&tables)).unwrap_or_default();
        ClinicalVersion {
            db,
            tables,
            sqlite_names,
            warned: Arc::default(),
        }
    }

    /// The counter when every trigger is in place; `None` otherwise (no cache then).
    pub async fn read(&self) -> Option<i64> {
        let read = match &self.db {
            Database::Sqlite(p) => sqlx::query_as::<_, (Option<i64>, i64)>(SQLITE_VERSION)
                .bind(&self.sqlite_names)
                .fetch_one(p)
                .await
                .map(|(v, n)| (v, n as usize == self.tables.len() * 3)),
            Database::Postgres(p) => sqlx::query_as::<_, (Option<i64>, i64)>(PG_VERSION)
                .bind(&self.tables)
                .bind(PG_TRIGGER)
                .fetch_one(p)
                .await
                .map(|(v, n)| (v, n as usize == self.tables.len())),
        };
        match read {
            Ok((Some(v), true)) if !self.tables.is_empty() => Some(v),
            Ok(_) => {
                if !self.warned.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "answers are not reused: the clinical change counter or one of its triggers \
                         is missing or disabled (see README, answer cache)"
                    );
                }
                None
            }
            Err(e) => {
                if !self.warned.swap(true, Ordering::Relaxed) {
                    tracing::warn!(error = %e, "answers are not reused: the clinical change counter was not read");
                }
                None
            }
        }
    }
}

/// See the module doc. Cheap to clone (shared).
#[derive(Clone, Debug)]
pub struct AnswerCache {
    rows: VersionedCache<Arc<QueryRows>>,
    version: ClinicalVersion,
    on: bool,
}

impl AnswerCache {
    pub fn new(config: AnswerCacheConfig, version: ClinicalVersion) -> Self {
        AnswerCache {
            rows: VersionedCache::new(CountCacheConfig {
                ttl: config.ttl,
                cap: config.cap,
            }),
            version,
            on: config.cap > 0,
        }
    }

    /// [`Warehouse::run`], or the rows it gave for the same statement at the same clinical
    /// change version. The flag says whether the rows were reused.
    pub async fn run(
        &self,
        warehouse: &Warehouse,
        rendered: &Rendered,
    ) -> (Result<QueryRows, ExecError>, bool) {
        if !self.on {
            return (warehouse.run(rendered).await, false);
        }
        let Some(version) = self.version.read().await else {
            return (warehouse.run(rendered).await, false);
        };
        // the cells are decoded by the columns' types: part of the key with the statement
        let types: Vec<_> = rendered.columns.iter().map(|c| c.ty).collect();
        let key = format!("{}\u{1f}{:?}\u{1f}{:?}", rendered.sql, rendered.values, types);
        let mut failed = None;
        let (kept, reused) = self
            .rows
            .lookup(key, &version.to_string(), async {
                match warehouse.run(rendered).await {
                    Ok(rows) => Some(Arc::new(rows)),
                    Err(e) => {
                        failed = Some(e);
                        None
                    }
                }
            })
            .await;
        match (kept, failed) {
            (Some(rows), _) => (Ok(QueryRows::clone(&rows)), reused),
            (None, Some(e)) => (Err(e), false),
            // a concurrent run of the same statement failed: this request runs its own
            (None, None) => (warehouse.run(rendered).await, false),
        }
    }

    /// Hits and misses so far.
    pub fn stats(&self) -> super::count_cache::CountCacheStats {
        self.rows.stats()
    }

    /// Answers kept now.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// True when nothing is kept.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }
}
