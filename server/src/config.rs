//! Typed configuration, read from the environment in one place.
//!
//! Every variable is documented in the README with its default; the embedded
//! default (SQLite under `./data`) needs none of them. Secrets are never logged:
//! use [`crate::db::redact_url`] before printing a database URL.
//!
//! It reads each part's settings through that part's own config type
//! (`orchestrator::config`), never through the part itself, so configuration
//! sits above the parts in the layering.

use crate::error::StartupError;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Log output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

/// Server configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// Address the HTTP server binds to (`CLARION_ADDR`, default `127.0.0.1:3000`).
    pub addr: SocketAddr,
    /// Directory for the embedded SQLite database (`CLARION_DATA_DIR`, default `data`).
    pub data_dir: PathBuf,
    /// Database URL (`DATABASE_URL`, default `sqlite://<data_dir>/clarion.db`).
    pub database_url: String,
    /// True when `DATABASE_URL` was not set: the embedded demo setup.
    pub embedded: bool,
    /// Create the demo accounts (published passwords) and seed the demo data:
    /// `CLARION_DEMO=1` on any database, `0` never; unset, only for the embedded
    /// default bound to a loopback address (nobody else can reach it).
    pub demo: bool,
    /// Log filter (`CLARION_LOG`, default `info`; `RUST_LOG` syntax).
    pub log_filter: String,
    /// Log format (`CLARION_LOG_FORMAT`: `text` or `json`, default `text`).
    pub log_format: LogFormat,
    /// Where the built site (CSS/JS/wasm) lives (`LEPTOS_SITE_ROOT`, default `target/site`).
    pub site_root: String,
    /// The clarification loop's limits (rounds, expiry, row cap, time limits, `today`).
    pub orchestrator: crate::orchestrator::config::OrchestratorConfig,
}

impl Config {
    /// Reads the configuration from the process environment.
    pub fn from_env() -> Result<Self, StartupError> {
        Self::from_lookup(|k| std::env::var(k).ok())
    }

    /// Reads the configuration from any key lookup (used by tests).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>) -> Result<Self, StartupError> {
        let non_empty = |k: &str| get(k).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());

        let addr_text = non_empty("CLARION_ADDR").unwrap_or_else(|| "127.0.0.1:3000".into());
        let addr = addr_text
            .parse::<SocketAddr>()
            .map_err(|e| StartupError::BadConfig {
                name: "CLARION_ADDR",
                reason: format!("{addr_text:?} is not an address like 127.0.0.1:3000 ({e})"),
            })?;

        let data_dir = PathBuf::from(non_empty("CLARION_DATA_DIR").unwrap_or_else(|| "data".into()));
        let (database_url, embedded) = match non_empty("DATABASE_URL") {
            Some(url) => (url, false),
            None => (
                format!("sqlite://{}", data_dir.join("clarion.db").display()),
                true,
            ),
        };
        crate::db::Backend::of_url(&database_url)?;
        let demo = match non_empty("CLARION_DEMO")
            .map(|v| v.to_ascii_lowercase())
            .as_deref()
        {
            None => embedded && addr.ip().is_loopback(),
            Some("1" | "true" | "yes" | "on") => true,
            Some("0" | "false" | "no" | "off") => false,
            Some(other) => {
                return Err(StartupError::BadConfig {
                    name: "CLARION_DEMO",
                    reason: format!("{other:?} is not one of: 1, 0"),
                });
            }
        };

        let log_filter = non_empty("CLARION_LOG").unwrap_or_else(|| "info".into());
        let log_format = match non_empty("CLARION_LOG_FORMAT").as_deref() {
            None | Some("text") => LogFormat::Text,
            Some("json") => LogFormat::Json,
            Some(other) => {
                return Err(StartupError::BadConfig {
                    name: "CLARION_LOG_FORMAT",
                    reason: format!("{other:?} is not one of: text, json"),
                });
            }
        };
        let site_root = non_empty("LEPTOS_SITE_ROOT").unwrap_or_else(|| "target/site".into());
        let orchestrator = crate::orchestrator::config::OrchestratorConfig::from_lookup(&non_empty)?;

        Ok(Config {
            addr,
            data_dir,
            database_url,
            embedded,
            demo,
            log_filter,
            log_format,
            site_root,
            orchestrator,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn config(vars: &[(&str, &str)]) -> Result<Config, StartupError> {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_lookup(|k| map.get(k).cloned())
    }

    #[test]
    fn no_variables_means_the_embedded_sqlite_default() {
        let c = config(&[]).unwrap();
        assert_eq!(c.addr.to_string(), "127.0.0.1:3000");
        assert_eq!(c.database_url, "sqlite://data/clarion.db");
        assert!(c.embedded);
        assert_eq!(c.log_filter, "info");
        assert_eq!(c.log_format, LogFormat::Text);
        assert_eq!(c.site_root, "target/site");
    }

    #[test]
    fn data_dir_moves_the_default_database() {
        let c = config(&[("CLARION_DATA_DIR", "/var/lib/clarion")]).unwrap();
        assert_eq!(c.database_url, "sqlite:///var/lib/clarion/clarion.db");
    }

    #[test]
    fn a_postgres_url_is_not_embedded() {
        let c = config(&[("DATABASE_URL", "postgres://clarion@db/clarion")]).unwrap();
        assert!(!c.embedded);
    }

    #[test]
    fn a_bad_address_names_the_variable() {
        let e = config(&[("CLARION_ADDR", "localhost")]).unwrap_err().to_string();
        assert!(e.starts_with("CLARION_ADDR is invalid"), "{e}");
    }

    #[test]
    fn an_unknown_database_scheme_is_refused_with_the_supported_forms() {
        let e = config(&[("DATABASE_URL", "mysql://root@localhost/x")])
            .unwrap_err()
            .to_string();
        assert!(e.contains("sqlite://") && e.contains("postgres://"), "{e}");
    }

    #[test]
    fn a_bad_log_format_is_refused() {
        assert!(config(&[("CLARION_LOG_FORMAT", "xml")]).is_err());
    }

    #[test]
    fn the_orchestrator_limits_have_documented_defaults_and_can_be_overridden() {
        let c = config(&[]).unwrap().orchestrator;
        assert_eq!(c.max_rounds, 2);
        assert_eq!(c.round_ttl, std::time::Duration::from_secs(15 * 60));
        assert_eq!(c.row_cap, 1000);
        assert_eq!(c.query_timeout, std::time::Duration::from_secs(5));
        assert_eq!(c.preview_timeout, std::time::Duration::from_millis(300));
        assert_eq!(c.today, None);
        assert_eq!(
            (c.user_concurrent_queries, c.preview_cap, c.warehouse_connections),
            (4, 12, 10)
        );
        assert_eq!(c.round_retention, std::time::Duration::from_secs(7 * 86_400));
        assert_eq!(c.thread_retention, None);
        let c = config(&[
            ("CLARION_THREAD_RETENTION_DAYS", "30"),
            ("CLARION_USER_CONCURRENT_QUERIES", "2"),
        ])
        .unwrap()
        .orchestrator;
        assert_eq!(
            c.thread_retention,
            Some(std::time::Duration::from_secs(30 * 86_400))
        );
        assert_eq!(c.user_concurrent_queries, 2);
        assert!(config(&[("CLARION_THREAD_RETENTION_DAYS", "0")]).is_err());
        let c = config(&[("CLARION_MAX_ROUNDS", "3"), ("CLARION_TODAY", "2026-11-01")])
            .unwrap()
            .orchestrator;
        assert_eq!(c.max_rounds, 3);
        assert_eq!(c.today, chrono::NaiveDate::from_ymd_opt(2026, 11, 1));
        let e = config(&[("CLARION_TODAY", "yesterday")]).unwrap_err().to_string();
        assert!(e.starts_with("CLARION_TODAY is invalid"), "{e}");
        assert!(config(&[("CLARION_ROW_CAP", "0")]).is_err());
    }

    #[test]
    fn the_allowed_values_cache_is_configurable() {
        let c = config(&[]).unwrap().orchestrator.allowed_values;
        assert_eq!(c.ttl, std::time::Duration::from_secs(300));
        assert_eq!(c.cap, 500);
        let c = config(&[
            ("CLARION_ALLOWED_VALUES_TTL_SECS", "30"),
            ("CLARION_ALLOWED_VALUES_CAP", "2000"),
        ])
        .unwrap()
        .orchestrator
        .allowed_values;
        assert_eq!(c.ttl, std::time::Duration::from_secs(30));
        assert_eq!(c.cap, 2000);
        // the load time limit and the retry pause keep their defaults
        let d = crate::warehouse::AllowedValuesConfig::default();
        assert_eq!((c.load_timeout, c.retry_after), (d.load_timeout, d.retry_after));
        let e = config(&[("CLARION_ALLOWED_VALUES_CAP", "0")])
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("CLARION_ALLOWED_VALUES_CAP is invalid"), "{e}");
        assert!(config(&[("CLARION_ALLOWED_VALUES_TTL_SECS", "soon")]).is_err());
    }

    #[test]
    fn demo_accounts_only_on_loopback_unless_asked_for() {
        assert!(config(&[]).unwrap().demo);
        assert!(config(&[("CLARION_ADDR", "[::1]:3000")]).unwrap().demo);
        assert!(!config(&[("CLARION_ADDR", "0.0.0.0:3000")]).unwrap().demo);
        assert!(
            config(&[("CLARION_ADDR", "0.0.0.0:3000"), ("CLARION_DEMO", "1")])
                .unwrap()
                .demo
        );
        assert!(!config(&[("CLARION_DEMO", "0")]).unwrap().demo);
        assert!(!config(&[("DATABASE_URL", "postgres://h/db")]).unwrap().demo);
        assert!(
            config(&[("DATABASE_URL", "postgres://h/db"), ("CLARION_DEMO", "1")])
                .unwrap()
                .demo
        );
        assert!(config(&[("CLARION_DEMO", "maybe")]).is_err());
    }
}
