//! HTTP: the axum router with the Leptos pages and server functions, health
//! checks, and the cross-cutting layers (added once, here).

use crate::state::AppState;
use app::backend::SharedBackend;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use leptos::prelude::provide_context;
use leptos_axum::{LeptosRoutes, generate_route_list};
use std::time::Duration;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::CompressionLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// Largest request body accepted (bytes).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Builds the whole application router.
pub fn router(state: AppState) -> Router {
    let routes = generate_route_list(app::App);
    let backend: SharedBackend = state.backend.clone();
    let context = move || provide_context(backend.clone());
    let shell_options = state.leptos_options.clone();

    Router::new()
        .route("/healthz", get(healthz))
        .leptos_routes_with_context(&state, routes, context.clone(), move || {
            app::shell(shell_options.clone())
        })
        .fallback(leptos_axum::file_and_error_handler_with_context::<AppState, _>(
            context,
            app::shell,
        ))
        .layer(CompressionLayer::new())
        .layer(axum::middleware::from_fn(limit_body))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            Duration::from_secs(30),
        ))
        .layer(CatchPanicLayer::new())
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Refuses bodies over [`MAX_BODY_BYTES`] with 413, whether or not the client sent a
/// `Content-Length` (a chunked body is buffered up to the limit, then refused).
async fn limit_body(req: axum::extract::Request, next: axum::middleware::Next) -> axum::response::Response {
    let too_large = || (StatusCode::PAYLOAD_TOO_LARGE, "Request body too large.").into_response();
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

/// Liveness and readiness: 200 when the database answers, 503 otherwise.
async fn healthz(State(state): State<AppState>) -> impl IntoResponse {
    match state.store.database().ping().await {
        Ok(()) => (
            StatusCode::OK,
            axum::Json(serde_json::json!({"status": "ok", "database": "ok"})),
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
