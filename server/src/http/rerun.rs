//! `POST /history/rerun`: History's "Re-run" as a plain form post, so it works
//! before the page's script has loaded and a link (a GET) can never run a query.
//! The entry is asked again with its clarifications in a new thread
//! (`Orchestrator::rerun`), then the browser is sent to that thread (303), which
//! shows the stored answer without running anything. A failure goes back to
//! History with an error code the page turns into a message (never text from
//! the URL, so a crafted link cannot put words on the page).

use crate::orchestrator::OrchestratorError;
use crate::state::AppState;
use app::backend::AuthUser;
use axum::Form;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct RerunForm {
    #[serde(default)]
    history_id: String,
}

/// The handler (behind the cross-origin refusal and the user resolution).
pub async fn rerun(
    State(state): State<AppState>,
    user: Option<axum::Extension<AuthUser>>,
    Form(form): Form<RerunForm>,
) -> Response {
    let Some(axum::Extension(user)) = user else {
        return see_other("/login?next=/history");
    };
    match state.orchestrator.rerun(user.id, form.history_id.trim()).await {
        Ok(a) => see_other(&format!("/threads/{}", a.thread_id)),
        Err(e) => {
            let code = match &e {
                OrchestratorError::NotFound => "not_found",
                OrchestratorError::Timeout(_) => "timeout",
                OrchestratorError::BadInput { .. } | OrchestratorError::Refused { .. } => "unanswerable",
                _ => {
                    let _ = crate::backend::from_orchestrator(e);
                    "failed"
                }
            };
            see_other(&format!("/history?rerun_error={code}"))
        }
    }
}

fn see_other(location: &str) -> Response {
    let mut res = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res
}
