//! HTTP: the axum router with the Leptos pages and server functions, sign-in
//! and sign-out, health checks, and the cross-cutting layers (added once, here).
//!
//! Request order through the layers: trace → security headers (CSP nonce,
//! no-store) → catch-panic → timeout → body limit → compression → cross-origin refusal → user resolution → server-function
//! input errors as 400 → route (pages additionally pass the sign-in guard).

pub mod access_page;
pub mod api;
pub mod auth;
pub mod feedback_form;
pub mod headers;
pub mod rerun;
pub mod saved_page;
pub mod verified_page;

use crate::auth::extract::{ProtectedPages, require_session_for_pages, resolve_user};
use crate::auth::origin::refuse_cross_origin;
use crate::state::AppState;
use app::backend::{AuthUser, RequestUser, SharedBackend};
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::middleware::{from_fn, from_fn_with_state};
use axum::response::IntoResponse;
use axum::routing::get;
use leptos::prelude::{provide_context, use_context};
use leptos_axum::{AxumRouteListing, LeptosRoutes, generate_route_list};
use std::sync::OnceLock;
use std::time::Duration;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// Largest request body accepted (bytes).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The app's route list, generated once per process. Generating it sets a
/// process-global "suppress resource loading" flag in leptos_server, and a resource
/// first polled while it is set never resolves (leptos issue #4773): a second router
/// built while the first is serving pages (tests, or a future hot reload) could stall
/// a page forever. Once per process, before any router exists, nothing can overlap.
fn route_list() -> Vec<AxumRouteListing> {
    static ROUTES: OnceLock<Vec<AxumRouteListing>> = OnceLock::new();
    ROUTES.get_or_init(|| generate_route_list(app::App)).clone()
}

/// Builds the whole application router.
pub fn router(state: AppState) -> Router {
    let routes = route_list();
    let protected = ProtectedPages::new(routes.iter().map(|r| r.path()));
    let context = leptos_context(&state);
    let shell_options = state.leptos_options.clone();

    Router::new()
        .route("/healthz", get(healthz))
        .route("/history/rerun", axum::routing::post(rerun::rerun))
        .route("/feedback", axum::routing::post(feedback_form::feedback))
        .route(saved_page::PATH, axum::routing::post(saved_page::action))
        .route(access_page::PATH, get(access_page::page).post(access_page::save))
        .route(
            verified_page::PATH,
            get(verified_page::page).post(verified_page::save),
        )
        .merge(auth::routes())
        .merge(api::routes())
        .leptos_routes_with_context(&state, routes, context.clone(), move || {
            app::shell(shell_options.clone())
        })
        .route_layer(from_fn_with_state(protected, require_session_for_pages))
        .fallback(leptos_axum::file_and_error_handler_with_context::<AppState, _>(
            context,
            app::shell,
        ))
        .layer(from_fn(bad_server_fn_input_is_400))
        .layer(from_fn(no_trailing_slash))
        .layer(from_fn_with_state(state.auth.clone(), resolve_user))
        .layer(from_fn(refuse_cross_origin))
        .layer(CompressionLayer::new())
        .layer(axum::middleware::from_fn(limit_body))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            Duration::from_secs(30),
        ))
        .layer(CatchPanicLayer::new())
        .layer(from_fn(headers::security_headers))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// What every page render and server-function call gets in its Leptos
/// context: the backend, who is asking (read from the request's `Parts`,
/// where [`resolve_user`] put it; leptos_axum provides `Parts` before calling
/// this), and the response's CSP nonce (replacing the one leptos_axum
/// generated, so the hydration script carries the nonce the header allows).
pub fn leptos_context(state: &AppState) -> impl Fn() + Clone + Send + Sync + 'static {
    let backend: SharedBackend = state.backend.clone();
    move || {
        provide_context(backend.clone());
        let parts = use_context::<Parts>();
        let user = parts
            .as_ref()
            .and_then(|p| p.extensions.get::<AuthUser>().cloned());
        provide_context(RequestUser(user));
        if let Some(nonce) = parts
            .as_ref()
            .and_then(|p| p.extensions.get::<headers::CspNonce>())
        {
            provide_context(leptos::nonce::Nonce::from_value(nonce.0.as_str()));
        }
    }
}

/// Refuses bodies over [`MAX_BODY_BYTES`] with 413, whether or not the client sent a
/// `Content-Length` (a chunked body is buffered up to the limit, then refused).
async fn limit_body(req: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    // JSON `{code, message}` like every other API error (pages never send such bodies).
    let too_large = || {
        crate::error::ErrorResponse::new(
            app::protocol::ErrorCode::BodyTooLarge,
            format!("The request body is larger than {} KiB.", MAX_BODY_BYTES / 1024),
        )
        .into_response()
    };
    let declared = req
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > MAX_BODY_BYTES) {
        return too_large();
    }
    let (parts, body) = req.into_parts();
    match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(bytes) => {
            next.run(axum::extract::Request::from_parts(
                parts,
                axum::body::Body::from(bytes),
            ))
            .await
        }
        Err(_) => too_large(),
    }
}

/// A server function whose arguments do not parse (a missing field, a
/// malformed form body) is the client's mistake, but `server_fn` answers it
/// with 500. Rewrites exactly those answers to 400, keeping the message.
async fn bad_server_fn_input_is_400(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let is_server_fn = req.uri().path().starts_with("/api/") && !req.uri().path().starts_with("/api/v1/");
    let res = next.run(req).await;
    if !is_server_fn || res.status() != StatusCode::INTERNAL_SERVER_ERROR {
        return res;
    }
    let (mut parts, body) = res.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    };
    if bytes.starts_with(b"Args|") || bytes.starts_with(b"Deserialization|") {
        parts.status = StatusCode::BAD_REQUEST;
    }
    axum::response::Response::from_parts(parts, axum::body::Body::from(bytes))
}

/// `/settings/` is `/settings`: a page address with a trailing slash is redirected
/// (308, query kept) before any route or fallback sees it, so it can never render
/// the page shell around a signed-out visitor or miss the sign-in guard.
async fn no_trailing_slash(
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let path = req.uri().path();
    let is_read = matches!(*req.method(), axum::http::Method::GET | axum::http::Method::HEAD);
    if is_read && path.len() > 1 && path.ends_with('/') {
        let trimmed = path.trim_end_matches('/');
        let target = match req.uri().query() {
            Some(q) => format!("{}?{q}", if trimmed.is_empty() { "/" } else { trimmed }),
            None => (if trimmed.is_empty() { "/" } else { trimmed }).to_string(),
        };
        // `//evil.example/` must not become a redirect to another site
        let target = if target.starts_with("//") {
            "/".to_string()
        } else {
            target
        };
        let mut res = StatusCode::PERMANENT_REDIRECT.into_response();
        if let Ok(v) = axum::http::HeaderValue::from_str(&target) {
            res.headers_mut().insert(axum::http::header::LOCATION, v);
        }
        return res;
    }
    next.run(req).await
}

/// Liveness and readiness: 200 when the database answers, 503 otherwise.
async fn healthz(State(state): State<AppState>) -> impl IntoResponse {
    // The language model never makes Clarion unhealthy: it is optional and every
    // failure falls back to the engine. Its breaker state is reported for operators.
    let llm = match state.orchestrator.llm() {
        None => serde_json::json!("off"),
        Some(l) => serde_json::json!({
            "endpoint": l.config().endpoint_display(),
            "model": l.config().model,
            "breaker": l.status(),
        }),
    };
    match state.store.database().ping().await {
        Ok(()) => (
            StatusCode::OK,
            axum::Json(serde_json::json!({"status": "ok", "database": "ok", "language_model": llm})),
        ),
        Err(e) => {
            tracing::warn!(error = %e, "health check: database unavailable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                axum::Json(serde_json::json!({"status": "unavailable", "database": "unreachable"})),
            )
        }
    }
}
