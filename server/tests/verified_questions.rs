//! Verified questions through the JSON API (issue 16, part 2), on SQLite and
//! PostgreSQL: an administrator answers a question that needs a clarification, verifies
//! it with a name and a phrasing; then a clinician asking it (or the phrasing) gets the
//! administrator's definition at once, with the badge and no round, and a scoped
//! clinician gets it limited to her clinic. Editing, retiring and the refusals.

mod common;

use axum::http::{Method, StatusCode};
use chrono::Utc;
use common::api::{Api, test_config};
use serde_json::{Value, json};
use server::dataset::{self, GenConfig, OnExisting};
use server::store::{ClinicScope, Role};

const SERIOUS: &str = "show me serious wounds";

async fn token(api: &Api, username: &str, role: Role) -> (i64, String) {
    let (u, _) = api
        .state
        .store
        .ensure_user(username, &format!("{username} name"), role, "a-password-123")
        .await
        .unwrap();
    let (_, t) = api
        .state
        .auth
        .create_api_token(u.id, "tests", Utc::now(), None)
        .await
        .unwrap();
    (u.id, t)
}

async fn ask(api: &Api, token: &str, question: &str) -> (StatusCode, Value) {
    let r = api
        .call(
            token,
            Method::POST,
            "/api/v1/query",
            Some(json!({"question": question})),
        )
        .await;
    (r.status, r.body)
}

fn ids(a: &Value) -> Vec<i64> {
    a["table"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[0].as_i64().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_verified_question_answers_everyone_at_once_with_its_definition_and_their_scope() {
    for db in common::all_backends().await {
        dataset::seed(
            &db.db,
            &GenConfig::new(5, dataset::DEFAULT_SEED),
            OnExisting::Refuse,
        )
        .await
        .expect("seed");
        let api = Api::over(db, test_config()).await;
        let (_, root) = token(&api, "root", Role::Admin).await;
        let (_, carol) = token(&api, "carol", Role::Clinician).await;
        api.state
            .store
            .set_clinic_scope(api.alice_id, &ClinicScope::clinics([1]))
            .await
            .unwrap();

        // The administrator answers every round with a choice that is not the default.
        let (mut status, mut body) = ask(&api, &root, SERIOUS).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let mut chosen = Vec::new();
        while status == StatusCode::ACCEPTED {
            let answers: Vec<Value> = body["questions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|q| {
                    let opts = q["options"].as_array().unwrap();
                    // the non-default option matching the most records
                    let pick = opts
                        .iter()
                        .filter(|o| o["default"] != true)
                        .max_by_key(|o| o["count"].as_i64().unwrap_or(0))
                        .unwrap_or(&opts[0]);
                    chosen.push(pick["label"].clone());
                    json!({"question_id": q["id"], "option_id": pick["id"]})
                })
                .collect();
            let r = api
                .call(
                    &root,
                    Method::POST,
                    "/api/v1/query/clarify",
                    Some(json!({"clarification_id": body["clarification_id"], "answers": answers})),
                )
                .await;
            (status, body) = (r.status, r.body);
        }
        assert_eq!(status, StatusCode::OK, "{body}");
        let admins = body.clone();
        assert!(admins["verified"].is_null());
        assert!(!chosen.is_empty());
        assert!(
            admins["table"]["row_count"].as_i64().unwrap() > 0,
            "{chosen:?}: {}",
            admins["restatement"]
        );

        // A clinician cannot verify; the administrator can, with a phrasing.
        let req = json!({"history_id": admins["history_id"], "name": "Serious wounds", "phrasings": ["Serious wound list?"]});
        let refused = api
            .call(&carol, Method::POST, "/api/v1/admin/verified", Some(req.clone()))
            .await;
        assert_eq!(refused.status, StatusCode::FORBIDDEN);
        let made = api
            .call(&root, Method::POST, "/api/v1/admin/verified", Some(req))
            .await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
        assert_eq!(
            made.body["phrasings"],
            json!(["show me serious wounds", "serious wound list"])
        );
        let id = made.body["id"].as_i64().unwrap();

        // Carol gets it at once (no round), with the badge and the administrator's rows.
        for q in [SERIOUS, "serious wound list", "  SHOW me serious wounds!"] {
            let (status, a) = ask(&api, &carol, q).await;
            assert_eq!(status, StatusCode::OK, "{q}: {a}");
            assert_eq!(a["verified"], "Verified by root name · Serious wounds", "{q}");
            assert_eq!(a["table"]["rows"], admins["table"]["rows"], "{q}");
            assert_eq!(a["open_questions"], json!([]));
        }
        // Alice (clinic 1 only) gets the definition within her scope.
        let (status, a) = ask(&api, &api.alice, SERIOUS).await;
        assert_eq!(status, StatusCode::OK, "{a}");
        assert!(a["verified"].is_string());
        let all = ids(&admins);
        let hers = ids(&a);
        assert!(
            !hers.is_empty() && hers.len() < all.len(),
            "{} of {}",
            hers.len(),
            all.len()
        );
        for w in hers {
            assert!(all.contains(&w));
            let (clinic,): (i64,) = match api.state.store.database() {
                server::db::Database::Sqlite(p) => {
                    sqlx::query_as("SELECT clinic_id FROM wounds WHERE id = $1")
                        .bind(w)
                        .fetch_one(p)
                        .await
                        .unwrap()
                }
                server::db::Database::Postgres(p) => {
                    sqlx::query_as("SELECT clinic_id FROM wounds WHERE id = $1")
                        .bind(w)
                        .fetch_one(p)
                        .await
                        .unwrap()
                }
            };
            assert_eq!(clinic, 1, "wound {w}");
        }

        // Listed for everyone, with its use count; renamed; retired.
        let list = api.call(&carol, Method::GET, "/api/v1/verified", None).await;
        assert_eq!(list.status, StatusCode::OK);
        assert_eq!(list.body[0]["name"], "Serious wounds");
        assert_eq!(list.body[0]["use_count"], 4);
        let path = format!("/api/v1/admin/verified/{id}");
        let edited = api
            .call(
                &root,
                Method::PUT,
                &path,
                Some(json!({"name": "Serious", "phrasings": ["grave wounds"]})),
            )
            .await;
        assert_eq!(edited.status, StatusCode::OK, "{}", edited.body);
        assert_eq!(
            edited.body["phrasings"],
            json!(["show me serious wounds", "grave wounds"])
        );
        let (status, _) = ask(&api, &carol, "serious wound list").await;
        assert_ne!(status, StatusCode::OK, "the old phrasing no longer matches");
        let bad = api
            .call(&root, Method::PUT, &path, Some(json!({"name": " "})))
            .await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST);
        assert_eq!(
            api.call(&root, Method::DELETE, &path, None).await.status,
            StatusCode::NO_CONTENT
        );
        assert_eq!(
            api.call(&root, Method::DELETE, &path, None).await.status,
            StatusCode::NOT_FOUND
        );
        let (status, a) = ask(&api, &carol, SERIOUS).await;
        assert_eq!(status, StatusCode::ACCEPTED, "retired: asked again: {a}");

        // An administrator verifies another user's answer (carol's), as carol asked it;
        // a clinician cannot, not even her own; an unknown answer is 404.
        let (status, hers) = ask(&api, &carol, "how many open wounds").await;
        assert_eq!(status, StatusCode::OK, "{hers}");
        let req = json!({"history_id": hers["history_id"], "name": "Open wounds"});
        assert_eq!(
            api.call(&carol, Method::POST, "/api/v1/admin/verified", Some(req.clone()))
                .await
                .status,
            StatusCode::FORBIDDEN
        );
        let other = api
            .call(&root, Method::POST, "/api/v1/admin/verified", Some(req))
            .await;
        assert_eq!(other.status, StatusCode::CREATED, "{}", other.body);
        assert_eq!(other.body["question"], "how many open wounds");
        assert_eq!(other.body["verified_by"], "root name");
        let (status, a) = ask(&api, &api.bob, "how many open wounds").await;
        assert_eq!(status, StatusCode::OK, "{a}");
        assert_eq!(a["verified"], "Verified by root name · Open wounds");
        assert_eq!(a["table"]["rows"], hers["table"]["rows"]);
        let none = api
            .call(
                &root,
                Method::POST,
                "/api/v1/admin/verified",
                Some(json!({"history_id": "0123456789abcdef0123456789abcdef", "name": "x"})),
            )
            .await;
        assert_eq!(none.status, StatusCode::NOT_FOUND, "{}", none.body);
        api.finish().await;
    }
}

#[tokio::test]
async fn a_question_read_into_a_verified_plan_is_answered_by_it() {
    let api = Api::start(common::TestDb::sqlite().await, test_config()).await;
    let (_, root) = token(&api, "root", Role::Admin).await;
    let (status, open) = ask(&api, &root, "how many open wounds").await;
    assert_eq!(status, StatusCode::OK);
    let made = api
        .call(
            &root,
            Method::POST,
            "/api/v1/admin/verified",
            Some(json!({"history_id": open["history_id"], "name": "Open wounds"})),
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.body);
    let (status, a) = ask(&api, &api.bob, "count of open wounds").await;
    assert_eq!(status, StatusCode::OK, "{a}");
    assert_eq!(
        a["verified"], "Verified by root name · Open wounds",
        "{}",
        a["restatement"]
    );
    assert_eq!(a["table"]["rows"], open["table"]["rows"]);
    let (_, other) = ask(&api, &api.bob, "how many healed wounds").await;
    assert!(other["verified"].is_null(), "a different plan is not verified");
    // The Glossary lists it.
    let bob = app::backend::AuthUser {
        id: api.alice_id,
        username: "alice".into(),
        display_name: "Alice".into(),
        is_admin: false,
    };
    let g = api.state.backend.glossary(&bob).await.unwrap();
    assert_eq!(
        g.verified,
        vec![(
            "Open wounds".to_owned(),
            "how many open wounds".to_owned(),
            "Verified by root name".to_owned()
        )]
    );
    api.finish().await;
}

#[tokio::test]
async fn the_verified_page_verifies_an_answer_edits_its_phrasings_and_retires_it() {
    let api = Api::start(common::TestDb::sqlite().await, test_config()).await;
    let (_, root) = token(&api, "root", Role::Admin).await;
    let (_, open) = ask(&api, &root, "how many open wounds").await;
    assert_eq!(
        api.page(&api.bob, Method::GET, "/admin/verified", None).await.0,
        StatusCode::FORBIDDEN
    );
    // another user's answer is offered too, with who asked it
    let (status, bobs) = ask(&api, &api.bob, "how many healed wounds").await;
    assert_eq!(status, StatusCode::OK, "{bobs}");
    let (status, html, _) = api.page(&root, Method::GET, "/admin/verified", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("Verify “how many open wounds”"), "{html}");
    assert!(html.contains("Verify “how many healed wounds”"), "{html}");
    assert!(
        html.contains("asked by Bob") && html.contains("asked by root name"),
        "{html}"
    );
    let form = format!(
        "action=verify&history_id={}&name=Healed",
        bobs["history_id"].as_str().unwrap()
    );
    let (status, _, location) = api
        .page(&root, Method::POST, "/admin/verified", Some(&form))
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(location.as_deref(), Some("/admin/verified?done=verified"));
    let healed = api.state.orchestrator.verified_questions().await.unwrap();
    assert_eq!(healed.len(), 1);
    assert_eq!(healed[0].question, "how many healed wounds");
    api.state
        .orchestrator
        .retire_verified(healed[0].id)
        .await
        .unwrap();
    let hid = open["history_id"].as_str().unwrap();
    let form = format!(
        "action=verify&history_id={hid}&name=Open+%3Cwounds%3E&phrasings=open+wound+count%0Aopen+ones"
    );
    let (status, _, location) = api
        .page(&root, Method::POST, "/admin/verified", Some(&form))
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(location.as_deref(), Some("/admin/verified?done=verified"));
    let (_, html, _) = api
        .page(&root, Method::GET, "/admin/verified?done=verified", None)
        .await;
    assert!(
        html.contains("Open &lt;wounds&gt;") && !html.contains("Open <wounds>"),
        "escaped"
    );
    assert!(html.contains("open wound count\nopen ones"));
    let (status, a) = ask(&api, &api.bob, "Open wound count").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(a["verified"], "Verified by root name · Open <wounds>");
    let id = api.state.orchestrator.verified_questions().await.unwrap()[0].id;
    let (_, _, location) = api
        .page(
            &root,
            Method::POST,
            "/admin/verified",
            Some(&format!("action=edit&id={id}&name=Open&phrasings=")),
        )
        .await;
    assert_eq!(location.as_deref(), Some("/admin/verified?done=saved"));
    let (_, _, location) = api
        .page(
            &root,
            Method::POST,
            "/admin/verified",
            Some(&format!("action=edit&id={id}&name=&phrasings=")),
        )
        .await;
    assert_eq!(location.as_deref(), Some("/admin/verified?done=bad"));
    let (_, _, location) = api
        .page(
            &root,
            Method::POST,
            "/admin/verified",
            Some(&format!("action=retire&id={id}")),
        )
        .await;
    assert_eq!(location.as_deref(), Some("/admin/verified?done=retired"));
    assert!(
        api.state
            .orchestrator
            .verified_questions()
            .await
            .unwrap()
            .is_empty()
    );
    let (_, _, location) = api
        .page(
            &root,
            Method::POST,
            "/admin/verified",
            Some(&format!("action=retire&id={id}")),
        )
        .await;
    assert_eq!(location.as_deref(), Some("/admin/verified?done=missing"));
    api.finish().await;
}
