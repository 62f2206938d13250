//! Authentication settings, read once at start-up.
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `CLARION_SECURE_COOKIES` | off | `1`/`true`: always mark the session cookie `Secure` (it is anyway when the request came over TLS) |
//! | `CLARION_TRUST_PROXY` | off | the proxies in front of Clarion whose `X-Forwarded-For` is believed for the client address: a hop count (`1` = the last entry) or a comma-separated list of their networks (`10.0.0.0/8,fd00::/8`) |
//! | `CLARION_SESSION_HOURS` | 12 | a session ends this long after sign-in, however active |
//! | `CLARION_SESSION_IDLE_MINUTES` | 60 | a session ends after this long without a request |
//! | `CLARION_LOGIN_FAILURE_RETENTION_HOURS` | 24 | failed sign-ins older than this are deleted (hourly) |

use super::proxy::TrustedProxies;
use crate::error::StartupError;
use axum::http::{HeaderMap, Uri};
use chrono::Duration;

/// How sign-in behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthConfig {
    /// Mark the session cookie `Secure` even on plain-HTTP requests.
    pub secure_cookies: bool,
    /// Whose `X-Forwarded-For` is believed for the client address (rate limiting).
    pub trusted_proxies: TrustedProxies,
    /// How long a session lasts after sign-in (absolute).
    pub session_ttl: Duration,
    /// How long a session lasts without a request (idle).
    pub session_idle: Duration,
    /// Failed sign-ins allowed per username and address within `failure_window`
    /// (then that address is refused for that account until the window passes).
    pub max_failures: i64,
    /// Failed sign-ins on one account, from any address, before each further
    /// attempt must wait (1 s, doubling, at most `max_delay`): a slow-down, never
    /// a lock-out, so spraying guesses from many addresses cannot lock the owner out.
    pub account_delay_after: i64,
    /// The longest wait between attempts on one account.
    pub max_delay: Duration,
    /// Failed sign-ins allowed from one address, across usernames, within `failure_window`.
    pub max_failures_per_address: i64,
    /// Sign-in attempts (of everyone) allowed per minute before new ones wait.
    pub max_attempts_per_minute: i64,
    /// The window failed sign-ins are counted over.
    pub failure_window: Duration,
    /// Failed sign-ins are kept this long (then purged by the housekeeping task).
    pub failure_retention: Duration,
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            secure_cookies: false,
            trusted_proxies: TrustedProxies::None,
            session_ttl: Duration::hours(12),
            session_idle: Duration::minutes(60),
            max_failures: 5,
            account_delay_after: 10,
            max_delay: Duration::seconds(60),
            max_failures_per_address: 30,
            max_attempts_per_minute: 600,
            failure_window: Duration::minutes(15),
            failure_retention: Duration::hours(24),
        }
    }
}

impl AuthConfig {
    /// Reads the settings from the process environment.
    pub fn from_env() -> Result<Self, StartupError> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Reads the settings from any key lookup (used by tests).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, StartupError> {
        let flag = |name: &'static str| -> Result<bool, StartupError> {
            match get(name).map(|v| v.trim().to_ascii_lowercase()).as_deref() {
                None | Some("" | "0" | "false" | "no" | "off") => Ok(false),
                Some("1" | "true" | "yes" | "on") => Ok(true),
                Some(other) => Err(StartupError::BadConfig {
                    name,
                    reason: format!("{other:?} is not one of: 1, 0, true, false"),
                }),
            }
        };
        let number =
            |name: &'static str, default: i64, max: i64| -> Result<i64, StartupError> {
                match get(name).map(|v| v.trim().to_string()).filter(|v| !v.is_empty()) {
                    None => Ok(default),
                    Some(v) => v.parse::<i64>().ok().filter(|n| (1..=max).contains(n)).ok_or(
                        StartupError::BadConfig {
                            name,
                            reason: format!("{v:?} is not a whole number from 1 to {max}"),
                        },
                    ),
                }
            };
        let trusted_proxies = match get("CLARION_TRUST_PROXY") {
            None => TrustedProxies::None,
            Some(v) => TrustedProxies::parse(&v).map_err(|reason| StartupError::BadConfig {
                name: "CLARION_TRUST_PROXY",
                reason,
            })?,
        };
        let defaults = AuthConfig::default();
        Ok(AuthConfig {
            secure_cookies: flag("CLARION_SECURE_COOKIES")?,
            trusted_proxies,
            session_ttl: Duration::hours(number(
                "CLARION_SESSION_HOURS",
                defaults.session_ttl.num_hours(),
                24 * 90,
            )?),
            session_idle: Duration::minutes(number(
                "CLARION_SESSION_IDLE_MINUTES",
                defaults.session_idle.num_minutes(),
                24 * 60 * 90,
            )?),
            failure_retention: Duration::hours(number(
                "CLARION_LOGIN_FAILURE_RETENTION_HOURS",
                defaults.failure_retention.num_hours(),
                24 * 365,
            )?),
            ..defaults
        })
    }

    /// True when the session cookie of this request is `Secure` (and `__Host-` named).
    pub fn secure_request(&self, headers: &HeaderMap, uri: &Uri) -> bool {
        self.secure_cookies || super::cookie::came_over_tls(headers, uri)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)]) -> Result<AuthConfig, StartupError> {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        AuthConfig::from_lookup(|k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone()))
    }

    #[test]
    fn nothing_set_means_defaults() {
        assert_eq!(config(&[]).unwrap(), AuthConfig::default());
    }

    #[test]
    fn secure_cookies_accepts_one_and_true() {
        assert!(config(&[("CLARION_SECURE_COOKIES", "1")]).unwrap().secure_cookies);
        assert!(
            config(&[("CLARION_SECURE_COOKIES", "TRUE")])
                .unwrap()
                .secure_cookies
        );
        assert!(!config(&[("CLARION_SECURE_COOKIES", "0")]).unwrap().secure_cookies);
    }

    #[test]
    fn a_bad_setting_names_the_variable() {
        for (name, value) in [
            ("CLARION_TRUST_PROXY", "maybe"),
            ("CLARION_SECURE_COOKIES", "maybe"),
            ("CLARION_SESSION_IDLE_MINUTES", "0"),
            ("CLARION_SESSION_HOURS", "lots"),
        ] {
            let e = config(&[(name, value)]).unwrap_err().to_string();
            assert!(e.starts_with(&format!("{name} is invalid")), "{e}");
        }
    }

    #[test]
    fn timeouts_and_proxies_are_read() {
        let c = config(&[
            ("CLARION_SESSION_IDLE_MINUTES", "15"),
            ("CLARION_SESSION_HOURS", "8"),
            ("CLARION_TRUST_PROXY", "2"),
        ])
        .unwrap();
        assert_eq!(c.session_idle, Duration::minutes(15));
        assert_eq!(c.session_ttl, Duration::hours(8));
        assert_eq!(c.trusted_proxies, TrustedProxies::Hops(2));
    }
}
