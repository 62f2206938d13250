//! Saved questions (F27): a question a user saved from one of their answers, under a
//! name, with what it was answered with (its resolutions and context, as JSON text this
//! module does not read). Every read and write filters on the owner: another user's
//! saved question is indistinguishable from a missing one.

use super::ids::SavedId;
use super::time::Ts;
use super::{Store, StoreError};
use chrono::{DateTime, Utc};

/// A saved question to store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewSaved<'a> {
    pub name: &'a str,
    /// The question as asked.
    pub question: &'a str,
    /// What it is re-run with (resolutions, context …), as JSON text.
    pub definition_json: &'a str,
    /// The plan it was answered with, as JSON text.
    pub plan_json: &'a str,
    /// The history entry it was saved from.
    pub source_history_id: Option<&'a str>,
    /// The answer had clarification answers (for the saved-question rate).
    pub clarified: bool,
}

/// A stored saved question.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Saved {
    pub id: SavedId,
    pub user_id: i64,
    pub name: String,
    pub question: String,
    pub definition_json: String,
    pub plan_json: String,
    pub source_history_id: Option<String>,
    pub clarified: bool,
    pub created_at: DateTime<Utc>,
    pub last_run_at: Option<DateTime<Utc>>,
    pub run_count: i64,
}

/// How many questions were saved in a period (Analytics' saved-question rate).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SavedCounts {
    /// Saved questions created.
    pub saved: i64,
    /// Of those, saved from an answer that had clarification answers.
    pub clarified: i64,
    /// Distinct users who saved one.
    pub users: i64,
}

#[derive(sqlx::FromRow)]
struct SavedRow {
    id: String,
    user_id: i64,
    name: String,
    question: String,
    definition_json: String,
    plan_json: String,
    source_history_id: Option<String>,
    clarified: bool,
    created_at: Ts,
    last_run_at: Option<Ts>,
    run_count: i64,
}

impl From<SavedRow> for Saved {
    fn from(r: SavedRow) -> Self {
        Saved {
            id: SavedId::new(r.id),
            user_id: r.user_id,
            name: r.name,
            question: r.question,
            definition_json: r.definition_json,
            plan_json: r.plan_json,
            source_history_id: r.source_history_id,
            clarified: r.clarified,
            created_at: r.created_at.0,
            last_run_at: r.last_run_at.map(|t| t.0),
            run_count: r.run_count,
        }
    }
}

const COLUMNS: &str = "id, user_id, name, question, definition_json, plan_json, source_history_id, clarified, \
     created_at, last_run_at, run_count";

impl Store {
    /// Stores a saved question for `user_id`; returns it.
    pub async fn add_saved(
        &self,
        user_id: i64,
        s: NewSaved<'_>,
        now: DateTime<Utc>,
    ) -> Result<Saved, StoreError> {
        let id = SavedId::random();
        let sql = "INSERT INTO saved_questions (id, user_id, name, question, definition_json, plan_json, \
                   source_history_id, clarified, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)";
        on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(id.as_str())
            .bind(user_id)
            .bind(s.name)
            .bind(s.question)
            .bind(s.definition_json)
            .bind(s.plan_json)
            .bind(s.source_history_id)
            .bind(s.clarified)
            .bind(Ts::of(now))
            .execute(p)
            .await
            .map(|_| ()))?;
        self.saved(user_id, &id).await
    }

    /// One of `user_id`'s saved questions.
    pub async fn saved(&self, user_id: i64, id: &SavedId) -> Result<Saved, StoreError> {
        let sql = format!("SELECT {COLUMNS} FROM saved_questions WHERE id = $1 AND user_id = $2");
        let row: Option<SavedRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(id.as_str())
            .bind(user_id)
            .fetch_optional(p)
            .await)?;
        row.map(Saved::from).ok_or(StoreError::NotFound)
    }

    /// `user_id`'s saved questions, newest first (at most `limit`).
    pub async fn saved_list(&self, user_id: i64, limit: i64) -> Result<Vec<Saved>, StoreError> {
        let sql = format!(
            "SELECT {COLUMNS} FROM saved_questions WHERE user_id = $1 ORDER BY created_at DESC, id LIMIT $2"
        );
        let rows: Vec<SavedRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(user_id)
            .bind(limit)
            .fetch_all(p)
            .await)?;
        Ok(rows.into_iter().map(Saved::from).collect())
    }

    /// How many saved questions `user_id` has.
    pub async fn saved_count_of(&self, user_id: i64) -> Result<i64, StoreError> {
        let sql = "SELECT COUNT(*) FROM saved_questions WHERE user_id = $1";
        let (n,): (i64,) = on_pool!(&self.db, |p| sqlx::query_as(sql).bind(user_id).fetch_one(p).await)?;
        Ok(n)
    }

    /// Renames one of `user_id`'s saved questions.
    pub async fn rename_saved(&self, user_id: i64, id: &SavedId, name: &str) -> Result<Saved, StoreError> {
        let sql = "UPDATE saved_questions SET name = $1 WHERE id = $2 AND user_id = $3";
        let n = on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(name)
            .bind(id.as_str())
            .bind(user_id)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        if n == 0 {
            return Err(StoreError::NotFound);
        }
        self.saved(user_id, id).await
    }

    /// Deletes one of `user_id`'s saved questions.
    pub async fn delete_saved(&self, user_id: i64, id: &SavedId) -> Result<(), StoreError> {
        let sql = "DELETE FROM saved_questions WHERE id = $1 AND user_id = $2";
        let n = on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(id.as_str())
            .bind(user_id)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        if n == 0 { Err(StoreError::NotFound) } else { Ok(()) }
    }

    /// Records one re-run of a saved question.
    pub async fn count_saved_run(
        &self,
        user_id: i64,
        id: &SavedId,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let sql = "UPDATE saved_questions SET run_count = run_count + 1, last_run_at = $1 WHERE id = $2 AND user_id = $3";
        let n = on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(Ts::of(now))
            .bind(id.as_str())
            .bind(user_id)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        if n == 0 { Err(StoreError::NotFound) } else { Ok(()) }
    }

    /// Every user's saved questions created in `[since, until)`: for a saved-question
    /// rate (saved over answered questions in the same period).
    pub async fn saved_counts(
        &self,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<SavedCounts, StoreError> {
        let sql = "SELECT COUNT(*), COALESCE(SUM(CASE WHEN clarified THEN 1 ELSE 0 END), 0), \
                   COUNT(DISTINCT user_id) FROM saved_questions WHERE created_at >= $1 AND created_at < $2";
        let (saved, clarified, users): (i64, i64, i64) = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(Ts::of(since))
            .bind(Ts::of(until))
            .fetch_one(p)
            .await)?;
        Ok(SavedCounts {
            saved,
            clarified,
            users,
        })
    }
}
