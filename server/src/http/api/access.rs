//! Clinic scopes in the JSON API (issue 16): `GET /api/v1/me` shows who is asking and
//! which clinics they may see; administrators list accounts with their scopes and set
//! one (`PUT /api/v1/admin/users/{id}/clinics`), which applies to that account's next
//! question. Thin: parse, call the store, map.

use super::{ApiError, ApiJson};
use crate::auth::{AdminUser, CurrentUser};
use crate::orchestrator::OrchestratorError;
use crate::state::AppState;
use crate::store::{ClinicScope, StoreError, User};
use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};

/// Most clinic ids one scope may list.
pub const MAX_SCOPE_CLINICS: usize = 1000;

/// An account with its clinic scope.
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
pub struct Account {
    pub id: i64,
    pub username: String,
    pub display_name: String,
    pub is_admin: bool,
    /// Sees every clinic.
    pub all_clinics: bool,
    /// The clinics it may see when not `all_clinics` (ascending; empty with `all_clinics`).
    pub clinic_ids: Vec<i64>,
}

/// A scope to set: every clinic, or exactly `clinic_ids` (may be empty: none).
#[derive(Debug, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScopeChange {
    pub all_clinics: bool,
    /// The clinics (at most 1000) when not `all_clinics`.
    /// Read as JSON numbers: `3` and `3.0` are the same id (JSON Schema's `integer`
    /// allows both); anything else is a 422 naming it, never a parse error.
    #[serde(default)]
    #[schema(max_items = 1000, value_type = Vec<i64>)]
    pub clinic_ids: Vec<serde_json::Number>,
}

fn internal(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> ApiError {
    ApiError::from(OrchestratorError::internal(e))
}

fn account(u: User, scope: &ClinicScope) -> Account {
    Account {
        id: u.id,
        username: u.username,
        display_name: u.display_name,
        is_admin: u.is_admin,
        all_clinics: scope.ids().is_none(),
        clinic_ids: scope.ids().map(<[i64]>::to_vec).unwrap_or_default(),
    }
}

/// `GET /api/v1/me`.
#[utoipa::path(
    get,
    path = "/api/v1/me",
    operation_id = "me",
    summary = "Who you are and which clinics you may see",
    responses(
        (status = 200, description = "Your account", body = Account),
        super::openapi::Signed
    )
)]
#[tracing::instrument(skip_all)]
pub async fn me(State(state): State<AppState>, CurrentUser(user): CurrentUser) -> Result<Response, ApiError> {
    let u = state.store.user_by_id(user.id).await.map_err(internal)?;
    let scope = state.store.clinic_scope(user.id).await.map_err(internal)?;
    Ok(Json(account(u, &scope)).into_response())
}

/// `GET /api/v1/admin/users`.
#[utoipa::path(
    get,
    path = "/api/v1/admin/users",
    operation_id = "users",
    summary = "Every account with its clinic scope (administrators)",
    responses(
        (status = 200, description = "Accounts", body = Vec<Account>),
        super::openapi::Signed,
        super::openapi::AdminOnly
    )
)]
#[tracing::instrument(skip_all)]
pub async fn users(State(state): State<AppState>, AdminUser(_): AdminUser) -> Result<Response, ApiError> {
    let mut out = Vec::new();
    for u in state.store.list_users().await.map_err(internal)? {
        let scope = state.store.clinic_scope(u.id).await.map_err(internal)?;
        out.push(account(u, &scope));
    }
    Ok(Json(out).into_response())
}

/// Checks a requested scope: positive ids, at most [`MAX_SCOPE_CLINICS`], none with `all_clinics`.
pub fn checked(change: &ScopeChange) -> Result<ClinicScope, String> {
    if change.all_clinics {
        if !change.clinic_ids.is_empty() {
            return Err("Send clinic_ids only when all_clinics is false.".into());
        }
        return Ok(ClinicScope::All);
    }
    if change.clinic_ids.len() > MAX_SCOPE_CLINICS {
        return Err(format!("At most {MAX_SCOPE_CLINICS} clinics per account."));
    }
    let mut ids = Vec::with_capacity(change.clinic_ids.len());
    for n in &change.clinic_ids {
        let whole = n.as_i64().or_else(|| {
            n.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        });
        match whole {
            Some(id) if id > 0 => ids.push(id),
            _ => return Err(format!("{n} is not a clinic id (a positive whole number).")),
        }
    }
    Ok(ClinicScope::clinics(ids))
}

/// `PUT /api/v1/admin/users/{id}/clinics`.
#[utoipa::path(
    put,
    path = "/api/v1/admin/users/{id}/clinics",
    operation_id = "set_scope",
    summary = "Set which clinics an account may see (administrators); applies to its next question",
    params(("id" = String, Path, description = "The account's id")),
    request_body = ScopeChange,
    responses(
        (status = 200, description = "The account with its new scope", body = Account),
        (status = 422, description = "Ids that are not clinic ids, or ids with `all_clinics`", body = app::protocol::ApiError),
        super::openapi::Signed,
        super::openapi::WithBody,
        super::openapi::AdminOnly,
        super::openapi::ById
    )
)]
#[tracing::instrument(skip_all)]
pub async fn set_scope(
    State(state): State<AppState>,
    AdminUser(admin): AdminUser,
    Path(id): Path<String>,
    ApiJson(change): ApiJson<ScopeChange>,
) -> Result<Response, ApiError> {
    let id: i64 = id
        .parse()
        .map_err(|_| ApiError::from(app::protocol::ApiError::not_found()))?;
    let scope = checked(&change).map_err(|m| ApiError::new(app::protocol::ErrorCode::BadScope, m))?;
    match state.store.set_clinic_scope(id, &scope).await {
        Ok(()) => {}
        Err(StoreError::NotFound) => return Err(ApiError::from(app::protocol::ApiError::not_found())),
        Err(e) => return Err(internal(e)),
    }
    tracing::info!(by = admin.id, user = id, scope = %scope.label(), "clinic scope changed");
    let u = state.store.user_by_id(id).await.map_err(internal)?;
    Ok(Json(account(u, &scope)).into_response())
}
