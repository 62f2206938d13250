//! Server functions: public HTTP endpoints, each a thin call into the [`Backend`](crate::backend::Backend).
//!
//! Every function that reads or changes a user's data starts with
//! `ssr::require_user()`, which answers 401 when nobody is signed in (server
//! functions are reachable by anyone who can send a POST).

use crate::protocol::{Settings, UserSummary};
use leptos::prelude::*;
use leptos::server_fn::codec::Post;
use leptos::server_fn::{Bytes, ContentType, Decodes, Encodes, Format, FormatType};
use serde::{Serialize, de::DeserializeOwned};

/// Server-function replies: JSON, read from text. Hydrated resources read their JSON
/// from text too, so each reply type's decoder is compiled into the wasm once instead
/// of twice (server_fn's own `Json` reads from bytes — a second monomorphised copy).
pub struct JsonText;

/// The reply codec of every server function here.
pub type Reply = Post<JsonText>;

impl ContentType for JsonText {
    const CONTENT_TYPE: &'static str = "application/json";
}

impl FormatType for JsonText {
    const FORMAT_TYPE: Format = Format::Text;
}

impl<T: Serialize> Encodes<T> for JsonText {
    type Error = serde_json::Error;

    fn encode(output: &T) -> Result<Bytes, Self::Error> {
        serde_json::to_vec(output).map(Bytes::from)
    }
}

impl<T: DeserializeOwned> Decodes<T> for JsonText {
    type Error = String;

    fn decode(bytes: Bytes) -> Result<T, Self::Error> {
        let text = std::str::from_utf8(&bytes).map_err(|e| e.to_string())?;
        serde_json::from_str(text).map_err(|e| e.to_string())
    }
}

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
        viewer().ok_or_else(|| to_sfe(BackendError::unauthenticated()))
    }

    /// Turns a backend error into a server-function error with its code's status.
    pub fn to_sfe(e: BackendError) -> ServerFnError {
        if let Some(res) = use_context::<leptos_axum::ResponseOptions>()
            && let Ok(status) = http::StatusCode::from_u16(e.code.status())
        {
            res.set_status(status);
        }
        ServerFnError::new(e.to_string())
    }
}

/// Who is signed in (`None` when nobody is; the header then offers "Sign in").
#[server(endpoint = "current_user", output = Reply)]
pub async fn current_user() -> Result<Option<UserSummary>, ServerFnError> {
    Ok(ssr::viewer().map(UserSummary::from))
}

/// Reads the current user's settings.
#[server(endpoint = "get_settings", output = Reply)]
pub async fn get_settings() -> Result<Settings, ServerFnError> {
    let user = ssr::require_user()?;
    ssr::backend()?.settings(&user).await.map_err(ssr::to_sfe)
}

/// Saves the current user's settings. Fields arrive as form values so the
/// form also works before the wasm has loaded.
#[server(endpoint = "save_settings", output = Reply)]
pub async fn save_settings(
    sensitivity: String,
    skip_clarifications: Option<String>,
) -> Result<Settings, ServerFnError> {
    let user = ssr::require_user()?;
    let sensitivity = crate::protocol::Sensitivity::parse(sensitivity.trim()).ok_or_else(|| {
        ssr::to_sfe(crate::backend::BackendError::bad_input(
            "Sensitivity must be one of: fewer, balanced, more.",
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
#[server(endpoint = "glossary", output = Reply)]
pub async fn get_glossary() -> Result<crate::protocol::Glossary, ServerFnError> {
    let user = ssr::require_user()?;
    ssr::backend()?.glossary(&user).await.map_err(ssr::to_sfe)
}

// ---- the ask flow: the same orchestrator as the JSON API -----------------------------

/// Asks a question (F1–F6): the answer, or one round of clarification questions.
#[server(endpoint = "ask", input = leptos::server_fn::codec::Json, output = Reply)]
pub async fn ask(req: crate::protocol::AskRequest) -> Result<crate::protocol::Outcome, ServerFnError> {
    let user = ssr::require_user()?;
    ssr::backend()?
        .ask(&user, req)
        .await
        .map(Into::into)
        .map_err(ssr::to_sfe)
}

/// Cancels a clarification round (the clinician pressed Cancel or asked something
/// else): it counts as abandoned at once. Unknown or foreign ids: not found.
#[server(endpoint = "cancel_clarification", output = Reply)]
pub async fn cancel_clarification(clarification_id: String) -> Result<(), ServerFnError> {
    let user = ssr::require_user()?;
    ssr::backend()?
        .cancel(&user, clarification_id)
        .await
        .map_err(ssr::to_sfe)
}

/// Answers one clarification round (F7, F8, F10, F12).
#[server(endpoint = "clarify", input = leptos::server_fn::codec::Json, output = Reply)]
pub async fn clarify(
    req: crate::protocol::ClarifyRequest,
) -> Result<crate::protocol::Outcome, ServerFnError> {
    let user = ssr::require_user()?;
    ssr::backend()?
        .clarify(&user, req)
        .await
        .map(Into::into)
        .map_err(ssr::to_sfe)
}

/// Changes one assumption of an answer and re-runs it (F9).
#[server(endpoint = "revise", input = leptos::server_fn::codec::Json, output = Reply)]
pub async fn revise(req: crate::protocol::ReviseRequest) -> Result<crate::protocol::Answer, ServerFnError> {
    let user = ssr::require_user()?;
    ssr::backend()?.revise(&user, req).await.map_err(ssr::to_sfe)
}

/// One of the signed-in user's threads.
#[server(endpoint = "thread", output = Reply)]
pub async fn get_thread(id: String) -> Result<crate::protocol::ThreadView, ServerFnError> {
    let user = ssr::require_user()?;
    ssr::backend()?.thread(&user, id).await.map_err(ssr::to_sfe)
}

/// History's "Re-run" (F19): the entry's question asked again in a new thread with
/// exactly its clarifications (never asks). A POST, so a link cannot run a query.
#[server(endpoint = "rerun", output = Reply)]
pub async fn rerun(history_id: String) -> Result<crate::protocol::Answer, ServerFnError> {
    let user = ssr::require_user()?;
    ssr::backend()?
        .rerun(&user, history_id)
        .await
        .map_err(ssr::to_sfe)
}

/// The rows of one of the signed-in user's stored answers, computed again now: the
/// explicit "Run again" of a stored thread (opening a thread runs nothing).
#[server(endpoint = "replay", output = Reply)]
pub async fn replay(history_id: String) -> Result<crate::protocol::ResultTable, ServerFnError> {
    let user = ssr::require_user()?;
    ssr::backend()?
        .replay(&user, history_id)
        .await
        .map_err(ssr::to_sfe)
}

/// The signed-in user's past questions, newest first (F19).
#[server(endpoint = "history", output = Reply)]
pub async fn get_history(
    limit: Option<i64>,
    show: Option<crate::protocol::HistoryShow>,
) -> Result<Vec<crate::protocol::HistoryItem>, ServerFnError> {
    let user = ssr::require_user()?;
    let limit = limit.unwrap_or(50).clamp(1, 500);
    ssr::backend()?
        .history(&user, limit, show.unwrap_or_default())
        .await
        .map_err(ssr::to_sfe)
}

/// The signed-in user's learned and remembered choices (F12).
#[server(endpoint = "preferences", output = Reply)]
pub async fn get_preferences() -> Result<Vec<crate::protocol::PreferenceItem>, ServerFnError> {
    let user = ssr::require_user()?;
    ssr::backend()?.preferences(&user).await.map_err(ssr::to_sfe)
}

/// Forgets one remembered choice.
#[server(endpoint = "delete_preference", output = Reply)]
pub async fn delete_preference(id: i64) -> Result<(), ServerFnError> {
    let user = ssr::require_user()?;
    ssr::backend()?
        .delete_preference(&user, id)
        .await
        .map_err(ssr::to_sfe)
}

/// The signed-in user's API tokens (names, prefixes, dates; never a secret).
#[server(endpoint = "api_tokens", output = Reply)]
pub async fn get_api_tokens() -> Result<Vec<crate::protocol::ApiTokenItem>, ServerFnError> {
    let user = ssr::require_user()?;
    ssr::backend()?.api_tokens(&user).await.map_err(ssr::to_sfe)
}

/// Creates an API token for the signed-in user; the secret is returned once.
#[server(endpoint = "create_api_token", output = Reply)]
pub async fn create_api_token(
    name: String,
    expires_in_days: Option<u32>,
) -> Result<crate::protocol::CreatedApiToken, ServerFnError> {
    use crate::backend::BackendError;
    let user = ssr::require_user()?;
    let name = name.trim().to_string();
    if name.is_empty() || name.chars().count() > 60 {
        return Err(ssr::to_sfe(BackendError::bad_input(
            "Give the token a name of 1 to 60 characters, e.g. “nightly export”.",
        )));
    }
    if expires_in_days.is_some_and(|d| !(1..=3650).contains(&d)) {
        return Err(ssr::to_sfe(BackendError::bad_input(
            "A token lasts 1 to 3650 days, or until revoked.",
        )));
    }
    ssr::backend()?
        .create_api_token(&user, name, expires_in_days)
        .await
        .map_err(ssr::to_sfe)
}

/// Revokes one of the signed-in user's API tokens.
#[server(endpoint = "revoke_api_token", output = Reply)]
pub async fn revoke_api_token(id: i64) -> Result<(), ServerFnError> {
    let user = ssr::require_user()?;
    ssr::backend()?
        .revoke_api_token(&user, id)
        .await
        .map_err(ssr::to_sfe)
}

// ---- account and administration ------------------------------------------------------

/// Shortest new password accepted.
pub const MIN_PASSWORD_CHARS: usize = 10;

/// Changes the signed-in user's password (current, new, and the new one
/// repeated). Form fields, so it also works before the wasm has loaded. On
/// success every session of the user ends: they sign in again.
#[server(endpoint = "change_password", output = Reply)]
pub async fn change_password(current: String, new: String, confirm: String) -> Result<(), ServerFnError> {
    use crate::backend::BackendError;
    let user = ssr::require_user()?;
    if current.is_empty() {
        return Err(ssr::to_sfe(BackendError::bad_input(
            "Enter your current password.",
        )));
    }
    if new.chars().count() < MIN_PASSWORD_CHARS {
        return Err(ssr::to_sfe(BackendError::bad_input(format!(
            "The new password must be at least {MIN_PASSWORD_CHARS} characters long."
        ))));
    }
    if new.chars().count() > 200 {
        return Err(ssr::to_sfe(BackendError::bad_input(
            "The new password must be at most 200 characters long.",
        )));
    }
    if new != confirm {
        return Err(ssr::to_sfe(BackendError::bad_input(
            "The two new passwords do not match.",
        )));
    }
    if new == current {
        return Err(ssr::to_sfe(BackendError::bad_input(
            "The new password must differ from the current one.",
        )));
    }
    ssr::backend()?
        .change_password(&user, current, new)
        .await
        .map_err(ssr::to_sfe)
}

/// Everyone's clarification figures (F21) over the last `days` days or `from`–`until`:
/// administrators only (403 otherwise); a bad range is a 400 saying what is wrong.
#[server(endpoint = "analytics", output = Reply)]
pub async fn get_analytics(
    days: Option<u32>,
    from: Option<String>,
    until: Option<String>,
) -> Result<crate::protocol::Analytics, ServerFnError> {
    let user = ssr::require_user()?;
    if !user.is_admin {
        return Err(ssr::to_sfe(crate::backend::BackendError::forbidden()));
    }
    let range = crate::protocol::AnalyticsQuery { days, from, until };
    ssr::backend()?.analytics(&user, range).await.map_err(ssr::to_sfe)
}

/// The Analytics page's report, rendered on the server (administrators only, 403
/// otherwise): the figures of [`get_analytics`] as HTML, so the charts' drawing code
/// stays out of the browser bundle.
#[server(endpoint = "analytics_html", output = Reply)]
pub async fn get_analytics_html(
    days: Option<u32>,
    from: Option<String>,
    until: Option<String>,
) -> Result<String, ServerFnError> {
    let preset = match (&from, days) {
        (Some(f), _) if !f.trim().is_empty() => None,
        (_, d) => Some(d.unwrap_or(30)),
    };
    let a = get_analytics(days, from, until).await?;
    Ok(crate::pages::analytics_report::render(a, preset))
}

/// The optional language model for the Settings page (F24): `None` for clinicians (the
/// section is not shown; no error status, so the page itself still renders).
#[server(endpoint = "language_model", output = Reply)]
pub async fn get_language_model() -> Result<Option<crate::protocol::LanguageModelStatus>, ServerFnError> {
    let user = ssr::require_user()?;
    if !user.is_admin {
        return Ok(None);
    }
    ssr::backend()?
        .language_model(&user)
        .await
        .map(Some)
        .map_err(ssr::to_sfe)
}

/// Switches the language model on or off for every replica: administrators only (403
/// otherwise). A form field (`enabled` = `on`/`true`/`1`, absent = off), so the switch
/// also works before the wasm has loaded.
#[server(endpoint = "set_language_model", output = Reply)]
pub async fn set_language_model(
    enabled: Option<String>,
) -> Result<crate::protocol::LanguageModelStatus, ServerFnError> {
    let user = ssr::require_user()?;
    if !user.is_admin {
        return Err(ssr::to_sfe(crate::backend::BackendError::forbidden()));
    }
    let on = matches!(enabled.as_deref(), Some("on" | "true" | "1"));
    ssr::backend()?
        .set_language_model(&user, on)
        .await
        .map_err(ssr::to_sfe)
}
