//! The HTTP surface through the real router (SSR pages, server functions,
//! health check), on both backends.

mod common;

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use http_body_util::BodyExt;
use server::config::Config;
use server::state::AppState;
use server::store::{Role, Store};
use tower::ServiceExt;

/// The router with a signed-in demo user; requests built by [`get`] and
/// [`form_post`] carry its session cookie (pages and server functions need one).
async fn app_for(t: &common::TestDb) -> axum::Router {
    let store = Store::new(t.db.clone());
    store
        .ensure_user("demo", "Dr. Dana Reyes", Role::Clinician, "pw")
        .await
        .unwrap();
    let config = Config::from_lookup(|k| (k == "DATABASE_URL").then(|| t.url.clone())).unwrap();
    let app = server::http::router(AppState::new(server::serve::leptos_options(&config), store));
    let res = app
        .clone()
        .oneshot(
            Request::post("/login")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from("username=demo&password=pw"))
                .unwrap(),
        )
        .await
        .unwrap();
    let cookie = res.headers()[header::SET_COOKIE].to_str().unwrap();
    let session = cookie.split(';').next().unwrap().to_string();
    app.layer(axum::middleware::from_fn(
        move |mut req: axum::extract::Request, next: axum::middleware::Next| {
            req.headers_mut().insert(header::COOKIE, session.parse().unwrap());
            next.run(req)
        },
    ))
}

/// Sends one request and reads the whole body. A response that does not finish within
/// a minute fails the test with its path instead of hanging the suite.
async fn send(app: &axum::Router, req: Request<Body>) -> (StatusCode, String) {
    let path = req.uri().to_string();
    let whole = async {
        let res = app.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let body = res.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    };
    tokio::time::timeout(std::time::Duration::from_secs(60), whole)
        .await
        .unwrap_or_else(|_| panic!("{path}: no complete response within 60 s"))
}

fn get(path: &str) -> Request<Body> {
    Request::get(path).body(Body::empty()).unwrap()
}

fn form_post(path: &str, body: &str) -> Request<Body> {
    Request::post(path)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "application/json")
        .body(Body::from(body.to_string()))
        .unwrap()
}

#[tokio::test]
async fn healthz_reports_the_database() {
    for t in common::all_backends().await {
        let app = app_for(&t).await;
        let (status, body) = send(&app, get("/healthz")).await;
        assert_eq!(status, StatusCode::OK);
        assert!(body.contains(r#""database":"ok""#), "{body}");

        t.db.close().await;
        let (status, body) = send(&app, get("/healthz")).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        t.cleanup().await;
    }
}

#[tokio::test]
async fn every_page_is_server_rendered_with_its_heading_and_hydration_script() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    for (path, heading) in [
        ("/", "Ask a question"),
        ("/history", "History"),
        ("/glossary", "Glossary"),
        ("/settings", "Settings"),
        ("/login", "Sign in to Clarion"),
    ] {
        let (status, html) = send(&app, get(path)).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(
            html.contains(&format!(">{heading}</h1>")),
            "{path} lacks its heading"
        );
        assert!(
            html.contains("/pkg/clarion.js"),
            "{path} lacks the hydration script"
        );
        assert!(html.contains("/pkg/clarion.css"), "{path} lacks the stylesheet");
    }
    t.cleanup().await;
}

#[tokio::test]
async fn an_unknown_path_is_a_404_page() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    let (status, html) = send(&app, get("/no/such/page")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert!(html.contains("Page not found"));
    t.cleanup().await;
}

#[tokio::test]
async fn settings_server_functions_round_trip_on_every_backend() {
    for t in common::all_backends().await {
        let app = app_for(&t).await;
        let (status, body) = send(&app, form_post("/api/get_settings", "")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body, r#"{"skip_clarifications":false,"sensitivity":"balanced"}"#);

        let (status, body) = send(
            &app,
            form_post("/api/save_settings", "sensitivity=more&skip_clarifications=on"),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body, r#"{"skip_clarifications":true,"sensitivity":"more"}"#);

        let (_, body) = send(&app, form_post("/api/get_settings", "")).await;
        assert_eq!(
            body, r#"{"skip_clarifications":true,"sensitivity":"more"}"#,
            "persisted"
        );
        t.cleanup().await;
    }
}

#[tokio::test]
async fn bad_settings_input_is_refused_clearly_and_changes_nothing() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    send(&app, form_post("/api/save_settings", "sensitivity=fewer")).await;
    for bad in [
        "sensitivity=%27%3B+DROP+TABLE+user_settings%3B+--",
        "sensitivity=",
        "skip_clarifications=on",
        "%%%garbage",
    ] {
        let (status, body) = send(&app, form_post("/api/save_settings", bad)).await;
        assert!(status.is_client_error(), "{bad}: {status} {body}");
        assert!(!body.is_empty(), "{bad}: an explanation is returned");
    }
    let (_, body) = send(&app, form_post("/api/get_settings", "")).await;
    assert_eq!(
        body, r#"{"skip_clarifications":false,"sensitivity":"fewer"}"#,
        "nothing was lost"
    );
    t.cleanup().await;
}

#[tokio::test]
async fn oversized_bodies_are_refused_with_413() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    let huge = format!("sensitivity={}", "a".repeat(server::http::MAX_BODY_BYTES + 10));
    // Without a Content-Length (chunked) …
    let (status, _) = send(&app, form_post("/api/save_settings", &huge)).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    // … and with one.
    let mut req = form_post("/api/save_settings", &huge);
    req.headers_mut()
        .insert(header::CONTENT_LENGTH, huge.len().to_string().parse().unwrap());
    let (status, _) = send(&app, req).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
    // A body just under the limit still reaches the handler (and gets a 400-class answer).
    let (status, _) = send(&app, form_post("/api/save_settings", "sensitivity=more")).await;
    assert_eq!(status, StatusCode::OK);
    t.cleanup().await;
}

/// Sends one request and returns its status, headers and body.
async fn send_full(app: &axum::Router, req: Request<Body>) -> (StatusCode, axum::http::HeaderMap, String) {
    let res = app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let body = res.into_body().collect().await.unwrap().to_bytes();
    (status, headers, String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test]
async fn every_response_carries_the_security_headers_and_pages_a_matching_script_nonce() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    let mut nonces = Vec::new();
    for path in [
        "/",
        "/settings",
        "/history",
        "/glossary",
        "/login",
        "/no/such/page",
    ] {
        let (status, h, body) = send_full(&app, get(path)).await;
        assert!(
            status.is_success() || status == StatusCode::NOT_FOUND || status.is_redirection(),
            "{path}: {status}"
        );
        let csp = h[header::CONTENT_SECURITY_POLICY].to_str().unwrap().to_string();
        let script = csp
            .split(';')
            .find(|d| d.trim().starts_with("script-src"))
            .unwrap();
        assert!(
            csp.contains("frame-ancestors 'none'") && !script.contains("unsafe-inline"),
            "{path}: {csp}"
        );
        assert_eq!(h[header::X_CONTENT_TYPE_OPTIONS], "nosniff", "{path}");
        assert_eq!(h[header::X_FRAME_OPTIONS], "DENY", "{path}");
        assert_eq!(h[header::REFERRER_POLICY], "same-origin", "{path}");
        assert_eq!(
            h[header::CACHE_CONTROL],
            "no-store",
            "{path}: pages carry patient data"
        );
        assert!(
            !h.contains_key(header::STRICT_TRANSPORT_SECURITY),
            "{path}: not over TLS"
        );
        if status == StatusCode::OK {
            let nonce = csp
                .split("'nonce-")
                .nth(1)
                .and_then(|r| r.split('\'').next())
                .unwrap()
                .to_string();
            // Every inline script of the page carries exactly the nonce the header allows.
            let scripts = body.matches("<script").count();
            assert!(scripts >= 1, "{path}: the hydration script");
            assert_eq!(
                body.matches(&format!("nonce=\"{nonce}\"")).count(),
                scripts,
                "{path}: {}",
                &body[..body.len().min(400)]
            );
            nonces.push(nonce);
        }
    }
    nonces.sort();
    nonces.dedup();
    assert!(nonces.len() >= 4, "a fresh nonce per response");

    // API answers are not cached either; TLS adds HSTS.
    let (_, h, _) = send_full(
        &app,
        Request::get("/api/v1/settings").body(Body::empty()).unwrap(),
    )
    .await;
    assert_eq!(h[header::CACHE_CONTROL], "no-store");
    let tls = Request::get("/healthz")
        .header("x-forwarded-proto", "https")
        .body(Body::empty())
        .unwrap();
    let (_, h, _) = send_full(&app, tls).await;
    assert!(
        h[header::STRICT_TRANSPORT_SECURITY]
            .to_str()
            .unwrap()
            .starts_with("max-age=")
    );
    t.cleanup().await;
}

#[tokio::test]
async fn a_refused_sign_in_page_carries_the_nonce_of_its_own_header() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    let req = Request::post("/login")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from("username=demo&password=wrong"))
        .unwrap();
    let (status, h, body) = send_full(&app, req).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let csp = h[header::CONTENT_SECURITY_POLICY].to_str().unwrap();
    let nonce = csp.split("'nonce-").nth(1).unwrap().split('\'').next().unwrap();
    assert!(body.contains(&format!("nonce=\"{nonce}\"")), "{body}");
    t.cleanup().await;
}

#[tokio::test]
async fn a_trailing_slash_redirects_to_the_page_and_never_renders_for_a_signed_out_visitor() {
    let t = common::TestDb::sqlite().await;
    let store = Store::new(t.db.clone());
    let config = Config::from_lookup(|k| (k == "DATABASE_URL").then(|| t.url.clone())).unwrap();
    let app = server::http::router(AppState::new(server::serve::leptos_options(&config), store));
    for (path, location) in [
        ("/settings/", "/settings"),
        ("/history/?x=1", "/history?x=1"),
        ("/settings//", "/settings"),
        ("//evil.example/", "/"),
    ] {
        let (status, h, body) = send_full(&app, get(path)).await;
        assert_eq!(status, StatusCode::PERMANENT_REDIRECT, "{path}");
        assert_eq!(h[header::LOCATION], location, "{path}");
        assert!(!body.contains("<nav"), "{path}: no page shell");
    }
    // Followed, the page itself sends a signed-out visitor to sign in.
    let (status, h, _) = send_full(&app, get("/settings")).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert!(h[header::LOCATION].to_str().unwrap().starts_with("/login"));
    t.cleanup().await;
}
