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
use app::protocol::{self, AskRequest, ClarifyRequest, ErrorCode, QueryOutcome, ReviseRequest, Settings};
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Path, Query, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router};
use serde::Deserialize;
use utoipa::OpenApi as _;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub mod access;
pub mod analytics;
pub mod openapi;
pub mod saved;
pub mod verified;

/// The API: every route with its OpenAPI operation (one list, so the document and the
/// router cannot disagree).
fn api() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(openapi::ApiDoc::openapi())
        .routes(routes!(query))
        .routes(routes!(clarify))
        .routes(routes!(cancel))
        .routes(routes!(revise))
        .routes(routes!(thread))
        .routes(routes!(history))
        .routes(routes!(history_rows))
        .routes(routes!(answer_feedback))
        .routes(routes!(clarification_feedback))
        .routes(routes!(settings, save_settings))
        .routes(routes!(preferences))
        .routes(routes!(delete_preference))
        .routes(routes!(openapi_document))
        .routes(routes!(language_model, switch_language_model))
        .routes(routes!(access::me))
        .routes(routes!(access::users))
        .routes(routes!(access::set_scope))
        .routes(routes!(verified::list))
        .routes(routes!(verified::create))
        .routes(routes!(verified::edit, verified::retire))
        .routes(routes!(saved::list, saved::create))
        .routes(routes!(saved::rename, saved::delete))
        .routes(routes!(saved::run))
        .routes(routes!(analytics::report))
        .routes(routes!(analytics::report_csv))
}

/// Every route of the API.
pub fn routes() -> Router<AppState> {
    api().split_for_parts().0
}

/// The OpenAPI document as generated from the handlers and types (see [`openapi::document`]).
pub fn generated() -> utoipa::openapi::OpenApi {
    api().split_for_parts().1
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

#[utoipa::path(
    post,
    path = "/api/v1/query",
    operation_id = "ask",
    summary = "Ask a question",
    request_body = AskRequest,
    responses(
        (status = 200, description = "The answer (`status`: `answered`)", body = QueryOutcome),
        (status = 202, description = "One clarification round first (`status`: `needs_clarification`)", body = QueryOutcome),
        (status = 404, description = "`thread_id` names no thread of yours", body = app::protocol::ApiError),
        openapi::Signed,
        openapi::WithBody,
        openapi::Runs
    )
)]
#[tracing::instrument(skip_all)]
async fn query(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiJson(req): ApiJson<AskRequest>,
) -> Result<Response, ApiError> {
    Ok(outcome(state.orchestrator.ask(user.id, &req).await?))
}

#[utoipa::path(
    post,
    path = "/api/v1/query/clarify",
    operation_id = "clarify",
    summary = "Answer a clarification round",
    request_body = ClarifyRequest,
    responses(
        (status = 200, description = "The answer (`status`: `answered`)", body = QueryOutcome),
        (status = 202, description = "One clarification round first (`status`: `needs_clarification`)", body = QueryOutcome),
        (status = 409, description = "The round was already answered or cancelled", body = app::protocol::ApiError),
        openapi::Signed,
        openapi::WithBody,
        openapi::ById,
        openapi::Runs
    )
)]
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
#[utoipa::path(
    post,
    path = "/api/v1/query/cancel",
    operation_id = "cancel",
    summary = "Cancel a clarification round (it counts as abandoned at once)",
    request_body = protocol::CancelRequest,
    responses(
        (status = 204, description = "Cancelled (or already expired)"),
        (status = 409, description = "The round was already answered or cancelled", body = app::protocol::ApiError),
        openapi::Signed,
        openapi::WithBody,
        openapi::ById
    )
)]
#[tracing::instrument(skip_all)]
async fn cancel(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiJson(req): ApiJson<protocol::CancelRequest>,
) -> Result<Response, ApiError> {
    state.orchestrator.cancel(user.id, &req.clarification_id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[utoipa::path(
    post,
    path = "/api/v1/query/revise",
    operation_id = "revise",
    summary = "Change one assumption of an answer and re-run, keeping every other choice",
    request_body = ReviseRequest,
    responses(
        (status = 200, description = "The answer (`status`: `answered`)", body = QueryOutcome),
        openapi::Signed,
        openapi::WithBody,
        openapi::ById,
        openapi::Runs
    )
)]
#[tracing::instrument(skip_all)]
async fn revise(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiJson(req): ApiJson<ReviseRequest>,
) -> Result<Response, ApiError> {
    let answer = state.orchestrator.revise(user.id, &req).await?;
    Ok(outcome(QueryOutcome::Answered(answer)))
}

#[utoipa::path(
    get,
    path = "/api/v1/threads/{id}",
    operation_id = "thread",
    summary = "A thread with its messages and stored answers",
    params(("id" = String, Path, description = "The thread's id")),
    responses(
        (status = 200, description = "The thread", body = protocol::ThreadView),
        openapi::Signed,
        openapi::ById
    )
)]
#[tracing::instrument(skip_all)]
async fn thread(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    Ok(Json(state.orchestrator.thread(user.id, &id).await?).into_response())
}

/// `GET /api/v1/history?limit=N`: 1 to 500 (default 50); anything else is a JSON 400.
#[utoipa::path(
    get,
    path = "/api/v1/history",
    operation_id = "history",
    summary = "Your past questions, newest first",
    params(
        ("limit" = Option<i64>, Query, minimum = 1, maximum = 500, description = "How many entries (default 50)"),
        ("show" = Option<protocol::HistoryShow>, Query, description = "Which questions: `answered` (default), `refused`, `failed` or `all`")
    ),
    responses(
        (status = 200, description = "History", body = Vec<protocol::HistoryItem>),
        (status = 400, description = "Bad input: the message says what is wrong", body = app::protocol::ApiError),
        openapi::Signed
    )
)]
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
        None => 50,
        Some(v) => v
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=HISTORY_MAX).contains(n))
            .ok_or_else(bad)?,
    };
    let show = match q.get("show").map(|v| v.trim()) {
        None => protocol::HistoryShow::Answered,
        Some(v) => protocol::HistoryShow::parse(v).ok_or_else(|| {
            ApiError::new(
                ErrorCode::BadParameter,
                "show must be one of all, answered, refused, failed.",
            )
        })?,
    };
    let items = state.orchestrator.history_filtered(user.id, show, limit).await?;
    Ok(Json(items).into_response())
}

/// Your vote on one of your answers: thumbs up, or down with an optional reason.
#[utoipa::path(
    put,
    path = "/api/v1/history/{id}/feedback",
    operation_id = "answer_feedback",
    summary = "Thumbs up or down on one of your answers (a later vote replaces the earlier; a thumbs-up counts the choices it used as successful)",
    params(("id" = String, Path, description = "The answer's `history_id`")),
    request_body = protocol::AnswerFeedbackRequest,
    responses(
        (status = 200, description = "The vote as stored", body = protocol::AnswerFeedbackView),
        (status = 422, description = "A reason or comment with thumbs up (`reason_with_thumbs_up`)", body = app::protocol::ApiError),
        openapi::Signed,
        openapi::WithBody,
        openapi::ById
    )
)]
#[tracing::instrument(skip_all)]
async fn answer_feedback(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<protocol::AnswerFeedbackRequest>,
) -> Result<Response, ApiError> {
    let (view, _) = state.orchestrator.answer_feedback(user.id, &id, &req).await?;
    Ok(Json(view).into_response())
}

/// Whether one of your rounds' questions was helpful.
#[utoipa::path(
    put,
    path = "/api/v1/clarifications/{id}/feedback",
    operation_id = "clarification_feedback",
    summary = "Was this clarification question helpful? (a later vote replaces the earlier)",
    params(("id" = String, Path, description = "The round's `clarification_id`")),
    request_body = protocol::ClarificationFeedbackRequest,
    responses(
        (status = 200, description = "The vote as stored", body = protocol::ClarificationFeedbackView),
        openapi::Signed,
        openapi::WithBody,
        openapi::ById
    )
)]
#[tracing::instrument(skip_all)]
async fn clarification_feedback(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<protocol::ClarificationFeedbackRequest>,
) -> Result<Response, ApiError> {
    let (view, _) = state
        .orchestrator
        .clarification_feedback(user.id, &id, req.helpful)
        .await?;
    Ok(Json(view).into_response())
}

/// Most history entries one request returns (the documented maximum).
const HISTORY_MAX: i64 = 500;

/// The rows of a stored answer, computed again now (records nothing).
#[utoipa::path(
    post,
    path = "/api/v1/history/{id}/rows",
    operation_id = "history_rows",
    summary = "The rows of a past answer, computed again now from its stored plan (audited; nothing is added to the thread or history)",
    params(("id" = String, Path, description = "The history entry's id (an answer's `history_id`)")),
    responses(
        (status = 200, description = "The rows as of now", body = protocol::ResultTable),
        (status = 413, description = "Request body too large", body = app::protocol::ApiError),
        (status = 429, description = "Too many of your questions are running at once", body = app::protocol::ApiError),
        (status = 504, description = "The query ran past its time limit", body = app::protocol::ApiError),
        openapi::Signed,
        openapi::ById
    )
)]
#[tracing::instrument(skip_all)]
async fn history_rows(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    Ok(Json(state.orchestrator.replay(user.id, &id).await?).into_response())
}

/// The administrators' runtime switch of the language model (F24).
#[derive(Debug, serde::Serialize, Deserialize, utoipa::ToSchema)]
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

#[utoipa::path(
    get,
    path = "/api/v1/admin/language-model",
    operation_id = "language_model",
    summary = "The language model's switch (administrators)",
    responses(
        (status = 200, description = "Switch", body = LanguageModelSwitch),
        openapi::Signed,
        openapi::AdminOnly
    )
)]
#[tracing::instrument(skip_all)]
async fn language_model(
    State(state): State<AppState>,
    crate::auth::AdminUser(_): crate::auth::AdminUser,
) -> Result<Response, ApiError> {
    Ok(Json(language_model_state(&state).await?).into_response())
}

#[utoipa::path(
    put,
    path = "/api/v1/admin/language-model",
    operation_id = "switch_language_model",
    summary = "Switch the language model on or off for every replica (administrators)",
    request_body = LanguageModelSwitch,
    responses(
        (status = 200, description = "Switch", body = LanguageModelSwitch),
        openapi::Signed,
        openapi::WithBody,
        openapi::AdminOnly
    )
)]
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

#[utoipa::path(
    get,
    path = "/api/v1/settings",
    operation_id = "settings",
    summary = "Your settings",
    responses(
        (status = 200, description = "Settings", body = Settings),
        openapi::Signed
    )
)]
#[tracing::instrument(skip_all)]
async fn settings(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
) -> Result<Response, ApiError> {
    Ok(Json(state.orchestrator.settings(user.id).await?).into_response())
}

#[utoipa::path(
    put,
    path = "/api/v1/settings",
    operation_id = "save_settings",
    summary = "Change your settings",
    request_body = Settings,
    responses(
        (status = 200, description = "Saved settings", body = Settings),
        openapi::Signed,
        openapi::WithBody
    )
)]
#[tracing::instrument(skip_all)]
async fn save_settings(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiJson(s): ApiJson<Settings>,
) -> Result<Response, ApiError> {
    Ok(Json(state.orchestrator.save_settings(user.id, &s).await?).into_response())
}

#[utoipa::path(
    get,
    path = "/api/v1/preferences",
    operation_id = "preferences",
    summary = "Your learned and remembered choices",
    responses(
        (status = 200, description = "Preferences", body = Vec<protocol::PreferenceItem>),
        openapi::Signed
    )
)]
#[tracing::instrument(skip_all)]
async fn preferences(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
) -> Result<Response, ApiError> {
    Ok(Json(state.orchestrator.preferences(user.id).await?).into_response())
}

#[utoipa::path(
    delete,
    path = "/api/v1/preferences/{id}",
    operation_id = "delete_preference",
    summary = "Forget a learned preference",
    params(("id" = String, Path, description = "The preference's id")),
    responses(
        (status = 204, description = "Deleted"),
        openapi::Signed,
        openapi::ById
    )
)]
#[tracing::instrument(skip_all)]
async fn delete_preference(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id: i64 = id
        .parse()
        .map_err(|_| ApiError::from(protocol::ApiError::not_found()))?;
    state.orchestrator.delete_preference(user.id, id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

#[utoipa::path(
    get,
    path = "/api/v1/openapi.json",
    operation_id = "openapi",
    summary = "This document",
    responses((status = 200, description = "The OpenAPI document", content_type = "application/json")),
    security(())
)]
async fn openapi_document() -> Response {
    Json(openapi::document()).into_response()
}
