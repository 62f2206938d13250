//! Authentication over HTTP through the real router (sign-in, cookies, rate
//! limit, page guard, cross-origin refusal, server functions, API tokens,
//! sign-out), on both backends where the database matters; and the
//! `server user` command line.

mod common;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, Request, StatusCode, header};
use axum::routing::get;
use chrono::{Duration, Utc};
use http_body_util::BodyExt;
use server::auth::{AdminUser, AuthConfig, CurrentUser};
use server::config::Config;
use server::state::AppState;
use server::store::{Role, Store};
use std::net::SocketAddr;
use tower::ServiceExt;

const HOST: &str = "clarion.test";
const ORIGIN: &str = "http://clarion.test";
const PASSWORD: &str = "clarion-demo";

struct Reply {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

impl Reply {
    fn location(&self) -> &str {
        self.headers
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    fn set_cookie(&self) -> Option<&str> {
        self.headers.get(header::SET_COOKIE).and_then(|v| v.to_str().ok())
    }

    /// The `name=value` pair of the session cookie that was set.
    fn session(&self) -> String {
        let c = self.set_cookie().expect("a Set-Cookie header");
        c.split(';').next().unwrap().to_string()
    }
}

fn state_for(t: &common::TestDb, auth: AuthConfig) -> AppState {
    let config = Config::from_lookup(|k| (k == "DATABASE_URL").then(|| t.url.clone())).unwrap();
    AppState::with_auth_config(
        server::serve::leptos_options(&config),
        Store::new(t.db.clone()),
        auth,
    )
}

async fn app_for(t: &common::TestDb) -> Router {
    app_with(t, AuthConfig::default()).await
}

async fn app_with(t: &common::TestDb, auth: AuthConfig) -> Router {
    let store = Store::new(t.db.clone());
    store
        .ensure_user("demo", "Dr. Dana Reyes", Role::Clinician, PASSWORD)
        .await
        .unwrap();
    server::http::router(state_for(t, auth))
}

async fn send(app: &Router, req: Request<Body>) -> Reply {
    let res = app.clone().oneshot(req).await.unwrap();
    let status = res.status();
    let headers = res.headers().clone();
    let body = res.into_body().collect().await.unwrap().to_bytes();
    Reply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    }
}

fn from_ip(mut req: Request<Body>, ip: &str) -> Request<Body> {
    let addr: SocketAddr = format!("{ip}:40000").parse().unwrap();
    req.extensions_mut().insert(ConnectInfo(addr));
    req
}

/// A browser's form post to `/login` from this site.
fn login_form(username: &str, password: &str, next: &str) -> Request<Body> {
    let body = format!(
        "username={}&password={}&next={}",
        enc(username),
        enc(password),
        enc(next)
    );
    Request::post("/login")
        .header(header::HOST, HOST)
        .header(header::ORIGIN, ORIGIN)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "text/html")
        .body(Body::from(body))
        .unwrap()
}

fn enc(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.' {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

fn page(path: &str, cookie: Option<&str>) -> Request<Body> {
    let mut r = Request::get(path)
        .header(header::HOST, HOST)
        .header(header::ACCEPT, "text/html,application/xhtml+xml");
    if let Some(c) = cookie {
        r = r.header(header::COOKIE, c);
    }
    r.body(Body::empty()).unwrap()
}

/// A server-function call as the hydrated app makes it.
fn server_fn(path: &str, body: &str, cookie: Option<&str>) -> Request<Body> {
    let mut r = Request::post(path)
        .header(header::HOST, HOST)
        .header(header::ORIGIN, ORIGIN)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "application/json");
    if let Some(c) = cookie {
        r = r.header(header::COOKIE, c);
    }
    r.body(Body::from(body.to_string())).unwrap()
}

async fn sign_in(app: &Router, username: &str, password: &str) -> String {
    let r = send(app, login_form(username, password, "/")).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.body);
    r.session()
}

#[tokio::test]
async fn signing_in_sets_an_http_only_lax_cookie_and_redirects_to_next_on_every_backend() {
    for t in common::all_backends().await {
        let b = t.db.backend();
        let app = app_for(&t).await;
        let r = send(&app, login_form("demo", PASSWORD, "/settings")).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{b:?}: {}", r.body);
        assert_eq!(r.location(), "/settings");
        let cookie = r.set_cookie().unwrap();
        assert!(cookie.starts_with("clarion_session="), "{cookie}");
        for flag in ["HttpOnly", "SameSite=Lax", "Path=/", "Max-Age=43"] {
            assert!(cookie.contains(flag), "{b:?}: {flag} missing in {cookie}");
        }
        assert!(!cookie.contains("Secure"), "plain HTTP, not configured: {cookie}");

        let settings = send(&app, page("/settings", Some(&r.session()))).await;
        assert_eq!(settings.status, StatusCode::OK, "{b:?}");
        assert!(settings.body.contains(">Settings</h1>"));
        t.cleanup().await;
    }
}

#[tokio::test]
async fn the_cookie_is_secure_over_tls_or_when_configured() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    let mut req = login_form("demo", PASSWORD, "/");
    req.headers_mut()
        .insert("x-forwarded-proto", "https".parse().unwrap());
    let r = send(&app, req).await;
    assert!(
        r.set_cookie().unwrap().contains("; Secure"),
        "{:?}",
        r.set_cookie()
    );

    let secure = app_with(
        &t,
        AuthConfig {
            secure_cookies: true,
            ..AuthConfig::default()
        },
    )
    .await;
    let r = send(&secure, login_form("demo", PASSWORD, "/")).await;
    assert!(r.set_cookie().unwrap().contains("; Secure"));
    t.cleanup().await;
}

#[tokio::test]
async fn a_wrong_password_rerenders_the_form_with_an_error_and_the_username_but_no_cookie() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    for (user, password) in [("demo", "wrong-password"), ("nobody", PASSWORD)] {
        let r = send(&app, login_form(user, password, "/history")).await;
        assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{user}");
        assert!(r.set_cookie().is_none(), "{user}");
        assert!(
            r.body.contains("Wrong username or password."),
            "{user}: {}",
            r.body
        );
        assert!(
            r.body.contains(&format!(r#"value="{user}""#)),
            "{user}: the username is kept"
        );
        assert!(r.body.contains(r#"value="/history""#), "{user}: next is kept");
        assert!(!r.body.contains(password), "the password is never echoed");
        assert!(r.body.contains("/pkg/clarion.js"), "a full page that hydrates");
    }
    let empty = send(&app, login_form("", "", "/")).await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST);
    assert!(empty.body.contains("Enter your username and password."));
    t.cleanup().await;
}

#[tokio::test]
async fn five_failures_lock_a_username_from_one_address_on_every_replica() {
    for t in common::all_backends().await {
        let b = t.db.backend();
        let app = app_for(&t).await;
        // A second replica: its own pool on the same database.
        let replica_db = server::db::Database::connect(&t.url).await.unwrap();
        let replica = server::http::router(AppState::new(
            server::serve::leptos_options(
                &Config::from_lookup(|k| (k == "DATABASE_URL").then(|| t.url.clone())).unwrap(),
            ),
            Store::new(replica_db.clone()),
        ));

        for i in 0..5 {
            let on = if i % 2 == 0 { &app } else { &replica };
            let r = send(on, from_ip(login_form("demo", "guess", "/"), "10.0.0.1")).await;
            assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{b:?}: attempt {i}");
        }
        // Locked now, even with the right password, on either replica.
        for on in [&app, &replica] {
            let r = send(on, from_ip(login_form("demo", PASSWORD, "/"), "10.0.0.1")).await;
            assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{b:?}");
            assert!(r.body.contains("Too many failed sign-in attempts"), "{}", r.body);
            assert!(
                r.body.contains(" minutes before trying again"),
                "says how long: {}",
                r.body
            );
            assert!(r.set_cookie().is_none());
            let retry: i64 = r.headers[header::RETRY_AFTER].to_str().unwrap().parse().unwrap();
            assert!((300..=900).contains(&retry), "{retry}");
        }
        // The limit is per username and address: the clinician at another
        // address still gets in, and the case of the username does not matter.
        let elsewhere = send(&app, from_ip(login_form("demo", PASSWORD, "/"), "10.0.0.2")).await;
        assert_eq!(elsewhere.status, StatusCode::SEE_OTHER, "{b:?}");
        let r = send(&app, from_ip(login_form("DEMO", PASSWORD, "/"), "10.0.0.1")).await;
        assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{b:?}");
        replica_db.close().await;
        t.cleanup().await;
    }
}

#[tokio::test]
async fn the_lock_lifts_after_the_window_and_a_success_clears_the_count() {
    let t = common::TestDb::sqlite().await;
    let store = Store::new(t.db.clone());
    let (user, _) = store
        .ensure_user("demo", "Dr. Dana Reyes", Role::Clinician, PASSWORD)
        .await
        .unwrap();
    let auth = server::auth::Auth::new(store.clone(), AuthConfig::default());
    let now = Utc::now();
    for _ in 0..4 {
        assert!(auth.login("demo", "guess", "ip", now).await.is_err());
    }
    let ok = auth.login("demo", PASSWORD, "ip", now).await.unwrap();
    assert_eq!(ok.user.id, user.id);
    let counts = store
        .login_attempt_counts(
            0,
            "demo",
            "ip",
            now - Duration::hours(1),
            now - Duration::minutes(1),
        )
        .await
        .unwrap();
    assert_eq!(counts.pair, 0, "a success clears this address's failures");
    for _ in 0..5 {
        assert!(auth.login("demo", "guess", "ip", now).await.is_err());
    }
    assert!(matches!(
        auth.login("demo", PASSWORD, "ip", now + Duration::minutes(14))
            .await,
        Err(server::auth::LoginError::RateLimited { .. })
    ));
    assert!(
        auth.login("demo", PASSWORD, "ip", now + Duration::minutes(16))
            .await
            .is_ok()
    );
    t.cleanup().await;
}

#[tokio::test]
async fn protected_pages_redirect_a_signed_out_browser_to_sign_in_with_next() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    for (path, location) in [
        ("/", "/login"),
        ("/settings", "/login?next=/settings"),
        ("/history?q=wounds", "/login?next=/history%3Fq%3Dwounds"),
        ("/glossary", "/login?next=/glossary"),
        ("/analytics", "/login?next=/analytics"),
    ] {
        let r = send(&app, page(path, None)).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{path}");
        assert_eq!(r.location(), location, "{path}");
        assert!(!r.body.contains("<h1"), "{path}: nothing rendered");
    }
    let login = send(&app, page("/login?next=/settings", None)).await;
    assert_eq!(login.status, StatusCode::OK);
    assert!(
        login.body.contains(r#"name="next" value="/settings""#),
        "{}",
        login.body
    );
    // A cookie that was never issued is no session.
    let forged = send(&app, page("/settings", Some("clarion_session=deadbeef"))).await;
    assert_eq!(forged.status, StatusCode::SEE_OTHER);
    t.cleanup().await;
}

#[tokio::test]
async fn an_expired_session_is_refused() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    let store = Store::new(t.db.clone());
    let user = store.user_by_username("demo").await.unwrap().unwrap();
    let now = Utc::now();
    store
        .create_session(
            user.id,
            &server::auth::token::digest("old-secret"),
            now - Duration::hours(13),
            now - Duration::hours(1),
        )
        .await
        .unwrap();
    let r = send(&app, page("/settings", Some("clarion_session=old-secret"))).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let r = send(
        &app,
        server_fn("/api/get_settings", "", Some("clarion_session=old-secret")),
    )
    .await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);
    t.cleanup().await;
}

#[tokio::test]
async fn next_never_leads_to_another_site() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    for next in ["https://evil.example/", "//evil.example/x", "/login", ""] {
        let r = send(&app, login_form("demo", PASSWORD, next)).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{next}");
        assert_eq!(r.location(), "/", "{next}");
    }
    t.cleanup().await;
}

#[tokio::test]
async fn state_changing_requests_from_another_origin_are_refused() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    let cookie = sign_in(&app, "demo", PASSWORD).await;

    // A forged sign-in from another site: refused before any password check.
    let mut forged = login_form("demo", PASSWORD, "/");
    forged
        .headers_mut()
        .insert(header::ORIGIN, "http://evil.example".parse().unwrap());
    let r = send(&app, forged).await;
    assert_eq!(r.status, StatusCode::FORBIDDEN);
    assert!(r.set_cookie().is_none());
    assert!(r.body.contains(r#""code":"cross_origin""#), "{}", r.body);

    // A forged settings change riding on the victim's cookie.
    let mut forged = server_fn(
        "/api/save_settings",
        "sensitivity=more&skip_clarifications=on",
        Some(&cookie),
    );
    forged
        .headers_mut()
        .insert(header::ORIGIN, "https://evil.example".parse().unwrap());
    assert_eq!(send(&app, forged).await.status, StatusCode::FORBIDDEN);
    let mut forged = server_fn("/api/save_settings", "sensitivity=more", Some(&cookie));
    forged.headers_mut().remove(header::ORIGIN);
    forged
        .headers_mut()
        .insert(header::REFERER, "http://evil.example/page".parse().unwrap());
    assert_eq!(send(&app, forged).await.status, StatusCode::FORBIDDEN);
    let mut forged = server_fn("/logout", "", Some(&cookie));
    forged
        .headers_mut()
        .insert("sec-fetch-site", "cross-site".parse().unwrap());
    assert_eq!(send(&app, forged).await.status, StatusCode::FORBIDDEN);

    let r = send(&app, server_fn("/api/get_settings", "", Some(&cookie))).await;
    assert_eq!(r.status, StatusCode::OK);
    assert_eq!(
        r.body, r#"{"skip_clarifications":false,"sensitivity":"balanced"}"#,
        "nothing changed, and the session still works"
    );
    t.cleanup().await;
}

#[tokio::test]
async fn server_functions_without_a_session_are_refused_and_change_nothing() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    let r = send(&app, server_fn("/api/get_settings", "", None)).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{}", r.body);
    assert!(r.body.contains("signed out"), "{}", r.body);
    let r = send(&app, server_fn("/api/save_settings", "sensitivity=more", None)).await;
    assert_eq!(r.status, StatusCode::UNAUTHORIZED);

    let r = send(&app, server_fn("/api/current_user", "", None)).await;
    assert_eq!((r.status, r.body.as_str()), (StatusCode::OK, "null"));

    let store = Store::new(t.db.clone());
    let user = store.user_by_username("demo").await.unwrap().unwrap();
    assert_eq!(store.settings(user.id).await.unwrap(), Default::default());
    t.cleanup().await;
}

#[tokio::test]
async fn server_functions_act_for_the_signed_in_user_and_nobody_else() {
    for t in common::all_backends().await {
        let b = t.db.backend();
        let app = app_for(&t).await;
        Store::new(t.db.clone())
            .ensure_user("kim", "Nurse Kim", Role::Admin, "kims-password")
            .await
            .unwrap();
        let dana = sign_in(&app, "demo", PASSWORD).await;
        let kim = sign_in(&app, "kim", "kims-password").await;

        let r = send(&app, server_fn("/api/current_user", "", Some(&kim))).await;
        assert_eq!(
            r.body, r#"{"username":"kim","display_name":"Nurse Kim","is_admin":true}"#,
            "{b:?}"
        );
        let r = send(
            &app,
            server_fn(
                "/api/save_settings",
                "sensitivity=more&skip_clarifications=on",
                Some(&kim),
            ),
        )
        .await;
        assert_eq!(r.status, StatusCode::OK, "{b:?}: {}", r.body);

        let r = send(&app, server_fn("/api/get_settings", "", Some(&dana))).await;
        assert_eq!(
            r.body, r#"{"skip_clarifications":false,"sensitivity":"balanced"}"#,
            "{b:?}: Dana does not see Kim's settings"
        );
        let r = send(&app, server_fn("/api/get_settings", "", Some(&kim))).await;
        assert_eq!(
            r.body, r#"{"skip_clarifications":true,"sensitivity":"more"}"#,
            "{b:?}"
        );
        t.cleanup().await;
    }
}

#[tokio::test]
async fn signing_out_ends_the_session_everywhere() {
    for t in common::all_backends().await {
        let b = t.db.backend();
        let app = app_for(&t).await;
        let replica_db = server::db::Database::connect(&t.url).await.unwrap();
        let replica = server::http::router(AppState::new(
            server::serve::leptos_options(
                &Config::from_lookup(|k| (k == "DATABASE_URL").then(|| t.url.clone())).unwrap(),
            ),
            Store::new(replica_db.clone()),
        ));
        let cookie = sign_in(&app, "demo", PASSWORD).await;
        // Any replica accepts the session.
        assert_eq!(
            send(&replica, page("/settings", Some(&cookie))).await.status,
            StatusCode::OK,
            "{b:?}"
        );

        let r = send(&app, server_fn("/logout", "", Some(&cookie))).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{b:?}");
        assert_eq!(r.location(), "/login");
        assert!(
            r.set_cookie().unwrap().contains("Max-Age=0"),
            "the browser forgets it"
        );

        // Replaying the old cookie, on either replica, gets nothing.
        for on in [&app, &replica] {
            let r = send(on, page("/settings", Some(&cookie))).await;
            assert_eq!(r.status, StatusCode::SEE_OTHER, "{b:?}");
            let r = send(on, server_fn("/api/get_settings", "", Some(&cookie))).await;
            assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{b:?}");
        }
        replica_db.close().await;
        t.cleanup().await;
    }
}

#[tokio::test]
async fn api_tokens_authenticate_integrators_and_anything_else_gets_401_json() {
    for t in common::all_backends().await {
        let b = t.db.backend();
        let state = state_for(&t, AuthConfig::default());
        let (user, _) = state
            .store
            .ensure_user("integrator", "Nightly export", Role::Clinician, "unused-password")
            .await
            .unwrap();
        let (_, secret) = state
            .auth
            .create_api_token(user.id, "export", Utc::now(), None)
            .await
            .unwrap();
        // A JSON route guarded by the extractor, behind the same middleware as the app.
        let api: Router = Router::new()
            .route(
                "/api/v1/whoami",
                get(|CurrentUser(u): CurrentUser| async move { u.username }),
            )
            .route(
                "/api/v1/admin-only",
                get(|AdminUser(u): AdminUser| async move { u.username }),
            )
            .layer(axum::middleware::from_fn_with_state(
                state.auth.clone(),
                server::auth::extract::resolve_user,
            ))
            .with_state(state.clone());
        let call = |auth: Option<String>| {
            let mut r = Request::get("/api/v1/whoami").header(header::ACCEPT, "application/json");
            if let Some(a) = auth {
                r = r.header(header::AUTHORIZATION, a);
            }
            r.body(Body::empty()).unwrap()
        };

        let r = send(&api, call(Some(format!("Bearer {secret}")))).await;
        assert_eq!(
            (r.status, r.body.as_str()),
            (StatusCode::OK, "integrator"),
            "{b:?}"
        );

        for bad in [
            None,
            Some("Bearer clarion_0000".to_string()),
            Some(format!("Basic {secret}")),
        ] {
            let r = send(&api, call(bad.clone())).await;
            assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{b:?}: {bad:?}");
            let json: serde_json::Value = serde_json::from_str(&r.body).unwrap();
            assert_eq!(json["code"], "unauthenticated");
            assert!(json["message"].as_str().unwrap().contains("Bearer"));
        }

        // Signed in, but not an administrator: 403, not 401.
        let mut req = call(Some(format!("Bearer {secret}")));
        *req.uri_mut() = "/api/v1/admin-only".parse().unwrap();
        let r = send(&api, req).await;
        assert_eq!(r.status, StatusCode::FORBIDDEN, "{b:?}");
        assert!(r.body.contains(r#""code":"forbidden""#), "{}", r.body);

        // The token also works for the app's server functions.
        let app = server::http::router(state.clone());
        let mut req = server_fn("/api/get_settings", "", None);
        req.headers_mut()
            .insert(header::AUTHORIZATION, format!("Bearer {secret}").parse().unwrap());
        assert_eq!(send(&app, req).await.status, StatusCode::OK, "{b:?}");
        t.cleanup().await;
    }
}

// ------------------------------------------------------------ sign-in abuse (issue 14)

/// Sends `n` requests at once and returns their statuses.
async fn burst(app: &Router, reqs: Vec<Request<Body>>) -> Vec<StatusCode> {
    let handles: Vec<_> = reqs
        .into_iter()
        .map(|r| {
            let app = app.clone();
            tokio::spawn(async move { app.oneshot(r).await.unwrap().status() })
        })
        .collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.unwrap());
    }
    out
}

async fn failure_rows(t: &common::TestDb) -> i64 {
    let store = Store::new(t.db.clone());
    let far = Utc::now() - Duration::days(1);
    store
        .login_attempt_counts(0, "", "", far, far)
        .await
        .unwrap()
        .last_minute
}

#[tokio::test]
async fn a_parallel_burst_of_guesses_gets_no_more_tries_than_the_limit_on_every_backend() {
    for t in common::all_backends().await {
        let b = t.db.backend();
        let app = app_for(&t).await;
        let reqs = (0..30)
            .map(|_| from_ip(login_form("demo", "guess", "/"), "10.9.0.1"))
            .collect();
        let statuses = burst(&app, reqs).await;
        let tried = statuses
            .iter()
            .filter(|s| **s == StatusCode::UNAUTHORIZED)
            .count();
        let limited = statuses
            .iter()
            .filter(|s| **s == StatusCode::TOO_MANY_REQUESTS)
            .count();
        // Attempts under way count for each other, so a burst may even get none checked.
        assert!(tried <= 5, "{b:?}: {tried} guesses were checked: {statuses:?}");
        assert_eq!(tried + limited, 30, "{b:?}: {statuses:?}");
        // Refused attempts do not count: exactly five guesses in all are checked,
        // then even the right password from that address is refused.
        for _ in tried..5 {
            let r = send(&app, from_ip(login_form("demo", "guess", "/"), "10.9.0.1")).await;
            assert_eq!(r.status, StatusCode::UNAUTHORIZED, "{b:?}");
        }
        let r = send(&app, from_ip(login_form("demo", PASSWORD, "/"), "10.9.0.1")).await;
        assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{b:?}");
        t.cleanup().await;
    }
}

#[tokio::test]
async fn one_address_spraying_a_password_over_many_usernames_is_limited() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    let mut statuses = Vec::new();
    for i in 0..32 {
        let r = send(
            &app,
            from_ip(login_form(&format!("user{i}"), "Winter2026!", "/"), "10.9.0.2"),
        )
        .await;
        statuses.push(r.status);
    }
    assert!(
        statuses[..30].iter().all(|s| *s == StatusCode::UNAUTHORIZED),
        "{statuses:?}"
    );
    assert_eq!(statuses[30], StatusCode::TOO_MANY_REQUESTS, "{statuses:?}");
    // The demo clinician at another address is not affected.
    let r = send(&app, from_ip(login_form("demo", PASSWORD, "/"), "10.9.0.3")).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    t.cleanup().await;
}

#[tokio::test]
async fn guesses_on_one_account_from_many_addresses_slow_down_but_never_lock_the_owner_out() {
    let t = common::TestDb::sqlite().await;
    let store = Store::new(t.db.clone());
    store
        .ensure_user("demo", "Dr. Dana Reyes", Role::Clinician, PASSWORD)
        .await
        .unwrap();
    let auth = server::auth::Auth::new(store.clone(), AuthConfig::default());
    let t0 = Utc::now();
    // Ten failures, each from its own address: no address reaches its own limit.
    for i in 0..10 {
        let r = auth.login("demo", "guess", &format!("10.8.0.{i}"), t0).await;
        assert!(
            matches!(r, Err(server::auth::LoginError::BadCredentials)),
            "{i}: {r:?}"
        );
    }
    // The eleventh attempt, from a fresh address, must wait a second...
    let r = auth.login("demo", PASSWORD, "10.8.1.1", t0).await;
    let Err(server::auth::LoginError::RateLimited { retry_after_secs }) = r else {
        panic!("expected a short wait: {r:?}");
    };
    assert!((1..=60).contains(&retry_after_secs), "{retry_after_secs}");
    // ...and after that wait the owner gets in (a delay, not a lock-out).
    let ok = auth
        .login(
            "demo",
            PASSWORD,
            "10.8.1.1",
            t0 + Duration::seconds(retry_after_secs),
        )
        .await;
    assert!(ok.is_ok(), "{ok:?}");
    // Waits double with each failure but never exceed the maximum.
    for i in 0..10 {
        let _ = auth
            .login("demo", "guess", &format!("10.7.0.{i}"), t0 + Duration::minutes(i))
            .await;
    }
    let r = auth
        .login("demo", "guess", "10.7.1.1", t0 + Duration::minutes(10))
        .await;
    if let Err(server::auth::LoginError::RateLimited { retry_after_secs }) = r {
        assert!(retry_after_secs <= 60, "{retry_after_secs}");
    }
    t.cleanup().await;
}

#[tokio::test]
async fn an_impossible_username_is_refused_before_any_work_and_nothing_is_stored() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    let huge = "u".repeat(60_000);
    for name in [huge.as_str(), "x'; DROP TABLE users; --", "name with spaces"] {
        let r = send(&app, from_ip(login_form(name, "whatever", "/"), "10.9.0.4")).await;
        assert_eq!(
            r.status,
            StatusCode::BAD_REQUEST,
            "{}",
            &name[..name.len().min(20)]
        );
        assert!(r.body.contains("Usernames are 1 to 64 characters"), "{}", r.body);
        // The form echoes at most a username's worth of what was typed.
        assert!(!r.body.contains(&"u".repeat(65)));
    }
    assert_eq!(failure_rows(&t).await, 0, "nothing was recorded");
    // The users table is intact.
    assert!(
        Store::new(t.db.clone())
            .user_by_username("demo")
            .await
            .unwrap()
            .is_some()
    );
    t.cleanup().await;
}

#[tokio::test]
async fn wrong_current_passwords_on_a_password_change_are_limited_like_sign_ins() {
    for t in common::all_backends().await {
        let b = t.db.backend();
        let app = app_for(&t).await;
        let cookie = sign_in(&app, "demo", PASSWORD).await;
        let change = |current: &str| {
            server_fn(
                "/api/change_password",
                &format!(
                    "current={}&new=another-password-1&confirm=another-password-1",
                    enc(current)
                ),
                Some(&cookie),
            )
        };
        for i in 0..5 {
            let r = send(&app, change("wrong-guess")).await;
            assert_eq!(r.status, StatusCode::BAD_REQUEST, "{b:?}: {i}: {}", r.body);
            assert!(r.body.contains("current password is not correct"), "{}", r.body);
        }
        let r = send(&app, change(PASSWORD)).await;
        assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{b:?}: {}", r.body);
        assert!(r.body.contains("Too many failed"), "{}", r.body);
        // Nothing changed: the password still signs in (from another address).
        let r = send(&app, from_ip(login_form("demo", PASSWORD, "/"), "10.9.0.5")).await;
        assert_eq!(r.status, StatusCode::SEE_OTHER, "{b:?}");
        t.cleanup().await;
    }
}

// ------------------------------------------------------------------ sessions (issue 14)

#[tokio::test]
async fn signing_in_issues_a_new_session_and_ends_the_one_presented() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    let first = sign_in(&app, "demo", PASSWORD).await;
    // The same browser signs in again presenting its current cookie (or one an
    // attacker planted): it gets a new id, and the presented one stops working.
    let mut req = login_form("demo", PASSWORD, "/");
    req.headers_mut().insert(header::COOKIE, first.parse().unwrap());
    let r = send(&app, req).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER);
    let second = r.session();
    assert_ne!(first, second);
    let old = send(&app, page("/settings", Some(&first))).await;
    assert_eq!(old.status, StatusCode::SEE_OTHER, "the presented session ended");
    let new = send(&app, page("/settings", Some(&second))).await;
    assert_eq!(new.status, StatusCode::OK);
    t.cleanup().await;
}

#[tokio::test]
async fn over_tls_the_cookie_is_host_prefixed_and_a_plain_named_one_is_ignored() {
    let t = common::TestDb::sqlite().await;
    let app = app_for(&t).await;
    let mut req = login_form("demo", PASSWORD, "/");
    req.headers_mut()
        .insert("x-forwarded-proto", "https".parse().unwrap());
    let r = send(&app, req).await;
    let cookie = r.set_cookie().unwrap().to_string();
    assert!(cookie.starts_with("__Host-clarion_session="), "{cookie}");
    assert!(cookie.contains("; Secure") && cookie.contains("Path=/") && !cookie.contains("Domain"));
    let secret = r.session().split_once('=').unwrap().1.to_string();
    let tls_page = |c: String| {
        let mut p = page("/settings", Some(&c));
        p.headers_mut()
            .insert("x-forwarded-proto", "https".parse().unwrap());
        p
    };
    assert_eq!(
        send(&app, tls_page(format!("__Host-clarion_session={secret}")))
            .await
            .status,
        StatusCode::OK
    );
    // The same secret under the plain name (as a sibling subdomain could set it) is not believed over TLS.
    assert_eq!(
        send(&app, tls_page(format!("clarion_session={secret}")))
            .await
            .status,
        StatusCode::SEE_OTHER
    );
    t.cleanup().await;
}

#[tokio::test]
async fn an_idle_session_ends_and_an_active_one_lives_until_its_absolute_limit() {
    for t in common::all_backends().await {
        let b = t.db.backend();
        let store = Store::new(t.db.clone());
        store
            .ensure_user("demo", "Dr. Dana Reyes", Role::Clinician, PASSWORD)
            .await
            .unwrap();
        let config = AuthConfig {
            session_idle: Duration::minutes(30),
            session_ttl: Duration::hours(2),
            ..AuthConfig::default()
        };
        let auth = server::auth::Auth::new(store.clone(), config);
        let t0 = Utc::now();
        let s = auth.login("demo", PASSWORD, "ip", t0).await.unwrap();
        // Used every 20 minutes: stays alive (each use counts as activity)...
        for k in 1..6 {
            let at = t0 + Duration::minutes(20 * k);
            assert!(
                auth.session_user(&s.secret, at).await.unwrap().is_some(),
                "{b:?}: {k}"
            );
        }
        // ...until the absolute limit, however active.
        assert!(
            auth.session_user(&s.secret, t0 + Duration::minutes(121))
                .await
                .unwrap()
                .is_none(),
            "{b:?}"
        );
        // Left alone for more than the idle timeout: ended.
        let s2 = auth.login("demo", PASSWORD, "ip", t0).await.unwrap();
        assert!(
            auth.session_user(&s2.secret, t0 + Duration::minutes(31))
                .await
                .unwrap()
                .is_none(),
            "{b:?}"
        );
        t.cleanup().await;
    }
}

#[tokio::test]
async fn tokens_expire_and_a_password_reset_revokes_them_on_every_backend() {
    for t in common::all_backends().await {
        let b = t.db.backend();
        let store = Store::new(t.db.clone());
        let (user, _) = store
            .ensure_user("integrator", "Export", Role::Clinician, "a-long-password")
            .await
            .unwrap();
        let auth = server::auth::Auth::new(store.clone(), AuthConfig::default());
        let now = Utc::now();
        let (short, short_secret) = auth
            .create_api_token(user.id, "short", now, Some(now + Duration::days(1)))
            .await
            .unwrap();
        assert!(short.expires_at.is_some());
        let (_, forever) = auth
            .create_api_token(user.id, "forever", now, None)
            .await
            .unwrap();
        assert!(
            auth.token_user(&short_secret, now + Duration::hours(23))
                .await
                .unwrap()
                .is_some(),
            "{b:?}"
        );
        assert!(
            auth.token_user(&short_secret, now + Duration::hours(25))
                .await
                .unwrap()
                .is_none(),
            "{b:?}"
        );
        assert!(
            auth.token_user(&forever, now + Duration::days(400))
                .await
                .unwrap()
                .is_some(),
            "{b:?}"
        );
        store
            .set_password("integrator", "another-long-password")
            .await
            .unwrap();
        assert!(
            auth.token_user(&forever, now).await.unwrap().is_none(),
            "{b:?}: revoked by the reset"
        );
        assert!(store.api_tokens(user.id).await.unwrap().is_empty());
        t.cleanup().await;
    }
}

#[tokio::test]
async fn housekeeping_deletes_expired_and_idle_sessions_and_old_failures_only() {
    for t in common::all_backends().await {
        let b = t.db.backend();
        let store = Store::new(t.db.clone());
        store
            .ensure_user("demo", "Dr. Dana Reyes", Role::Clinician, PASSWORD)
            .await
            .unwrap();
        let auth = server::auth::Auth::new(store.clone(), AuthConfig::default());
        let t0 = Utc::now();
        let idle = auth
            .login("demo", PASSWORD, "ip", t0 - Duration::hours(2))
            .await
            .unwrap();
        let fresh = auth.login("demo", PASSWORD, "ip", t0).await.unwrap();
        let _ = auth.login("demo", "guess", "old", t0 - Duration::hours(30)).await;
        let _ = auth.login("demo", "guess", "new", t0).await;
        let (sessions, failures) = auth.housekeeping(t0).await.unwrap();
        assert_eq!((sessions, failures), (1, 1), "{b:?}");
        assert!(auth.session_user(&idle.secret, t0).await.unwrap().is_none());
        assert!(
            auth.session_user(&fresh.secret, t0).await.unwrap().is_some(),
            "{b:?}"
        );
        t.cleanup().await;
    }
}

// ---------------------------------------------------------------- command line

fn cli(database_url: &str, args: &[&str], stdin: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_server"))
        .args(["user"])
        .args(args)
        .env("DATABASE_URL", database_url)
        .env("CLARION_LOG", "warn")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[tokio::test]
async fn the_user_command_adds_lists_resets_and_issues_tokens() {
    let t = common::TestDb::sqlite().await;
    let url = t.url.clone();
    let out = cli(
        &url,
        &["add", "--username", "kim", "--name", "Nurse Kim"],
        "a-long-password\n",
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Created clinician account"));

    let out = cli(
        &url,
        &["add", "--username", "kim", "--name", "Again"],
        "another-password\n",
    );
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
    let out = cli(
        &url,
        &["add", "--username", "short", "--name", "S", "--admin"],
        "short\n",
    );
    assert!(!out.status.success(), "a short password is refused");

    let out = cli(&url, &["list"], "");
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("kim") && listed.contains("Nurse Kim"), "{listed}");
    assert!(!listed.contains("short"));

    let store = Store::new(t.db.clone());
    let auth = server::auth::Auth::new(store.clone(), AuthConfig::default());
    assert!(
        auth.login("kim", "a-long-password", "cli", Utc::now())
            .await
            .is_ok()
    );

    let out = cli(&url, &["reset-password", "--username", "kim"], "a-new-password\n");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        auth.login("kim", "a-long-password", "cli2", Utc::now())
            .await
            .is_err()
    );
    assert!(
        auth.login("kim", "a-new-password", "cli2", Utc::now())
            .await
            .is_ok()
    );

    let out = cli(
        &url,
        &["token", "create", "--username", "kim", "--name", "export"],
        "",
    );
    let printed = String::from_utf8_lossy(&out.stdout);
    let secret = printed
        .split_whitespace()
        .find(|w| w.starts_with("clarion_"))
        .expect("the token is printed once")
        .to_string();
    let owner = auth.token_user(&secret, Utc::now()).await.unwrap().unwrap();
    assert_eq!(owner.username, "kim");
    let out = cli(&url, &["token", "list", "--username", "kim"], "");
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("export") && !listed.contains(&secret), "{listed}");
    t.cleanup().await;
}

#[tokio::test]
async fn a_user_lists_creates_and_revokes_only_their_own_api_tokens_from_settings() {
    for t in common::all_backends().await {
        let b = t.db.backend();
        let app = app_for(&t).await;
        let store = Store::new(t.db.clone());
        store
            .ensure_user("other", "Other", Role::Clinician, "other-password-1")
            .await
            .unwrap();
        let demo = sign_in(&app, "demo", PASSWORD).await;
        let other = sign_in(&app, "other", "other-password-1").await;
        let created = send(
            &app,
            server_fn(
                "/api/create_api_token",
                "name=nightly+export&expires_in_days=30",
                Some(&demo),
            ),
        )
        .await;
        assert_eq!(created.status, StatusCode::OK, "{b:?}: {}", created.body);
        let c: serde_json::Value = serde_json::from_str(&created.body).unwrap();
        let secret = c["secret"].as_str().unwrap().to_string();
        let id = c["token"]["id"].as_i64().unwrap();
        assert!(c["token"]["expires_at"].is_string());
        // The secret works as a bearer token, and the listing never shows it.
        let mut req = server_fn("/api/get_settings", "", None);
        req.headers_mut()
            .insert(header::AUTHORIZATION, format!("Bearer {secret}").parse().unwrap());
        assert_eq!(send(&app, req).await.status, StatusCode::OK, "{b:?}");
        let listed = send(&app, server_fn("/api/api_tokens", "", Some(&demo))).await;
        assert!(
            listed.body.contains("nightly export") && !listed.body.contains(&secret),
            "{}",
            listed.body
        );
        // Someone else cannot see or revoke it.
        let theirs = send(&app, server_fn("/api/api_tokens", "", Some(&other))).await;
        assert_eq!(theirs.body, "[]", "{b:?}");
        let r = send(
            &app,
            server_fn("/api/revoke_api_token", &format!("id={id}"), Some(&other)),
        )
        .await;
        assert_eq!(r.status, StatusCode::NOT_FOUND, "{b:?}");
        // Bad input is a 400 that says why.
        let r = send(&app, server_fn("/api/create_api_token", "name=+", Some(&demo))).await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
        // The owner revokes it: the secret stops working.
        let r = send(
            &app,
            server_fn("/api/revoke_api_token", &format!("id={id}"), Some(&demo)),
        )
        .await;
        assert_eq!(r.status, StatusCode::OK, "{b:?}: {}", r.body);
        let mut req = server_fn("/api/get_settings", "", None);
        req.headers_mut()
            .insert(header::AUTHORIZATION, format!("Bearer {secret}").parse().unwrap());
        assert_eq!(send(&app, req).await.status, StatusCode::UNAUTHORIZED, "{b:?}");
        t.cleanup().await;
    }
}
