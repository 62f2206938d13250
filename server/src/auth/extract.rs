//! Who is asking, per request, and what happens when nobody is signed in.
//!
//! [`resolve_user`] runs once per request (root middleware): it turns a session
//! cookie or an `Authorization: Bearer` token into an [`AuthUser`] in the
//! request's extensions. Everything downstream reads it from there: the
//! [`CurrentUser`] extractor for axum handlers, and the Leptos context (which
//! sees the request's `Parts`) for pages and server functions.
//!
//! [`require_session_for_pages`] sends a signed-out browser to `/login?next=…`
//! before any HTML is rendered. It runs as a route layer rather than as a
//! `leptos_axum::redirect` inside the page because a redirect issued while a
//! streamed page is already under way cannot change the status line any more.

use super::service::Auth;
use crate::error::ErrorResponse;
use app::backend::AuthUser;
use app::protocol::{ApiError, ErrorCode};
use axum::extract::{FromRequestParts, MatchedPath, Request, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use std::collections::HashSet;
use std::sync::Arc;

/// Resolves the session cookie or bearer token to a user and stores it in the
/// request's extensions. Never refuses a request itself: unauthenticated
/// requests continue without a user, and whatever needs one refuses them.
pub async fn resolve_user(State(auth): State<Auth>, mut req: Request, next: Next) -> Response {
    if !req.uri().path().starts_with("/pkg/") {
        let bearer = super::cookie::bearer_token(req.headers()).map(str::to_owned);
        let secure = auth.config().secure_request(req.headers(), req.uri());
        let session = super::cookie::session_secret(req.headers(), secure).map(str::to_owned);
        let now = Utc::now();
        let found = match (bearer, session) {
            (Some(token), _) => auth.token_user(&token, now).await,
            (None, Some(secret)) => auth.session_user(&secret, now).await,
            (None, None) => Ok(None),
        };
        match found {
            Ok(Some(user)) => {
                req.extensions_mut().insert(AuthUser::from(user));
            }
            Ok(None) => {}
            Err(e) => tracing::error!(error = %e, "could not look up the signed-in user"),
        }
    }
    next.run(req).await
}

/// The page paths that need a session (every routed page except the public ones).
#[derive(Clone, Debug, Default)]
pub struct ProtectedPages(Arc<HashSet<String>>);

impl ProtectedPages {
    /// Pages reachable without signing in.
    pub const PUBLIC: [&'static str; 1] = ["/login"];

    /// Every path in `paths` except [`Self::PUBLIC`] ones.
    pub fn new<'a>(paths: impl IntoIterator<Item = &'a str>) -> Self {
        ProtectedPages(Arc::new(
            paths
                .into_iter()
                .filter(|p| !Self::PUBLIC.contains(p))
                .map(str::to_owned)
                .collect(),
        ))
    }

    pub fn contains(&self, path: &str) -> bool {
        self.0.contains(path)
    }
}

/// Redirects a signed-out browser from a protected page to the sign-in page,
/// remembering where it wanted to go. Install with `route_layer` (it needs the
/// matched route).
pub async fn require_session_for_pages(
    State(pages): State<ProtectedPages>,
    req: Request,
    next: Next,
) -> Response {
    let is_page = matches!(*req.method(), Method::GET | Method::HEAD)
        && req
            .extensions()
            .get::<MatchedPath>()
            .is_some_and(|m| pages.contains(m.as_str()));
    if is_page && req.extensions().get::<AuthUser>().is_none() {
        return login_redirect(req.uri());
    }
    next.run(req).await
}

/// `303 See Other` to `/login?next=<this page>`.
pub fn login_redirect(uri: &Uri) -> Response {
    let here = uri.path_and_query().map(|p| p.as_str()).unwrap_or("/");
    let location = if here == "/" {
        "/login".to_string()
    } else {
        format!("/login?next={}", percent_encode(here))
    };
    let mut res = StatusCode::SEE_OTHER.into_response();
    if let Ok(v) = HeaderValue::from_str(&location) {
        res.headers_mut().insert(header::LOCATION, v);
    }
    res
}

/// Percent-encodes everything but unreserved characters and `/`.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Why a request that needs a user was refused.
#[derive(Debug)]
pub enum AuthRejection {
    /// No valid session or token: 401 JSON for APIs.
    Unauthenticated,
    /// No session on a page request: a redirect to the sign-in page.
    SignIn(Uri),
    /// Signed in, but not allowed: 403 JSON.
    Forbidden,
}

impl AuthRejection {
    fn for_request(method: &Method, uri: &Uri, headers: &HeaderMap) -> Self {
        let wants_html = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/html"));
        let is_api = uri.path().starts_with("/api/");
        if matches!(*method, Method::GET | Method::HEAD) && wants_html && !is_api {
            AuthRejection::SignIn(uri.clone())
        } else {
            AuthRejection::Unauthenticated
        }
    }
}

impl IntoResponse for AuthRejection {
    fn into_response(self) -> Response {
        match self {
            AuthRejection::Unauthenticated => {
                let mut res = ErrorResponse::new(
                    ErrorCode::Unauthenticated,
                    "Sign in first, or send an API token as `Authorization: Bearer <token>`.",
                )
                .into_response();
                res.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"clarion\""),
                );
                res
            }
            AuthRejection::SignIn(uri) => login_redirect(&uri),
            AuthRejection::Forbidden => ErrorResponse(ApiError::forbidden()).into_response(),
        }
    }
}

/// The signed-in user of this request; refuses the request otherwise (401
/// JSON for APIs, a redirect to `/login` for pages). Relies on
/// [`resolve_user`], which `crate::http::router` installs at the root.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CurrentUser(pub AuthUser);

impl<S: Send + Sync> FromRequestParts<S> for CurrentUser {
    type Rejection = AuthRejection;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<AuthUser>()
            .cloned()
            .map(CurrentUser)
            .ok_or_else(|| AuthRejection::for_request(&parts.method, &parts.uri, &parts.headers))
    }
}

/// The signed-in user, who must be an administrator (403 otherwise).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdminUser(pub AuthUser);

impl<S: Send + Sync> FromRequestParts<S> for AdminUser {
    type Rejection = AuthRejection;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        let CurrentUser(user) = CurrentUser::from_request_parts(parts, state).await?;
        if user.is_admin {
            Ok(AdminUser(user))
        } else {
            Err(AuthRejection::Forbidden)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_keeps_the_path_and_query_but_cannot_break_out_of_the_parameter() {
        let r = login_redirect(&"/settings?tab=a&b=c".parse().unwrap());
        assert_eq!(r.status(), StatusCode::SEE_OTHER);
        assert_eq!(
            r.headers()[header::LOCATION],
            "/login?next=/settings%3Ftab%3Da%26b%3Dc"
        );
        assert_eq!(
            login_redirect(&"/".parse().unwrap()).headers()[header::LOCATION],
            "/login"
        );
    }

    #[test]
    fn the_login_page_is_public_and_others_are_not() {
        let p = ProtectedPages::new(["/", "/settings", "/login"]);
        assert!(p.contains("/") && p.contains("/settings"));
        assert!(!p.contains("/login"));
    }

    #[test]
    fn browsers_are_sent_to_sign_in_and_api_clients_get_401() {
        let mut html = HeaderMap::new();
        html.insert(header::ACCEPT, HeaderValue::from_static("text/html,*/*"));
        let page = AuthRejection::for_request(&Method::GET, &"/history".parse().unwrap(), &html);
        assert!(matches!(page, AuthRejection::SignIn(_)));
        let api = AuthRejection::for_request(&Method::GET, &"/api/v1/x".parse().unwrap(), &html);
        assert!(matches!(api, AuthRejection::Unauthenticated));
        let post = AuthRejection::for_request(&Method::POST, &"/history".parse().unwrap(), &html);
        assert!(matches!(post, AuthRejection::Unauthenticated));
        let res = AuthRejection::Unauthenticated.into_response();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
        assert!(res.headers().contains_key(header::WWW_AUTHENTICATE));
    }
}
