//! Structured logging with `tracing`.

use crate::config::{Config, LogFormat};
use tracing_subscriber::EnvFilter;

/// Installs the global subscriber. sqlx statement logging is off at the
/// connection level; this filter also keeps sqlx's query target quiet.
pub fn init(config: &Config) {
    let filter = EnvFilter::try_new(format!("{},sqlx::query=off", config.log_filter))
        .unwrap_or_else(|_| EnvFilter::new("info,sqlx::query=off"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_target(false);
    let _ = match config.log_format {
        LogFormat::Json => builder.json().try_init(),
        LogFormat::Text => builder.try_init(),
    };
}
