//! Sign-in, sign-out and credential resolution, independent of HTTP.
//!
//! Every sign-in attempt is recorded in the database *before* its password is
//! checked, and the limits count those rows, so they hold for parallel
//! attempts and across replicas:
//! - per username and address: after `max_failures` failures in the window,
//!   that address is refused for that account (even with the right password,
//!   or guessing would only be slowed, not stopped);
//! - per account from any address: after `account_delay_after` failures each
//!   further attempt waits 1 s, 2 s, 4 s … (at most `max_delay`): spraying from
//!   many addresses is slowed to a crawl, and the owner is never locked out;
//! - per address across usernames (`max_failures_per_address`): one address
//!   cannot spray one password over many accounts;
//! - globally (`max_attempts_per_minute`), and argon2 itself runs behind a
//!   semaphore ([`super::password::Busy`]).
//!
//! A username that cannot exist (see [`valid_username`]) is refused before any
//! database or argon2 work. Wrong *current* passwords on a password change
//! count under the same limits.

use super::config::AuthConfig;
use super::token;
use crate::password::{self, Busy};
use crate::store::{ApiToken, Store, StoreError, User};
use chrono::{DateTime, Duration, Utc};
use thiserror::Error;

/// Longest username (characters); also the longest thing a sign-in stores.
pub const MAX_USERNAME_CHARS: usize = 64;
/// Longest password accepted (characters); argon2 never sees more.
pub const MAX_PASSWORD_CHARS: usize = 1024;

/// Why a sign-in (or a current-password check) was refused.
#[derive(Debug, Error)]
pub enum LoginError {
    /// Unknown username or wrong password (deliberately not saying which).
    #[error("Wrong username or password.")]
    BadCredentials,
    /// The username or password cannot be valid (length, characters).
    #[error("{0}")]
    BadInput(String),
    /// A limit was reached: try again after the wait.
    #[error(
        "Too many failed sign-in attempts. Please wait {} before trying again.",
        wait_text(*retry_after_secs)
    )]
    RateLimited { retry_after_secs: i64 },
    /// Every argon2 permit is taken: try again in a moment.
    #[error(transparent)]
    Busy(#[from] Busy),
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn wait_text(secs: i64) -> String {
    if secs < 60 {
        let s = secs.max(1);
        return if s == 1 {
            "a second".into()
        } else {
            format!("{s} seconds")
        };
    }
    let m = (secs + 59) / 60;
    if m == 1 {
        "a minute".into()
    } else {
        format!("{m} minutes")
    }
}

/// True for a username an account can have: 1 to 64 letters, digits, `.`, `_`, `-`, `@`.
pub fn valid_username(username: &str) -> bool {
    !username.is_empty()
        && username.chars().count() <= MAX_USERNAME_CHARS
        && username
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'))
}

/// What a refused username is told.
pub const USERNAME_RULE: &str = "Usernames are 1 to 64 characters: letters, digits, '.', '_', '-' and '@'.";

/// A successful sign-in: the session's secret goes into the cookie.
#[derive(Clone, Debug)]
pub struct SignedIn {
    pub user: User,
    /// The cookie value. Only its digest is stored.
    pub secret: String,
    pub expires_at: DateTime<Utc>,
}

/// Authentication over the store. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Auth {
    store: Store,
    config: AuthConfig,
}

/// The key failures are counted under: usernames are matched exactly at
/// sign-in, but counted case-insensitively so `Demo` and `demo` share a limit.
fn failure_key(username: &str) -> String {
    username.trim().to_lowercase()
}

/// The "address" wrong current passwords on a password change are recorded under.
const CHANGE_PASSWORD_SOURCE: &str = "change-password";

impl Auth {
    pub fn new(store: Store, config: AuthConfig) -> Self {
        Auth { store, config }
    }

    pub fn config(&self) -> &AuthConfig {
        &self.config
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Checks the password and opens a session. `ip` is the client address
    /// as text (whatever identifies the client for rate limiting).
    pub async fn login(
        &self,
        username: &str,
        password: &str,
        ip: &str,
        now: DateTime<Utc>,
    ) -> Result<SignedIn, LoginError> {
        let username = username.trim();
        let user = self
            .check_password(username, password, ip, now, |store| async move {
                store.credentials(username).await
            })
            .await?;
        // Housekeeping rides along with sign-ins; both deletes use an index.
        self.store.purge_expired_sessions(now).await?;

        let secret = token::new_session_secret();
        let expires_at = now + self.config.session_ttl;
        self.store
            .create_session(user.id, &token::digest(&secret), now, expires_at)
            .await?;
        tracing::info!(user_id = user.id, "signed in");
        Ok(SignedIn {
            user,
            secret,
            expires_at,
        })
    }

    /// Changes a signed-in user's password after checking the current one,
    /// under the same limits as sign-in (keyed on the account and
    /// `change-password`, so it cannot be used to guess past them). Every
    /// session and API token of the user ends; they sign in again.
    pub async fn change_password(
        &self,
        user: &User,
        current: &str,
        new: &str,
        now: DateTime<Utc>,
    ) -> Result<(), LoginError> {
        let stored = self.store.password_hash(user.id).await?;
        let found = Some((user.clone(), stored.clone()));
        self.check_password(
            &user.username,
            current,
            CHANGE_PASSWORD_SOURCE,
            now,
            |_| async move { Ok(found) },
        )
        .await?;
        let new_hash = password::hash(new).await;
        if !self
            .store
            .replace_password_hash(user.id, &stored, &new_hash)
            .await?
        {
            // Changed meanwhile by another request: the current password we checked is stale.
            return Err(LoginError::BadCredentials);
        }
        tracing::info!(user_id = user.id, "password changed; sessions and tokens ended");
        Ok(())
    }

    /// Records the attempt, applies the limits, and verifies `password`
    /// against what `lookup` finds. Returns the user on success.
    async fn check_password<F, Fut>(
        &self,
        username: &str,
        password: &str,
        ip: &str,
        now: DateTime<Utc>,
        lookup: F,
    ) -> Result<User, LoginError>
    where
        F: FnOnce(Store) -> Fut,
        Fut: std::future::Future<Output = Result<Option<(User, String)>, StoreError>>,
    {
        if !valid_username(username) {
            return Err(LoginError::BadInput(USERNAME_RULE.into()));
        }
        if password.chars().count() > MAX_PASSWORD_CHARS {
            return Err(LoginError::BadInput(format!(
                "Passwords are at most {MAX_PASSWORD_CHARS} characters."
            )));
        }
        let key = failure_key(username);
        let attempt = self.store.begin_login_attempt(&key, ip, now).await?;
        if let Err(e) = self.within_limits(attempt, &key, ip, now).await {
            self.store.forget_login_attempt(attempt).await?;
            return Err(e);
        }
        let found = lookup(self.store.clone()).await?;
        let ok = match password::verify(password, found.as_ref().map(|(_, h)| h.as_str())).await {
            Ok(ok) => ok,
            Err(busy) => {
                self.store.forget_login_attempt(attempt).await?;
                tracing::warn!("sign-in refused: every argon2 permit is taken");
                return Err(busy.into());
            }
        };
        match (ok, found) {
            (true, Some((user, _))) => {
                self.store.clear_login_failures(&key, ip).await?;
                self.store
                    .purge_login_failures(now - self.config.failure_retention)
                    .await?;
                Ok(user)
            }
            _ => {
                tracing::info!(source = ip, "sign-in refused: wrong username or password");
                Err(LoginError::BadCredentials)
            }
        }
    }

    /// The limits, checked against the attempts recorded so far (this one included).
    async fn within_limits(
        &self,
        attempt: i64,
        key: &str,
        ip: &str,
        now: DateTime<Utc>,
    ) -> Result<(), LoginError> {
        let c = &self.config;
        let counts = self
            .store
            .login_attempt_counts(
                attempt,
                key,
                ip,
                now - c.failure_window,
                now - Duration::minutes(1),
            )
            .await?;
        let until_window_ends = |oldest: Option<DateTime<Utc>>| LoginError::RateLimited {
            retry_after_secs: (oldest.unwrap_or(now) + c.failure_window - now)
                .num_seconds()
                .max(1),
        };
        if counts.pair > c.max_failures {
            return Err(until_window_ends(counts.pair_oldest));
        }
        if counts.address > c.max_failures_per_address {
            tracing::warn!(source = ip, "sign-in refused: too many failures from one address");
            return Err(until_window_ends(counts.address_oldest));
        }
        if counts.last_minute > c.max_attempts_per_minute {
            tracing::warn!("sign-in refused: too many attempts in the last minute");
            return Err(LoginError::RateLimited { retry_after_secs: 10 });
        }
        if counts.account_others >= c.account_delay_after
            && let Some(latest) = counts.account_latest
        {
            let step = (counts.account_others - c.account_delay_after).min(30) as u32;
            let delay = Duration::seconds(1_i64 << step).min(c.max_delay);
            let ready = latest + delay;
            if now < ready {
                return Err(LoginError::RateLimited {
                    retry_after_secs: (ready - now).num_seconds().max(1),
                });
            }
        }
        Ok(())
    }

    /// Deletes what the sign-in state no longer needs: expired and idle
    /// sessions, and failed sign-ins older than the retention. Runs hourly
    /// from `serve` (and after each successful sign-in for the failures).
    /// Returns (sessions, failures) deleted.
    pub async fn housekeeping(&self, now: DateTime<Utc>) -> Result<(u64, u64), StoreError> {
        let sessions = self.store.purge_expired_sessions(now).await?
            + self
                .store
                .purge_idle_sessions(now - self.config.session_idle)
                .await?;
        let failures = self
            .store
            .purge_login_failures(now - self.config.failure_retention.max(self.config.failure_window))
            .await?;
        Ok((sessions, failures))
    }

    /// Ends the session with this cookie secret (no error if it is unknown).
    pub async fn logout(&self, secret: &str) -> Result<(), StoreError> {
        self.store.delete_session(&token::digest(secret)).await?;
        Ok(())
    }

    /// The user of a live session that was used within the idle timeout.
    pub async fn session_user(&self, secret: &str, now: DateTime<Utc>) -> Result<Option<User>, StoreError> {
        self.store
            .session_user_active_since(&token::digest(secret), now, Some(now - self.config.session_idle))
            .await
    }

    /// The owner of an API token.
    pub async fn token_user(&self, secret: &str, now: DateTime<Utc>) -> Result<Option<User>, StoreError> {
        if !secret.starts_with(token::API_TOKEN_PREFIX) {
            return Ok(None);
        }
        self.store.api_token_user(&token::digest(secret), now).await
    }

    /// Issues an API token for a user, valid until `expires_at` (or until
    /// revoked or the password changes). The returned secret is the only copy.
    pub async fn create_api_token(
        &self,
        user_id: i64,
        name: &str,
        now: DateTime<Utc>,
        expires_at: Option<DateTime<Utc>>,
    ) -> Result<(ApiToken, String), StoreError> {
        let t = token::new_api_token();
        let stored = self
            .store
            .create_api_token(user_id, name, &t.digest, &t.prefix, now, expires_at)
            .await?;
        Ok((stored, t.secret))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_limit_message_says_how_long_to_wait() {
        let e = LoginError::RateLimited { retry_after_secs: 61 };
        assert_eq!(
            e.to_string(),
            "Too many failed sign-in attempts. Please wait 2 minutes before trying again."
        );
        let e = LoginError::RateLimited { retry_after_secs: 60 };
        assert!(e.to_string().contains("wait a minute"), "{e}");
        let e = LoginError::RateLimited { retry_after_secs: 8 };
        assert!(e.to_string().contains("wait 8 seconds"), "{e}");
    }

    #[test]
    fn usernames_are_checked_before_any_work() {
        for ok in ["demo", "dana.reyes@clinic.example", "a_b-c"] {
            assert!(valid_username(ok), "{ok}");
        }
        let long = "a".repeat(65);
        for bad in [
            "",
            "has space",
            "x'; DROP TABLE users; --",
            long.as_str(),
            "émile",
        ] {
            assert!(!valid_username(bad), "{bad}");
        }
    }

    #[test]
    fn failures_are_counted_case_insensitively() {
        assert_eq!(failure_key("  Demo "), "demo");
    }
}
