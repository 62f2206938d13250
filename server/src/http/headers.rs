//! Security headers on every response, set once here.
//!
//! - `Content-Security-Policy`: scripts only from this origin or inline with
//!   this response's nonce (Leptos' hydration script carries it, see
//!   [`CspNonce`]), WebAssembly compilation allowed; stylesheets only from this
//!   origin, `style="…"` attributes allowed (the charts' bar widths; an attribute
//!   cannot run code), no `<style>` elements; no plugins, no `<base>`,
//!   forms post only here, and no framing (`frame-ancestors 'none'`, with
//!   `X-Frame-Options: DENY` for older browsers) — except the one-line confirmation of
//!   a clarification-feedback vote, which only this site may frame.
//! - `X-Content-Type-Options: nosniff`, `Referrer-Policy: same-origin`.
//! - `Strict-Transport-Security` when the request came over TLS.
//! - `Cache-Control: no-store` on everything but the hashed static bundle under
//!   `/pkg/`: pages and API answers carry patient data and must not stay in a
//!   shared or back-button cache.

use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::middleware::Next;
use axum::response::Response;

/// This response's CSP nonce, put in the request's extensions before the page
/// renders; [`super::leptos_context`] hands it to Leptos so the inline
/// hydration script carries the same value the header allows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CspNonce(pub String);

impl CspNonce {
    /// 128 random bits, hex (a valid CSP nonce).
    pub fn new() -> Self {
        CspNonce(crate::store::ids::random_hex(16))
    }
}

impl Default for CspNonce {
    fn default() -> Self {
        Self::new()
    }
}

/// The policy for a response rendered with `nonce`.
pub fn content_security_policy(nonce: &str) -> String {
    policy(nonce, "'none'")
}

fn policy(nonce: &str, ancestors: &str) -> String {
    format!(
        "default-src 'self'; script-src 'self' 'nonce-{nonce}' 'wasm-unsafe-eval'; \
         style-src 'self'; style-src-attr 'unsafe-inline'; img-src 'self' data:; font-src 'self'; connect-src 'self'; \
         object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors {ancestors}"
    )
}

/// Middleware: adds the headers above (never overriding a `Cache-Control` a
/// handler chose).
pub async fn security_headers(mut req: Request, next: Next) -> Response {
    let nonce = CspNonce::new();
    let static_asset = req.uri().path().starts_with("/pkg/");
    let tls = super::super::auth::cookie::came_over_tls(req.headers(), req.uri());
    req.extensions_mut().insert(nonce.clone());
    let mut res = next.run(req).await;
    // Only the round-feedback confirmation may be framed, and only by this site.
    let framable = res
        .extensions()
        .get::<super::feedback_form::FramableBySelf>()
        .is_some();
    let h = res.headers_mut();
    let ancestors = if framable { "'self'" } else { "'none'" };
    if let Ok(v) = HeaderValue::from_str(&policy(&nonce.0, ancestors)) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    h.insert(
        header::X_FRAME_OPTIONS,
        HeaderValue::from_static(if framable { "SAMEORIGIN" } else { "DENY" }),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    if tls {
        h.insert(
            header::STRICT_TRANSPORT_SECURITY,
            HeaderValue::from_static("max-age=31536000; includeSubDomains"),
        );
    }
    if !static_asset && !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    res
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_allows_only_this_origin_and_the_nonce() {
        let p = content_security_policy("abc123");
        assert!(
            p.contains("script-src 'self' 'nonce-abc123' 'wasm-unsafe-eval';"),
            "{p}"
        );
        assert!(p.contains("frame-ancestors 'none'"));
        assert!(p.contains("object-src 'none'"));
        let script = p.split(';').find(|d| d.trim().starts_with("script-src")).unwrap();
        assert!(
            !script.contains("unsafe-inline") && !script.contains(" 'unsafe-eval'"),
            "{script}"
        );
        assert!(p.contains("style-src 'self';"), "no <style> elements: {p}");
        assert_ne!(CspNonce::new(), CspNonce::new());
        assert_eq!(CspNonce::new().0.len(), 32);
    }
}
