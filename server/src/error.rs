//! Error types by layer.
//!
//! - [`StartupError`]: anything that stops the server from starting (bad
//!   configuration, unreachable database, port in use). Printed as one line by
//!   `main`, never as a panic or backtrace.
//! - [`crate::store::StoreError`]: storage failures, converted at the edges.
//! - [`ErrorResponse`]: every JSON error the server sends, `{code, message}` with the
//!   status of its [`app::protocol::ErrorCode`] (the one table of codes and statuses).

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

/// Every JSON error the server sends — handlers, extractors, the auth, origin and
/// body-size layers — is this: [`app::protocol::ApiError`] with its code's status.
#[derive(Debug)]
pub struct ErrorResponse(pub app::protocol::ApiError);

impl ErrorResponse {
    /// An error with its code and message.
    pub fn new(code: app::protocol::ErrorCode, message: impl Into<String>) -> Self {
        ErrorResponse(app::protocol::ApiError::new(code, message))
    }
}

impl From<app::protocol::ApiError> for ErrorResponse {
    fn from(e: app::protocol::ApiError) -> Self {
        ErrorResponse(e)
    }
}

impl axum::response::IntoResponse for ErrorResponse {
    fn into_response(self) -> axum::response::Response {
        let status = axum::http::StatusCode::from_u16(self.0.code.status())
            .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(self.0)).into_response()
    }
}

/// A fault the user must not see the details of: logs it with its whole cause chain
/// and a short reference, and returns the `internal` error that quotes the reference.
pub fn internal_fault(cause: &(dyn std::error::Error + 'static)) -> app::protocol::ApiError {
    let mut bytes = [0u8; 4];
    // A reference only has to be unlikely to repeat; a zero one still logs the cause.
    let _ = getrandom::fill(&mut bytes);
    let reference: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    tracing::error!(reference, error = %chain(cause), "request failed");
    app::protocol::ApiError::internal(&reference)
}

/// An error and its sources, outermost first: "a: b: c".
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut next = e.source();
    while let Some(s) = next {
        let part = s.to_string();
        if !text.ends_with(&part) {
            text.push_str(": ");
            text.push_str(&part);
        }
        next = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Error)]
    #[error("reading the round")]
    struct Outer(#[source] std::io::Error);

    #[test]
    fn the_log_keeps_the_cause_chain() {
        let e = Outer(std::io::Error::other("disk full"));
        assert_eq!(chain(&e), "reading the round: disk full");
    }

    #[test]
    fn a_fault_shows_only_a_reference() {
        let e = Outer(std::io::Error::other("secret path /var/db"));
        let shown = internal_fault(&e);
        assert_eq!(shown.code, app::protocol::ErrorCode::Internal);
        assert!(!shown.message.contains("/var/db"), "{}", shown.message);
        assert!(shown.message.contains("reference"), "{}", shown.message);
    }
}
