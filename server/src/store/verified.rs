//! Verified questions (issue 16, part 2): question → definition pairs an administrator
//! curates. The definition (resolutions and context) and the plan arrive and leave as
//! JSON text; this module does not know the engine's types. Retiring keeps the row.

use super::time::Ts;
use super::{Store, StoreError};
use chrono::{DateTime, Utc};

/// A verified question to store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewVerified<'a> {
    pub name: &'a str,
    /// The question as the administrator asked it.
    pub question: &'a str,
    /// The phrasings it matches (normalised by the caller).
    pub phrasings: &'a [String],
    /// What it was answered with (resolutions, context), as JSON text.
    pub definition_json: &'a str,
    /// Its plan, as JSON text.
    pub plan_json: &'a str,
    pub verified_by: i64,
}

/// A stored verified question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verified {
    pub id: i64,
    pub name: String,
    pub question: String,
    pub phrasings: Vec<String>,
    pub definition_json: String,
    pub plan_json: String,
    pub verified_by: i64,
    /// The administrator's display name at read time.
    pub verified_by_name: String,
    pub created_at: DateTime<Utc>,
    pub retired_at: Option<DateTime<Utc>>,
    /// Questions answered by it so far.
    pub use_count: i64,
}

#[derive(sqlx::FromRow)]
struct VerifiedRow {
    id: i64,
    name: String,
    question: String,
    phrasings_json: String,
    definition_json: String,
    plan_json: String,
    verified_by: i64,
    display_name: String,
    created_at: Ts,
    retired_at: Option<Ts>,
    use_count: i64,
}

impl TryFrom<VerifiedRow> for Verified {
    type Error = StoreError;

    fn try_from(r: VerifiedRow) -> Result<Self, StoreError> {
        Ok(Verified {
            id: r.id,
            name: r.name,
            question: r.question,
            phrasings: serde_json::from_str(&r.phrasings_json)
                .map_err(|e| StoreError::Corrupt(format!("verified phrasings: {e}")))?,
            definition_json: r.definition_json,
            plan_json: r.plan_json,
            verified_by: r.verified_by,
            verified_by_name: r.display_name,
            created_at: r.created_at.0,
            retired_at: r.retired_at.map(|t| t.0),
            use_count: r.use_count,
        })
    }
}

const SELECT: &str = "SELECT v.id, v.name, v.question, v.phrasings_json, v.definition_json, v.plan_json, \
     v.verified_by, u.display_name, v.created_at, v.retired_at, v.use_count FROM verified_questions v \
     JOIN users u ON u.id = v.verified_by";

fn phrasings_json(p: &[String]) -> Result<String, StoreError> {
    serde_json::to_string(p).map_err(|e| StoreError::Corrupt(e.to_string()))
}

impl Store {
    /// Stores a verified question; returns it.
    pub async fn add_verified(&self, v: NewVerified<'_>, now: DateTime<Utc>) -> Result<Verified, StoreError> {
        let phrasings = phrasings_json(v.phrasings)?;
        let sql = "INSERT INTO verified_questions (name, question, phrasings_json, definition_json, plan_json, \
                   verified_by, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id";
        let (id,): (i64,) = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(v.name)
            .bind(v.question)
            .bind(&phrasings)
            .bind(v.definition_json)
            .bind(v.plan_json)
            .bind(v.verified_by)
            .bind(Ts::of(now))
            .fetch_one(p)
            .await)?;
        self.verified(id).await
    }

    /// One verified question, retired or not.
    pub async fn verified(&self, id: i64) -> Result<Verified, StoreError> {
        let sql = format!("{SELECT} WHERE v.id = $1");
        let row: Option<VerifiedRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(id)
            .fetch_optional(p)
            .await)?;
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// The verified questions in force (not retired), oldest first.
    pub async fn active_verified(&self) -> Result<Vec<Verified>, StoreError> {
        let sql = format!("{SELECT} WHERE v.retired_at IS NULL ORDER BY v.id");
        let rows: Vec<VerifiedRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql).fetch_all(p).await)?;
        rows.into_iter().map(Verified::try_from).collect()
    }

    /// Every verified question's id and name, retired ones included (to name a retired
    /// definition that something still refers to).
    pub async fn all_verified(&self) -> Result<Vec<(i64, String)>, StoreError> {
        let sql = "SELECT id, name FROM verified_questions ORDER BY id";
        Ok(on_pool!(&self.db, |p| sqlx::query_as(sql).fetch_all(p).await)?)
    }

    /// Renames a verified question and replaces its phrasings (`NotFound` when retired or missing).
    pub async fn edit_verified(
        &self,
        id: i64,
        name: &str,
        phrasings: &[String],
    ) -> Result<Verified, StoreError> {
        let phrasings = phrasings_json(phrasings)?;
        let sql = "UPDATE verified_questions SET name = $1, phrasings_json = $2 WHERE id = $3 AND retired_at IS NULL";
        let n = on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(name)
            .bind(&phrasings)
            .bind(id)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        if n == 0 {
            return Err(StoreError::NotFound);
        }
        self.verified(id).await
    }

    /// Counts one more question answered by verified question `id`.
    pub async fn count_verified_use(&self, id: i64) -> Result<(), StoreError> {
        let sql = "UPDATE verified_questions SET use_count = use_count + 1 WHERE id = $1";
        on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(id)
            .execute(p)
            .await
            .map(|_| ()))?;
        Ok(())
    }

    /// Retires a verified question: new questions no longer match it (`NotFound` when
    /// already retired or missing).
    pub async fn retire_verified(&self, id: i64, now: DateTime<Utc>) -> Result<(), StoreError> {
        let sql = "UPDATE verified_questions SET retired_at = $1 WHERE id = $2 AND retired_at IS NULL";
        let n = on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(Ts::of(now))
            .bind(id)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        if n == 0 { Err(StoreError::NotFound) } else { Ok(()) }
    }
}
