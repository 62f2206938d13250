//! Authentication settings, read once at start-up.
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `CLARION_SECURE_COOKIES` | off | `1`/`true`: always mark the session cookie `Secure` (it is anyway when the request came over TLS) |
//! | `CLARION_TRUST_PROXY` | off | `1`/`true`: take the client address from the last `X-Forwarded-For` entry (only behind a proxy that sets it) |

use crate::error::StartupError;
use chrono::Duration;

/// How sign-in behaves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthConfig {
    /// Mark the session cookie `Secure` even on plain-HTTP requests.
    pub secure_cookies: bool,
    /// Believe `X-Forwarded-For` for the client address (rate limiting).
    pub trust_proxy: bool,
    /// How long a session lasts after sign-in.
    pub session_ttl: Duration,
    /// Failed sign-ins allowed per username and address within `failure_window`.
    pub max_failures: i64,
    /// The window failed sign-ins are counted over.
    pub failure_window: Duration,
}

impl Default for AuthConfig {
    fn default() -> Self {
        AuthConfig {
            secure_cookies: false,
            trust_proxy: false,
            session_ttl: Duration::hours(12),
            max_failures: 5,
            failure_window: Duration::minutes(15),
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
        Ok(AuthConfig {
            secure_cookies: flag("CLARION_SECURE_COOKIES")?,
            trust_proxy: flag("CLARION_TRUST_PROXY")?,
            ..AuthConfig::default()
        })
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
    fn a_bad_flag_names_the_variable() {
        let e = config(&[("CLARION_TRUST_PROXY", "maybe")])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("CLARION_TRUST_PROXY is invalid"), "{e}");
    }
}
