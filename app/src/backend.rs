//! The port the server implements (ssr only).
//!
//! `app` never depends on `server`: server functions reach storage and the
//! engine through this trait, which the server provides as Leptos context via
//! `leptos_routes_with_context`. Keep each method one step of the product, not
//! a database operation.

use crate::protocol::{Settings, UserSummary};
use std::sync::Arc;

/// An error a backend call can return, already safe to show to a user.
#[derive(Debug, thiserror::Error)]
pub enum BackendError {
    /// The user's input was wrong; the message says how.
    #[error("{0}")]
    BadInput(String),
    /// Something broke on our side; details are logged, not shown.
    #[error("Something went wrong on the server (reference {0}). Please try again.")]
    Internal(String),
}

/// Everything the UI can ask of the server.
#[async_trait::async_trait]
pub trait Backend: Send + Sync + 'static {
    /// The signed-in user for this request.
    async fn current_user(&self) -> Result<UserSummary, BackendError>;
    /// The current user's settings (defaults when never saved).
    async fn settings(&self) -> Result<Settings, BackendError>;
    /// Stores the current user's settings and returns what was stored.
    async fn save_settings(&self, settings: Settings) -> Result<Settings, BackendError>;
}

/// How the backend travels through Leptos context.
pub type SharedBackend = Arc<dyn Backend>;
