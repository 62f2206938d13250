//! Learned preferences (F12): what each clinician answered to each kind of
//! ambiguity, how often, and whether they asked Clarion to remember it.
//!
//! One row per (user, ambiguity signature, choice). Recording evidence is an
//! upsert that increments the count, so concurrent replicas never lose a
//! count. At most one choice per signature is remembered: remembering a choice
//! forgets the others in the same transaction.

use super::time::Ts;
use super::{Store, StoreError, StoreTx};
use chrono::{DateTime, Utc};

/// What was chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PreferenceChoice {
    /// One of the dictionary's options, by id.
    Option(String),
    /// A validated custom value, as JSON text.
    Custom(String),
}

impl PreferenceChoice {
    /// The uniqueness key: one row per distinct choice.
    pub fn key(&self) -> String {
        match self {
            PreferenceChoice::Option(o) => format!("option:{o}"),
            PreferenceChoice::Custom(c) => format!("custom:{c}"),
        }
    }

    fn columns(&self) -> (Option<&str>, Option<&str>) {
        match self {
            PreferenceChoice::Option(o) => (Some(o), None),
            PreferenceChoice::Custom(c) => (None, Some(c)),
        }
    }
}

/// One answer's worth of evidence about a user's preference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreferenceEvidence<'a> {
    /// Which ambiguity this answers, independent of the question's wording
    /// (e.g. `term:serious|entity:wounds`); chosen by the orchestrator.
    pub signature: &'a str,
    pub choice: &'a PreferenceChoice,
    /// How to show the choice in the settings list ("serious = full-thickness depth").
    pub label: &'a str,
    /// "Remember my choice" was ticked.
    pub remember: bool,
    /// The answer led to a result the clinician kept.
    pub success: bool,
}

/// A stored preference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Preference {
    pub id: i64,
    pub user_id: i64,
    pub signature: String,
    pub choice: PreferenceChoice,
    pub label: String,
    /// How many times this choice was given for this signature.
    pub count: i64,
    pub successes: i64,
    /// Applied automatically, without asking.
    pub remembered: bool,
    pub created_at: DateTime<Utc>,
    pub last_used_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct PreferenceRow {
    id: i64,
    user_id: i64,
    signature: String,
    option_id: Option<String>,
    custom_json: Option<String>,
    label: String,
    use_count: i64,
    successes: i64,
    remembered: bool,
    created_at: Ts,
    last_used_at: Ts,
}

const PREFERENCE_COLUMNS: &str = "id, user_id, signature, option_id, custom_json, label, use_count, successes, \
     remembered, created_at, last_used_at";

impl TryFrom<PreferenceRow> for Preference {
    type Error = StoreError;

    fn try_from(r: PreferenceRow) -> Result<Self, StoreError> {
        let choice = match (r.option_id, r.custom_json) {
            (Some(o), None) => PreferenceChoice::Option(o),
            (None, Some(c)) => PreferenceChoice::Custom(c),
            _ => {
                return Err(StoreError::Corrupt(format!(
                    "preference {} has no single choice",
                    r.id
                )));
            }
        };
        Ok(Preference {
            id: r.id,
            user_id: r.user_id,
            signature: r.signature,
            choice,
            label: r.label,
            count: r.use_count,
            successes: r.successes,
            remembered: r.remembered,
            created_at: r.created_at.0,
            last_used_at: r.last_used_at.0,
        })
    }
}

fn convert(rows: Vec<PreferenceRow>) -> Result<Vec<Preference>, StoreError> {
    rows.into_iter().map(Preference::try_from).collect()
}

impl Store {
    /// Records that the user gave this answer: creates the preference or
    /// increments its count (and successes when `success`). With `remember`,
    /// this choice becomes the remembered one for the signature and any other
    /// remembered choice for it is forgotten.
    pub async fn record_preference(
        &self,
        user_id: i64,
        evidence: PreferenceEvidence<'_>,
        now: DateTime<Utc>,
    ) -> Result<Preference, StoreError> {
        let mut tx = self.begin().await?;
        let p = tx.record_preference(user_id, evidence, now).await?;
        tx.commit().await?;
        Ok(p)
    }

    /// Counts one more success for one of the user's preferences.
    pub async fn add_preference_success(&self, user_id: i64, id: i64) -> Result<(), StoreError> {
        let sql = "UPDATE preferences SET successes = successes + 1 WHERE id = $1 AND user_id = $2";
        self.change_one(sql, user_id, id).await
    }

    /// Every preference of the user, by signature, most used first.
    pub async fn preferences(&self, user_id: i64) -> Result<Vec<Preference>, StoreError> {
        let sql = format!(
            "SELECT {PREFERENCE_COLUMNS} FROM preferences WHERE user_id = $1 \
             ORDER BY signature, use_count DESC, last_used_at DESC, id"
        );
        let rows: Vec<PreferenceRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(user_id)
            .fetch_all(p)
            .await)?;
        convert(rows)
    }

    /// The user's preferences for one signature, most used first.
    pub async fn preferences_for(
        &self,
        user_id: i64,
        signature: &str,
    ) -> Result<Vec<Preference>, StoreError> {
        let sql = format!(
            "SELECT {PREFERENCE_COLUMNS} FROM preferences WHERE user_id = $1 AND signature = $2 \
             ORDER BY use_count DESC, last_used_at DESC, id"
        );
        let rows: Vec<PreferenceRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(user_id)
            .bind(signature)
            .fetch_all(p)
            .await)?;
        convert(rows)
    }

    /// The user's remembered choices (the settings page lists these).
    pub async fn remembered_preferences(&self, user_id: i64) -> Result<Vec<Preference>, StoreError> {
        let sql = format!(
            "SELECT {PREFERENCE_COLUMNS} FROM preferences WHERE user_id = $1 AND remembered \
             ORDER BY signature, id"
        );
        let rows: Vec<PreferenceRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(user_id)
            .fetch_all(p)
            .await)?;
        convert(rows)
    }

    /// Stops applying a remembered choice automatically (its counts stay).
    pub async fn forget_preference(&self, user_id: i64, id: i64) -> Result<(), StoreError> {
        let sql = "UPDATE preferences SET remembered = FALSE WHERE id = $1 AND user_id = $2";
        self.change_one(sql, user_id, id).await
    }

    /// Deletes one of the user's preferences with its counts.
    pub async fn delete_preference(&self, user_id: i64, id: i64) -> Result<(), StoreError> {
        let sql = "DELETE FROM preferences WHERE id = $1 AND user_id = $2";
        self.change_one(sql, user_id, id).await
    }

    /// Runs a statement over `(id = $1, user_id = $2)`; `NotFound` when it matched nothing.
    async fn change_one(&self, sql: &str, user_id: i64, id: i64) -> Result<(), StoreError> {
        let done = on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(id)
            .bind(user_id)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        if done == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }
}

impl StoreTx {
    /// [`Store::record_preference`] in this transaction.
    pub async fn record_preference(
        &mut self,
        user_id: i64,
        evidence: PreferenceEvidence<'_>,
        now: DateTime<Utc>,
    ) -> Result<Preference, StoreError> {
        let key = evidence.choice.key();
        let (option_id, custom_json) = evidence.choice.columns();
        let forget_others = "UPDATE preferences SET remembered = FALSE \
                             WHERE user_id = $1 AND signature = $2 AND choice_key <> $3 AND remembered";
        let upsert = format!(
            "INSERT INTO preferences (user_id, signature, choice_key, option_id, custom_json, label, \
             use_count, successes, remembered, created_at, last_used_at) \
             VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8, $9, $9) \
             ON CONFLICT (user_id, signature, choice_key) DO UPDATE SET \
             use_count = preferences.use_count + 1, \
             successes = preferences.successes + excluded.successes, \
             remembered = (preferences.remembered OR excluded.remembered), \
             label = excluded.label, \
             last_used_at = excluded.last_used_at \
             RETURNING {PREFERENCE_COLUMNS}"
        );
        let row: PreferenceRow = on_tx!(self, |c| async {
            if evidence.remember {
                sqlx::query(forget_others)
                    .bind(user_id)
                    .bind(evidence.signature)
                    .bind(&key)
                    .execute(&mut *c)
                    .await?;
            }
            let row: PreferenceRow = sqlx::query_as(&upsert)
                .bind(user_id)
                .bind(evidence.signature)
                .bind(&key)
                .bind(option_id)
                .bind(custom_json)
                .bind(evidence.label)
                .bind(i64::from(evidence.success))
                .bind(evidence.remember)
                .bind(Ts::of(now))
                .fetch_one(&mut *c)
                .await?;
            Ok::<_, sqlx::Error>(row)
        }
        .await)?;
        row.try_into()
    }
}
