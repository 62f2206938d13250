//! Rounds live in the database, not in a server's memory: a round started on one
//! replica is answered on another, and when the first replica goes away the second
//! still serves every pending round. Replicas here are independent routers with their
//! own pools and orchestrators in one test process (not separate OS processes), on one
//! PostgreSQL database (and on SQLite, which shares the file).

mod common;

use axum::http::{Method, StatusCode};
use common::api::{Api, test_config};
use serde_json::json;

#[tokio::test]
async fn a_round_started_on_one_replica_is_answered_on_another_even_after_the_first_is_gone() {
    for db in common::all_backends().await {
        let api = Api::start(db, test_config()).await;
        let a = api.replica(test_config()).await;
        let b = api.replica(test_config()).await;
        let ask = json!({"question": "show me serious wounds"});
        let mut pending = Vec::new();
        for _ in 0..3 {
            let r = api
                .send_to(&a, &api.alice, Method::POST, "/api/v1/query", ask.clone())
                .await;
            assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
            pending.push(r.body["clarification_id"].clone());
        }
        // one answered on the other replica while both run
        let answer = |id: &serde_json::Value| json!({"clarification_id": id, "answers": [{"question_id": "term:serious@wounds", "option_id": "infected"}]});
        let r = api
            .send_to(
                &b,
                &api.alice,
                Method::POST,
                "/api/v1/query/clarify",
                answer(&pending[0]),
            )
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        // the first replica sees it answered
        let again = api
            .send_to(
                &a,
                &api.alice,
                Method::POST,
                "/api/v1/query/clarify",
                answer(&pending[0]),
            )
            .await;
        assert_eq!(again.status, StatusCode::CONFLICT);
        // replica A goes away; B serves every round A left pending
        drop(a);
        for id in &pending[1..] {
            let r = api
                .send_to(&b, &api.alice, Method::POST, "/api/v1/query/clarify", answer(id))
                .await;
            assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        }
        api.finish().await;
    }
}
