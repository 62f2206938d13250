//! Keeps Clarion's summaries of the clinical data current (`crate::sql::summary`: each
//! wound's latest and first assessment) and says, per request, whether the renderer may
//! read them.
//!
//! - **Data version**: the summarised table's row count and largest key. The largest key
//!   is compared on every request that would read a summary (one index probe, beside the
//!   version stored in `summary_state`, so every replica sees a refresh made by another);
//!   a new row makes the summary stale at once and the request reads the live tables.
//! - **Refreshed incrementally**, in the background, one refresh at a time per process:
//!   when only rows were added since the stored version (count grew by exactly the rows
//!   with a larger key), only the wounds of the new rows are written again; otherwise
//!   (a row deleted, a key reused) every wound is. The row count is also checked every
//!   `check_every` (a count reads the whole table, so never on a request's path), which
//!   catches a deletion; an assessment edited in place without any row added or removed
//!   is seen at the next full rebuild (`rebuild_every`).
//! - **Used only when current**: never before this process has verified the count once,
//!   never while the largest key differs; otherwise the live query. A failed refresh is
//!   logged and retried after `retry_after`; the answers stay right, only slower.
//!
//! It writes only the summary tables and `summary_state`, through Clarion's own pool
//! (the warehouse's connections are read-only); the statements are fixed text from
//! `crate::sql::summary` with bound numbers.

use crate::db::Database;
use crate::sql::summary as s;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Tuning of the summaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SummaryConfig {
    /// Read and refresh the summaries at all (`CLARION_SUMMARIES`, default on).
    pub enabled: bool,
    /// How often the row count is checked (`CLARION_SUMMARY_CHECK_SECS`, default 60).
    pub check_every: Duration,
    /// How often everything is rebuilt regardless (edits in place; default 1 hour).
    pub rebuild_every: Duration,
    /// After a failed refresh, how long before trying again.
    pub retry_after: Duration,
}

impl Default for SummaryConfig {
    fn default() -> Self {
        SummaryConfig {
            enabled: true,
            check_every: Duration::from_secs(60),
            rebuild_every: Duration::from_secs(3600),
            retry_after: Duration::from_secs(30),
        }
    }
}

#[derive(Debug, Default)]
struct Known {
    /// When this process last checked the count (and refreshed what it had to).
    verified: Option<Instant>,
    /// When it last rebuilt everything.
    rebuilt: Option<Instant>,
    /// When a refresh last failed.
    failed: Option<Instant>,
}

/// What a refresh did, for logs and tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refreshed {
    /// Nothing had changed.
    Unchanged,
    /// Only the wounds of rows added since the last version were written.
    Incremental { new_rows: i64 },
    /// Every wound was written.
    Full,
}

/// The summaries of one database. Cheap to clone (shared).
#[derive(Clone, Debug)]
pub struct Summaries {
    db: Database,
    config: SummaryConfig,
    known: Arc<Mutex<Known>>,
    /// One refresh at a time in this process.
    running: Arc<tokio::sync::Mutex<()>>,
}

impl Summaries {
    pub fn new(db: Database, config: SummaryConfig) -> Self {
        Summaries {
            db,
            config,
            known: Arc::default(),
            running: Arc::default(),
        }
    }

    fn known(&self) -> std::sync::MutexGuard<'_, Known> {
        self.known.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// True when the renderer may read the summaries for this request: this process has
    /// verified them, and no row was added since they were built. Starts a background
    /// refresh when one is due; never waits for it.
    pub async fn is_current(&self) -> bool {
        if !self.config.enabled {
            return false;
        }
        let (verified, due, failed_recently) = {
            let k = self.known();
            let now = Instant::now();
            (
                k.verified.is_some(),
                k.verified
                    .is_none_or(|t| now.duration_since(t) >= self.config.check_every)
                    || k.rebuilt
                        .is_none_or(|t| now.duration_since(t) >= self.config.rebuild_every),
                k.failed
                    .is_some_and(|t| now.duration_since(t) < self.config.retry_after),
            )
        };
        let same = match self.versions().await {
            Ok((live, Some(built))) => live == built,
            Ok((_, None)) => false,
            Err(e) => {
                tracing::debug!(error = %e, "summary version not read; using the live tables");
                return false;
            }
        };
        if (!same || due) && !failed_recently {
            self.refresh_in_background();
        }
        verified && same
    }

    /// (largest key of the summarised table, largest key the summary was built at).
    async fn versions(&self) -> Result<(i64, Option<i64>), sqlx::Error> {
        let sql = format!(
            "SELECT ({}) AS live, (SELECT max_id FROM summary_state WHERE name = $1) AS built",
            s::child_max_key_sql()
        );
        match &self.db {
            Database::Sqlite(p) => {
                sqlx::query_as::<_, (i64, Option<i64>)>(&sql)
                    .bind(s::STATE_NAME)
                    .fetch_one(p)
                    .await
            }
            Database::Postgres(p) => {
                sqlx::query_as::<_, (i64, Option<i64>)>(&sql)
                    .bind(s::STATE_NAME)
                    .fetch_one(p)
                    .await
            }
        }
    }

    /// Starts [`Summaries::refresh`] on a task of its own unless one is running.
    pub fn refresh_in_background(&self) {
        let me = self.clone();
        tokio::spawn(async move {
            let Ok(_one) = me.running.clone().try_lock_owned() else {
                return;
            };
            match me.refresh_locked().await {
                Ok(r) => tracing::debug!(refreshed = ?r, "summaries refreshed"),
                Err(e) => tracing::warn!(error = %e, "summaries not refreshed; answers read the live tables"),
            }
        });
    }

    /// Brings the summaries up to date now (waits for a refresh already running).
    pub async fn refresh(&self) -> Result<Refreshed, sqlx::Error> {
        let _one = self.running.lock().await;
        self.refresh_locked().await
    }

    async fn refresh_locked(&self) -> Result<Refreshed, sqlx::Error> {
        let full_due = self
            .known()
            .rebuilt
            .is_none_or(|t| t.elapsed() >= self.config.rebuild_every);
        let result = match &self.db {
            Database::Sqlite(p) => {
                let mut tx = p.begin().await?;
                let r = refresh_sqlite(&mut tx, full_due).await;
                if r.is_ok() {
                    tx.commit().await?;
                }
                r
            }
            Database::Postgres(p) => {
                let mut tx = p.begin().await?;
                let r = refresh_postgres(&mut tx, full_due).await;
                if r.is_ok() {
                    tx.commit().await?;
                }
                r
            }
        };
        let mut k = self.known();
        match &result {
            Ok(r) => {
                let now = Instant::now();
                k.verified = Some(now);
                k.failed = None;
                if *r == Refreshed::Full {
                    k.rebuilt = Some(now);
                }
            }
            Err(_) => k.failed = Some(Instant::now()),
        }
        result
    }
}

/// The refresh inside one transaction, for each backend: reads the stored and the live
/// version, writes the wounds that changed (or all), stores the new version.
macro_rules! refresh_fn {
    ($name:ident, $db:ty) => {
        async fn $name(
            tx: &mut sqlx::Transaction<'_, $db>,
            full_due: bool,
        ) -> Result<Refreshed, sqlx::Error> {
            let stored: Option<(i64, i64)> = sqlx::query_as(s::state_sql())
                .bind(s::STATE_NAME)
                .fetch_optional(&mut **tx)
                .await?;
            let (count, max_id): (i64, i64) = sqlx::query_as(&s::child_count_sql())
                .fetch_one(&mut **tx)
                .await?;
            let incremental = match stored {
                Some((c, m)) if !full_due && (c, m) == (count, max_id) => Some(Refreshed::Unchanged),
                Some((c, m)) if !full_due && max_id > m => {
                    let (added,): (i64,) = sqlx::query_as(&s::added_since_sql())
                        .bind(m)
                        .fetch_one(&mut **tx)
                        .await?;
                    if c + added == count {
                        for newest in [true, false] {
                            sqlx::query(&s::upsert_sql(newest, true))
                                .bind(m)
                                .bind(max_id)
                                .execute(&mut **tx)
                                .await?;
                        }
                        Some(Refreshed::Incremental { new_rows: added })
                    } else {
                        None
                    }
                }
                _ => None,
            };
            let done = match incremental {
                Some(r) => r,
                None => {
                    for newest in [true, false] {
                        sqlx::query(&s::clear_sql(newest))
                            .execute(&mut **tx)
                            .await?;
                        sqlx::query(&s::upsert_sql(newest, false))
                            .execute(&mut **tx)
                            .await?;
                    }
                    Refreshed::Full
                }
            };
            sqlx::query(s::save_state_sql())
                .bind(s::STATE_NAME)
                .bind(count)
                .bind(max_id)
                .bind(chrono::Utc::now().to_rfc3339())
                .execute(&mut **tx)
                .await?;
            Ok(done)
        }
    };
}

refresh_fn!(refresh_sqlite, sqlx::Sqlite);
refresh_fn!(refresh_postgres, sqlx::Postgres);
