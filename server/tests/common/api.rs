//! Helpers for the JSON API tests: a seeded database, two users with API tokens, and
//! requests through the real router.

use super::TestDb;
use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use chrono::Utc;
use http_body_util::BodyExt;
use serde_json::Value;
use server::config::Config;
use server::dataset::{self, GenConfig, OnExisting};
use server::orchestrator::OrchestratorConfig;
use server::state::AppState;
use server::store::{Role, Store};
use tower::ServiceExt;

/// The orchestrator limits the API tests use: `today` pinned to the dataset's anchor.
pub fn test_config() -> OrchestratorConfig {
    OrchestratorConfig {
        today: Some(dataset::DEFAULT_ANCHOR),
        ..OrchestratorConfig::default()
    }
}

/// A seeded database behind the real router, with two clinicians.
pub struct Api {
    pub app: Router,
    pub state: AppState,
    /// Bearer token of `alice`.
    pub alice: String,
    /// Bearer token of `bob`.
    pub bob: String,
    pub alice_id: i64,
    pub db: TestDb,
}

/// A reply: status and JSON body (`Value::Null` when the body is not JSON).
pub struct Reply {
    pub status: StatusCode,
    pub body: Value,
}

impl Api {
    /// A page request as a browser makes it, signed in with the bearer `token`: `Accept:
    /// text/html`, a form body when given. Returns the status, the body and the
    /// `Location` header.
    pub async fn page(
        &self,
        token: &str,
        method: Method,
        path: &str,
        form: Option<&str>,
    ) -> (StatusCode, String, Option<String>) {
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "clarion.test")
            .header(header::ACCEPT, "text/html")
            .header(header::AUTHORIZATION, format!("Bearer {token}"));
        if form.is_some() {
            req = req.header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        }
        let res = self
            .app
            .clone()
            .oneshot(req.body(Body::from(form.unwrap_or("").to_owned())).unwrap())
            .await
            .unwrap();
        let status = res.status();
        let location = res
            .headers()
            .get(header::LOCATION)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let body = String::from_utf8_lossy(&res.into_body().collect().await.unwrap().to_bytes()).into_owned();
        (status, body, location)
    }

    /// Seeds `db` (scale 1: 20 patients) and starts the API with `config`.
    pub async fn start(db: TestDb, config: OrchestratorConfig) -> Api {
        dataset::seed(
            &db.db,
            &GenConfig::new(1, dataset::DEFAULT_SEED),
            OnExisting::Refuse,
        )
        .await
        .expect("seed");
        Self::over(db, config).await
    }

    /// Starts the API over an already seeded database.
    pub async fn over(db: TestDb, config: OrchestratorConfig) -> Api {
        // Server faults are logged with their cause; show them in failing tests.
        let _ = tracing_subscriber::fmt()
            .with_test_writer()
            .with_env_filter("server=error")
            .try_init();
        let store = Store::new(db.db.clone());
        let app_config = Config::from_lookup(|k| (k == "DATABASE_URL").then(|| db.url.clone())).unwrap();
        let state = AppState::new(server::serve::leptos_options(&app_config), store.clone())
            .with_orchestrator_config(config);
        let (alice, _) = store
            .ensure_user("alice", "Alice", Role::Clinician, "alice-password-1")
            .await
            .unwrap();
        let (bob, _) = store
            .ensure_user("bob", "Bob", Role::Clinician, "bob-password-12")
            .await
            .unwrap();
        state.orchestrator.warm_up().await;
        let (_, alice_token) = state
            .auth
            .create_api_token(alice.id, "tests", Utc::now(), None)
            .await
            .unwrap();
        let (_, bob_token) = state
            .auth
            .create_api_token(bob.id, "tests", Utc::now(), None)
            .await
            .unwrap();
        Api {
            app: server::http::router(state.clone()),
            state,
            alice: alice_token,
            bob: bob_token,
            alice_id: alice.id,
            db,
        }
    }

    /// Another "replica": its own pools and orchestrator over the same database.
    pub async fn replica(&self, config: OrchestratorConfig) -> Router {
        let db = server::db::Database::connect(&self.db.url)
            .await
            .expect("connect");
        let app_config = Config::from_lookup(|k| (k == "DATABASE_URL").then(|| self.db.url.clone())).unwrap();
        let state = AppState::new(server::serve::leptos_options(&app_config), Store::new(db))
            .with_orchestrator_config(config);
        server::http::router(state)
    }

    /// Sends a request to another router (a replica).
    pub async fn send_to(&self, app: &Router, token: &str, method: Method, path: &str, body: Value) -> Reply {
        let req = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "clarion.test")
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .body(Body::from(body.to_string()))
            .unwrap();
        let res = app.clone().oneshot(req).await.unwrap();
        let status = res.status();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        Reply {
            status,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        }
    }

    /// Sends raw body text.
    pub async fn raw(&self, token: Option<&str>, method: Method, path: &str, body: &str) -> Reply {
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, "clarion.test")
            .header(header::CONTENT_TYPE, "application/json");
        if let Some(t) = token {
            req = req.header(header::AUTHORIZATION, format!("Bearer {t}"));
        }
        let res = self
            .app
            .clone()
            .oneshot(req.body(Body::from(body.to_owned())).unwrap())
            .await
            .unwrap();
        let status = res.status();
        let bytes = res.into_body().collect().await.unwrap().to_bytes();
        Reply {
            status,
            body: serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        }
    }

    /// Sends JSON (or nothing) as `token`.
    pub async fn call(&self, token: &str, method: Method, path: &str, body: Option<Value>) -> Reply {
        let text = body.map(|b| b.to_string()).unwrap_or_default();
        self.raw(Some(token), method, path, &text).await
    }

    /// `POST /api/v1/query` as alice.
    pub async fn ask(&self, body: Value) -> Reply {
        self.call(&self.alice, Method::POST, "/api/v1/query", Some(body))
            .await
    }

    /// `POST /api/v1/query/clarify` as alice.
    pub async fn clarify(&self, body: Value) -> Reply {
        self.call(&self.alice, Method::POST, "/api/v1/query/clarify", Some(body))
            .await
    }

    /// Closes the pools and drops the database.
    pub async fn finish(self) {
        self.db.cleanup().await;
    }
}
