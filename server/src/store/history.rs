//! Query history (F19) and the audit log (F23).
//!
//! History is the clinician's own record: what they asked, what was computed
//! and which clarifications and assumptions applied, so a past question can be
//! re-run in one click. The audit log is the administrator's record of who ran
//! which SQL. It stores the number of bound values, never the values: they can
//! be patient data, and the log must be safe to read.

use super::ids::{HistoryId, ThreadId};
use super::time::Ts;
use super::{Store, StoreError, StoreTx};
use chrono::{DateTime, Utc};

/// A finished question to record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewHistoryEntry<'a> {
    /// The thread it was asked in (must be the user's), if any.
    pub thread_id: Option<&'a ThreadId>,
    pub question: &'a str,
    /// The final typed plan, as JSON text.
    pub plan_json: &'a str,
    /// The SQL that ran (placeholders only, no values).
    pub sql: &'a str,
    /// The clarifications applied (answers, remembered choices), as JSON text.
    pub clarifications_json: &'a str,
    /// The assumptions shown as badges, as JSON text.
    pub assumptions_json: &'a str,
    pub row_count: i64,
    pub duration_ms: i64,
    /// The rows as shown (the answer's table, as JSON text), kept so that opening
    /// the thread later shows them without running the query again.
    pub result_json: Option<&'a str>,
    /// The verified question that answered it, if any.
    pub verified_id: Option<i64>,
    /// How many follow-up suggestion pills the answer showed (Analytics' pill figures).
    pub suggestions_shown: Option<i64>,
}

/// How a question in the history ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HistoryStatus {
    /// Answered (an answer with rows).
    Answered,
    /// Clarion declined it (a data change, another subject, too little understood …).
    Refused,
    /// It failed (past its time limit, a fault).
    Failed,
}

impl HistoryStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            HistoryStatus::Answered => "answered",
            HistoryStatus::Refused => "refused",
            HistoryStatus::Failed => "failed",
        }
    }

    fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "answered" => Ok(HistoryStatus::Answered),
            "refused" => Ok(HistoryStatus::Refused),
            "failed" => Ok(HistoryStatus::Failed),
            other => Err(StoreError::Corrupt(format!("history status {other:?}"))),
        }
    }
}

/// A stored history entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HistoryEntry {
    pub id: HistoryId,
    pub user_id: i64,
    pub thread_id: Option<ThreadId>,
    pub question: String,
    pub plan_json: String,
    pub sql: String,
    pub clarifications_json: String,
    pub assumptions_json: String,
    pub row_count: i64,
    pub duration_ms: i64,
    pub created_at: DateTime<Utc>,
    /// Answered, refused or failed.
    pub status: HistoryStatus,
    /// What the user was told, for a refused or failed question.
    pub message: Option<String>,
    /// The verified question that answered it, if any.
    pub verified_id: Option<i64>,
}

#[derive(sqlx::FromRow)]
struct HistoryRow {
    id: String,
    user_id: i64,
    thread_id: Option<String>,
    question: String,
    plan_json: String,
    sql_text: String,
    clarifications_json: String,
    assumptions_json: String,
    row_count: i64,
    duration_ms: i64,
    created_at: Ts,
    status: String,
    message: Option<String>,
    verified_id: Option<i64>,
}

const HISTORY_COLUMNS: &str = "id, user_id, thread_id, question, plan_json, sql_text, clarifications_json, \
     assumptions_json, row_count, duration_ms, created_at, status, message, verified_id";

impl TryFrom<HistoryRow> for HistoryEntry {
    type Error = StoreError;

    fn try_from(r: HistoryRow) -> Result<Self, StoreError> {
        Ok(HistoryEntry {
            id: HistoryId::new(r.id),
            user_id: r.user_id,
            thread_id: r.thread_id.map(ThreadId::new),
            question: r.question,
            plan_json: r.plan_json,
            sql: r.sql_text,
            clarifications_json: r.clarifications_json,
            assumptions_json: r.assumptions_json,
            row_count: r.row_count,
            duration_ms: r.duration_ms,
            created_at: r.created_at.0,
            status: HistoryStatus::parse(&r.status)?,
            message: r.message,
            verified_id: r.verified_id,
        })
    }
}

fn entries(rows: Vec<HistoryRow>) -> Result<Vec<HistoryEntry>, StoreError> {
    rows.into_iter().map(HistoryEntry::try_from).collect()
}

/// How a statement ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditOutcome {
    Ok,
    Error,
    Timeout,
}

impl AuditOutcome {
    fn as_str(self) -> &'static str {
        match self {
            AuditOutcome::Ok => "ok",
            AuditOutcome::Error => "error",
            AuditOutcome::Timeout => "timeout",
        }
    }

    fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "ok" => Ok(AuditOutcome::Ok),
            "error" => Ok(AuditOutcome::Error),
            "timeout" => Ok(AuditOutcome::Timeout),
            other => Err(StoreError::Corrupt(format!("audit outcome {other:?}"))),
        }
    }
}

/// One executed statement to record. There is deliberately no field for the
/// bound values, only their count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewAuditEntry<'a> {
    /// Who ran it; `None` for the command line.
    pub user_id: Option<i64>,
    pub sql: &'a str,
    /// How many values were bound to the statement.
    pub param_count: usize,
    pub row_count: i64,
    pub duration_ms: i64,
    pub outcome: AuditOutcome,
    /// The clinic scope it ran under (`all`, `1,2`); `None` for the command line.
    pub scope: Option<&'a str>,
}

/// A stored audit record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuditEntry {
    pub id: i64,
    pub user_id: Option<i64>,
    /// The user's username at read time (`None` for the command line).
    pub username: Option<String>,
    pub at: DateTime<Utc>,
    pub sql: String,
    pub param_count: i64,
    pub row_count: i64,
    pub duration_ms: i64,
    pub outcome: AuditOutcome,
    /// The clinic scope it ran under (`all`, `1,2`); `None` for the command line.
    pub scope: Option<String>,
}

#[derive(sqlx::FromRow)]
struct AuditRow {
    id: i64,
    user_id: Option<i64>,
    username: Option<String>,
    at: Ts,
    sql_text: String,
    param_count: i64,
    row_count: i64,
    duration_ms: i64,
    outcome: String,
    scope: Option<String>,
}

impl TryFrom<AuditRow> for AuditEntry {
    type Error = StoreError;

    fn try_from(r: AuditRow) -> Result<Self, StoreError> {
        Ok(AuditEntry {
            id: r.id,
            user_id: r.user_id,
            username: r.username,
            at: r.at.0,
            sql: r.sql_text,
            param_count: r.param_count,
            row_count: r.row_count,
            duration_ms: r.duration_ms,
            outcome: AuditOutcome::parse(&r.outcome)?,
            scope: r.scope,
        })
    }
}

const AUDIT_SELECT: &str = "SELECT a.id, a.user_id, u.username, a.at, a.sql_text, a.param_count, a.row_count, \
     a.duration_ms, a.outcome, a.scope FROM audit_log a LEFT JOIN users u ON u.id = a.user_id";

impl Store {
    /// Records a finished question in the user's history; `NotFound` if the
    /// given thread is missing or someone else's.
    pub async fn add_history(
        &self,
        user_id: i64,
        entry: NewHistoryEntry<'_>,
        now: DateTime<Utc>,
    ) -> Result<HistoryEntry, StoreError> {
        let mut tx = self.begin().await?;
        let e = tx.add_history(user_id, entry, now).await?;
        tx.commit().await?;
        Ok(e)
    }

    /// Records a question that was not answered (refused or failed) with the message
    /// the user saw. It has no plan, SQL or thread.
    pub async fn add_unanswered(
        &self,
        user_id: i64,
        question: &str,
        status: HistoryStatus,
        message: &str,
        duration_ms: i64,
        now: DateTime<Utc>,
    ) -> Result<HistoryEntry, StoreError> {
        if status == HistoryStatus::Answered {
            return Err(StoreError::Conflict("an answered question needs its plan"));
        }
        let id = HistoryId::random();
        let sql = format!(
            "INSERT INTO query_history ({HISTORY_COLUMNS}) \
             VALUES ($1, $2, NULL, $3, '', '', '{{}}', '[]', 0, $4, $5, $6, $7, NULL) RETURNING {HISTORY_COLUMNS}"
        );
        let row: HistoryRow = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(id.as_str())
            .bind(user_id)
            .bind(question)
            .bind(duration_ms)
            .bind(Ts::of(now))
            .bind(status.as_str())
            .bind(message)
            .fetch_one(p)
            .await)?;
        row.try_into()
    }

    /// The answers of one of the user's threads, oldest first, each with its stored
    /// rows (JSON text; `None` when none were kept). Empty for someone else's thread.
    pub async fn thread_history(
        &self,
        user_id: i64,
        thread_id: &ThreadId,
    ) -> Result<Vec<(HistoryEntry, Option<String>)>, StoreError> {
        #[derive(sqlx::FromRow)]
        struct WithResult {
            #[sqlx(flatten)]
            entry: HistoryRow,
            result_json: Option<String>,
        }
        let sql = format!(
            "SELECT {HISTORY_COLUMNS}, result_json FROM query_history \
             WHERE thread_id = $1 AND user_id = $2 AND status = 'answered' ORDER BY created_at, id"
        );
        let rows: Vec<WithResult> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(thread_id.as_str())
            .bind(user_id)
            .fetch_all(p)
            .await)?;
        rows.into_iter()
            .map(|r| Ok((HistoryEntry::try_from(r.entry)?, r.result_json)))
            .collect()
    }

    /// The latest answer of one of the user's threads (`None`: none, or not theirs).
    pub async fn last_answer_in(
        &self,
        user_id: i64,
        thread_id: &ThreadId,
    ) -> Result<Option<HistoryId>, StoreError> {
        let sql = "SELECT id FROM query_history WHERE thread_id = $1 AND user_id = $2 AND status = 'answered' \
                   ORDER BY created_at DESC, id DESC LIMIT 1";
        let row: Option<(String,)> = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(thread_id.as_str())
            .bind(user_id)
            .fetch_optional(p)
            .await)?;
        Ok(row.map(|r| HistoryId::new(r.0)))
    }

    /// The user's answered questions, newest first.
    pub async fn history(&self, user_id: i64, limit: i64) -> Result<Vec<HistoryEntry>, StoreError> {
        self.history_with(user_id, &[HistoryStatus::Answered], limit)
            .await
    }

    /// The user's history entries with one of `statuses`, newest first.
    pub async fn history_with(
        &self,
        user_id: i64,
        statuses: &[HistoryStatus],
        limit: i64,
    ) -> Result<Vec<HistoryEntry>, StoreError> {
        let has = |s: HistoryStatus| statuses.contains(&s);
        // Three fixed flags, bound: the statement is the same whatever is asked for.
        let sql = format!(
            "SELECT {HISTORY_COLUMNS} FROM query_history WHERE user_id = $1 \
             AND ((status = 'answered' AND $3) OR (status = 'refused' AND $4) OR (status = 'failed' AND $5)) \
             ORDER BY created_at DESC, id LIMIT $2"
        );
        let rows: Vec<HistoryRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(user_id)
            .bind(limit)
            .bind(has(HistoryStatus::Answered))
            .bind(has(HistoryStatus::Refused))
            .bind(has(HistoryStatus::Failed))
            .fetch_all(p)
            .await)?;
        entries(rows)
    }

    /// One of the user's history entries (for re-running it); `NotFound` if
    /// missing or someone else's.
    pub async fn history_entry(&self, user_id: i64, id: &HistoryId) -> Result<HistoryEntry, StoreError> {
        let sql = format!(
            "SELECT {HISTORY_COLUMNS} FROM query_history WHERE id = $1 AND user_id = $2 AND status = 'answered'"
        );
        let row: Option<HistoryRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(id.as_str())
            .bind(user_id)
            .fetch_optional(p)
            .await)?;
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// Records an executed statement. Returns the record's id.
    pub async fn audit(&self, entry: NewAuditEntry<'_>, now: DateTime<Utc>) -> Result<i64, StoreError> {
        let mut tx = self.begin().await?;
        let id = tx.audit(entry, now).await?;
        tx.commit().await?;
        Ok(id)
    }

    /// The most recent audit records of everyone (for administrators), newest first.
    pub async fn audit_log(&self, limit: i64) -> Result<Vec<AuditEntry>, StoreError> {
        let sql = format!("{AUDIT_SELECT} ORDER BY a.at DESC, a.id DESC LIMIT $1");
        let rows: Vec<AuditRow> =
            on_pool!(&self.db, |p| sqlx::query_as(&sql).bind(limit).fetch_all(p).await)?;
        rows.into_iter().map(AuditEntry::try_from).collect()
    }

    /// The most recent audit records of one user, newest first.
    pub async fn audit_log_of(&self, user_id: i64, limit: i64) -> Result<Vec<AuditEntry>, StoreError> {
        let sql = format!("{AUDIT_SELECT} WHERE a.user_id = $1 ORDER BY a.at DESC, a.id DESC LIMIT $2");
        let rows: Vec<AuditRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(user_id)
            .bind(limit)
            .fetch_all(p)
            .await)?;
        rows.into_iter().map(AuditEntry::try_from).collect()
    }
}

/// Answered questions across users, for administrators choosing one to verify (issue 16).
impl Store {
    /// Everyone's answered questions, newest first, each with its asker's display name.
    pub async fn recent_history_all(&self, limit: i64) -> Result<Vec<(HistoryEntry, String)>, StoreError> {
        #[derive(sqlx::FromRow)]
        struct WithAsker {
            #[sqlx(flatten)]
            entry: HistoryRow,
            asker: String,
        }
        let columns: Vec<String> = HISTORY_COLUMNS
            .split(',')
            .map(|c| format!("h.{}", c.trim()))
            .collect();
        let sql = format!(
            "SELECT {}, u.display_name AS asker FROM query_history h JOIN users u ON u.id = h.user_id \
             WHERE h.status = 'answered' ORDER BY h.created_at DESC, h.id LIMIT $1",
            columns.join(", ")
        );
        let rows: Vec<WithAsker> =
            on_pool!(&self.db, |p| sqlx::query_as(&sql).bind(limit).fetch_all(p).await)?;
        rows.into_iter()
            .map(|r| Ok((HistoryEntry::try_from(r.entry)?, r.asker)))
            .collect()
    }

    /// Anyone's history entry by id; `NotFound` if missing.
    pub async fn any_history_entry(&self, id: &HistoryId) -> Result<HistoryEntry, StoreError> {
        let sql =
            format!("SELECT {HISTORY_COLUMNS} FROM query_history WHERE id = $1 AND status = 'answered'");
        let row: Option<HistoryRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(id.as_str())
            .fetch_optional(p)
            .await)?;
        row.ok_or(StoreError::NotFound)?.try_into()
    }
}

impl StoreTx {
    /// [`Store::add_history`] in this transaction (its thread may be one this
    /// transaction created).
    pub async fn add_history(
        &mut self,
        user_id: i64,
        entry: NewHistoryEntry<'_>,
        now: DateTime<Utc>,
    ) -> Result<HistoryEntry, StoreError> {
        if let Some(thread) = entry.thread_id {
            let owned = "SELECT 1 FROM threads WHERE id = $1 AND user_id = $2";
            let found: Option<(i32,)> = on_tx!(self, |c| sqlx::query_as(owned)
                .bind(thread.as_str())
                .bind(user_id)
                .fetch_optional(&mut *c)
                .await)?;
            found.ok_or(StoreError::NotFound)?;
        }
        let id = HistoryId::random();
        let sql = format!(
            "INSERT INTO query_history ({HISTORY_COLUMNS}, result_json, suggestions_shown) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'answered', NULL, $13, $12, $14) \
             RETURNING {HISTORY_COLUMNS}"
        );
        let row: HistoryRow = on_tx!(self, |c| sqlx::query_as(&sql)
            .bind(id.as_str())
            .bind(user_id)
            .bind(entry.thread_id.map(ThreadId::as_str))
            .bind(entry.question)
            .bind(entry.plan_json)
            .bind(entry.sql)
            .bind(entry.clarifications_json)
            .bind(entry.assumptions_json)
            .bind(entry.row_count)
            .bind(entry.duration_ms)
            .bind(Ts::of(now))
            .bind(entry.result_json)
            .bind(entry.verified_id)
            .bind(entry.suggestions_shown)
            .fetch_one(&mut *c)
            .await)?;
        row.try_into()
    }

    /// [`Store::audit`] in this transaction.
    pub async fn audit(&mut self, entry: NewAuditEntry<'_>, now: DateTime<Utc>) -> Result<i64, StoreError> {
        let param_count = i64::try_from(entry.param_count)
            .map_err(|_| StoreError::Corrupt(format!("param count {}", entry.param_count)))?;
        let sql = "INSERT INTO audit_log (user_id, at, sql_text, param_count, row_count, duration_ms, outcome, scope) \
                   VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id";
        let (id,): (i64,) = on_tx!(self, |c| sqlx::query_as(sql)
            .bind(entry.user_id)
            .bind(Ts::of(now))
            .bind(entry.sql)
            .bind(param_count)
            .bind(entry.row_count)
            .bind(entry.duration_ms)
            .bind(entry.outcome.as_str())
            .bind(entry.scope)
            .fetch_one(&mut *c)
            .await)?;
        Ok(id)
    }
}
