//! Sign-in, sign-out and credential resolution, independent of HTTP.
//!
//! Failed sign-ins are counted per (username, client address) in the database,
//! so the limit holds however many replicas serve the requests. While the
//! limit is reached even the right password is refused, or guessing would only
//! be slowed, not stopped.

use super::config::AuthConfig;
use super::{password, token};
use crate::store::{ApiToken, Store, StoreError, User};
use chrono::{DateTime, Utc};
use thiserror::Error;

/// Why a sign-in was refused.
#[derive(Debug, Error)]
pub enum LoginError {
    /// Unknown username or wrong password (deliberately not saying which).
    #[error("Wrong username or password.")]
    BadCredentials,
    /// Too many failures for this username from this address.
    #[error(
        "Too many failed sign-in attempts. Please wait {} before trying again.",
        minutes(*retry_after_secs)
    )]
    RateLimited { retry_after_secs: i64 },
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn minutes(secs: i64) -> String {
    let m = ((secs + 59) / 60).max(1);
    if m == 1 {
        "a minute".into()
    } else {
        format!("{m} minutes")
    }
}

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
        let key = failure_key(username);
        let since = now - self.config.failure_window;
        let (failures, oldest) = self.store.login_failures_since(&key, ip, since).await?;
        if failures >= self.config.max_failures {
            let lifts_at = oldest.unwrap_or(now) + self.config.failure_window;
            return Err(LoginError::RateLimited {
                retry_after_secs: (lifts_at - now).num_seconds().max(1),
            });
        }

        let found = self.store.credentials(username.trim()).await?;
        let ok = password::verify(password, found.as_ref().map(|(_, h)| h.as_str())).await;
        let user = match (ok, found) {
            (true, Some((user, _))) => user,
            _ => {
                self.store.record_login_failure(&key, ip, now).await?;
                tracing::info!(
                    failures = failures + 1,
                    "sign-in refused: wrong username or password"
                );
                return Err(LoginError::BadCredentials);
            }
        };

        self.store.clear_login_failures(&key, ip).await?;
        // Housekeeping rides along with sign-ins; both deletes use an index.
        self.store.purge_expired_sessions(now).await?;
        self.store.purge_login_failures(since).await?;

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

    /// Ends the session with this cookie secret (no error if it is unknown).
    pub async fn logout(&self, secret: &str) -> Result<(), StoreError> {
        self.store.delete_session(&token::digest(secret)).await?;
        Ok(())
    }

    /// The user of a live session.
    pub async fn session_user(&self, secret: &str, now: DateTime<Utc>) -> Result<Option<User>, StoreError> {
        self.store.session_user(&token::digest(secret), now).await
    }

    /// The owner of an API token.
    pub async fn token_user(&self, secret: &str, now: DateTime<Utc>) -> Result<Option<User>, StoreError> {
        if !secret.starts_with(token::API_TOKEN_PREFIX) {
            return Ok(None);
        }
        self.store.api_token_user(&token::digest(secret), now).await
    }

    /// Issues an API token for a user. The returned secret is the only copy.
    pub async fn create_api_token(
        &self,
        user_id: i64,
        name: &str,
        now: DateTime<Utc>,
    ) -> Result<(ApiToken, String), StoreError> {
        let t = token::new_api_token();
        let stored = self
            .store
            .create_api_token(user_id, name, &t.digest, &t.prefix, now)
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
        let e = LoginError::RateLimited { retry_after_secs: 5 };
        assert!(e.to_string().contains("wait a minute"), "{e}");
    }

    #[test]
    fn failures_are_counted_case_insensitively() {
        assert_eq!(failure_key("  Demo "), "demo");
    }
}
