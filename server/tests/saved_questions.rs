//! Saved questions (F27) through the JSON API and the Saved pages' forms, on SQLite and
//! PostgreSQL: a question that needed a clarification is saved with its answer and run
//! again with exactly that answer — same rows, no round — while asking it afresh still
//! asks; a saved definition that no longer applies (a value gone from the data, a
//! retired verified definition) is shown as such and refused, never run with another
//! cohort; another user's ids are 404; bad names are 400; a narrower clinic scope
//! still applies to a saved question.

mod common;

use axum::http::{Method, StatusCode};
use chrono::Utc;
use common::api::{Api, test_config};
use serde_json::{Value, json};
use server::orchestrator::OrchestratorConfig;
use server::store::{ClinicScope, Role};
use std::time::Duration;

const SERIOUS: &str = "show me serious wounds";

async fn each_backend(config: OrchestratorConfig, test: impl AsyncFn(&Api)) {
    for db in common::all_backends().await {
        let api = Api::start(db, config.clone()).await;
        test(&api).await;
        api.finish().await;
    }
}

/// Asks `question` as `token` and answers every round with the non-default option
/// matching the most records (an answer Clarion would not have guessed); returns the
/// answer.
async fn answered_with_choices(api: &Api, token: &str, question: &str) -> Value {
    let mut r = api
        .call(
            token,
            Method::POST,
            "/api/v1/query",
            Some(json!({"question": question})),
        )
        .await;
    assert_eq!(
        r.status,
        StatusCode::ACCEPTED,
        "{question} should ask first: {}",
        r.body
    );
    while r.status == StatusCode::ACCEPTED {
        let answers: Vec<Value> = r.body["questions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| {
                let opts = q["options"].as_array().unwrap();
                let pick = opts
                    .iter()
                    .filter(|o| o["default"] != true)
                    .max_by_key(|o| o["count"].as_i64().unwrap_or(0))
                    .unwrap_or(&opts[0]);
                json!({"question_id": q["id"], "option_id": pick["id"]})
            })
            .collect();
        r = api
            .call(
                token,
                Method::POST,
                "/api/v1/query/clarify",
                Some(json!({"clarification_id": r.body["clarification_id"], "answers": answers})),
            )
            .await;
    }
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body
}

async fn save(api: &Api, token: &str, history_id: &Value, name: &str) -> (StatusCode, Value) {
    let r = api
        .call(
            token,
            Method::POST,
            "/api/v1/saved",
            Some(json!({"history_id": history_id, "name": name})),
        )
        .await;
    (r.status, r.body)
}

async fn run(api: &Api, token: &str, id: &str) -> (StatusCode, Value) {
    let r = api
        .call(token, Method::POST, &format!("/api/v1/saved/{id}/run"), None)
        .await;
    (r.status, r.body)
}

async fn list(api: &Api, token: &str) -> Vec<Value> {
    let r = api.call(token, Method::GET, "/api/v1/saved", None).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    r.body.as_array().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_question_runs_with_exactly_its_answers_and_never_asks_again() {
    each_backend(test_config(), async |api| {
        let answer = answered_with_choices(api, &api.alice, SERIOUS).await;
        let (status, saved) = save(api, &api.alice, &answer["history_id"], "  Serious, my way ").await;
        assert_eq!(status, StatusCode::CREATED, "{saved}");
        assert_eq!(saved["name"], "Serious, my way");
        assert_eq!(saved["question"], SERIOUS);
        assert_eq!(saved["applies"], true, "{saved}");
        assert!(!saved["chosen"].as_array().unwrap().is_empty(), "{saved}");
        let id = saved["id"].as_str().unwrap().to_owned();

        // Listed, newest first, only for its owner.
        let mine = list(api, &api.alice).await;
        assert_eq!(mine.len(), 1);
        assert_eq!(mine[0]["id"], id.as_str());
        assert!(list(api, &api.bob).await.is_empty());

        // Asked afresh, the question still asks...
        let afresh = api.ask(json!({"question": SERIOUS})).await;
        assert_eq!(afresh.status, StatusCode::ACCEPTED);
        // ...but run from the saved list it is answered at once, with the same rows and
        // the same SQL, in a new thread, without a clarification round.
        let (status, rerun) = run(api, &api.alice, &id).await;
        assert_eq!(status, StatusCode::OK, "{rerun}");
        assert_eq!(rerun["status"], "answered");
        assert_eq!(rerun["rounds"], 0);
        assert_eq!(rerun["table"], answer["table"], "same rows as when it was saved");
        assert_eq!(rerun["sql"], answer["sql"]);
        assert!(
            rerun["open_questions"].as_array().is_none_or(|q| q.is_empty()),
            "{rerun}"
        );
        assert_ne!(rerun["thread_id"], answer["thread_id"]);
        let thread = api
            .call(
                &api.alice,
                Method::GET,
                &format!("/api/v1/threads/{}", rerun["thread_id"].as_str().unwrap()),
                None,
            )
            .await;
        assert!(
            thread.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .all(|m| m["kind"] != "clarification"),
            "{}",
            thread.body
        );
        let after = list(api, &api.alice).await;
        assert_eq!(after[0]["run_count"], 1);
        assert!(after[0]["last_run_at"].is_string());

        // Rename and delete.
        let r = api
            .call(
                &api.alice,
                Method::PATCH,
                &format!("/api/v1/saved/{id}"),
                Some(json!({"name": "Infected"})),
            )
            .await;
        assert_eq!(
            (r.status, r.body["name"].clone()),
            (StatusCode::OK, json!("Infected"))
        );
        let r = api
            .call(&api.alice, Method::DELETE, &format!("/api/v1/saved/{id}"), None)
            .await;
        assert_eq!(r.status, StatusCode::NO_CONTENT);
        assert!(list(api, &api.alice).await.is_empty());
        assert_eq!(run(api, &api.alice, &id).await.0, StatusCode::NOT_FOUND);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_users_ids_are_not_found_and_bad_names_are_400_never_500() {
    each_backend(test_config(), async |api| {
        let answer = answered_with_choices(api, &api.alice, SERIOUS).await;
        let (_, saved) = save(api, &api.alice, &answer["history_id"], "Mine").await;
        let id = saved["id"].as_str().unwrap();

        // Bob can neither save Alice's answer nor touch her saved question.
        assert_eq!(
            save(api, &api.bob, &answer["history_id"], "Theirs").await.0,
            StatusCode::NOT_FOUND
        );
        assert_eq!(run(api, &api.bob, id).await.0, StatusCode::NOT_FOUND);
        for (method, body) in [
            (Method::PATCH, Some(json!({"name": "stolen"}))),
            (Method::DELETE, None),
        ] {
            let r = api
                .call(&api.bob, method, &format!("/api/v1/saved/{id}"), body)
                .await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{}", r.body);
            assert_eq!(r.body["code"], "not_found");
        }
        // Junk ids are 404 too, without a query.
        for junk in ["1", "..%2f..%2fetc", &"Z".repeat(32), &"a".repeat(400)] {
            assert_eq!(
                run(api, &api.alice, junk).await.0,
                StatusCode::NOT_FOUND,
                "{junk}"
            );
        }
        assert_eq!(
            save(api, &api.alice, &json!("nope"), "x").await.0,
            StatusCode::NOT_FOUND
        );

        // Names: empty, blank, too long → 400 bad_name; hostile text is data.
        for bad in ["", "   ", "\u{0}\u{7}", &"n".repeat(121)] {
            let (status, body) = save(api, &api.alice, &answer["history_id"], bad).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{bad:?}: {body}");
            assert_eq!(body["code"], "bad_name");
            let r = api
                .call(
                    &api.alice,
                    Method::PATCH,
                    &format!("/api/v1/saved/{id}"),
                    Some(json!({"name": bad})),
                )
                .await;
            assert_eq!(r.body["code"], "bad_name", "{bad:?}");
        }
        let hostile = "<script>alert(1)</script>'; DROP TABLE saved_questions;--\u{0}";
        let (status, body) = save(api, &api.alice, &answer["history_id"], hostile).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(
            body["name"],
            "<script>alert(1)</script>'; DROP TABLE saved_questions;--"
        );
        // Missing or unknown fields are 400.
        let r = api
            .call(
                &api.alice,
                Method::POST,
                "/api/v1/saved",
                Some(json!({"history_id": answer["history_id"]})),
            )
            .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);
        let r = api
            .call(
                &api.alice,
                Method::POST,
                "/api/v1/saved",
                Some(json!({"history_id": answer["history_id"], "name": "x", "sql": "DROP"})),
            )
            .await;
        assert_eq!(r.status, StatusCode::BAD_REQUEST, "{}", r.body);

        // The page shows the hostile name as text.
        let (status, html, _) = api.page(&api.alice, Method::GET, "/saved", None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"), "escaped");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_saved_question_run_by_a_narrower_scope_covers_only_that_scope() {
    each_backend(test_config(), async |api| {
        let answer = answered_with_choices(api, &api.alice, SERIOUS).await;
        let (_, saved) = save(api, &api.alice, &answer["history_id"], "Serious").await;
        let id = saved["id"].as_str().unwrap();
        let (_, all) = run(api, &api.alice, id).await;
        assert!(all["table"]["row_count"].as_i64().unwrap() > 1, "{all}");
        assert!(
            all["assumptions"]
                .as_array()
                .unwrap()
                .iter()
                .all(|a| a["piece"] != "clinics")
        );

        api.state
            .store
            .set_clinic_scope(api.alice_id, &ClinicScope::clinics([2]))
            .await
            .unwrap();
        let (status, scoped) = run(api, &api.alice, id).await;
        assert_eq!(status, StatusCode::OK, "{scoped}");
        assert_eq!(scoped["rounds"], 0);
        assert!(
            scoped["assumptions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|a| a["piece"] == "clinics"),
            "the scope badge: {}",
            scoped["assumptions"]
        );
        assert!(
            scoped["sql"].as_str().unwrap().len() > all["sql"].as_str().unwrap().len(),
            "the scope is in the statement"
        );
        let n = |a: &Value| a["table"]["row_count"].as_i64().unwrap();
        assert!(n(&scoped) < n(&all), "{} of {}", n(&scoped), n(&all));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_value_gone_from_the_data_makes_a_saved_question_no_longer_apply_and_it_is_not_run() {
    let mut config = test_config();
    config.allowed_values.ttl = Duration::from_millis(1);
    each_backend(config, async |api| {
        // "Rvrside" is not a name Clarion knows: it asks which clinic; the answer is saved.
        let mut r = api.ask(json!({"question": "open wounds at Rvrside"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
        let q = r.body["questions"][0].clone();
        let clinic = q["options"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"].as_str().unwrap().contains("Riverside"))
            .unwrap_or_else(|| panic!("{q}"))["id"]
            .clone();
        r = api
            .clarify(json!({"clarification_id": r.body["clarification_id"], "answers": [{"question_id": q["id"], "option_id": clinic}]}))
            .await;
        // any further round: best guesses
        while r.status == StatusCode::ACCEPTED {
            let answers: Vec<Value> = r.body["questions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|q| json!({"question_id": q["id"], "dont_know": true}))
                .collect();
            r = api
                .clarify(json!({"clarification_id": r.body["clarification_id"], "answers": answers}))
                .await;
        }
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        let (_, saved) = save(api, &api.alice, &r.body["history_id"], "Riverside open wounds").await;
        let id = saved["id"].as_str().unwrap().to_owned();
        assert_eq!(saved["applies"], true, "{saved}");
        assert_eq!(run(api, &api.alice, &id).await.0, StatusCode::OK);

        // The clinic is renamed in the clinical data: the saved choice names nothing now.
        let sql = "UPDATE clinics SET name = 'Lakeside Wound Centre' WHERE name LIKE 'Riverside%'";
        match &api.db.db {
            server::db::Database::Sqlite(p) => sqlx::query(sql).execute(p).await.map(|_| ()),
            server::db::Database::Postgres(p) => sqlx::query(sql).execute(p).await.map(|_| ()),
        }
        .unwrap();
        // (the allowed values refresh in the background once their time is up)
        let mut stale = None;
        for _ in 0..50 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            let l = list(api, &api.alice).await;
            if l[0]["applies"] == false {
                stale = Some(l[0].clone());
                break;
            }
        }
        let stale = stale.expect("the saved question should no longer apply once the value is gone");
        let changes = stale["changes"].as_array().unwrap();
        assert!(!changes.is_empty());
        assert!(
            changes.iter().any(|c| c.as_str().unwrap().contains("Riverside")),
            "says which choice: {changes:?}"
        );

        let history_before = api.state.store.history(api.alice_id, 1000).await.unwrap().len();
        let (status, body) = run(api, &api.alice, &id).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["code"], "no_longer_applies");
        assert!(body["message"].as_str().unwrap().contains("afresh"), "{body}");
        assert_eq!(
            api.state.store.history(api.alice_id, 1000).await.unwrap().len(),
            history_before,
            "nothing ran"
        );

        // History's re-run of the same answer is refused the same way, not run with
        // another cohort (the History page shows its "can no longer be answered" note).
        let hid = r.body["history_id"].as_str().unwrap();
        let (status, _, location) = api
            .page(&api.alice, Method::POST, "/history/rerun", Some(&format!("history_id={hid}")))
            .await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert_eq!(location.as_deref(), Some("/history?rerun_error=unanswerable"));

        // The page says so and offers to ask afresh instead of running it.
        let (_, html, _) = api.page(&api.alice, Method::GET, "/saved", None).await;
        assert!(html.contains("No longer applies"), "{html}");
        assert!(html.contains("Ask afresh"));
        let (status, _, location) = api
            .page(&api.alice, Method::POST, "/saved/action", Some(&format!("action=run&id={id}")))
            .await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert_eq!(location.as_deref(), Some("/saved?done=stale"));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retired_verified_definition_makes_a_saved_question_no_longer_apply() {
    each_backend(test_config(), async |api| {
        let (admin, _) = api
            .state
            .store
            .ensure_user("root", "Alex Morgan", Role::Admin, "a-password-123")
            .await
            .unwrap();
        let (_, root) = api
            .state
            .auth
            .create_api_token(admin.id, "tests", Utc::now(), None)
            .await
            .unwrap();
        let admins = answered_with_choices(api, &root, SERIOUS).await;
        let v = api
            .call(
                &root,
                Method::POST,
                "/api/v1/admin/verified",
                Some(json!({"history_id": admins["history_id"], "name": "Serious wounds", "phrasings": ["serious wound list"]})),
            )
            .await;
        assert_eq!(v.status, StatusCode::CREATED, "{}", v.body);

        // Alice's phrasing is answered by the verified definition; she saves that answer.
        let mine = api.ask(json!({"question": "serious wound list"})).await;
        assert_eq!(mine.status, StatusCode::OK, "{}", mine.body);
        assert!(mine.body["verified"].is_string());
        let (_, saved) = save(api, &api.alice, &mine.body["history_id"], "Serious (verified)").await;
        assert_eq!(saved["applies"], true, "{saved}");
        assert!(saved["verified"].as_str().unwrap().contains("Serious wounds"));
        let id = saved["id"].as_str().unwrap();
        let (status, rerun) = run(api, &api.alice, id).await;
        assert_eq!(status, StatusCode::OK, "{rerun}");
        assert!(rerun["verified"].is_string(), "answered by the same definition: {rerun}");
        assert_eq!(rerun["table"], mine.body["table"]);

        // Retired: the saved question says so and is not run with another reading.
        let r = api
            .call(&root, Method::DELETE, &format!("/api/v1/admin/verified/{}", v.body["id"]), None)
            .await;
        assert_eq!(r.status, StatusCode::NO_CONTENT);
        let l = list(api, &api.alice).await;
        assert_eq!(l[0]["applies"], false, "{}", l[0]);
        assert!(l[0]["changes"][0].as_str().unwrap().contains("retired"), "{}", l[0]);
        let (status, body) = run(api, &api.alice, id).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert_eq!(body["code"], "no_longer_applies");
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_save_form_and_the_saved_page_work_as_plain_form_posts() {
    each_backend(test_config(), async |api| {
        let answer = answered_with_choices(api, &api.alice, SERIOUS).await;
        let hid = answer["history_id"].as_str().unwrap();
        let (status, html, _) = api
            .page(
                &api.alice,
                Method::GET,
                &format!("/saved/new?history={hid}"),
                None,
            )
            .await;
        assert_eq!(status, StatusCode::OK);
        assert!(html.contains("Save question") && html.contains(SERIOUS), "{html}");
        // Someone else's answer cannot be offered for saving.
        let (_, html_bob, _) = api
            .page(&api.bob, Method::GET, &format!("/saved/new?history={hid}"), None)
            .await;
        assert!(!html_bob.contains("name=\"history_id\""), "{html_bob}");

        let form = |body: String| async move {
            let (status, _, location) = api
                .page(&api.alice, Method::POST, "/saved/action", Some(&body))
                .await;
            assert_eq!(status, StatusCode::SEE_OTHER);
            location.unwrap_or_default()
        };
        assert_eq!(
            form(format!("action=save&history_id={hid}&name=")).await,
            format!("/saved/new?history={hid}&error=bad_name")
        );
        assert_eq!(
            form(format!("action=save&history_id={hid}&name=Serious+mine")).await,
            "/saved?done=saved"
        );
        assert_eq!(
            form("action=save&history_id=%3Cscript%3E&name=x".into()).await,
            "/saved?done=missing"
        );
        let id = list(api, &api.alice).await[0]["id"].as_str().unwrap().to_owned();
        let (_, html, _) = api.page(&api.alice, Method::GET, "/saved?done=saved", None).await;
        assert!(html.contains("Serious mine") && html.contains("data-testid=\"saved-notice\""));
        assert!(html.contains("href=\"/saved\""), "the navigation links the page");

        let to_thread = form(format!("action=run&id={id}")).await;
        assert!(to_thread.starts_with("/threads/"), "{to_thread}");
        assert_eq!(
            form(format!("action=rename&id={id}&name=Renamed")).await,
            "/saved?done=renamed"
        );
        assert_eq!(list(api, &api.alice).await[0]["name"], "Renamed");
        assert_eq!(
            form(format!("action=rename&id={id}&name=+")).await,
            "/saved?done=bad_name"
        );
        assert_eq!(form("action=run&id=nope".into()).await, "/saved?done=missing");
        assert_eq!(form("action=explode".into()).await, "/saved?done=failed");
        assert_eq!(
            form(format!("action=delete&id={id}")).await,
            "/saved?done=deleted"
        );
        assert!(list(api, &api.alice).await.is_empty());
    })
    .await;
}
