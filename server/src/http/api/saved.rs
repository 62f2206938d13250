//! Saved questions in the JSON API (F27): list, save an answer under a name, rename,
//! delete, and run one with exactly its clarifications. Thin: parse, call the
//! orchestrator, map. Ids are the user's own; anyone else's is a 404.

use super::{ApiError, ApiJson, openapi};
use crate::auth::CurrentUser;
use crate::state::AppState;
use app::protocol::{QueryOutcome, SaveRequest, SavedQuestion, SavedRename};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// `GET /api/v1/saved`.
#[utoipa::path(
    get,
    path = "/api/v1/saved",
    operation_id = "saved",
    summary = "Your saved questions, newest first, each saying whether it still applies",
    responses(
        (status = 200, description = "Saved questions", body = Vec<SavedQuestion>),
        openapi::Signed
    )
)]
#[tracing::instrument(skip_all)]
pub async fn list(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
) -> Result<Response, ApiError> {
    Ok(Json(state.orchestrator.saved_questions(user.id).await?).into_response())
}

/// `POST /api/v1/saved`.
#[utoipa::path(
    post,
    path = "/api/v1/saved",
    operation_id = "save_question",
    summary = "Save one of your answers under a name, with the clarifications it was answered with",
    request_body = SaveRequest,
    responses(
        (status = 201, description = "The saved question", body = SavedQuestion),
        (status = 409, description = "You already keep as many saved questions as Clarion allows (500)", body = app::protocol::ApiError),
        openapi::Signed,
        openapi::WithBody,
        openapi::ById
    )
)]
#[tracing::instrument(skip_all)]
pub async fn create(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    ApiJson(req): ApiJson<SaveRequest>,
) -> Result<Response, ApiError> {
    let saved = state
        .orchestrator
        .save_question(user.id, &req.history_id, &req.name)
        .await?;
    Ok((StatusCode::CREATED, Json(saved)).into_response())
}

/// `PATCH /api/v1/saved/{id}`.
#[utoipa::path(
    patch,
    path = "/api/v1/saved/{id}",
    operation_id = "rename_saved",
    summary = "Rename one of your saved questions",
    params(("id" = String, Path, description = "The saved question's id")),
    request_body = SavedRename,
    responses(
        (status = 200, description = "The saved question", body = SavedQuestion),
        openapi::Signed,
        openapi::WithBody,
        openapi::ById
    )
)]
#[tracing::instrument(skip_all)]
pub async fn rename(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<SavedRename>,
) -> Result<Response, ApiError> {
    let saved = state.orchestrator.rename_saved(user.id, &id, &req.name).await?;
    Ok(Json(saved).into_response())
}

/// `DELETE /api/v1/saved/{id}`.
#[utoipa::path(
    delete,
    path = "/api/v1/saved/{id}",
    operation_id = "delete_saved",
    summary = "Delete one of your saved questions",
    params(("id" = String, Path, description = "The saved question's id")),
    responses(
        (status = 204, description = "Deleted"),
        openapi::Signed,
        openapi::ById
    )
)]
#[tracing::instrument(skip_all)]
pub async fn delete(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    state.orchestrator.delete_saved(user.id, &id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}

/// `POST /api/v1/saved/{id}/run`.
#[utoipa::path(
    post,
    path = "/api/v1/saved/{id}/run",
    operation_id = "run_saved",
    summary = "Run a saved question against today's data with exactly its clarifications (never asks; 422 `no_longer_applies` when its definition no longer applies)",
    params(("id" = String, Path, description = "The saved question's id")),
    responses(
        (status = 200, description = "The answer (`status`: `answered`), in a new thread", body = QueryOutcome),
        openapi::Signed,
        openapi::ById,
        openapi::Runs
    )
)]
#[tracing::instrument(skip_all)]
pub async fn run(
    State(state): State<AppState>,
    CurrentUser(user): CurrentUser,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let answer = state.orchestrator.run_saved(user.id, &id).await?;
    Ok((StatusCode::OK, Json(QueryOutcome::Answered(answer))).into_response())
}
