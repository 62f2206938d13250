//! Error types by layer.
//!
//! - [`StartupError`]: anything that stops the server from starting (bad
//!   configuration, unreachable database, port in use). Printed as one line by
//!   `main`, never as a panic or backtrace.
//! - [`crate::store::StoreError`]: storage failures, converted at the edges.
//! - HTTP handlers map to status codes in [`crate::http`].

use thiserror::Error;

/// Why the server could not start. Every message names the setting to change.
#[derive(Debug, Error)]
pub enum StartupError {
    #[error("{name} is invalid: {reason}")]
    BadConfig { name: &'static str, reason: String },
    #[error("DATABASE_URL {url} is not supported: use sqlite://path/to/file.db or postgres://user@host/db")]
    UnsupportedDatabaseUrl { url: String },
    #[error("cannot open the database at {url}: {reason}")]
    DatabaseUnreachable { url: String, reason: String },
    #[error("cannot migrate the database at {url}: {reason}")]
    Migration { url: String, reason: String },
    #[error("cannot listen on {addr}: {reason} (set CLARION_ADDR to another address)")]
    Bind { addr: String, reason: String },
    #[error("the semantic model is invalid: {0}")]
    Model(String),
    #[error("cannot create the data directory {path}: {reason}")]
    DataDir { path: String, reason: String },
}
