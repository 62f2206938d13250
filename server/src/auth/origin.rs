//! Refuses state-changing requests sent by another site (cross-site request
//! forgery), in addition to the `SameSite=Lax` cookie.
//!
//! For POST, PUT, PATCH and DELETE: a browser says where a request comes from
//! (`Sec-Fetch-Site`, `Origin`, or at least `Referer`); if that is not this
//! host, the request is refused with 403. A request that carries none of these
//! headers is not from a browser page (curl, an integrator with a bearer
//! token) and cannot ride on a victim's cookie, so it passes.
//!
//! The host compared against is `X-Forwarded-Host` when a proxy sets it, else
//! `Host`. A page on another site cannot set either header on a cross-site
//! form or fetch, so believing them here gives an attacker nothing.

use axum::extract::Request;
use axum::http::{HeaderMap, Method, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Middleware: 403 for a state-changing request from another origin.
pub async fn refuse_cross_origin(req: Request, next: Next) -> Response {
    let changes_state = matches!(
        *req.method(),
        Method::POST | Method::PUT | Method::PATCH | Method::DELETE
    );
    if changes_state && !is_same_origin(req.headers()) {
        tracing::warn!(method = %req.method(), path = req.uri().path(), "refused a cross-origin request");
        return crate::error::ErrorResponse::new(
            app::protocol::ErrorCode::CrossOrigin,
            "This request came from another site and was refused. Open Clarion directly and try again.",
        )
        .into_response();
    }
    next.run(req).await
}

/// True unless the headers show the request came from another origin.
pub fn is_same_origin(headers: &HeaderMap) -> bool {
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(site) = text("sec-fetch-site")
        && matches!(site, "cross-site" | "same-site")
    {
        return false;
    }
    let Some(source) = text(header::ORIGIN.as_str()).or_else(|| text(header::REFERER.as_str())) else {
        return true;
    };
    let Some(source) = authority_of_url(source) else {
        // `Origin: null` (sandboxed frames, some redirects) or garbage.
        return false;
    };
    let host = text("x-forwarded-host")
        .and_then(|h| h.split(',').next())
        .map(str::trim)
        .or_else(|| text(header::HOST.as_str()));
    host.is_some_and(|h| normalize_host(h) == source)
}

/// `scheme://host[:port]/…` → `host[:port]`, lowercased, default port dropped.
fn authority_of_url(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if authority.is_empty() {
        return None;
    }
    let authority = authority.to_ascii_lowercase();
    let default = match scheme.to_ascii_lowercase().as_str() {
        "http" => ":80",
        "https" => ":443",
        _ => return None,
    };
    Some(authority.strip_suffix(default).unwrap_or(&authority).to_string())
}

/// A `Host` header value, lowercased, a default port dropped.
fn normalize_host(host: &str) -> String {
    let h = host.to_ascii_lowercase();
    h.strip_suffix(":80")
        .or_else(|| h.strip_suffix(":443"))
        .unwrap_or(&h)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    #[test]
    fn same_origin_requests_pass_and_others_are_refused() {
        let cases: &[(&[(&str, &str)], bool)] = &[
            (
                &[("host", "127.0.0.1:3000"), ("origin", "http://127.0.0.1:3000")],
                true,
            ),
            (
                &[("host", "Clarion.example"), ("origin", "https://clarion.example")],
                true,
            ),
            (
                &[
                    ("host", "clarion.example:443"),
                    ("origin", "https://clarion.example"),
                ],
                true,
            ),
            (
                &[("host", "127.0.0.1:3000"), ("origin", "http://evil.example")],
                false,
            ),
            (
                &[("host", "127.0.0.1:3000"), ("origin", "http://127.0.0.1:3001")],
                false,
            ),
            (&[("host", "127.0.0.1:3000"), ("origin", "null")], false),
            (
                &[
                    ("host", "127.0.0.1:3000"),
                    ("referer", "http://127.0.0.1:3000/settings"),
                ],
                true,
            ),
            (
                &[("host", "127.0.0.1:3000"), ("referer", "http://evil.example/x")],
                false,
            ),
            (
                &[("host", "a.example"), ("origin", "http://a.example.evil.example")],
                false,
            ),
            (
                &[
                    ("host", "internal:3000"),
                    ("x-forwarded-host", "clarion.example"),
                    ("origin", "https://clarion.example"),
                ],
                true,
            ),
            (
                &[("host", "127.0.0.1:3000"), ("sec-fetch-site", "cross-site")],
                false,
            ),
            (
                &[
                    ("host", "127.0.0.1:3000"),
                    ("sec-fetch-site", "same-origin"),
                    ("origin", "http://127.0.0.1:3000"),
                ],
                true,
            ),
            // No browser headers at all: curl or an integrator; no cookie to abuse.
            (&[("host", "127.0.0.1:3000")], true),
        ];
        for (pairs, expected) in cases {
            assert_eq!(is_same_origin(&headers(pairs)), *expected, "{pairs:?}");
        }
    }
}
