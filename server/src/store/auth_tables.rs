//! Sign-in state shared by every replica: sessions, API tokens and recent
//! failed sign-in attempts.
//!
//! Session and API-token secrets are never stored: callers pass the SHA-256 of
//! the secret ([`crate::auth::token::digest`]) and look rows up by it, so a
//! leaked database does not hand out working credentials.

use super::time::Ts;
use super::users::{USER_COLUMNS, UserRow, user_from_row};
use super::{Store, StoreError, User};
use chrono::{DateTime, Utc};

/// An API token as listed to its owner (the secret itself is shown once, at creation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiToken {
    pub id: i64,
    pub user_id: i64,
    /// What the integrator called it ("nightly export").
    pub name: String,
    /// The first characters of the secret, so a user can tell tokens apart.
    pub prefix: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}

type TokenRow = (i64, i64, String, String, Ts, Option<Ts>);

fn token_from_row((id, user_id, name, prefix, created, used): TokenRow) -> ApiToken {
    ApiToken {
        id,
        user_id,
        name,
        prefix,
        created_at: created.0,
        last_used_at: used.map(|t| t.0),
    }
}

/// `last_used_at` is refreshed at most this often, so a busy integrator does
/// not turn every read into a write.
const TOKEN_TOUCH_INTERVAL: chrono::Duration = chrono::Duration::minutes(1);

impl Store {
    /// Stores a new session for `user_id`, identified by the digest of its secret.
    pub async fn create_session(
        &self,
        user_id: i64,
        token_digest: &str,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let sql =
            "INSERT INTO sessions (token_hash, user_id, created_at, expires_at) VALUES ($1, $2, $3, $4)";
        on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(token_digest)
            .bind(user_id)
            .bind(Ts::of(now))
            .bind(Ts::of(expires_at))
            .execute(p)
            .await
            .map(|_| ()))?;
        Ok(())
    }

    /// The user of a live session (`expires_at > now`), or `None`.
    pub async fn session_user(
        &self,
        token_digest: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<User>, StoreError> {
        let sql = format!(
            "SELECT {USER_COLUMNS} FROM sessions s JOIN users u ON u.id = s.user_id \
             WHERE s.token_hash = $1 AND s.expires_at > $2"
        );
        let row: Option<UserRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(token_digest)
            .bind(Ts::of(now))
            .fetch_optional(p)
            .await)?;
        Ok(row.map(user_from_row))
    }

    /// Ends one session (sign-out). Returns whether it existed.
    pub async fn delete_session(&self, token_digest: &str) -> Result<bool, StoreError> {
        let sql = "DELETE FROM sessions WHERE token_hash = $1";
        let done = on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(token_digest)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(done > 0)
    }

    /// Ends every session of a user. Returns how many there were.
    pub async fn delete_sessions_of(&self, user_id: i64) -> Result<u64, StoreError> {
        let sql = "DELETE FROM sessions WHERE user_id = $1";
        Ok(on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(user_id)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?)
    }

    /// Deletes sessions that expired at or before `now` (housekeeping).
    pub async fn purge_expired_sessions(&self, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let sql = "DELETE FROM sessions WHERE expires_at <= $1";
        Ok(on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(Ts::of(now))
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?)
    }

    /// Stores a new API token for `user_id`, identified by the digest of its secret.
    pub async fn create_api_token(
        &self,
        user_id: i64,
        name: &str,
        token_digest: &str,
        prefix: &str,
        now: DateTime<Utc>,
    ) -> Result<ApiToken, StoreError> {
        let sql = "INSERT INTO api_tokens (user_id, name, token_hash, prefix, created_at) \
                   VALUES ($1, $2, $3, $4, $5) \
                   RETURNING id, user_id, name, prefix, created_at, last_used_at";
        let row: TokenRow = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(user_id)
            .bind(name)
            .bind(token_digest)
            .bind(prefix)
            .bind(Ts::of(now))
            .fetch_one(p)
            .await)?;
        Ok(token_from_row(row))
    }

    /// The owner of an API token, or `None`; records when it was last used.
    pub async fn api_token_user(
        &self,
        token_digest: &str,
        now: DateTime<Utc>,
    ) -> Result<Option<User>, StoreError> {
        let sql = format!(
            "SELECT t.id, {USER_COLUMNS} FROM api_tokens t JOIN users u ON u.id = t.user_id \
             WHERE t.token_hash = $1"
        );
        let row: Option<(i64, i64, String, String, String)> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(token_digest)
            .fetch_optional(p)
            .await)?;
        let Some((token_id, id, username, name, role)) = row else {
            return Ok(None);
        };
        let touch = "UPDATE api_tokens SET last_used_at = $2 \
                     WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)";
        on_pool!(&self.db, |p| sqlx::query(touch)
            .bind(token_id)
            .bind(Ts::of(now))
            .bind(Ts::of(now - TOKEN_TOUCH_INTERVAL))
            .execute(p)
            .await
            .map(|_| ()))?;
        Ok(Some(user_from_row((id, username, name, role))))
    }

    /// A user's API tokens, newest first.
    pub async fn api_tokens(&self, user_id: i64) -> Result<Vec<ApiToken>, StoreError> {
        let sql = "SELECT id, user_id, name, prefix, created_at, last_used_at FROM api_tokens \
                   WHERE user_id = $1 ORDER BY created_at DESC, id DESC";
        let rows: Vec<TokenRow> =
            on_pool!(&self.db, |p| sqlx::query_as(sql).bind(user_id).fetch_all(p).await)?;
        Ok(rows.into_iter().map(token_from_row).collect())
    }

    /// Revokes (deletes) one of the user's API tokens; `NotFound` if it is not theirs.
    pub async fn revoke_api_token(&self, user_id: i64, token_id: i64) -> Result<(), StoreError> {
        let sql = "DELETE FROM api_tokens WHERE id = $1 AND user_id = $2";
        let done = on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(token_id)
            .bind(user_id)
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        if done == 0 {
            return Err(StoreError::NotFound);
        }
        Ok(())
    }

    /// Records one failed sign-in for this username from this address.
    pub async fn record_login_failure(
        &self,
        username: &str,
        ip: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let sql = "INSERT INTO login_failures (username, ip, failed_at) VALUES ($1, $2, $3)";
        on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(username)
            .bind(ip)
            .bind(Ts::of(now))
            .execute(p)
            .await
            .map(|_| ()))?;
        Ok(())
    }

    /// How many sign-ins failed for this username from this address after
    /// `since`, and when the oldest of those happened (to say when the limit lifts).
    pub async fn login_failures_since(
        &self,
        username: &str,
        ip: &str,
        since: DateTime<Utc>,
    ) -> Result<(i64, Option<DateTime<Utc>>), StoreError> {
        let sql = "SELECT COUNT(*), MIN(failed_at) FROM login_failures \
                   WHERE username = $1 AND ip = $2 AND failed_at > $3";
        let (count, oldest): (i64, Option<Ts>) = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(username)
            .bind(ip)
            .bind(Ts::of(since))
            .fetch_one(p)
            .await)?;
        Ok((count, oldest.map(|t| t.0)))
    }

    /// Forgets failed sign-ins for this username and address (after a success).
    pub async fn clear_login_failures(&self, username: &str, ip: &str) -> Result<(), StoreError> {
        let sql = "DELETE FROM login_failures WHERE username = $1 AND ip = $2";
        on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(username)
            .bind(ip)
            .execute(p)
            .await
            .map(|_| ()))?;
        Ok(())
    }

    /// Deletes failure records older than `before` (housekeeping).
    pub async fn purge_login_failures(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let sql = "DELETE FROM login_failures WHERE failed_at <= $1";
        Ok(on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(Ts::of(before))
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?)
    }
}
