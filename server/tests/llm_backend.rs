//! The optional language model (F24) against a stand-in OpenAI-compatible server
//! (axum on 127.0.0.1:0, started by each test) replaying recorded replies: a valid plan,
//! a valid clarification, malformed JSON, a schema-invalid reply, an unknown column, an
//! invalid value, a slow reply past the time limit, HTTP 500, 429 with Retry-After, and
//! a reply smuggling SQL. Each asserts what the clinician gets. Everything else is real:
//! the router, the orchestrator, the engine, the renderer and a seeded SQLite database.

mod common;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use common::TestDb;
use common::api::{Api, Reply, test_config};
use serde_json::{Value, json};
use server::llm::LlmConfig;
use server::orchestrator::OrchestratorConfig;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What the stand-in does with the n-th request (the last entry repeats).
#[derive(Clone, Debug)]
enum Step {
    Reply(String),
    Status(u16),
    TooMany { retry_after: &'static str },
    Slow(Duration, String),
}

#[derive(Clone, Default)]
struct Stub {
    steps: Arc<Vec<Step>>,
    seen: Arc<Mutex<Vec<(HeaderMap, Value)>>>,
}

impl Stub {
    fn requests(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    fn bodies(&self) -> String {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .map(|(_, b)| b.to_string())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn completion(content: &str) -> Value {
    json!({
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 700, "completion_tokens": 112, "total_tokens": 812},
    })
}

async fn chat(State(stub): State<Stub>, headers: HeaderMap, body: String) -> Response {
    let n = {
        let mut seen = stub.seen.lock().unwrap();
        seen.push((headers, serde_json::from_str(&body).unwrap_or(Value::Null)));
        seen.len() - 1
    };
    let step = stub.steps.get(n).or(stub.steps.last()).cloned().expect("a step");
    match step {
        Step::Reply(c) => axum::Json(completion(&c)).into_response(),
        Step::Status(s) => (StatusCode::from_u16(s).unwrap(), "upstream trouble").into_response(),
        Step::TooMany { retry_after } => (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", retry_after)],
            "slow down",
        )
            .into_response(),
        Step::Slow(d, c) => {
            tokio::time::sleep(d).await;
            axum::Json(completion(&c)).into_response()
        }
    }
}

/// Starts the stand-in; returns it and its base URL (`http://127.0.0.1:port/v1`).
async fn stand_in(steps: Vec<Step>) -> (Stub, String) {
    let stub = Stub {
        steps: Arc::new(steps),
        seen: Arc::default(),
    };
    let app = Router::new()
        .route("/v1/chat/completions", post(chat))
        .with_state(stub.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    (stub, format!("http://{addr}/v1"))
}

fn config(url: &str) -> OrchestratorConfig {
    let mut llm = LlmConfig::new(url);
    llm.model = "stand-in-7b".into();
    llm.plan_timeout = Duration::from_millis(1500);
    llm.api_key = Some(server::llm::Secret::new("sk-test-secret"));
    OrchestratorConfig {
        llm: Some(llm),
        ..test_config()
    }
}

async fn api_with(steps: Vec<Step>) -> (Api, Stub) {
    let (stub, url) = stand_in(steps).await;
    let api = Api::start(TestDb::sqlite().await, config(&url)).await;
    (api, stub)
}

const UNKNOWN: &str = "list flubbery wounds";

fn plan_reply(constraint: Value) -> String {
    json!({"kind": "plan", "pieces": [{"word": "flubbery", "label": "Latest area above 15 cm²", "constraint": constraint}]})
        .to_string()
}

fn area_over_15() -> Value {
    json!({"kind": "compare", "attribute": "wounds.latest_area", "op": "gt", "value": 15, "unit": "cm2"})
}

fn thinking(r: &Reply) -> String {
    r.body["thinking"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    format!(
                        "{}: {}",
                        s["name"].as_str().unwrap_or(""),
                        s["detail"].as_str().unwrap_or("")
                    )
                })
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// The engine's own coverage question, as asked without a model.
fn assert_engine_question(r: &Reply) {
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    let q = &r.body["questions"][0];
    assert_eq!(q["id"], "unknown:flubbery", "{}", r.body);
    let ids: Vec<&str> = q["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"ignore"), "{ids:?}");
    assert!(!ids.iter().any(|i| i.starts_with("llm:")), "{ids:?}");
}

#[tokio::test]
async fn a_valid_plan_is_answered_with_a_badge_proposed_by_the_language_model() {
    let (api, stub) = api_with(vec![Step::Reply(plan_reply(area_over_15()))]).await;
    let r = api.ask(json!({"question": UNKNOWN})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    let badge = r.body["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["source"] == "language_model")
        .unwrap_or_else(|| panic!("no language-model badge: {}", r.body));
    assert_eq!(badge["piece"], "flubbery");
    assert_eq!(badge["assumed"], "Latest area above 15 cm²");
    assert_eq!(badge["ambiguity_id"], "unknown:flubbery");
    assert!(
        badge["options"].as_array().unwrap().len() > 1,
        "changeable: {badge}"
    );
    let steps = thinking(&r);
    assert!(steps.contains("Asked the language model: stand-in-7b"), "{steps}");
    assert!(steps.contains("812 tokens"), "{steps}");
    assert!(r.body["confidence"].as_f64().unwrap() <= 0.75);
    assert!(
        r.body["sql"].as_str().unwrap().contains('>'),
        "the area filter ran: {}",
        r.body["sql"]
    );
    assert_eq!(stub.requests(), 1);

    // The request: the schema card and the prompt; json_schema response format; the key in a header only.
    let (headers, body) = stub.seen.lock().unwrap()[0].clone();
    assert_eq!(headers["authorization"], "Bearer sk-test-secret");
    assert_eq!(body["model"], "stand-in-7b");
    assert_eq!(body["response_format"]["type"], "json_schema");
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(
        user.contains("flubbery") && user.contains("wounds.latest_area"),
        "{user}"
    );

    // One click changes it: the badge reopens the engine's own options (ignore the word).
    let rev = api
        .call(
            &api.alice,
            axum::http::Method::POST,
            "/api/v1/query/revise",
            Some(json!({"history_id": r.body["history_id"], "ambiguity_id": "unknown:flubbery", "option_id": "ignore"})),
        )
        .await;
    assert_eq!(rev.status, StatusCode::OK, "{}", rev.body);
    assert!(
        !rev.body["assumptions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["source"] == "language_model"),
        "{}",
        rev.body
    );
    assert_eq!(stub.requests(), 1, "a revision never calls the model");

    // The call is recorded without values; analytics see it.
    let usage = api
        .state
        .store
        .llm_usage(
            chrono::Utc::now() - chrono::Duration::days(1),
            chrono::Utc::now() + chrono::Duration::days(1),
        )
        .await
        .unwrap();
    assert_eq!(usage.len(), 1);
    assert_eq!((usage[0].calls, usage[0].failures, usage[0].tokens), (1, 0, 812));
    api.finish().await;
}

#[tokio::test]
async fn a_valid_clarification_is_asked_with_counts_and_its_answer_is_marked() {
    let reply = json!({
        "kind": "clarification",
        "word": "flubbery",
        "question": "By “flubbery”, do you mean large or infected wounds?",
        "options": [
            {"label": "Latest area above 15 cm²", "description": "large now", "default": true, "constraint": area_over_15()},
            {"label": "Infected", "description": "infection recorded", "default": false,
             "constraint": {"kind": "in_set", "attribute": "wounds.infected", "values": [true]}},
        ],
    });
    let (api, stub) = api_with(vec![Step::Reply(reply.to_string())]).await;
    let r = api.ask(json!({"question": UNKNOWN})).await;
    assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
    let q = &r.body["questions"][0];
    assert_eq!(q["id"], "unknown:flubbery");
    assert!(q["text"].as_str().unwrap().contains("do you mean"), "{q}");
    let opts = q["options"].as_array().unwrap();
    let ids: Vec<&str> = opts.iter().map(|o| o["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["llm:1", "llm:2", "ignore"], "{q}");
    assert_eq!(opts[0]["default"], true);
    assert!(
        opts.iter().all(|o| o["count"].is_number()),
        "every option has a count: {q}"
    );

    let cid = r.body["clarification_id"].as_str().unwrap();
    let a = api
        .clarify(json!({"clarification_id": cid, "answers": [{"question_id": "unknown:flubbery", "option_id": "llm:2"}]}))
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    let badge = a.body["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["source"] == "language_model");
    assert_eq!(
        badge.map(|b| b["assumed"].clone()),
        Some(json!("Infected")),
        "{}",
        a.body
    );
    assert_eq!(stub.requests(), 1, "the answer runs without another call");
    api.finish().await;
}

async fn falls_back(steps: Vec<Step>, why: &str) -> (Api, Stub, Reply) {
    let (api, stub) = api_with(steps).await;
    let r = api.ask(json!({"question": UNKNOWN})).await;
    assert_engine_question(&r);
    let steps = thinking(&r);
    assert!(steps.contains("Language model not used"), "{steps}");
    assert!(steps.contains(why), "expected {why:?} in:\n{steps}");
    (api, stub, r)
}

#[tokio::test]
async fn malformed_json_falls_back_to_the_engines_question() {
    let (api, ..) = falls_back(
        vec![Step::Reply("Sure! Flubbery probably means large.".into())],
        "not JSON",
    )
    .await;
    api.finish().await;
}

#[tokio::test]
async fn a_schema_invalid_reply_falls_back() {
    let (api, ..) = falls_back(
        vec![Step::Reply(json!({"kind": "plan", "readings": []}).to_string())],
        "did not match the expected shape",
    )
    .await;
    api.finish().await;
}

#[tokio::test]
async fn a_plan_naming_an_unknown_column_is_invalid_and_falls_back() {
    let c = json!({"kind": "compare", "attribute": "wounds.flubber_index", "op": "gt", "value": 3});
    let (api, ..) = falls_back(vec![Step::Reply(plan_reply(c))], "confidence 0.3").await;
    api.finish().await;
}

#[tokio::test]
async fn an_invalid_value_is_refused_and_falls_back() {
    let c = json!({"kind": "in_set", "attribute": "wounds.etiology", "values": ["werewolf_bite"]});
    let (api, _, r) = falls_back(vec![Step::Reply(plan_reply(c))], "not an allowed value").await;
    assert!(!r.body.to_string().contains("\"source\":\"language_model\""));
    api.finish().await;
}

#[tokio::test]
async fn a_slow_reply_past_the_time_limit_falls_back() {
    let (api, ..) = falls_back(
        vec![Step::Slow(Duration::from_secs(5), plan_reply(area_over_15()))],
        "did not answer within 1500 ms",
    )
    .await;
    api.finish().await;
}

#[tokio::test]
async fn http_500_falls_back() {
    let (api, ..) = falls_back(vec![Step::Status(500)], "HTTP 500").await;
    api.finish().await;
}

#[tokio::test]
async fn a_429_is_retried_once_after_retry_after() {
    let (api, stub) = api_with(vec![
        Step::TooMany { retry_after: "1" },
        Step::Reply(plan_reply(area_over_15())),
    ])
    .await;
    let t = std::time::Instant::now();
    let r = api.ask(json!({"question": UNKNOWN})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(
        t.elapsed() >= Duration::from_millis(900),
        "waited for Retry-After"
    );
    assert_eq!(stub.requests(), 2);
    assert!(r.body.to_string().contains("\"source\":\"language_model\""));
    api.finish().await;

    // Twice in a row: the second 429 is not waited for again.
    let (api, ..) = falls_back(vec![Step::TooMany { retry_after: "1" }], "rate-limited").await;
    api.finish().await;
}

#[tokio::test]
async fn a_reply_smuggling_sql_is_discarded() {
    let c =
        json!({"kind": "in_set", "attribute": "wounds.etiology", "values": ["x'; DROP TABLE wounds; --"]});
    let (api, _, r) = falls_back(vec![Step::Reply(plan_reply(c))], "SQL").await;
    let extra = json!({"kind": "plan", "pieces": [{"word": "flubbery", "label": "all", "sql": "SELECT * FROM patients"}]});
    let (api2, _, r2) = falls_back(vec![Step::Reply(extra.to_string())], "did not match").await;
    for body in [r.body.to_string(), r2.body.to_string()] {
        assert!(
            !body.contains("DROP TABLE") && !body.contains("SELECT * FROM patients"),
            "{body}"
        );
    }
    api.finish().await;
    api2.finish().await;
}

#[tokio::test]
async fn the_fast_path_and_refused_data_changes_never_call_the_model() {
    let (api, stub) = api_with(vec![Step::Reply(plan_reply(area_over_15()))]).await;
    let r = api
        .ask(json!({"question": "how many open wounds by clinic"}))
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(!thinking(&r).contains("language model"), "{}", thinking(&r));
    let r = api.ask(json!({"question": "delete all flubbery wounds"})).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.body);
    assert_eq!(stub.requests(), 0);
    api.finish().await;
}

#[tokio::test]
async fn identifiers_never_leave_the_host() {
    let (api, stub) = api_with(vec![Step::Reply(plan_reply(area_over_15()))]).await;
    let _ = api
        .ask(json!({"question": "list flubbery wounds of patient CL0000003"}))
        .await;
    assert_eq!(stub.requests(), 1);
    let sent = stub.bodies();
    assert!(!sent.contains("CL0000003"), "record number sent");
    assert!(!sent.contains("sk-test-secret"), "key in a body");
    // no patient names or birth dates from the database
    let names: Vec<(String, String)> = match &api.db.db {
        server::db::Database::Sqlite(p) => sqlx::query_as("SELECT full_name, birth_date FROM patients")
            .fetch_all(p)
            .await
            .unwrap(),
        _ => unreachable!(),
    };
    for (name, born) in names {
        assert!(
            !sent.contains(&name) && !sent.contains(&born),
            "{name} / {born} sent"
        );
    }
    api.finish().await;
}

#[tokio::test]
async fn repeated_failures_pause_calls_and_healthz_says_so() {
    let (api, stub) = api_with(vec![Step::Status(503)]).await;
    for _ in 0..3 {
        let r = api.ask(json!({"question": UNKNOWN})).await;
        assert_engine_question(&r);
    }
    assert_eq!(stub.requests(), 3);
    let r = api.ask(json!({"question": UNKNOWN})).await;
    assert_engine_question(&r);
    assert!(thinking(&r).contains("paused"), "{}", thinking(&r));
    assert_eq!(stub.requests(), 3, "no call while paused");
    let h = api.raw(None, axum::http::Method::GET, "/healthz", "").await;
    assert_eq!(
        h.status,
        StatusCode::OK,
        "the model never makes Clarion unhealthy"
    );
    assert_eq!(
        h.body["language_model"]["breaker"]["state"], "paused",
        "{}",
        h.body
    );
    assert!(!h.body.to_string().contains("sk-test-secret"));
    api.finish().await;
}

#[tokio::test]
async fn an_administrator_can_switch_it_off_at_runtime() {
    let (api, stub) = api_with(vec![Step::Reply(plan_reply(area_over_15()))]).await;
    let (admin, _) = api
        .state
        .store
        .ensure_user("root", "Root", server::store::Role::Admin, "root-password-1")
        .await
        .unwrap();
    let (_, admin_token) = api
        .state
        .auth
        .create_api_token(admin.id, "tests", chrono::Utc::now(), None)
        .await
        .unwrap();
    let path = "/api/v1/admin/language-model";
    let put = axum::http::Method::PUT;
    let denied = api
        .call(&api.alice, put.clone(), path, Some(json!({"enabled": false})))
        .await;
    assert_eq!(
        denied.status,
        StatusCode::FORBIDDEN,
        "clinicians cannot switch it"
    );
    let off = api
        .call(&admin_token, put, path, Some(json!({"enabled": false})))
        .await;
    assert_eq!(off.status, StatusCode::OK, "{}", off.body);
    assert_eq!(off.body["enabled"], false);
    assert_eq!(off.body["configured"], true);
    assert_eq!(off.body["model"], "stand-in-7b");
    assert!(!off.body.to_string().contains("sk-test-secret"));
    let r = api.ask(json!({"question": UNKNOWN})).await;
    assert_engine_question(&r);
    assert!(thinking(&r).contains("switched off"), "{}", thinking(&r));
    assert_eq!(stub.requests(), 0);
    api.state.store.set_llm_enabled(true).await.unwrap();
    let r = api.ask(json!({"question": UNKNOWN})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(stub.requests(), 1);
    api.finish().await;
}

#[tokio::test]
async fn non_interactive_questions_get_the_proposal_as_an_assumption() {
    let (api, _) = api_with(vec![Step::Reply(plan_reply(area_over_15()))]).await;
    let r = api.ask(json!({"question": UNKNOWN, "interactive": false})).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert!(
        r.body.to_string().contains("\"source\":\"language_model\""),
        "{}",
        r.body
    );
    api.finish().await;
}

fn own_words(cid: &str, text: &str) -> Value {
    json!({"clarification_id": cid, "answers": [{"question_id": "unknown:flubbery", "in_own_words": text}]})
}

fn first_option(r: &Reply) -> Value {
    r.body["questions"][0]["options"][0].clone()
}

#[tokio::test]
async fn an_answer_in_ones_own_words_is_read_by_the_engine_first_then_by_the_model_and_shown_back() {
    // The question's own call fails (the engine's question is asked); the answer's call reads it.
    let answer = json!({"kind": "plan", "pieces": [{"word": "flubbery", "label": "Big ones", "constraint": area_over_15()}]});
    let (api, stub) = api_with(vec![Step::Status(500), Step::Reply(answer.to_string())]).await;
    let r = api.ask(json!({"question": UNKNOWN})).await;
    assert_engine_question(&r);
    assert_eq!(stub.requests(), 1);
    let cid = r.body["clarification_id"].as_str().unwrap().to_owned();

    // The engine reads "area over 15" itself: no call; shown back as the preselected option.
    let back = api.clarify(own_words(&cid, "area over 15")).await;
    assert_eq!(back.status, StatusCode::ACCEPTED, "{}", back.body);
    assert_eq!(
        back.body["clarification_id"],
        cid.as_str(),
        "the same round, nothing ran"
    );
    let o = first_option(&back);
    assert_eq!(o["id"], "own:words", "{}", back.body);
    assert_eq!(o["default"], true);
    assert!(o["label"].as_str().unwrap().contains("15"), "{o}");
    assert!(thinking(&back).contains("Read your words"), "{}", thinking(&back));
    assert_eq!(stub.requests(), 1, "the engine read it: no call");

    // Words the engine cannot read go to the model; its reading is shown back, typed.
    let back = api
        .clarify(own_words(&cid, "the ones that have gotten really big"))
        .await;
    assert_eq!(back.status, StatusCode::ACCEPTED, "{}", back.body);
    assert_eq!(stub.requests(), 2);
    let o = first_option(&back);
    assert_eq!(o["id"], "llm:words", "{}", back.body);
    assert_eq!(o["description"], "Proposed by the language model");
    assert!(
        o["label"].as_str().unwrap().contains("15"),
        "typed, not the model's words: {o}"
    );
    let ids: Vec<&str> = back.body["questions"][0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert!(!ids.contains(&"own:words"), "one reading at a time: {ids:?}");
    assert!(ids.contains(&"ignore"), "{ids:?}");
    let sent = stub.bodies();
    assert!(
        sent.contains("answer.v1") || sent.contains("own words"),
        "the answer prompt"
    );
    assert!(sent.contains("gotten really big"));

    // Confirming runs it, with the badge.
    let a = api
        .clarify(json!({"clarification_id": cid, "answers": [{"question_id": "unknown:flubbery", "option_id": "llm:words"}]}))
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert!(a.body["sql"].as_str().unwrap().contains('>'), "{}", a.body["sql"]);
    assert!(
        a.body.to_string().contains("\"source\":\"language_model\""),
        "{}",
        a.body
    );
    assert_eq!(stub.requests(), 2);
    api.finish().await;
}

#[tokio::test]
async fn own_words_nobody_can_read_get_an_inline_error_saying_what_is_accepted() {
    // The model cannot read it either: a 400 that says what the engine accepts; the round stays open.
    let (api, stub) = api_with(vec![
        Step::Status(500),
        Step::Reply(json!({"kind": "plan", "pieces": []}).to_string()),
    ])
    .await;
    let r = api.ask(json!({"question": UNKNOWN})).await;
    let cid = r.body["clarification_id"].as_str().unwrap().to_owned();
    let bad = api.clarify(own_words(&cid, "the ones that worry me")).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    assert_eq!(bad.body["code"], "invalid_custom_value");
    assert!(
        bad.body["message"].as_str().unwrap().contains("since March"),
        "{}",
        bad.body
    );
    assert_eq!(stub.requests(), 2);
    // A name is never sent.
    let bad = api.clarify(own_words(&cid, "the ones Dr Smith treats")).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    assert_eq!(stub.requests(), 2, "a possible name never leaves the host");
    let ok = api
        .clarify(json!({"clarification_id": cid, "answers": [{"question_id": "unknown:flubbery", "option_id": "ignore"}]}))
        .await;
    assert_eq!(ok.status, StatusCode::OK, "nothing was lost: {}", ok.body);
    api.finish().await;
}

#[tokio::test]
async fn without_a_model_own_words_are_read_by_the_engine_or_refused_with_what_it_accepts() {
    let api = Api::start(TestDb::sqlite().await, test_config()).await;
    let r = api.ask(json!({"question": UNKNOWN})).await;
    assert_engine_question(&r);
    let cid = r.body["clarification_id"].as_str().unwrap().to_owned();
    let bad = api.clarify(own_words(&cid, "the ones that worry me")).await;
    assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
    assert_eq!(bad.body["code"], "invalid_custom_value");
    let msg = bad.body["message"].as_str().unwrap();
    assert!(
        msg.contains("area over 15") && msg.contains("since March"),
        "{msg}"
    );
    assert!(!msg.contains("language model"), "{msg}");

    let back = api.clarify(own_words(&cid, "since March")).await;
    assert_eq!(back.status, StatusCode::ACCEPTED, "{}", back.body);
    let o = first_option(&back);
    assert_eq!(o["id"], "own:words", "{}", back.body);
    assert!(o["label"].as_str().unwrap().contains("March"), "{o}");
    let a = api
        .clarify(json!({"clarification_id": cid, "answers": [{"question_id": "unknown:flubbery", "option_id": "own:words"}]}))
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    assert!(
        !a.body.to_string().contains("\"source\":\"language_model\""),
        "{}",
        a.body
    );
    let sql = a.body["sql"].as_str().unwrap();
    assert!(sql.contains("\"onset_date\" BETWEEN"), "the reading ran: {sql}");
    api.finish().await;
}

#[tokio::test]
async fn the_settings_page_switch_shows_the_endpoint_and_breaker_to_administrators_only() {
    let (api, stub) = api_with(vec![Step::Status(503)]).await;
    let admin = app::backend::AuthUser {
        id: 0,
        username: "root".into(),
        display_name: "Root".into(),
        is_admin: true,
    };
    let clinician = app::backend::AuthUser {
        is_admin: false,
        ..admin.clone()
    };
    let backend = api.state.backend.clone();
    assert!(matches!(
        backend.language_model(&clinician).await,
        Err(app::backend::BackendError {
            code: app::protocol::ErrorCode::Forbidden,
            ..
        })
    ));
    assert!(matches!(
        backend.set_language_model(&clinician, false).await,
        Err(app::backend::BackendError {
            code: app::protocol::ErrorCode::Forbidden,
            ..
        })
    ));
    let s = backend.language_model(&admin).await.unwrap();
    assert!(s.configured && s.enabled && s.key_set, "{s:?}");
    assert_eq!(s.model, "stand-in-7b");
    assert!(s.endpoint.ends_with("/v1/chat/completions"), "{s:?}");
    assert_eq!(s.breaker, "ok");
    assert!(!format!("{s:?}").contains("sk-test-secret"));

    // Three failures: the page shows the breaker paused.
    for _ in 0..3 {
        assert_engine_question(&api.ask(json!({"question": UNKNOWN})).await);
    }
    let s = backend.language_model(&admin).await.unwrap();
    assert_eq!(s.breaker, "paused", "{s:?}");
    assert!(s.paused_for_secs.is_some(), "{s:?}");

    // Switched off from the page: no call, for every replica (it is stored).
    let off = backend.set_language_model(&admin, false).await.unwrap();
    assert!(!off.enabled);
    assert!(!api.state.store.llm_enabled().await.unwrap());
    let on = backend.set_language_model(&admin, true).await.unwrap();
    assert!(on.enabled);
    assert_eq!(stub.requests(), 3);

    // Through the server function, a clinician gets nothing to render (and no error page).
    let r = api
        .raw(
            Some(&api.alice),
            axum::http::Method::POST,
            "/api/language_model",
            "",
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body, Value::Null, "clinicians do not see the section");
    let (root, _) = api
        .state
        .store
        .ensure_user("root", "Root", server::store::Role::Admin, "root-password-1")
        .await
        .unwrap();
    let (_, token) = api
        .state
        .auth
        .create_api_token(root.id, "tests", chrono::Utc::now(), None)
        .await
        .unwrap();
    let r = api
        .raw(Some(&token), axum::http::Method::POST, "/api/language_model", "")
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    assert_eq!(r.body["model"], "stand-in-7b", "{}", r.body);
    assert!(!r.body.to_string().contains("sk-test-secret"));
    let denied = api
        .raw(
            Some(&api.alice),
            axum::http::Method::POST,
            "/api/set_language_model",
            "enabled=on",
        )
        .await;
    assert_eq!(denied.status, StatusCode::FORBIDDEN, "{}", denied.body);
    api.finish().await;
}

/// `server eval --llm`: the same evaluation, with the model consulted where the engine
/// leaves a word unexplained — folded exactly as the server folds it — and its calls
/// reported. The item's gold is the model's reading; without the model it is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn eval_with_the_model_folds_its_reading_and_reports_the_calls() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("clear.toml"),
        format!(
            "[[item]]\nid = 1\nquestion = \"{UNKNOWN}\"\nbehaviour = \"answer\"\nholdout = false\n\
             [item.gold]\nanswer = '''SELECT w.id FROM wounds w WHERE (SELECT a.area_cm2 FROM assessments a \
             WHERE a.wound_id = w.id ORDER BY a.assessed_on DESC, a.id DESC LIMIT 1) > 15'''\n"
        ),
    )
    .unwrap();
    let options = |llm: Option<LlmConfig>| server::eval::EvalOptions {
        set_dir: dir.path().to_path_buf(),
        part: server::eval::PartChoice::Tuned,
        llm,
        ..Default::default()
    };

    let alone = server::eval::run(&options(None)).await.unwrap();
    assert!(alone.model.is_none());
    assert!(
        !alone.outcomes[0].exec_first.as_ref().unwrap().ok(),
        "the engine alone asks about the word: {:?}",
        alone.outcomes[0].exec_first
    );

    let (stub, url) = stand_in(vec![Step::Reply(plan_reply(area_over_15()))]).await;
    let mut llm = LlmConfig::new(&url);
    llm.model = "stand-in-7b".into();
    let with = server::eval::run(&options(Some(llm))).await.unwrap();
    let m = with.model.clone().expect("model figures");
    assert_eq!((m.calls, m.failures, m.used, m.tokens), (1, 0, 1, 812), "{m:?}");
    assert_eq!(stub.requests(), 1, "one call per question, never repeated");
    assert!(
        with.outcomes[0].exec_first.as_ref().unwrap().ok(),
        "the model's reading answers it: {:?}",
        with.outcomes[0].exec_first
    );
    assert!(
        with.to_text(false)
            .contains("language model stand-in-7b: 1 calls")
    );
}
