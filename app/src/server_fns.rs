//! Server functions: public HTTP endpoints, each a thin call into the [`Backend`](crate::backend::Backend).

use crate::protocol::{Settings, UserSummary};
use leptos::prelude::*;

#[cfg(feature = "ssr")]
mod ssr {
    use crate::backend::{BackendError, SharedBackend};
    use leptos::prelude::*;

    pub fn backend() -> Result<SharedBackend, ServerFnError> {
        use_context::<SharedBackend>()
            .ok_or_else(|| ServerFnError::new("Clarion's backend is not available."))
    }

    /// Converts a backend error, setting the HTTP status: 400 for the user's
    /// mistakes, 500 for ours.
    pub fn to_sfe(e: BackendError) -> ServerFnError {
        let status = match e {
            BackendError::BadInput(_) => http::StatusCode::BAD_REQUEST,
            BackendError::Internal(_) => http::StatusCode::INTERNAL_SERVER_ERROR,
        };
        set_status(status);
        ServerFnError::new(e.to_string())
    }

    /// A user's mistake: 400 with a message saying what is wrong.
    pub fn bad_input(message: &str) -> ServerFnError {
        set_status(http::StatusCode::BAD_REQUEST);
        ServerFnError::new(message)
    }

    fn set_status(status: http::StatusCode) {
        if let Some(res) = use_context::<leptos_axum::ResponseOptions>() {
            res.set_status(status);
        }
    }
}

/// Who is signed in.
#[server(endpoint = "current_user")]
pub async fn current_user() -> Result<UserSummary, ServerFnError> {
    ssr::backend()?.current_user().await.map_err(ssr::to_sfe)
}

/// Reads the current user's settings.
#[server(endpoint = "get_settings")]
pub async fn get_settings() -> Result<Settings, ServerFnError> {
    ssr::backend()?.settings().await.map_err(ssr::to_sfe)
}

/// Saves the current user's settings. Fields arrive as form values so the
/// form also works before the wasm has loaded.
#[server(endpoint = "save_settings")]
pub async fn save_settings(
    sensitivity: String,
    skip_clarifications: Option<String>,
) -> Result<Settings, ServerFnError> {
    let sensitivity = crate::protocol::Sensitivity::parse(sensitivity.trim())
        .ok_or_else(|| ssr::bad_input("Sensitivity must be one of: fewer, balanced, more."))?;
    let skip = matches!(skip_clarifications.as_deref(), Some("on" | "true" | "1"));
    let settings = Settings {
        skip_clarifications: skip,
        sensitivity,
    };
    ssr::backend()?.save_settings(settings).await.map_err(ssr::to_sfe)
}
