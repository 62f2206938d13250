//! Verified questions in the JSON API (issue 16, part 2): everyone lists those in
//! force; administrators promote one of their answered questions, edit its name and
//! phrasings, and retire it. Thin: parse, call the orchestrator, map.

use super::{ApiError, ApiJson};
use crate::auth::{AdminUser, CurrentUser};
use crate::state::AppState;
use crate::store::Verified;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

/// A verified question as the API shows it.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct VerifiedQuestion {
    pub id: i64,
    pub name: String,
    /// The question as the administrator asked it.
    pub question: String,
    /// The phrasings it matches, normalised (lower case, words only).
    pub phrasings: Vec<String>,
    /// The administrator's display name.
    pub verified_by: String,
    /// Questions answered by it so far.
    pub use_count: i64,
    pub created_at: String,
}

impl From<Verified> for VerifiedQuestion {
    fn from(v: Verified) -> Self {
        VerifiedQuestion {
            id: v.id,
            name: v.name,
            question: v.question,
            phrasings: v.phrasings,
            verified_by: v.verified_by_name,
            use_count: v.use_count,
            created_at: v.created_at.to_rfc3339(),
        }
    }
}

/// `POST /api/v1/admin/verified`: promote an answered question of any user to a verified question: a name (1 to 120 characters) and phrasings to match (at most 50 with the question's own).
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyRequest {
    /// An answered question of any user (its `history_id`).
    pub history_id: String,
    /// Its name (1–120 characters, not only spaces).
    #[schema(min_length = 1, max_length = 120, pattern = r"\S")]
    pub name: String,
    /// More phrasings to match (the question's own is always one; at most 49 in all,
    /// each at most 1000 characters).
    #[serde(default)]
    #[schema(max_items = 49, value_type = Vec<Phrasing>)]
    pub phrasings: Vec<String>,
}

/// `PUT /api/v1/admin/verified/{id}`.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifiedEdit {
    /// Its name (1–120 characters, not only spaces).
    #[schema(min_length = 1, max_length = 120, pattern = r"\S")]
    pub name: String,
    /// The phrasings it matches (at most 49, each at most 1000 characters).
    #[serde(default)]
    #[schema(max_items = 49, value_type = Vec<Phrasing>)]
    pub phrasings: Vec<String>,
}

/// `GET /api/v1/verified`.
#[utoipa::path(
    get,
    path = "/api/v1/verified",
    operation_id = "verified",
    summary = "The verified questions in force",
    responses(
        (status = 200, description = "Verified questions", body = Vec<VerifiedQuestion>),
        super::openapi::Signed
    )
)]
#[tracing::instrument(skip_all)]
pub async fn list(State(state): State<AppState>, CurrentUser(_): CurrentUser) -> Result<Response, ApiError> {
    let all = state.orchestrator.verified_questions().await?;
    Ok(Json(all.into_iter().map(VerifiedQuestion::from).collect::<Vec<_>>()).into_response())
}

/// One phrasing a verified question matches, as documented: a string of at most
/// 1000 characters (only its schema is used).
pub struct Phrasing;

impl utoipa::PartialSchema for Phrasing {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .max_length(Some(crate::engine::MAX_QUESTION_CHARS))
            .into()
    }
}

impl utoipa::ToSchema for Phrasing {}

/// `POST /api/v1/admin/verified`.
#[utoipa::path(
    post,
    path = "/api/v1/admin/verified",
    operation_id = "verify",
    summary = "Promote any user's answered question to a verified question (administrators)",
    request_body = VerifyRequest,
    responses(
        (status = 201, description = "The verified question", body = VerifiedQuestion),
        super::openapi::Signed,
        super::openapi::WithBody,
        super::openapi::AdminOnly,
        super::openapi::ById
    )
)]
#[tracing::instrument(skip_all)]
pub async fn create(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    ApiJson(req): ApiJson<VerifyRequest>,
) -> Result<Response, ApiError> {
    let v = state
        .orchestrator
        .verify(admin.id, req.history_id.trim(), &req.name, &req.phrasings)
        .await?;
    Ok((StatusCode::CREATED, Json(VerifiedQuestion::from(v))).into_response())
}

/// `PUT /api/v1/admin/verified/{id}`.
#[utoipa::path(
    put,
    path = "/api/v1/admin/verified/{id}",
    operation_id = "edit_verified",
    summary = "Rename a verified question and replace its phrasings (administrators)",
    params(("id" = String, Path, description = "The verified question's id")),
    request_body = VerifiedEdit,
    responses(
        (status = 200, description = "The verified question", body = VerifiedQuestion),
        super::openapi::Signed,
        super::openapi::WithBody,
        super::openapi::AdminOnly,
        super::openapi::ById
    )
)]
#[tracing::instrument(skip_all)]
pub async fn edit(
    State(state): State<AppState>,
    AdminUser(_): AdminUser,
    Path(id): Path<String>,
    ApiJson(req): ApiJson<VerifiedEdit>,
) -> Result<Response, ApiError> {
    let id: i64 = id
        .parse()
        .map_err(|_| ApiError::from(app::protocol::ApiError::not_found()))?;
    let v = state
        .orchestrator
        .edit_verified(id, &req.name, &req.phrasings)
        .await?;
    Ok(Json(VerifiedQuestion::from(v)).into_response())
}

/// `DELETE /api/v1/admin/verified/{id}`: retires it.
#[utoipa::path(
    delete,
    path = "/api/v1/admin/verified/{id}",
    operation_id = "retire_verified",
    summary = "Retire a verified question: new questions no longer match it (administrators)",
    params(("id" = String, Path, description = "The verified question's id")),
    responses(
        (status = 204, description = "Retired"),
        super::openapi::Signed,
        super::openapi::AdminOnly,
        super::openapi::ById
    )
)]
#[tracing::instrument(skip_all)]
pub async fn retire(
    State(state): State<AppState>,
    AdminUser(_): AdminUser,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let id: i64 = id
        .parse()
        .map_err(|_| ApiError::from(app::protocol::ApiError::not_found()))?;
    state.orchestrator.retire_verified(id).await?;
    Ok(StatusCode::NO_CONTENT.into_response())
}
