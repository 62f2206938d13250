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
    assert_eq!(
        store
            .login_failures_since("demo", "ip", now - Duration::hours(1))
            .await
            .unwrap()
            .0,
        0
    );
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
            .create_api_token(user.id, "export", Utc::now())
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
                state.clone(),
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
