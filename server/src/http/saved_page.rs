//! `POST /saved/action`: the Saved pages' forms (save an answer under a name, run,
//! rename, delete) as plain form posts, so they work before any script has loaded and
//! a link (a GET) can never run a query. Run sends the browser to the new thread (303),
//! which shows the stored answer; everything else comes back to `/saved` (or the save
//! form) with a code the page turns into a message — never text from the URL.

use crate::orchestrator::OrchestratorError;
use crate::state::AppState;
use crate::store::HistoryId;
use app::backend::AuthUser;
use app::protocol::ErrorCode;
use axum::Form;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

/// Where the forms post.
pub const PATH: &str = app::pages::saved::ACTION;

#[derive(Debug, Deserialize)]
pub struct SavedForm {
    #[serde(default)]
    action: String,
    #[serde(default)]
    id: String,
    #[serde(default)]
    history_id: String,
    #[serde(default)]
    name: String,
}

/// The code a failure comes back with.
fn code(e: OrchestratorError) -> &'static str {
    match &e {
        OrchestratorError::NotFound => "missing",
        OrchestratorError::Timeout(_) => "timeout",
        OrchestratorError::BadInput {
            code: ErrorCode::BadName,
            ..
        } => "bad_name",
        OrchestratorError::Refused {
            code: ErrorCode::NoLongerApplies,
            ..
        } => "stale",
        OrchestratorError::Refused {
            code: ErrorCode::Conflict,
            ..
        } => "full",
        OrchestratorError::Refused { .. } => "unanswerable",
        _ => {
            // logged with its cause (the user sees only the generic notice)
            let _ = crate::backend::from_orchestrator(e);
            "failed"
        }
    }
}

/// The handler (behind the cross-origin refusal and the user resolution).
pub async fn action(
    State(state): State<AppState>,
    user: Option<axum::Extension<AuthUser>>,
    Form(form): Form<SavedForm>,
) -> Response {
    let Some(axum::Extension(user)) = user else {
        return see_other("/login?next=/saved");
    };
    let o = &state.orchestrator;
    let done = match form.action.as_str() {
        "save" => match o.save_question(user.id, &form.history_id, &form.name).await {
            Ok(_) => "saved",
            Err(e) => {
                let c = code(e);
                let hid = HistoryId::new(form.history_id.trim().to_owned());
                // back to the form (its id is only echoed when it has an issued id's shape)
                if matches!(c, "bad_name" | "full") && hid.is_well_formed() {
                    return see_other(&format!("/saved/new?history={hid}&error={c}"));
                }
                c
            }
        },
        "run" => match o.run_saved(user.id, &form.id).await {
            Ok(a) => return see_other(&format!("/threads/{}", a.thread_id)),
            Err(e) => code(e),
        },
        "rename" => match o.rename_saved(user.id, &form.id, &form.name).await {
            Ok(_) => "renamed",
            Err(e) => code(e),
        },
        "delete" => match o.delete_saved(user.id, &form.id).await {
            Ok(()) => "deleted",
            Err(e) => code(e),
        },
        _ => "failed",
    };
    see_other(&format!("/saved?done={done}"))
}

fn see_other(location: &str) -> Response {
    let mut res = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(location) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res
}
