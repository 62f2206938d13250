//! Read-only execution of rendered plans against the clinical data: the answer's
//! query (row cap, time limit) and the option-count previews of a clarification round
//! (in parallel, each with its own short time limit, omitted when slow).
//!
//! Read-only is enforced by the database, not only by our code:
//! - SQLite: a separate pool opened with `read_only(true)` on the same file (an
//!   in-memory database, which another pool cannot see, falls back to the main pool;
//!   only tests use one). The time limit is a tokio timeout plus a progress
//!   handler that interrupts the statement at the deadline, so a runaway query does not
//!   keep a connection busy after the caller gave up.
//! - PostgreSQL: every statement runs in `BEGIN READ ONLY` with
//!   `SET LOCAL statement_timeout`, plus a tokio timeout as a backstop.
//!
//! What this module must not do: execute SQL text that did not come from
//! `crate::sql::render`, write anything, or log statement values (they can be patient
//! data). Results are decoded by the rendered column types, so both backends return
//! the same JSON cells. On SQLite an answer's rows are read through SQLite's C API
//! straight into those cells ([`super::sqlite_rows`]); counts go through sqlx.

use crate::db::Database;
use crate::semantic::AttributeType;
use crate::sql::{Rendered, bind};
use crate::warehouse::count_cache::CountCache;
use crate::warehouse::privilege::{ReadableTables, WAREHOUSE_ROLE};
use crate::warehouse::sqlite_rows::{self, Direct};
use serde_json::Value as Json;
use sqlx::postgres::PgRow;
use sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions, SqliteRow};
use sqlx::{Executor, PgPool, Row, SqlitePool};
use std::time::{Duration, Instant};

/// Limits for read-only execution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecLimits {
    /// Most rows returned to the user (one more is fetched to detect truncation).
    pub row_cap: u32,
    /// Longest an answer's statement may run.
    pub query_timeout: Duration,
    /// Longest one option-count preview may run before it is omitted.
    pub preview_timeout: Duration,
    /// Most statements at once on PostgreSQL, whose pool the warehouse shares with
    /// Clarion's own tables: the rest of the pool stays free for session look-ups.
    pub max_concurrent: usize,
}

impl Default for ExecLimits {
    fn default() -> Self {
        ExecLimits {
            row_cap: 1000,
            query_timeout: Duration::from_secs(5),
            preview_timeout: Duration::from_millis(300),
            max_concurrent: 10,
        }
    }
}

/// The rows of one executed statement.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryRows {
    /// Rows of JSON cells, in the rendered column order (at most the row cap).
    pub rows: Vec<Vec<Json>>,
    /// More rows matched than the cap allows (the extra row was dropped).
    pub truncated: bool,
    /// Time spent in the database (connection included).
    pub elapsed: Duration,
}

/// Why a statement produced no rows.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// It ran past its time limit and was cancelled.
    #[error("the query took longer than {0:?} and was stopped")]
    Timeout(Duration),
    /// The database refused or failed it (the message never contains bound values).
    #[error("database error: {0}")]
    Database(String),
}

#[derive(Clone, Debug)]
enum ReadPool {
    /// A read-only pool of its own (`dedicated`), or the main pool for in-memory
    /// databases (tests), where no authorizer can be installed.
    Sqlite { pool: SqlitePool, dedicated: bool },
    /// The main pool; each statement runs in a read-only transaction.
    Postgres(PgPool),
}

/// Read-only access to the clinical tables. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Warehouse {
    pool: ReadPool,
    limits: ExecLimits,
    /// PostgreSQL: permits for statements (`limits.max_concurrent`).
    permits: std::sync::Arc<tokio::sync::Semaphore>,
    /// The only tables statements may read (empty: no restriction, e.g. `introspect`).
    tables: ReadableTables,
    /// PostgreSQL: whether `clarion_warehouse` can be used (checked once).
    pg_role: std::sync::Arc<tokio::sync::OnceCell<bool>>,
}

/// How many SQLite virtual-machine steps run between deadline checks.
const PROGRESS_STEPS: i32 = 4_000;

impl Warehouse {
    /// Read-only access to the clinical tables in `db` (which holds them beside
    /// Clarion's own tables). Never blocks: the SQLite read-only pool connects lazily.
    pub fn new(db: &Database, limits: ExecLimits) -> Self {
        let pool = match db {
            Database::Postgres(p) => ReadPool::Postgres(p.clone()),
            Database::Sqlite(p) => {
                let base: SqliteConnectOptions = (*p.connect_options()).clone();
                let in_memory = base.get_filename().as_os_str().is_empty()
                    || base.get_filename().to_string_lossy().contains(":memory:");
                if in_memory {
                    ReadPool::Sqlite {
                        pool: p.clone(),
                        dedicated: false,
                    }
                } else {
                    // An answer's rows pass from SQLite's thread to ours through a channel;
                    // room for the whole capped result lets SQLite finish without waiting
                    // for us after every 50 rows (sqlx's default), a thread switch each.
                    let opts = base
                        .read_only(true)
                        .create_if_missing(false)
                        .row_buffer_size(limits.row_cap as usize + 2);
                    ReadPool::Sqlite {
                        pool: sqlite_read_pool(opts, ReadableTables::default()),
                        dedicated: true,
                    }
                }
            }
        };
        Warehouse {
            pool,
            limits,
            permits: std::sync::Arc::new(tokio::sync::Semaphore::new(limits.max_concurrent.max(1))),
            tables: ReadableTables::default(),
            pg_role: Default::default(),
        }
    }

    /// The same warehouse restricted to reading `tables` (the semantic model's):
    /// an authorizer on SQLite, the `clarion_warehouse` role on PostgreSQL.
    pub fn with_readable_tables(mut self, tables: ReadableTables) -> Self {
        self.tables = tables;
        // the dedicated pool connects lazily: made again, its connections get the
        // authorizer for these tables when they open
        if let ReadPool::Sqlite {
            pool,
            dedicated: true,
        } = &mut self.pool
        {
            *pool = sqlite_read_pool((*pool.connect_options()).clone(), tables);
        }
        self
    }

    /// PostgreSQL: true when `clarion_warehouse` exists, Clarion's login is a member,
    /// and it may read every readable table (checked once; a failed check is retried).
    async fn pg_role_usable(&self, pool: &PgPool) -> bool {
        if self.tables.is_empty() {
            return false;
        }
        if let Some(v) = self.pg_role.get() {
            return *v;
        }
        let check = "SELECT COALESCE((SELECT pg_has_role(current_user, r.oid, 'MEMBER') \
                       AND (SELECT bool_and(has_table_privilege(r.oid, t, 'SELECT')) FROM unnest($1::text[]) t) \
                       FROM pg_roles r WHERE r.rolname = $2), false)";
        match sqlx::query_scalar::<_, bool>(check)
            .bind(self.tables.sorted())
            .bind(WAREHOUSE_ROLE)
            .fetch_one(pool)
            .await
        {
            Ok(usable) => {
                if !usable {
                    tracing::warn!(
                        role = WAREHOUSE_ROLE,
                        "the warehouse reads with the login's own privileges: the role is missing, \
                         not granted to this login, or lacks SELECT on a clinical table (see README)"
                    );
                }
                *self.pg_role.get_or_init(|| async { usable }).await
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not check the warehouse role; reading without it this time");
                false
            }
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> ExecLimits {
        self.limits
    }

    /// Runs an answer's statement (rendered with the row cap) under the query time limit.
    pub async fn run(&self, rendered: &Rendered) -> Result<QueryRows, ExecError> {
        let started = Instant::now();
        let rows = self
            .fetch(rendered, self.limits.query_timeout, Read::Direct)
            .await?;
        let cap = rendered.row_cap.unwrap_or(self.limits.row_cap) as usize;
        let truncated = rows.len() > cap;
        let mut rows = rows;
        rows.truncate(cap);
        Ok(QueryRows {
            rows,
            truncated,
            elapsed: started.elapsed(),
        })
    }

    /// Runs a `COUNT(*)` preview under the preview time limit; `None` when it was slow
    /// or failed (a preview never fails a question).
    pub async fn count(&self, rendered: &Rendered) -> Option<i64> {
        let started = std::time::Instant::now();
        match self
            .fetch(rendered, self.limits.preview_timeout, Read::Sqlx)
            .await
        {
            // A count that finished after the limit (the timer only fires on its next
            // tick) is as late as one that did not finish: omitted either way.
            Ok(_) if started.elapsed() > self.limits.preview_timeout => None,
            Ok(rows) => rows.first()?.first()?.as_i64(),
            Err(e) => {
                tracing::debug!(error = %e, "option-count preview omitted");
                None
            }
        }
    }

    /// The clinical data's version ([`crate::sql::render_data_version`]): the statement's
    /// cells joined, or `None` when it failed or was slow (then nothing is cached).
    pub async fn data_version(&self, rendered: &Rendered) -> Option<String> {
        // one index probe per table: it gets at least 100 ms even when the previews are
        // given less, so it is not cancelled half-way on a busy machine
        let limit = self.limits.preview_timeout.max(Duration::from_millis(100));
        let rows = self.fetch(rendered, limit, Read::Sqlx).await.ok()?;
        let row = rows.first()?;
        Some(row.iter().map(Json::to_string).collect::<Vec<_>>().join(","))
    }

    /// Runs every preview in parallel; each result is `None` when that one was slow.
    /// Returns when all finished or timed out, so never later than about one
    /// preview time limit (plus waiting for a connection).
    pub async fn counts(&self, statements: Vec<Rendered>) -> Vec<Option<i64>> {
        self.counts_cached(statements, None).await.0
    }

    /// [`Warehouse::counts`], served from `cache` at data version `version` when given:
    /// a count kept for the same statement over the same data is not run again, and
    /// concurrent rounds share one run.
    pub async fn counts_cached(
        &self,
        statements: Vec<Rendered>,
        cache: Option<(&CountCache, String)>,
    ) -> (Vec<Option<i64>>, usize) {
        let mut set = tokio::task::JoinSet::new();
        let n = statements.len();
        for (i, r) in statements.into_iter().enumerate() {
            let me = self.clone();
            let cached = cache.as_ref().map(|(c, v)| ((*c).clone(), v.clone()));
            // boxed: the task holds a pointer to the statement's state (kilobytes: the whole
            // read of a statement), which tokio would otherwise copy as it spawns the task
            // and again as it stores its output
            set.spawn(Box::pin(async move {
                let count = match cached {
                    Some((cache, version)) => {
                        let key = format!("{}\u{1f}{:?}", r.sql, r.values);
                        cache.lookup(key, &version, me.count(&r)).await
                    }
                    None => (me.count(&r).await, false),
                };
                (i, count)
            }));
        }
        let mut reused = 0;
        let mut out = vec![None; n];
        // A hard stop a little after the per-preview limit: a preview stuck waiting
        // for a pool connection must not hold up the round.
        let deadline = tokio::time::Instant::now() + self.limits.preview_timeout * 2;
        loop {
            match tokio::time::timeout_at(deadline, set.join_next()).await {
                Ok(Some(Ok((i, (c, hit))))) => {
                    out[i] = c;
                    reused += usize::from(hit && c.is_some());
                }
                Ok(Some(Err(_))) => {}
                Ok(None) => break,
                Err(_) => {
                    set.abort_all();
                    break;
                }
            }
        }
        (out, reused)
    }

    async fn fetch(
        &self,
        rendered: &Rendered,
        limit: Duration,
        read: Read,
    ) -> Result<Vec<Vec<Json>>, ExecError> {
        match &self.pool {
            ReadPool::Sqlite { pool, .. } => {
                match tokio::time::timeout(limit, fetch_sqlite(pool, rendered, limit, read)).await {
                    Ok(r) => r,
                    Err(_) => Err(ExecError::Timeout(limit)),
                }
            }
            // run on a task of its own, never cancelled half-way (see `fetch_postgres`):
            // the caller stops waiting at the limit, the task finishes (its statement
            // timeout ends it) and gives the connection back cleanly
            // a permit first: at most `max_concurrent` statements hold pool connections
            ReadPool::Postgres(pool) => {
                let as_role = self.pg_role_usable(pool).await;
                let (pool, owned, permits) = (pool.clone(), rendered.clone(), self.permits.clone());
                let task = tokio::spawn(async move {
                    // waiting for a permit counts against the limit: a statement that
                    // could not start in time never runs
                    let Ok(Ok(_permit)) = tokio::time::timeout(limit, permits.acquire_owned()).await else {
                        return Err(ExecError::Timeout(limit));
                    };
                    fetch_postgres(&pool, &owned, limit, as_role).await
                });
                match tokio::time::timeout(limit, task).await {
                    Ok(Ok(r)) => r,
                    Ok(Err(e)) => Err(ExecError::Database(format!("the statement's task ended: {e}"))),
                    Err(_) => Err(ExecError::Timeout(limit)),
                }
            }
        }
    }
}

/// How a statement's rows are read on SQLite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Read {
    /// Straight into JSON cells ([`sqlite_rows`]): an answer's many rows. The statement
    /// is prepared for this one run.
    Direct,
    /// Through sqlx, whose prepared statements are kept per connection: the counts and
    /// the data version (one row each, run again and again).
    Sqlx,
}

/// Runs `f`, which steps a SQLite statement on this thread: on the multi-threaded runtime
/// the scheduler first hands this worker's other tasks to another thread, so a long
/// statement holds up nothing else (`block_in_place`); elsewhere (tests) it runs as is.
fn blocking<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current().map(|h| h.runtime_flavor()) {
        Ok(tokio::runtime::RuntimeFlavor::MultiThread) => tokio::task::block_in_place(f),
        _ => f(),
    }
}

fn db_err(e: sqlx::Error) -> ExecError {
    ExecError::Database(e.to_string().split_whitespace().collect::<Vec<_>>().join(" "))
}

/// The warehouse's read-only SQLite pool (connecting lazily). With `tables`, every
/// connection gets the authorizer for them when it opens, before any statement: installed
/// once per connection, not per statement (installing one expires every statement the
/// connection prepared, so each would be compiled again).
fn sqlite_read_pool(opts: SqliteConnectOptions, tables: ReadableTables) -> SqlitePool {
    let options = SqlitePoolOptions::new()
        .max_connections(4)
        .acquire_timeout(Duration::from_secs(5));
    let options = if tables.is_empty() {
        options
    } else {
        options.after_connect(move |conn, _| {
            Box::pin(async move {
                let mut handle = conn.lock_handle().await?;
                super::privilege::install_on(&mut handle, &tables);
                Ok(())
            })
        })
    };
    options.connect_lazy_with(opts)
}

async fn fetch_sqlite(
    pool: &SqlitePool,
    rendered: &Rendered,
    limit: Duration,
    read: Read,
) -> Result<Vec<Vec<Json>>, ExecError> {
    let begun = Instant::now();
    let mut conn = pool.acquire().await.map_err(db_err)?;
    // Through sqlx the caller stops waiting at the limit (its timer started before the
    // connection was acquired) and the statement is stopped at the limit after it got
    // its connection. A direct read cannot be given up half-way, so it is stopped where
    // the caller would have stopped waiting.
    let deadline = match read {
        Read::Direct => begun + limit,
        Read::Sqlx => Instant::now() + limit,
    };
    {
        let mut handle = conn.lock_handle().await.map_err(db_err)?;
        handle.set_progress_handler(PROGRESS_STEPS, move || Instant::now() < deadline);
        if read == Read::Direct {
            // synchronous while the lock is held: nothing can cancel it half-way, and the
            // progress handler stops it at the deadline
            match blocking(|| sqlite_rows::read(&mut handle, rendered)) {
                // not a statement it reads: through sqlx below
                Err(Direct::Unsupported) => {}
                Ok(rows) => {
                    handle.remove_progress_handler();
                    return Ok(rows);
                }
                Err(Direct::Failed(e)) => {
                    handle.remove_progress_handler();
                    if Instant::now() >= deadline {
                        tracing::debug!(error = %e, "statement interrupted at its deadline");
                        return Err(ExecError::Timeout(limit));
                    }
                    return Err(ExecError::Database(
                        e.split_whitespace().collect::<Vec<_>>().join(" "),
                    ));
                }
            }
        }
    }
    let args = bind::sqlite_arguments(&rendered.values).map_err(|e| ExecError::Database(e.to_string()))?;
    let fetched = sqlx::query_with(&rendered.sql, args).fetch_all(&mut *conn).await;
    if let Ok(mut h) = conn.lock_handle().await {
        h.remove_progress_handler();
    }
    let rows = match fetched {
        Ok(rows) => rows,
        Err(e) if Instant::now() >= deadline => {
            tracing::debug!(error = %e, "statement interrupted at its deadline");
            return Err(ExecError::Timeout(limit));
        }
        Err(e) => return Err(db_err(e)),
    };
    rows.iter().map(|r| decode_sqlite(r, rendered)).collect()
}

async fn fetch_postgres(
    pool: &PgPool,
    rendered: &Rendered,
    limit: Duration,
    as_role: bool,
) -> Result<Vec<Vec<Json>>, ExecError> {
    // Never cancelled from outside (`Warehouse::fetch` runs it on its own task): a `begin`
    // cancelled after the server started the transaction but before sqlx owned it would
    // hand the pool a connection inside an open transaction, and the next writer's rows (a
    // stored round) would never be committed. Once the transaction is ours, dropping it
    // on the time limit below rolls it back.
    let mut tx = pool.begin().await.map_err(db_err)?;
    let work = async {
        tx.execute("SET TRANSACTION READ ONLY").await.map_err(db_err)?;
        if as_role {
            // A fixed identifier, never input: only the clinical tables are readable.
            tx.execute(format!("SET LOCAL ROLE {WAREHOUSE_ROLE}").as_str())
                .await
                .map_err(db_err)?;
        }
        // `SET LOCAL` takes no parameters; the value is a number we computed, not input.
        let ms = limit.as_millis().clamp(1, i32::MAX as u128);
        tx.execute(format!("SET LOCAL statement_timeout = {ms}").as_str())
            .await
            .map_err(db_err)?;
        let args =
            bind::postgres_arguments(&rendered.values).map_err(|e| ExecError::Database(e.to_string()))?;
        match sqlx::query_with(&rendered.sql, args).fetch_all(&mut *tx).await {
            Ok(rows) => Ok(rows),
            Err(sqlx::Error::Database(d)) if d.code().as_deref() == Some("57014") => {
                Err(ExecError::Timeout(limit))
            }
            Err(e) => Err(db_err(e)),
        }
    };
    let rows = match tokio::time::timeout(limit, work).await {
        Ok(r) => r?,
        Err(_) => return Err(ExecError::Timeout(limit)),
    };
    tx.rollback().await.map_err(db_err)?;
    rows.iter().map(|r| decode_postgres(r, rendered)).collect()
}

macro_rules! decode_row {
    ($row:expr, $rendered:expr) => {{
        let mut cells = Vec::with_capacity($rendered.columns.len());
        for (i, col) in $rendered.columns.iter().enumerate() {
            let cell = match col.ty {
                AttributeType::Integer => $row.try_get::<Option<i64>, _>(i).map(|v| v.map(Json::from)),
                AttributeType::Real => $row
                    .try_get::<Option<f64>, _>(i)
                    .map(|v| v.and_then(|x| serde_json::Number::from_f64(x).map(Json::Number))),
                AttributeType::Boolean => $row.try_get::<Option<bool>, _>(i).map(|v| v.map(Json::Bool)),
                AttributeType::Text | AttributeType::Date => {
                    $row.try_get::<Option<String>, _>(i).map(|v| v.map(Json::String))
                }
            };
            cells.push(cell.map_err(db_err)?.unwrap_or(Json::Null));
        }
        Ok(cells)
    }};
}

pub(super) fn decode_sqlite(row: &SqliteRow, rendered: &Rendered) -> Result<Vec<Json>, ExecError> {
    decode_row!(row, rendered)
}

fn decode_postgres(row: &PgRow, rendered: &Rendered) -> Result<Vec<Json>, ExecError> {
    decode_row!(row, rendered)
}
