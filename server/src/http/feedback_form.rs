//! `POST /feedback`: the feedback forms of an answer and of a clarification panel, as
//! plain form posts (no script needed), behind the same cross-origin refusal and user
//! resolution as every other form.
//!
//! - An answer's vote (`history_id`, `rating`, `reason`, `comment`) is stored and the
//!   browser goes back to the answer's thread with `?feedback=sent`, which shows a
//!   confirmation (303); a thumbs down without a reason goes back with
//!   `?feedback=down&answer=<id>`, which says it was noted and offers the optional
//!   reason and comment (posting them replaces the vote). A refused vote goes to History with an error code the page
//!   turns into a message (never text from the address).
//! - A round's vote (`clarification_id`, `helpful=yes|no`) is posted into the small
//!   frame beside its buttons, so the open panel stays as it is; the frame shows the
//!   confirmation (200, a tiny page this site alone may frame).

use crate::orchestrator::OrchestratorError;
use crate::state::AppState;
use app::backend::AuthUser;
use app::protocol::{AnswerFeedbackRequest, ErrorCode, FeedbackRating};
use axum::Form;
use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;

/// Marks a response that pages of this site may show in a frame (the round's vote
/// confirmation); the security headers then allow `frame-ancestors 'self'`.
#[derive(Clone, Copy, Debug)]
pub struct FramableBySelf;

#[derive(Debug, Default, Deserialize)]
pub struct FeedbackForm {
    #[serde(default)]
    history_id: Option<String>,
    #[serde(default)]
    rating: Option<String>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    comment: Option<String>,
    #[serde(default)]
    clarification_id: Option<String>,
    #[serde(default)]
    helpful: Option<String>,
}

/// The handler.
pub async fn feedback(
    State(state): State<AppState>,
    user: Option<axum::Extension<AuthUser>>,
    form: Result<Form<FeedbackForm>, axum::extract::rejection::FormRejection>,
) -> Response {
    let Some(axum::Extension(user)) = user else {
        return see_other("/login?next=/history");
    };
    let Ok(Form(form)) = form else {
        return see_other("/history?feedback_error=bad_input");
    };
    if let Some(round) = form.clarification_id.as_deref() {
        let helpful = match form.helpful.as_deref() {
            Some("yes") => true,
            Some("no") => false,
            _ => return framed(StatusCode::BAD_REQUEST, "Please choose Yes or No."),
        };
        return match state
            .orchestrator
            .clarification_feedback(user.id, round.trim(), helpful)
            .await
        {
            Ok(_) => framed(
                StatusCode::OK,
                if helpful {
                    "✓ Thanks — noted as helpful."
                } else {
                    "✓ Thanks — noted as not helpful."
                },
            ),
            Err(OrchestratorError::NotFound) => {
                framed(StatusCode::NOT_FOUND, "This question can no longer be rated.")
            }
            Err(e) => {
                let _ = e.into_public();
                framed(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "Your vote could not be saved. Please try again.",
                )
            }
        };
    }
    let history_id = form.history_id.unwrap_or_default();
    let rating = form.rating.unwrap_or_default();
    // The answer's one form sends "👍 Yes" with whatever sits in its closed "No" part:
    // a reason and comment count only with thumbs down.
    let up = rating.trim() == "up";
    let req = AnswerFeedbackRequest {
        rating,
        reason: if up { None } else { form.reason },
        comment: if up { None } else { form.comment },
    };
    match state
        .orchestrator
        .answer_feedback(user.id, history_id.trim(), &req)
        .await
    {
        // A bare thumbs down: the thread asks for the optional reason.
        Ok((v, Some(thread)))
            if v.reason.is_none() && v.comment.is_none() && v.rating == FeedbackRating::Down =>
        {
            see_other(&format!(
                "/threads/{thread}?feedback=down&answer={}",
                v.history_id
            ))
        }
        Ok((_, Some(thread))) => see_other(&format!("/threads/{thread}?feedback=sent")),
        Ok((_, None)) => see_other("/history?feedback=sent"),
        Err(e) => {
            let code = match e.code() {
                ErrorCode::NotFound => "not_found",
                ErrorCode::CommentTooLong => "comment_too_long",
                ErrorCode::BadRating | ErrorCode::BadReason | ErrorCode::ReasonWithThumbsUp => "bad_input",
                _ => {
                    let _ = e.into_public();
                    "failed"
                }
            };
            see_other(&format!("/history?feedback_error={code}"))
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

/// The page shown in a round's feedback frame: one line, no script.
fn framed(status: StatusCode, text: &str) -> Response {
    let color = if status.is_success() { "#065f46" } else { "#991b1b" };
    let body = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Feedback</title></head>\
         <body style=\"margin:0;padding:4px 0;font:14px system-ui,sans-serif;color:{color}\">\
         <p role=\"status\" data-testid=\"round-feedback-sent\" style=\"margin:0\">{text}</p></body></html>"
    );
    let mut res = (status, Html(body)).into_response();
    res.extensions_mut().insert(FramableBySelf);
    res
}
