//! Sign-in and sign-out over HTTP: `POST /login` and `POST /logout`.
//!
//! Both are plain form posts answered with `303 See Other`, so they work
//! without JavaScript. A refused sign-in renders the sign-in page again (401,
//! or 429 when rate-limited) with the message and the username typed, never
//! the password.

use crate::auth::LoginError;
use crate::auth::cookie;
use crate::state::AppState;
use app::pages::login::LoginFeedback;
use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, FromRequest, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use chrono::Utc;
use leptos::prelude::provide_context;
use serde::Deserialize;
use std::net::SocketAddr;

/// The sign-in and sign-out routes.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/login", post(login))
        .route("/logout", post(logout))
}

#[derive(Debug, Deserialize)]
struct LoginForm {
    #[serde(default)]
    username: String,
    #[serde(default)]
    password: String,
    #[serde(default)]
    next: String,
}

#[tracing::instrument(skip_all)]
async fn login(State(state): State<AppState>, req: Request) -> Response {
    let peer = req.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0);
    let config = state.auth.config().clone();
    let ip = config.trusted_proxies.client_ip(req.headers(), peer);
    let secure = config.secure_request(req.headers(), req.uri());
    // The session this browser presented (if any) ends at sign-in: a new id is
    // issued, so a session id planted before sign-in is worth nothing after it.
    let presented = cookie::session_secret(req.headers(), secure).map(str::to_owned);
    let nonce = req.extensions().get::<super::headers::CspNonce>().cloned();
    let form = match axum::Form::<LoginForm>::from_request(req, &state).await {
        Ok(axum::Form(f)) => f,
        Err(rejection) => return rejection.into_response(),
    };
    let next = safe_next(&form.next);
    let username = form.username.trim().to_string();
    // Echoed into the re-rendered form: never more than a username can be.
    let shown: String = username
        .chars()
        .take(crate::auth::service::MAX_USERNAME_CHARS)
        .collect();
    let feedback = |error: String| LoginFeedback {
        error: Some(error),
        username: shown.clone(),
        next: next.clone(),
    };
    let render_login =
        |fb: LoginFeedback, status: StatusCode| render_login(&state, fb, status, nonce.clone());
    if username.is_empty() || form.password.is_empty() {
        let fb = feedback("Enter your username and password.".into());
        return render_login(fb, StatusCode::BAD_REQUEST).await;
    }

    match state.auth.login(&username, &form.password, &ip, Utc::now()).await {
        Ok(signed_in) => {
            if let Some(old) = presented
                && let Err(e) = state.auth.logout(&old).await
            {
                tracing::error!(error = %e, "could not end the session presented at sign-in");
            }
            let max_age = (signed_in.expires_at - Utc::now()).num_seconds().max(0);
            let mut res = see_other(&next);
            res.headers_mut().append(
                header::SET_COOKIE,
                cookie::session_cookie(&signed_in.secret, max_age, secure),
            );
            res
        }
        Err(e @ LoginError::BadCredentials) => {
            render_login(feedback(e.to_string()), StatusCode::UNAUTHORIZED).await
        }
        Err(e @ LoginError::RateLimited { retry_after_secs }) => {
            let mut res = render_login(feedback(e.to_string()), StatusCode::TOO_MANY_REQUESTS).await;
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
            res
        }
        Err(e @ LoginError::BadInput(_)) => {
            render_login(feedback(e.to_string()), StatusCode::BAD_REQUEST).await
        }
        Err(e @ LoginError::Busy(_)) => {
            let mut res = render_login(feedback(e.to_string()), StatusCode::SERVICE_UNAVAILABLE).await;
            res.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(1));
            res
        }
        Err(LoginError::Store(e)) => {
            let shown = crate::backend::internal(e).to_string();
            render_login(feedback(shown), StatusCode::INTERNAL_SERVER_ERROR).await
        }
    }
}

#[tracing::instrument(skip_all)]
async fn logout(State(state): State<AppState>, headers: HeaderMap, uri: Uri) -> Response {
    let secure = state.auth.config().secure_request(&headers, &uri);
    if let Some(secret) = cookie::session_secret(&headers, secure)
        && let Err(e) = state.auth.logout(secret).await
    {
        tracing::error!(error = %e, "could not delete a session at sign-out");
    }
    let mut res = see_other("/login");
    res.headers_mut()
        .append(header::SET_COOKIE, cookie::clear_session_cookie(secure));
    res
}

/// `303 See Other` to a local path, never cached.
fn see_other(location: &str) -> Response {
    let mut res = StatusCode::SEE_OTHER.into_response();
    let headers = res.headers_mut();
    headers.insert(
        header::LOCATION,
        HeaderValue::from_str(location).unwrap_or(HeaderValue::from_static("/")),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

/// Where to go after signing in: a local path only (an open redirect to
/// another site would make phishing links look like Clarion's), and never
/// back to the sign-in or sign-out endpoints.
pub fn safe_next(next: &str) -> String {
    let local = next.starts_with('/')
        && !next.starts_with("//")
        && !next.starts_with("/\\")
        && next.len() <= 2048
        && next.bytes().all(|b| b.is_ascii_graphic());
    let path = next.split(['?', '#']).next().unwrap_or("");
    if !local || path == "/login" || path == "/logout" {
        return "/".into();
    }
    next.to_string()
}

/// Renders the sign-in page with feedback, through the same Leptos app and
/// context as every other page.
async fn render_login(
    state: &AppState,
    feedback: LoginFeedback,
    status: StatusCode,
    nonce: Option<super::headers::CspNonce>,
) -> Response {
    let context = super::leptos_context(state);
    let app_state = state.clone();
    let options = state.leptos_options.clone();
    let handler = leptos_axum::render_app_to_stream_with_context(
        move || {
            provide_context(app_state.clone());
            context();
            provide_context(feedback.clone());
        },
        move || app::shell(options.clone()),
    );
    let mut page = Request::get("/login")
        .header(header::ACCEPT, "text/html")
        .body(Body::empty())
        .expect("a static request is valid");
    if let Some(n) = nonce {
        page.extensions_mut().insert(n);
    }
    let mut res = handler(page).await;
    *res.status_mut() = status;
    res.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_stays_on_this_site() {
        let cases = [
            ("/settings", "/settings"),
            ("/history?q=1", "/history?q=1"),
            ("", "/"),
            ("https://evil.example/", "/"),
            ("//evil.example/", "/"),
            ("/\\evil.example", "/"),
            ("/login", "/"),
            ("/login?next=/x", "/"),
            ("/logout", "/"),
            ("/a b", "/"),
            ("settings", "/"),
        ];
        for (input, expected) in cases {
            assert_eq!(safe_next(input), expected, "{input:?}");
        }
    }
}
