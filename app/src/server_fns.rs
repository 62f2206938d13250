//! Server functions: public HTTP endpoints, each a thin call into the [`Backend`](crate::backend::Backend).
//!
//! Every function that reads or changes a user's data starts with
//! `ssr::require_user()`, which answers 401 when nobody is signed in (server
//! functions are reachable by anyone who can send a POST).

use crate::protocol::{Settings, UserSummary};
use leptos::prelude::*;

#[cfg(feature = "ssr")]
pub(crate) mod ssr {
    use crate::backend::{AuthUser, BackendError, RequestUser, SharedBackend};
    use leptos::prelude::*;

    pub fn backend() -> Result<SharedBackend, ServerFnError> {
        use_context::<SharedBackend>()
            .ok_or_else(|| ServerFnError::new("Clarion's backend is not available."))
    }

    /// The signed-in user of this request, if any.
    pub fn viewer() -> Option<AuthUser> {
        use_context::<RequestUser>().and_then(|r| r.0)
    }

    /// The signed-in user, or a 401 error.
    pub fn require_user() -> Result<AuthUser, ServerFnError> {
        viewer().ok_or_else(|| to_sfe(BackendError::Unauthenticated))
    }

    /// Turns a backend error into a server-function error with a fitting status.
    pub fn to_sfe(e: BackendError) -> ServerFnError {
        let status = match e {
            BackendError::BadInput(_) => http::StatusCode::BAD_REQUEST,
            BackendError::Unauthenticated => http::StatusCode::UNAUTHORIZED,
            BackendError::Internal(_) => http::StatusCode::INTERNAL_SERVER_ERROR,
        };
        if let Some(res) = use_context::<leptos_axum::ResponseOptions>() {
            res.set_status(status);
        }
        ServerFnError::new(e.to_string())
    }
}

/// Who is signed in (`None` when nobody is; the header then offers "Sign in").
#[server(endpoint = "current_user")]
pub async fn current_user() -> Result<Option<UserSummary>, ServerFnError> {
    Ok(ssr::viewer().map(UserSummary::from))
}

/// Reads the current user's settings.
#[server(endpoint = "get_settings")]
pub async fn get_settings() -> Result<Settings, ServerFnError> {
    let user = ssr::require_user()?;
    ssr::backend()?.settings(&user).await.map_err(ssr::to_sfe)
}

/// Saves the current user's settings. Fields arrive as form values so the
/// form also works before the wasm has loaded.
#[server(endpoint = "save_settings")]
pub async fn save_settings(
    sensitivity: String,
    skip_clarifications: Option<String>,
) -> Result<Settings, ServerFnError> {
    let user = ssr::require_user()?;
    let sensitivity = crate::protocol::Sensitivity::parse(sensitivity.trim()).ok_or_else(|| {
        ssr::to_sfe(crate::backend::BackendError::BadInput(
            "Sensitivity must be one of: fewer, balanced, more.".into(),
        ))
    })?;
    let skip = matches!(skip_clarifications.as_deref(), Some("on" | "true" | "1"));
    let settings = Settings {
        skip_clarifications: skip,
        sensitivity,
    };
    ssr::backend()?
        .save_settings(&user, settings)
        .await
        .map_err(ssr::to_sfe)
}

/// The semantic model's vocabulary for the Glossary page (F20).
#[server(endpoint = "glossary")]
pub async fn get_glossary() -> Result<crate::protocol::Glossary, ServerFnError> {
    let user = ssr::require_user()?;
    ssr::backend()?.glossary(&user).await.map_err(ssr::to_sfe)
}
