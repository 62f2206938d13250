//! Sign-in state shared by every replica: sessions, API tokens and recent
//! failed sign-in attempts.
//!
//! Session and API-token secrets are never stored: callers pass the SHA-256 of
//! the secret ([`crate::auth::token::digest`]) and look rows up by it, so a
//! leaked database does not hand out working credentials.

use super::time::Ts;
use super::users::{USER_COLUMNS, user_from_row};
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
    /// After this the token no longer authenticates (`None`: until revoked).
    pub expires_at: Option<DateTime<Utc>>,
}

type TokenRow = (i64, i64, String, String, Ts, Option<Ts>, Option<Ts>);

fn token_from_row((id, user_id, name, prefix, created, used, expires): TokenRow) -> ApiToken {
    ApiToken {
        id,
        user_id,
        name,
        prefix,
        created_at: created.0,
        last_used_at: used.map(|t| t.0),
        expires_at: expires.map(|t| t.0),
    }
}

/// The counts behind the sign-in limits ([`Store::login_attempt_counts`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoginAttemptCounts {
    /// Failures of this username from this address, this attempt included.
    pub pair: i64,
    pub pair_oldest: Option<DateTime<Utc>>,
    /// Failures (and attempts under way) of this username from any address, this one excluded.
    pub account_others: i64,
    pub account_latest: Option<DateTime<Utc>>,
    /// Failures from this address, any username, this attempt included.
    pub address: i64,
    pub address_oldest: Option<DateTime<Utc>>,
    /// Attempts by anyone in the last minute, this one included.
    pub last_minute: i64,
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
        self.session_user_active_since(token_digest, now, None).await
    }

    /// The user of a session that is live and, with `active_since`, was used
    /// after that time (the idle timeout); records the use (at most once a
    /// minute, so reads do not all become writes).
    pub async fn session_user_active_since(
        &self,
        token_digest: &str,
        now: DateTime<Utc>,
        active_since: Option<DateTime<Utc>>,
    ) -> Result<Option<User>, StoreError> {
        let sql = format!(
            "SELECT {USER_COLUMNS}, COALESCE(s.last_seen_at, s.created_at) FROM sessions s \
             JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1 AND s.expires_at > $2"
        );
        let row: Option<(i64, String, String, String, Ts)> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(token_digest)
            .bind(Ts::of(now))
            .fetch_optional(p)
            .await)?;
        let Some((id, username, name, role, seen)) = row else {
            return Ok(None);
        };
        if active_since.is_some_and(|since| seen.0 <= since) {
            return Ok(None);
        }
        if active_since.is_some() && seen.0 < now - TOKEN_TOUCH_INTERVAL {
            let touch = "UPDATE sessions SET last_seen_at = $2 WHERE token_hash = $1";
            on_pool!(&self.db, |p| sqlx::query(touch)
                .bind(token_digest)
                .bind(Ts::of(now))
                .execute(p)
                .await
                .map(|_| ()))?;
        }
        Ok(Some(user_from_row((id, username, name, role))))
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

    /// Deletes sessions unused since `before` (the idle timeout; housekeeping).
    pub async fn purge_idle_sessions(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let sql = "DELETE FROM sessions WHERE COALESCE(last_seen_at, created_at) <= $1";
        Ok(on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(Ts::of(before))
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?)
    }

    /// Stores a new API token for `user_id`, identified by the digest of its
    /// secret, valid until `expires_at` (or until revoked).
    pub async fn create_api_token(
        &self,
        user_id: i64,
        name: &str,
        token_digest: &str,
        prefix: &str,
        now: DateTime<Utc>,
        expires_at: Option<DateTime<Utc>>,
    ) -> Result<ApiToken, StoreError> {
        let sql = "INSERT INTO api_tokens (user_id, name, token_hash, prefix, created_at, expires_at) \
                   VALUES ($1, $2, $3, $4, $5, $6) \
                   RETURNING id, user_id, name, prefix, created_at, last_used_at, expires_at";
        let row: TokenRow = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(user_id)
            .bind(name)
            .bind(token_digest)
            .bind(prefix)
            .bind(Ts::of(now))
            .bind(expires_at.map(Ts::of))
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
             WHERE t.token_hash = $1 AND (t.expires_at IS NULL OR t.expires_at > $2)"
        );
        let row: Option<(i64, i64, String, String, String)> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(token_digest)
            .bind(Ts::of(now))
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
        let sql = "SELECT id, user_id, name, prefix, created_at, last_used_at, expires_at FROM api_tokens \
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

    /// Records a sign-in attempt *before* its password is checked, so that
    /// parallel attempts (on any replica) see each other when they count.
    /// The row stays as a failure unless [`Store::forget_login_attempt`] or
    /// [`Store::clear_login_failures`] removes it. Returns its id.
    pub async fn begin_login_attempt(
        &self,
        username: &str,
        ip: &str,
        now: DateTime<Utc>,
    ) -> Result<i64, StoreError> {
        let sql = "INSERT INTO login_failures (username, ip, failed_at) VALUES ($1, $2, $3) RETURNING id";
        let (id,): (i64,) = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(username)
            .bind(ip)
            .bind(Ts::of(now))
            .fetch_one(p)
            .await)?;
        Ok(id)
    }

    /// Removes one attempt (refused before its password was checked, or not
    /// a real attempt because the server was busy).
    pub async fn forget_login_attempt(&self, id: i64) -> Result<(), StoreError> {
        on_pool!(&self.db, |p| sqlx::query(
            "DELETE FROM login_failures WHERE id = $1"
        )
        .bind(id)
        .execute(p)
        .await
        .map(|_| ()))?;
        Ok(())
    }

    /// What the sign-in limits look at for attempt `attempt` (already
    /// recorded) by `username` from `ip`: failures after `since`, and every
    /// attempt after `minute_ago`.
    pub async fn login_attempt_counts(
        &self,
        attempt: i64,
        username: &str,
        ip: &str,
        since: DateTime<Utc>,
        minute_ago: DateTime<Utc>,
    ) -> Result<LoginAttemptCounts, StoreError> {
        let sql = "SELECT \
              COALESCE(SUM(CASE WHEN username = $1 AND ip = $2 THEN 1 ELSE 0 END), 0), \
              MIN(CASE WHEN username = $1 AND ip = $2 THEN failed_at END), \
              COALESCE(SUM(CASE WHEN username = $1 AND id <> $3 THEN 1 ELSE 0 END), 0), \
              MAX(CASE WHEN username = $1 AND id <> $3 THEN failed_at END), \
              COALESCE(SUM(CASE WHEN ip = $2 THEN 1 ELSE 0 END), 0), \
              MIN(CASE WHEN ip = $2 THEN failed_at END), \
              COALESCE(SUM(CASE WHEN failed_at > $5 THEN 1 ELSE 0 END), 0) \
            FROM login_failures WHERE failed_at > $4";
        type Row = (i64, Option<Ts>, i64, Option<Ts>, i64, Option<Ts>, i64);
        let row: Row = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(username)
            .bind(ip)
            .bind(attempt)
            .bind(Ts::of(since))
            .bind(Ts::of(minute_ago))
            .fetch_one(p)
            .await)?;
        Ok(LoginAttemptCounts {
            pair: row.0,
            pair_oldest: row.1.map(|t| t.0),
            account_others: row.2,
            account_latest: row.3.map(|t| t.0),
            address: row.4,
            address_oldest: row.5.map(|t| t.0),
            last_minute: row.6,
        })
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
