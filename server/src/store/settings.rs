//! Per-user settings (F13): skip clarifications, clarification sensitivity.

use super::{Store, StoreError};
use app::protocol::{Sensitivity, Settings};

impl Store {
    /// A user's settings, or the defaults if never saved.
    pub async fn settings(&self, user_id: i64) -> Result<Settings, StoreError> {
        let sql = "SELECT skip_clarifications, sensitivity FROM user_settings WHERE user_id = $1";
        let row: Option<(bool, String)> = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(user_id)
            .fetch_optional(p)
            .await)?;
        match row {
            None => Ok(Settings::default()),
            Some((skip, sens)) => Ok(Settings {
                skip_clarifications: skip,
                sensitivity: Sensitivity::parse(&sens)
                    .ok_or_else(|| StoreError::Corrupt(format!("sensitivity {sens:?}")))?,
            }),
        }
    }

    /// Stores a user's settings (insert or replace).
    pub async fn save_settings(&self, user_id: i64, s: &Settings) -> Result<(), StoreError> {
        let sql = "INSERT INTO user_settings (user_id, skip_clarifications, sensitivity) VALUES ($1, $2, $3) \
                   ON CONFLICT (user_id) DO UPDATE SET skip_clarifications = excluded.skip_clarifications, \
                   sensitivity = excluded.sensitivity, updated_at = CURRENT_TIMESTAMP";
        on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(user_id)
            .bind(s.skip_clarifications)
            .bind(s.sensitivity.as_str())
            .execute(p)
            .await
            .map(|_| ()))?;
        Ok(())
    }
}
