//! The session cookie and the request facts it depends on.
//!
//! The cookie is `HttpOnly` (scripts cannot read it), `SameSite=Lax` (not sent
//! on cross-site POSTs), `Path=/`, and `Secure` when configured or when the
//! request came over TLS (directly, or through a proxy that says so with
//! `X-Forwarded-Proto: https`; believing that header can only make the cookie
//! stricter). A `Secure` cookie is named with the `__Host-` prefix, which
//! browsers accept only from this exact host over TLS, so a sibling subdomain
//! cannot plant ("toss") a session cookie on Clarion's users.

use super::token::{SESSION_COOKIE, SESSION_COOKIE_HOST};
use axum::http::{HeaderMap, HeaderValue, Uri, header};

/// The session cookie's name: `__Host-` prefixed when it is `Secure`.
pub fn session_cookie_name(secure: bool) -> &'static str {
    if secure {
        SESSION_COOKIE_HOST
    } else {
        SESSION_COOKIE
    }
}

/// The `Set-Cookie` value that stores a session.
pub fn session_cookie(secret: &str, max_age_secs: i64, secure: bool) -> HeaderValue {
    let value = format!(
        "{}={secret}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age_secs}{}",
        session_cookie_name(secure),
        if secure { "; Secure" } else { "" }
    );
    // The secret is hex, so the value is always a valid header.
    HeaderValue::from_str(&value).expect("hex cookie is a valid header value")
}

/// The `Set-Cookie` value that removes the session cookie.
pub fn clear_session_cookie(secure: bool) -> HeaderValue {
    let value = format!(
        "{}=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0{}",
        session_cookie_name(secure),
        if secure { "; Secure" } else { "" }
    );
    HeaderValue::from_str(&value).expect("static cookie is a valid header value")
}

/// The value of cookie `name`, from any `Cookie` header of the request.
pub fn read_cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v.trim())
        .filter(|v| !v.is_empty())
}

/// The session secret sent by the browser, if any: over TLS only the
/// `__Host-` cookie counts (a plain-named one could have been planted).
pub fn session_secret(headers: &HeaderMap, secure: bool) -> Option<&str> {
    read_cookie(headers, session_cookie_name(secure))
}

/// The bearer token of an `Authorization: Bearer …` header, if any.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then_some(token.trim())
        .filter(|t| !t.is_empty())
}

/// True when the request reached us (or the proxy in front of us) over TLS.
pub fn came_over_tls(headers: &HeaderMap, uri: &Uri) -> bool {
    if uri.scheme_str() == Some("https") {
        return true;
    }
    let forwarded_proto = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next())
        .map(|v| v.trim().eq_ignore_ascii_case("https"))
        .unwrap_or(false);
    let forwarded = headers
        .get(header::FORWARDED)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.to_ascii_lowercase().contains("proto=https"))
        .unwrap_or(false);
    forwarded_proto || forwarded
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                axum::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                HeaderValue::from_str(v).unwrap(),
            );
        }
        h
    }

    #[test]
    fn the_session_cookie_is_http_only_lax_and_secure_only_when_asked() {
        let c = session_cookie("abc", 60, false);
        let c = c.to_str().unwrap();
        assert!(c.starts_with("clarion_session=abc; Path=/; HttpOnly; SameSite=Lax; Max-Age=60"));
        assert!(!c.contains("Secure"));
        assert!(
            session_cookie("abc", 60, true)
                .to_str()
                .unwrap()
                .ends_with("; Secure")
        );
        let host = session_cookie("abc", 60, true);
        assert!(
            host.to_str()
                .unwrap()
                .starts_with("__Host-clarion_session=abc; Path=/;")
        );
        assert!(
            clear_session_cookie(false)
                .to_str()
                .unwrap()
                .contains("Max-Age=0")
        );
    }

    #[test]
    fn the_cookie_is_found_among_others_and_across_headers() {
        let h = headers(&[("cookie", "a=1; b=2"), ("cookie", "clarion_session=s3cret; c=3")]);
        assert_eq!(session_secret(&h, false), Some("s3cret"));
        // Over TLS the plain-named cookie is not believed.
        assert_eq!(session_secret(&h, true), None);
        let tls = headers(&[("cookie", "clarion_session=planted; __Host-clarion_session=real")]);
        assert_eq!(session_secret(&tls, true), Some("real"));
        assert_eq!(read_cookie(&h, "b"), Some("2"));
        assert_eq!(read_cookie(&h, "missing"), None);
        assert_eq!(
            session_secret(&headers(&[("cookie", "clarion_session=")]), false),
            None
        );
    }

    #[test]
    fn bearer_tokens_are_read_case_insensitively_and_other_schemes_ignored() {
        assert_eq!(
            bearer_token(&headers(&[("authorization", "Bearer t0k")])),
            Some("t0k")
        );
        assert_eq!(
            bearer_token(&headers(&[("authorization", "bearer  t0k ")])),
            Some("t0k")
        );
        assert_eq!(bearer_token(&headers(&[("authorization", "Basic dTpw")])), None);
        assert_eq!(bearer_token(&headers(&[("authorization", "Bearer ")])), None);
    }

    #[test]
    fn tls_is_recognised_directly_or_through_a_proxy() {
        let plain: Uri = "/".parse().unwrap();
        assert!(!came_over_tls(&HeaderMap::new(), &plain));
        assert!(came_over_tls(&headers(&[("x-forwarded-proto", "https")]), &plain));
        assert!(came_over_tls(
            &headers(&[("forwarded", "for=1.2.3.4;proto=https")]),
            &plain
        ));
        assert!(came_over_tls(&HeaderMap::new(), &"https://x/".parse().unwrap()));
    }
}
