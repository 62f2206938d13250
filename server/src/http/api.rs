//! JSON API v1 (F15): thin handlers from HTTP to the orchestrator, plus the OpenAPI
//! document at `/api/v1/openapi.json`.
//!
//! Errors are always JSON `{code, message}` ([`ApiError`]): 400 for bad input
//! (including malformed JSON, via the [`ApiJson`] extractor), 401 from the auth
//! extractor, 404 for unknown, expired or another user's ids (indistinguishable), 409
//! for a round already answered, 422 for a question Clarion does not answer, 504 for a
//! query past its time limit, and 500 with a reference (the cause is logged, never
//! shown). Handlers must not contain pipeline logic: they parse, call, and map.

use crate::auth::CurrentUser;
use crate::orchestrator::OrchestratorError;
use crate::state::AppState;
use app::protocol::{self, AskRequest, ErrorCode, ClarifyRequest, QueryOutcome, ReviseRequest, Settings};
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Path, Query, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get, post};
use axum::{Json, Router};
use serde::Deserialize;

pub mod access;
pub mod openapi;
pub mod verified;

/// Every route of the API (paths as in the OpenAPI document).
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/api/v1/query", post(query))
        .route("/api/v1/query/clarify", post(clarify))
        .route("/api/v1/query/cancel", post(cancel))
        .route("/api/v1/query/revise", post(revise))
        .route("/api/v1/threads/{id}", get(thread))
        .route("/api/v1/history", get(history))
        .route("/api/v1/history/{id}/rows", post(history_rows))
        .route("/api/v1/settings", get(settings).put(save_settings))
        .route("/api/v1/preferences", get(preferences))
        .route("/api/v1/preferences/{id}", delete(delete_preference))
        .route("/api/v1/openapi.json", get(openapi_document))
        .route(
            "/api/v1/admin/language-model",
            get(language_model).put(switch_language_model),
        )
        .route("/api/v1/me", get(access::me))
        .route("/api/v1/admin/users", get(access::users))
        .route(
            "/api/v1/admin/users/{id}/clinics",
            axum::routing::put(access::set_scope),
        )
        .route("/api/v1/verified", get(verified::list))
        .route("/api/v1/admin/verified", post(verified::create))
        .route(
            "/api/v1/admin/verified/{id}",
            axum::routing::put(verified::edit).delete(verified::retire),
        )
}

/// An API error response (see [`crate::error::ErrorResponse`]).
pub use crate::error::ErrorResponse as ApiError;

/// `Json<T>` whose rejection is a JSON 400 saying what is wrong with the body.
pub struct ApiJson<T>(pub T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    Json<T>: FromRequest<S, Rejection = JsonRejection>,
    S: Send + Sync,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(v)) => Ok(ApiJson(v)),
            Err(rejection) => {
                let code = match &rejection {
                    JsonRejection::MissingJsonContentType(_) => ErrorCode::MissingJsonContentType,
                    JsonRejection::JsonDataError(_) => ErrorCode::InvalidJsonFields,
                    _ => ErrorCode::MalformedJson,
                };
                Err(ApiError::new(code, rejection.body_text()))
            }
        }
    }
}

fn outcome(o: QueryOutcome) -> Response {
    match o {
        QueryOutcome::Answered(_) => (StatusCode::OK, Json(o)).into_response(),
        QueryOutcome::NeedsClarification(_) => (StatusCode::ACCEPTED, Json(o)).into_response(),
    }
}

#[tracing::instrument(skip_all)]
async fn query(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiJson(req): ApiJson<AskRequest>,
) -> Result<Response, ApiError> {
    Ok(outcome(state.orchestrator.ask(user.id, &req).await?))
}

#[tracing::instrument(skip_all)]
async fn clarify(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiJson(req): ApiJson<ClarifyRequest>,
) -> Result<Response, ApiError> {
    Ok(outcome(state.orchestrator.clarify(user.id, &req).await?))
}

/// Cancel a round: it counts as abandoned at once (204). A round already answered is
/// a 409; an unknown or foreign id 404; an expired one is already closed (204).
#[tracing::instrument(skip_all)]
async fn cancel(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiJson(req): ApiJson<protocol::CancelRequest>,
) -> Result<Response, ApiError> {
    state.orchestrator.cancel(user.id, &req.clarification_id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[tracing::instrument(skip_all)]
async fn revise(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiJson(req): ApiJson<ReviseRequest>,
) -> Result<Response, ApiError> {
    let answer = state.orchestrator.revise(user.id, &req).await?;
    Ok(outcome(QueryOutcome::Answered(answer)))
}

#[tracing::instrument(skip_all)]
async fn thread(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    Ok(Json(state.orchestrator.thread(user.id, &id).await?).into_response())
}

/// `GET /api/v1/history?limit=N`: 1 to 500 (default 50); anything else is a JSON 400.
#[tracing::instrument(skip_all)]
async fn history(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    query: Result<Query<std::collections::HashMap<String, String>>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, ApiError> {
    let bad = || {
        ApiError::new(
            ErrorCode::BadLimit,
            format!("limit must be a whole number from 1 to {HISTORY_MAX}."),
        )
    };
    let Ok(Query(q)) = query else {
        return Err(bad());
    };
    let limit = match q.get("limit").map(|v| v.trim()) {
        None | Some("") => 50,
        Some(v) => v
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=HISTORY_MAX).contains(n))
            .ok_or_else(bad)?,
    };
    let items = state.orchestrator.history(user.id, limit).await?;
    Ok(Json(items).into_response())
}

/// Most history entries one request returns (the documented maximum).
const HISTORY_MAX: i64 = 500;

/// The rows of a stored answer, computed again now (records nothing).
#[tracing::instrument(skip_all)]
async fn history_rows(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    Ok(Json(state.orchestrator.replay(user.id, &id).await?).into_response())
}

/// The administrators' runtime switch of the language model (F24).
#[derive(Debug, serde::Serialize, Deserialize)]
struct LanguageModelSwitch {
    enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    configured: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    endpoint: Option<String>,
}

async fn language_model_state(state: &AppState) -> Result<LanguageModelSwitch, ApiError> {
    let enabled = state
        .store
        .llm_enabled()
        .await
        .map_err(|e| ApiError::from(OrchestratorError::internal(e)))?;
    let llm = state.orchestrator.llm();
    Ok(LanguageModelSwitch {
        enabled,
        configured: Some(llm.is_some()),
        model: llm.map(|l| l.config().model.clone()),
        endpoint: llm.map(|l| l.config().endpoint_display()),
    })
}

#[tracing::instrument(skip_all)]
async fn language_model(
    State(state): State<AppState>,
    crate::auth::AdminUser(_): crate::auth::AdminUser,
) -> Result<Response, ApiError> {
    Ok(Json(language_model_state(&state).await?).into_response())
}

#[tracing::instrument(skip_all)]
async fn switch_language_model(
    State(state): State<AppState>,
    crate::auth::AdminUser(user): crate::auth::AdminUser,
    ApiJson(s): ApiJson<LanguageModelSwitch>,
) -> Result<Response, ApiError> {
    state
        .store
        .set_llm_enabled(s.enabled)
        .await
        .map_err(|e| ApiError::from(OrchestratorError::internal(e)))?;
    tracing::info!(by = user.id, enabled = s.enabled, "language model switched");
    Ok(Json(language_model_state(&state).await?).into_response())
}

#[tracing::instrument(skip_all)]
async fn settings(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
) -> Result<Response, ApiError> {
    Ok(Json(state.orchestrator.settings(user.id).await?).into_response())
}

#[tracing::instrument(skip_all)]
async fn save_settings(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiJson(s): ApiJson<Settings>,
) -> Result<Response, ApiError> {
    Ok(Json(state.orchestrator.save_settings(user.id, &s).await?).into_response())
}

#[tracing::instrument(skip_all)]
async fn preferences(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
) -> Result<Response, ApiError> {
    Ok(Json(state.orchestrator.preferences(user.id).await?).into_response())
}

#[tracing::instrument(skip_all)]
async fn delete_preference(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id: i64 = id.parse().map_err(|_| ApiError::from(protocol::ApiError::not_found()))?;
    state.orchestrator.delete_preference(user.id, id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

async fn openapi_document() -> Response {
    Json(openapi::document()).into_response()
}
