//! The whole clarification loop over HTTP, through the real router, on SQLite and (when
//! reachable) PostgreSQL: ask → 202 with counts → clarify → 200; loop prevention;
//! "I don't know"; custom values; remembered and learned preferences; expiry, foreign
//! and repeated answers; skip-clarifications and non-interactive mode; bad and hostile
//! input; the audit log.

mod common;

use axum::http::{Method, StatusCode};
use common::api::{Api, Reply, test_config};
use serde_json::{Value, json};
use server::orchestrator::OrchestratorConfig;
use std::time::Duration;

async fn each_backend(config: OrchestratorConfig, test: impl AsyncFn(&Api)) {
    for db in common::all_backends().await {
        let api = Api::start(db, config.clone()).await;
        test(&api).await;
        api.finish().await;
    }
}

fn status(r: &Reply) -> &str {
    r.body["status"].as_str().unwrap_or("")
}

fn question<'a>(round: &'a Value, id: &str) -> &'a Value {
    round["questions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["id"] == id)
        .unwrap_or_else(|| panic!("no question {id} in {round}"))
}

fn assumption<'a>(answer: &'a Value, ambiguity: &str) -> Option<&'a Value> {
    answer["assumptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["ambiguity_id"] == ambiguity)
}

async fn set_settings(api: &Api, token: &str, skip: bool, sensitivity: &str) {
    let r = api
        .call(
            token,
            Method::PUT,
            "/api/v1/settings",
            Some(json!({"skip_clarifications": skip, "sensitivity": sensitivity})),
        )
        .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.body);
}

const SERIOUS: &str = "term:serious@wounds";

#[tokio::test]
async fn a_clear_question_is_answered_with_rows_sql_and_measured_thinking() {
    each_backend(test_config(), async |api| {
        let r = api
            .ask(json!({"question": "how many open wounds by clinic"}))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(status(&r), "answered");
        let a = &r.body;
        assert!(a["table"]["row_count"].as_u64().unwrap() > 0, "{a}");
        assert_eq!(
            a["table"]["rows"].as_array().unwrap().len() as u64,
            a["table"]["row_count"].as_u64().unwrap()
        );
        assert!(
            a["sql"].as_str().unwrap().starts_with("SELECT")
                || a["sql"].as_str().unwrap().starts_with("WITH")
        );
        assert!(
            !a["sql"].as_str().unwrap().contains("'open'"),
            "values are bound, never inlined"
        );
        assert!(a["param_count"].as_u64().unwrap() >= 1);
        assert!(
            a["restatement"].as_str().unwrap().contains("by clinic"),
            "{}",
            a["restatement"]
        );
        let measured: Vec<&Value> = a["thinking"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["duration_ms"].is_number())
            .collect();
        assert!(measured.len() >= 3, "measured steps: {:?}", a["thinking"]);
        assert!(measured.iter().any(|s| s["name"] == "Ran the query"));
        // the thread holds the question and the answer
        let thread_path = format!("/api/v1/threads/{}", a["thread_id"].as_str().unwrap());
        let t = api.call(&api.alice, Method::GET, &thread_path, None).await;
        assert_eq!(t.status, StatusCode::OK);
        let kinds: Vec<&str> = t.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["kind"].as_str().unwrap())
            .collect();
        assert_eq!(kinds, ["question", "answer"]);
        // and the history lists it
        let h = api.call(&api.alice, Method::GET, "/api/v1/history", None).await;
        assert_eq!(h.body[0]["id"], a["history_id"]);
        // its rows can be computed again (a POST: it runs a query), adding nothing to the thread
        let rows_path = format!("/api/v1/history/{}/rows", a["history_id"].as_str().unwrap());
        let again = api.call(&api.alice, Method::POST, &rows_path, None).await;
        assert_eq!(again.status, StatusCode::OK, "{}", again.body);
        assert_eq!(again.body, a["table"], "the same rows as the answer");
        let h2 = api.call(&api.alice, Method::GET, "/api/v1/history", None).await;
        assert_eq!(
            h2.body.as_array().unwrap().len(),
            h.body.as_array().unwrap().len()
        );
        let t2 = api.call(&api.alice, Method::GET, &thread_path, None).await;
        assert_eq!(
            t2.body["messages"].as_array().unwrap().len(),
            2,
            "nothing added to the thread"
        );
        // coded values read as the model's labels
        let by = api
            .ask(json!({"question": "how many open wounds by etiology"}))
            .await;
        assert_eq!(by.status, StatusCode::OK, "{}", by.body);
        let groups: Vec<&str> = by.body["table"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|r| r[0].as_str())
            .collect();
        assert!(groups.contains(&"Venous leg ulcer"), "{groups:?}");
        assert!(
            !groups.iter().any(|g| g.contains('_')),
            "no raw codes: {groups:?}"
        );
        // another user's, unknown and malformed ids all look the same
        let foreign = api.call(&api.bob, Method::POST, &rows_path, None).await;
        assert_eq!(foreign.status, StatusCode::NOT_FOUND, "{}", foreign.body);
        for bad in [
            "/api/v1/history/0123456789abcdef0123456789abcdef/rows",
            "/api/v1/history/'%3B%20DROP%20TABLE%20users%3B--/rows",
        ] {
            let r = api.call(&api.alice, Method::POST, bad, None).await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{bad}: {}", r.body);
            assert!(r.body["code"].is_string(), "a JSON error: {}", r.body);
        }
    })
    .await;
}

#[tokio::test]
async fn an_ambiguous_question_gets_one_round_with_counts_and_the_chosen_count_is_the_answer() {
    each_backend(test_config(), async |api| {
        let r = api.ask(json!({"question": "show me serious wounds"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
        assert_eq!(status(&r), "needs_clarification");
        assert_eq!(r.body["round"], 1);
        assert!(!r.body["understood_so_far"].as_str().unwrap().is_empty());
        let q = question(&r.body, SERIOUS);
        let options = q["options"].as_array().unwrap();
        assert_eq!(options.iter().filter(|o| o["default"] == true).count(), 1, "one best guess preselected");
        assert!(options.iter().all(|o| o["count"].is_i64()), "every option has a count: {options:?}");
        let infected = options.iter().find(|o| o["id"] == "infected").unwrap();
        let shown = infected["count"].as_i64().unwrap();
        let counted = r.body["thinking"].as_array().unwrap().iter().any(|s| s["name"] == "Counted the records each option matches" && s["duration_ms"].is_number());
        assert!(counted, "{:?}", r.body["thinking"]);

        let a = api
            .clarify(json!({"clarification_id": r.body["clarification_id"], "answers": [{"question_id": SERIOUS, "option_id": "infected"}]}))
            .await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        assert_eq!(a.body["rounds"], 1);
        assert_eq!(a.body["table"]["truncated"], false);
        assert_eq!(a.body["table"]["row_count"].as_i64().unwrap(), shown, "the preview counted the answer's rows");
        let chosen = assumption(&a.body, SERIOUS).expect("the answered question is a badge");
        assert_eq!(chosen["source"], "chosen", "answered, not assumed: {chosen}");
        assert_eq!(a.body["thread_id"], r.body["thread_id"]);
    })
    .await;
}

#[tokio::test]
async fn each_question_says_its_priority_and_each_assumption_its_confidence_and_why() {
    each_backend(test_config(), async |api| {
        // "serious" changes the cohort: critical, and the best guess is far from sure.
        let r = api.ask(json!({"question": "show me serious wounds"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
        let q = question(&r.body, SERIOUS);
        assert_eq!(q["priority"], "critical", "{q}");
        let c = q["confidence"].as_f64().expect("confidence");
        assert!(c > 0.0 && c < 0.6, "a critical best guess is not confident: {c}");

        // "large" decides the cohort too, but it is not critical: asked at the
        // balanced sensitivity as an important question.
        let r = api.ask(json!({"question": "patients with large wounds"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
        let q = question(&r.body, "term:large@wounds");
        assert_eq!(q["priority"], "important", "{q}");
        let c = q["confidence"].as_f64().expect("confidence");
        assert!(c > 0.0 && c < 0.6, "below the ask threshold: {c}");

        // With fewer questions it is answered with its default: the badge says how sure and why.
        set_settings(api, &api.alice, false, "fewer").await;
        let a = api.ask(json!({"question": "patients with large wounds"})).await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        let badge = assumption(&a.body, "term:large@wounds").expect("a badge for large");
        let c = badge["confidence"].as_f64().expect("confidence");
        assert!(c > 0.5 && c < 1.0, "{badge}");
        let why = badge["reasoning"].as_str().unwrap();
        assert!(why.contains("“large”") && why.contains("readings"), "{why}");
    })
    .await;
}

#[tokio::test]
async fn a_choice_made_in_a_round_is_a_badge_with_counts_and_changing_it_keeps_the_rest() {
    each_backend(test_config(), async |api| {
        let r = api.ask(json!({"question": "show me serious wounds in elderly patients"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
        let answers: Vec<Value> = r.body["questions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| {
                let pick = if q["id"] == SERIOUS {
                    json!("infected")
                } else {
                    q["options"].as_array().unwrap().iter().find(|o| o["default"] == true).unwrap()["id"].clone()
                };
                json!({"question_id": q["id"], "option_id": pick})
            })
            .collect();
        let a = api.clarify(json!({"clarification_id": r.body["clarification_id"], "answers": answers})).await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        let badge = assumption(&a.body, SERIOUS).expect("the choice is a badge").clone();
        assert_eq!((badge["source"].clone(), badge["option_id"].clone()), (json!("chosen"), json!("infected")), "{badge}");
        let options = badge["options"].as_array().unwrap();
        assert!(options.len() > 1 && options.iter().all(|o| o["count"].is_i64()), "options with counts: {badge}");
        let full = options.iter().find(|o| o["id"] == "full_thickness").expect("full thickness offered");
        let elsewhere: Vec<Value> = a.body["assumptions"].as_array().unwrap().iter().filter(|x| x["ambiguity_id"] != SERIOUS).cloned().collect();

        // Changing it re-runs through revise: that option's count is the answer, the rest stays.
        let revised = api
            .call(
                &api.alice,
                Method::POST,
                "/api/v1/query/revise",
                Some(json!({"history_id": a.body["history_id"], "ambiguity_id": SERIOUS, "option_id": "full_thickness"})),
            )
            .await;
        assert_eq!(revised.status, StatusCode::OK, "{}", revised.body);
        assert_eq!(revised.body["table"]["row_count"], full["count"], "the count shown is the answer's");
        let now = assumption(&revised.body, SERIOUS).unwrap();
        assert_eq!((now["source"].clone(), now["option_id"].clone()), (json!("chosen"), json!("full_thickness")), "{now}");
        let kept: Vec<Value> = revised.body["assumptions"].as_array().unwrap().iter().filter(|x| x["ambiguity_id"] != SERIOUS).cloned().collect();
        assert_eq!(
            kept.iter().map(|x| (&x["ambiguity_id"], &x["option_id"])).collect::<Vec<_>>(),
            elsewhere.iter().map(|x| (&x["ambiguity_id"], &x["option_id"])).collect::<Vec<_>>(),
            "every other choice kept"
        );
        // History shows the edited version.
        let h = api.call(&api.alice, Method::GET, "/api/v1/history", None).await;
        let chosen = h.body[0]["chosen"].to_string();
        assert!(chosen.contains("Full-thickness") && !chosen.contains("Infected"), "{chosen}");
    })
    .await;
}

#[tokio::test]
async fn counts_are_of_the_questions_subject_not_of_the_ambiguous_words_entity() {
    each_backend(test_config(), async |api| {
        // "serious" belongs to wounds, but the question lists patients: the counts (and
        // their label) are patients, so the chosen count is the answer's row count.
        let r = api.ask(json!({"question": "show me patients with serious wounds"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
        let q = question(&r.body, SERIOUS);
        let options = q["options"].as_array().unwrap();
        assert!(options.iter().all(|o| o["counts_of"] == "patients"), "{q}");
        let infected = options.iter().find(|o| o["id"] == "infected").unwrap();
        let shown = infected["count"].as_i64().unwrap();
        let a = api
            .clarify(json!({"clarification_id": r.body["clarification_id"], "answers": [{"question_id": SERIOUS, "option_id": "infected"}]}))
            .await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        assert_eq!(a.body["table"]["row_count"].as_i64().unwrap(), shown, "{}", a.body["restatement"]);

        let w = api.ask(json!({"question": "show me serious wounds"})).await;
        let options = question(&w.body, SERIOUS)["options"].as_array().unwrap().clone();
        assert!(options.iter().all(|o| o["counts_of"] == "wounds"), "{options:?}");

        // An option that changes what is counted says so: "area at each assessment"
        // averages assessments, so its count is of assessments.
        let s = api.ask(json!({"question": "average wound size by clinic"})).await;
        assert_eq!(s.status, StatusCode::ACCEPTED, "{}", s.body);
        let of: Vec<(String, String)> = s.body["questions"][0]["options"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| (o["id"].as_str().unwrap().to_owned(), o["counts_of"].as_str().unwrap_or("").to_owned()))
            .collect();
        assert!(of.iter().any(|(_, e)| e == "assessments"), "{of:?}");
        assert!(of.iter().any(|(_, e)| e == "wounds"), "{of:?}");
    })
    .await;
}

#[tokio::test]
async fn slow_option_counts_are_omitted_and_never_hold_up_the_round() {
    // Every preview "slow": a limit no query can meet.
    let config = OrchestratorConfig {
        preview_timeout: Duration::from_nanos(1),
        ..test_config()
    };
    each_backend(config, async |api| {
        let started = std::time::Instant::now();
        let r = api.ask(json!({"question": "show me serious wounds"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
        let options = question(&r.body, SERIOUS)["options"].as_array().unwrap().clone();
        assert!(options.len() >= 2);
        assert!(options.iter().all(|o| o["count"].is_null()), "counts omitted: {options:?}");
        let step = r.body["thinking"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == "Counted the records each option matches")
            .expect("the counting step")
            .clone();
        assert!(step["detail"].as_str().unwrap().starts_with("0 of "), "{step}");
        assert!(step["duration_ms"].as_f64().unwrap() < 2_000.0, "{step}");
        assert!(started.elapsed() < Duration::from_secs(10));
        // the round works as usual
        let a = api
            .clarify(json!({"clarification_id": r.body["clarification_id"], "answers": [{"question_id": SERIOUS, "option_id": "infected"}]}))
            .await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    })
    .await;
}

#[tokio::test]
async fn i_dont_know_applies_the_best_guess_and_shows_it_as_an_assumption() {
    each_backend(test_config(), async |api| {
        let r = api.ask(json!({"question": "show me serious wounds"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED);
        let a = api
            .clarify(json!({"clarification_id": r.body["clarification_id"], "answers": [{"question_id": SERIOUS, "dont_know": true}]}))
            .await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        let badge = assumption(&a.body, SERIOUS).expect("the best guess is an assumption");
        assert_eq!(badge["source"], "default");
        assert_eq!(badge["option_id"], "full_thickness");
        // History lists it as an assumption, not as a choice the user made.
        let h = api.call(&api.alice, Method::GET, "/api/v1/history", None).await;
        assert_eq!(h.body[0]["chosen"], json!([]), "{}", h.body[0]);
    })
    .await;
}

#[tokio::test]
async fn a_bad_custom_value_is_refused_and_the_round_stays_answerable() {
    each_backend(test_config(), async |api| {
        // "large" is asked (it decides the cohort).
        let r = api.ask(json!({"question": "patients with large wounds"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
        let q = question(&r.body, "term:large@wounds");
        assert_eq!(q["custom"]["kind"], "number");
        let id = r.body["clarification_id"].clone();

        let bad = api
            .clarify(json!({"clarification_id": id, "answers": [{"question_id": "term:large@wounds", "custom": "quite big"}]}))
            .await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", bad.body);
        assert_eq!(bad.body["code"], "invalid_custom_value");
        assert!(bad.body["message"].as_str().unwrap().contains("quite big"), "{}", bad.body);

        let unknown = api
            .clarify(json!({"clarification_id": id, "answers": [{"question_id": "term:large@wounds", "option_id": "gigantic"}]}))
            .await;
        assert_eq!(unknown.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(unknown.body["code"], "unknown_option");

        let good = api
            .clarify(json!({"clarification_id": id, "answers": [{"question_id": "term:large@wounds", "custom": "15"}]}))
            .await;
        assert_eq!(good.status, StatusCode::OK, "{}", good.body);
        assert!(good.body["restatement"].as_str().unwrap().contains("15"), "{}", good.body["restatement"]);
    })
    .await;
}

#[tokio::test]
async fn remember_my_choice_resolves_the_next_question_as_your_saved_definition() {
    each_backend(test_config(), async |api| {
        let r = api.ask(json!({"question": "show me serious wounds"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED);
        let a = api
            .clarify(json!({"clarification_id": r.body["clarification_id"], "answers": [{"question_id": SERIOUS, "option_id": "infected", "remember": true}]}))
            .await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);

        let next = api.ask(json!({"question": "how many serious wounds are there"})).await;
        assert_eq!(next.status, StatusCode::OK, "auto-resolved, not asked: {}", next.body);
        let badge = assumption(&next.body, SERIOUS).expect("saved definition badge");
        assert_eq!(badge["source"], "saved_definition");
        assert_eq!(badge["option_id"], "infected");
        assert!(badge["options"].as_array().unwrap().len() > 1, "changeable on the answer: {badge}");
        assert_eq!(badge["confidence"], 1.0, "{badge}");
        assert!(badge["reasoning"].as_str().unwrap().contains("remember"), "{badge}");

        // bob is not affected
        let theirs = api.call(&api.bob, Method::POST, "/api/v1/query", Some(json!({"question": "how many serious wounds are there"}))).await;
        assert_eq!(theirs.status, StatusCode::ACCEPTED);

        // listed, and deleting it brings the question back
        let prefs = api.call(&api.alice, Method::GET, "/api/v1/preferences", None).await;
        let remembered: Vec<&Value> = prefs.body.as_array().unwrap().iter().filter(|p| p["remembered"] == true).collect();
        assert_eq!(remembered.len(), 1, "{}", prefs.body);
        let id = remembered[0]["id"].as_i64().unwrap();
        let foreign = api.call(&api.bob, Method::DELETE, &format!("/api/v1/preferences/{id}"), None).await;
        assert_eq!(foreign.status, StatusCode::NOT_FOUND);
        let gone = api.call(&api.alice, Method::DELETE, &format!("/api/v1/preferences/{id}"), None).await;
        assert_eq!(gone.status, StatusCode::NO_CONTENT);
        let again = api.ask(json!({"question": "how many serious wounds are there"})).await;
        assert_eq!(again.status, StatusCode::ACCEPTED);
    })
    .await;
}

#[tokio::test]
async fn a_remembered_custom_value_is_applied_to_the_next_question_with_that_ambiguity() {
    const LARGE: &str = "term:large@wounds";
    each_backend(test_config(), async |api| {
        let r = api.ask(json!({"question": "patients with large wounds"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
        let a = api
            .clarify(json!({"clarification_id": r.body["clarification_id"], "answers": [{"question_id": LARGE, "custom": "17 cm2", "remember": true}]}))
            .await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        let answered_sql = a.body["sql"].as_str().unwrap().to_owned();

        // A differently worded question with the same ambiguity: not asked, the saved
        // custom value applied and shown as "your saved definition".
        let next = api.ask(json!({"question": "how many large wounds are there"})).await;
        assert_eq!(next.status, StatusCode::OK, "auto-resolved, not asked: {}", next.body);
        let badge = assumption(&next.body, LARGE).expect("saved definition badge");
        assert_eq!(badge["source"], "saved_definition", "{badge}");
        assert_eq!(badge["option_id"], "custom", "{badge}");
        assert!(badge["assumed"].as_str().unwrap().contains("17"), "{badge}");
        assert!(next.body["restatement"].as_str().unwrap().contains("17"), "{}", next.body["restatement"]);
        let same = api.ask(json!({"question": "patients with large wounds"})).await;
        assert_eq!(same.status, StatusCode::OK, "{}", same.body);
        assert_eq!(same.body["sql"], answered_sql.as_str(), "the same constraint as when it was answered");

        // Only alice's: bob is still asked.
        let theirs = api.call(&api.bob, Method::POST, "/api/v1/query", Some(json!({"question": "patients with large wounds"}))).await;
        assert_eq!(theirs.status, StatusCode::ACCEPTED, "{}", theirs.body);

        // Listed as remembered; deleting it brings the question back.
        let prefs = api.call(&api.alice, Method::GET, "/api/v1/preferences", None).await;
        let remembered: Vec<&Value> = prefs.body.as_array().unwrap().iter().filter(|p| p["remembered"] == true).collect();
        assert_eq!(remembered.len(), 1, "{}", prefs.body);
        let id = remembered[0]["id"].as_i64().unwrap();
        let gone = api.call(&api.alice, Method::DELETE, &format!("/api/v1/preferences/{id}"), None).await;
        assert_eq!(gone.status, StatusCode::NO_CONTENT);
        let again = api.ask(json!({"question": "patients with large wounds"})).await;
        assert_eq!(again.status, StatusCode::ACCEPTED, "forgotten, so asked again: {}", again.body);
    })
    .await;
}

#[tokio::test]
async fn the_same_answer_three_times_becomes_the_preselected_default() {
    each_backend(test_config(), async |api| {
        for _ in 0..3 {
            let r = api.ask(json!({"question": "show me serious wounds"})).await;
            assert_eq!(r.status, StatusCode::ACCEPTED);
            assert_eq!(question(&r.body, SERIOUS)["options"].as_array().unwrap().iter().find(|o| o["default"] == true).unwrap()["id"], "full_thickness");
            let a = api
                .clarify(json!({"clarification_id": r.body["clarification_id"], "answers": [{"question_id": SERIOUS, "option_id": "infected"}]}))
                .await;
            assert_eq!(a.status, StatusCode::OK);
        }
        let r = api.ask(json!({"question": "show me serious wounds"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "still asked (not remembered)");
        let default = question(&r.body, SERIOUS)["options"].as_array().unwrap().iter().find(|o| o["default"] == true).unwrap().clone();
        assert_eq!(default["id"], "infected", "offered as the default after three answers");
        let prefs = api.call(&api.alice, Method::GET, "/api/v1/preferences", None).await;
        assert!(prefs.body.as_array().unwrap().iter().any(|p| p["offered_as_default"] == true && p["count"] == 3));
    })
    .await;
}

#[tokio::test]
async fn a_usual_answer_that_was_successful_is_applied_without_asking_and_stays_editable() {
    each_backend(test_config(), async |api| {
        for _ in 0..3 {
            let r = api.ask(json!({"question": "show me serious wounds"})).await;
            assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
            let a = api
                .clarify(json!({"clarification_id": r.body["clarification_id"], "answers": [{"question_id": SERIOUS, "option_id": "infected"}]}))
                .await;
            assert_eq!(a.status, StatusCode::OK);
        }
        // Three times but never successful: preselected, still asked.
        let r = api.ask(json!({"question": "list serious wounds at each clinic"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "no success yet, so asked: {}", r.body);
        let prefs = api.call(&api.alice, Method::GET, "/api/v1/preferences", None).await;
        let pref = prefs.body.as_array().unwrap().iter().find(|p| p["option_id"] == "infected").unwrap().clone();
        assert_eq!((pref["usual"].clone(), pref["successes"].clone()), (json!(false), json!(0)), "{pref}");
        assert_eq!(pref["confidence"], json!(1.0), "{pref}");

        // One of those answers was successful: the rule holds (3 uses, a success, 3 of 3).
        api.state
            .store
            .add_preference_success(api.alice_id, pref["id"].as_i64().unwrap())
            .await
            .unwrap();
        let next = api.ask(json!({"question": "how many serious wounds are there"})).await;
        assert_eq!(next.status, StatusCode::OK, "applied without asking: {}", next.body);
        let badge = assumption(&next.body, SERIOUS).expect("usual definition badge");
        assert_eq!(badge["source"], "usual_definition", "{badge}");
        assert!(badge["reasoning"].as_str().unwrap().contains("usual answer"), "{badge}");
        assert_eq!(badge["option_id"], "infected", "{badge}");
        assert!(badge["options"].as_array().unwrap().len() > 1, "editable like any assumption: {badge}");
        let loaded = next.body["thinking"].as_array().unwrap().iter().find(|s| s["name"] == "Loaded your context").unwrap();
        assert!(loaded["detail"].as_str().unwrap().contains("1 usual definition"), "{loaded}");

        // Changing it on the answer goes through revise like every badge.
        let revised = api
            .call(
                &api.alice,
                Method::POST,
                "/api/v1/query/revise",
                Some(json!({"history_id": next.body["history_id"], "ambiguity_id": SERIOUS, "option_id": "full_thickness"})),
            )
            .await;
        assert_eq!(revised.status, StatusCode::OK, "{}", revised.body);
        assert_ne!(revised.body["sql"], next.body["sql"], "{}", revised.body);

        let prefs = api.call(&api.alice, Method::GET, "/api/v1/preferences", None).await;
        assert!(prefs.body.as_array().unwrap().iter().any(|p| p["usual"] == true && p["remembered"] == false), "{}", prefs.body);
        // Only alice's: bob is still asked.
        let theirs = api.call(&api.bob, Method::POST, "/api/v1/query", Some(json!({"question": "how many serious wounds are there"}))).await;
        assert_eq!(theirs.status, StatusCode::ACCEPTED);
        // A stricter rule (from the environment in a deployment) asks again.
        let strict = OrchestratorConfig {
            learning: server::orchestrator::learning::LearningRule { min_uses: 4, ..Default::default() },
            ..test_config()
        };
        let replica = api.replica(strict).await;
        let asked = api
            .send_to(&replica, &api.alice, Method::POST, "/api/v1/query", json!({"question": "how many serious wounds are there"}))
            .await;
        assert_eq!(asked.status, StatusCode::ACCEPTED, "{}", asked.body);
    })
    .await;
}

#[tokio::test]
async fn an_expired_round_is_answered_by_running_the_question_again_and_says_so() {
    let config = OrchestratorConfig {
        round_ttl: Duration::from_millis(300),
        ..test_config()
    };
    each_backend(config, async |api| {
        let r = api.ask(json!({"question": "show me serious wounds"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED);
        let answer = json!({"clarification_id": r.body["clarification_id"], "answers": [{"question_id": SERIOUS, "option_id": "infected"}]});
        tokio::time::sleep(Duration::from_millis(600)).await;
        // Someone else's late answer is still "not found" and revives nothing.
        let foreign = api.call(&api.bob, Method::POST, "/api/v1/query/clarify", Some(answer.clone())).await;
        assert_eq!(foreign.status, StatusCode::NOT_FOUND, "{}", foreign.body);
        let a = api.clarify(answer.clone()).await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        assert_eq!(a.body["notice"], server::orchestrator::EXPIRED_NOTICE, "{}", a.body);
        assert!(a.body["sql"].as_str().unwrap().contains("infect"), "{}", a.body["sql"]);
        // The same answer as on time: the rows match an answer given in time.
        let fresh = api.ask(json!({"question": "show me serious wounds"})).await;
        let on_time = api
            .clarify(json!({"clarification_id": fresh.body["clarification_id"], "answers": [{"question_id": SERIOUS, "option_id": "infected"}]}))
            .await;
        assert_eq!(on_time.body["notice"], Value::Null, "{}", on_time.body);
        assert_eq!(a.body["table"]["row_count"], on_time.body["table"]["row_count"]);
        // Answered once: a second late answer is the usual conflict.
        let again = api.clarify(answer).await;
        assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.body);
    })
    .await;
}

#[tokio::test]
async fn cancel_closes_a_round_at_once_and_it_counts_as_abandoned() {
    each_backend(test_config(), async |api| {
        let r = api.ask(json!({"question": "show me serious wounds"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED);
        let cid = r.body["clarification_id"].clone();
        // Not someone else's to cancel, and unknown ids look the same.
        let foreign = api.call(&api.bob, Method::POST, "/api/v1/query/cancel", Some(json!({"clarification_id": cid}))).await;
        let unknown = api
            .call(&api.bob, Method::POST, "/api/v1/query/cancel", Some(json!({"clarification_id": "0123456789abcdef0123456789abcdef"})))
            .await;
        assert_eq!(foreign.status, StatusCode::NOT_FOUND);
        assert_eq!(foreign.body, unknown.body);
        let bad = api.call(&api.alice, Method::POST, "/api/v1/query/cancel", Some(json!({"clarification_id": 7}))).await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);

        let c = api.call(&api.alice, Method::POST, "/api/v1/query/cancel", Some(json!({"clarification_id": cid}))).await;
        assert_eq!(c.status, StatusCode::NO_CONTENT, "{}", c.body);
        let stats = api.state.store.analytics(chrono::Utc::now(), 1, 5).await.unwrap();
        let t = stats.totals();
        assert_eq!((t.rounds_abandoned, t.rounds_open), (1, 0), "counted at once: {t:?}");
        // A cancelled round cannot be answered (or cancelled) any more.
        let late = api.clarify(json!({"clarification_id": cid, "answers": [{"question_id": SERIOUS, "option_id": "infected"}]})).await;
        assert_eq!(late.status, StatusCode::CONFLICT, "{}", late.body);
        let twice = api.call(&api.alice, Method::POST, "/api/v1/query/cancel", Some(json!({"clarification_id": cid}))).await;
        assert_eq!(twice.status, StatusCode::CONFLICT, "{}", twice.body);
    })
    .await;
}

#[tokio::test]
async fn another_users_round_and_thread_look_exactly_like_unknown_ones() {
    each_backend(test_config(), async |api| {
        let r = api.ask(json!({"question": "show me serious wounds"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED);
        let answer = json!({"clarification_id": r.body["clarification_id"], "answers": [{"question_id": SERIOUS, "option_id": "infected"}]});
        let foreign = api.call(&api.bob, Method::POST, "/api/v1/query/clarify", Some(answer.clone())).await;
        let unknown = api
            .call(&api.bob, Method::POST, "/api/v1/query/clarify", Some(json!({"clarification_id": "0123456789abcdef0123456789abcdef", "answers": []})))
            .await;
        assert_eq!(foreign.status, StatusCode::NOT_FOUND);
        assert_eq!(foreign.body, unknown.body, "no information leak");
        let thread = format!("/api/v1/threads/{}", r.body["thread_id"].as_str().unwrap());
        assert_eq!(api.call(&api.bob, Method::GET, &thread, None).await.status, StatusCode::NOT_FOUND);
        let follow = api.call(&api.bob, Method::POST, "/api/v1/query", Some(json!({"question": "only the open ones", "thread_id": r.body["thread_id"]}))).await;
        assert_eq!(follow.status, StatusCode::NOT_FOUND);
        // the owner can still answer it: bob's attempt changed nothing
        assert_eq!(api.clarify(answer).await.status, StatusCode::OK);
    })
    .await;
}

#[tokio::test]
async fn a_round_answered_twice_is_a_conflict() {
    each_backend(test_config(), async |api| {
        let r = api.ask(json!({"question": "show me serious wounds"})).await;
        let answer = json!({"clarification_id": r.body["clarification_id"], "answers": [{"question_id": SERIOUS, "option_id": "infected"}]});
        assert_eq!(api.clarify(answer.clone()).await.status, StatusCode::OK);
        let again = api.clarify(answer).await;
        assert_eq!(again.status, StatusCode::CONFLICT, "{}", again.body);
        assert_eq!(again.body["code"], "conflict");
    })
    .await;
}

#[tokio::test]
async fn the_skip_setting_answers_at_once_with_assumptions() {
    each_backend(test_config(), async |api| {
        set_settings(api, &api.alice, true, "balanced").await;
        let s = api.call(&api.alice, Method::GET, "/api/v1/settings", None).await;
        assert_eq!(
            s.body,
            json!({"skip_clarifications": true, "sensitivity": "balanced"})
        );
        let r = api.ask(json!({"question": "show me serious wounds"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        assert_eq!(assumption(&r.body, SERIOUS).expect("badge")["source"], "default");
        assert!(
            !assumption(&r.body, SERIOUS).unwrap()["options"]
                .as_array()
                .unwrap()
                .is_empty(),
            "the badge offers the alternatives"
        );
        assert_eq!(r.body["open_questions"][0]["id"], SERIOUS);
    })
    .await;
}

#[tokio::test]
async fn non_interactive_mode_never_asks_and_lists_open_questions() {
    each_backend(test_config(), async |api| {
        for q in ["show me serious wounds", "show me data", "top 10 wounds"] {
            let r = api.ask(json!({"question": q, "interactive": false})).await;
            assert_eq!(r.status, StatusCode::OK, "{q}: {}", r.body);
            let open = r.body["open_questions"].as_array().unwrap();
            assert!(!open.is_empty(), "{q}");
            for o in open {
                assert!(
                    assumption(&r.body, o["id"].as_str().unwrap()).is_some(),
                    "{q}: each open question is an assumption"
                );
                assert!(
                    o["options"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|c| c["id"] == o["assumed_option_id"])
                );
            }
        }
    })
    .await;
}

#[tokio::test]
async fn revising_an_assumption_changes_only_that_choice() {
    each_backend(test_config(), async |api| {
        let r = api
            .ask(json!({"question": "average size of serious wounds"}))
            .await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
        let mut answers = defaults_for(&r.body);
        for a in answers["answers"].as_array_mut().unwrap() {
            if a["question_id"] == SERIOUS {
                a["option_id"] = json!("infected");
            }
        }
        let a = api.clarify(answers).await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        // an assumption with alternatives: change it to another option
        let badge = a.body["assumptions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["source"] == "default" && b["options"].as_array().is_some_and(|o| o.len() > 1))
            .expect("an assumption with alternatives")
            .clone();
        let id = badge["ambiguity_id"].as_str().unwrap();
        let other = badge["options"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"] != badge["option_id"])
            .unwrap()["id"]
            .clone();
        let revise = json!({"history_id": a.body["history_id"], "ambiguity_id": id, "option_id": other});
        let revised = api
            .call(
                &api.alice,
                Method::POST,
                "/api/v1/query/revise",
                Some(revise.clone()),
            )
            .await;
        assert_eq!(revised.status, StatusCode::OK, "{}", revised.body);
        assert_ne!(
            revised.body["sql"], a.body["sql"],
            "the changed choice changes the query"
        );
        let now = assumption(&revised.body, id).expect("the revised choice");
        assert_eq!(
            (&now["source"], &now["option_id"]),
            (&json!("chosen"), &other),
            "the revised choice is the user's own now: {now}"
        );
        let kept = assumption(&revised.body, SERIOUS).expect("the round's choice");
        assert_eq!(
            (&kept["source"], &kept["option_id"]),
            (&json!("chosen"), &json!("infected")),
            "the confirmed choice is kept, not re-assumed: {kept}"
        );
        let before = a.body["restatement"].as_str().unwrap().to_lowercase();
        let after = revised.body["restatement"].as_str().unwrap().to_lowercase();
        assert!(
            before.contains("infect") && after.contains("infect"),
            "serious = infected is kept: {before} / {after}"
        );
        // History says which answers were given: the round's, then the revision's.
        let h = api.call(&api.alice, Method::GET, "/api/v1/history", None).await;
        let chosen = |i: usize| -> Vec<String> {
            h.body[i]["chosen"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c.as_str().unwrap().to_owned())
                .collect()
        };
        assert_eq!(h.body[0]["id"], revised.body["history_id"]);
        let (newest, first) = (chosen(0), chosen(1));
        assert!(first.iter().any(|c| c == "serious: Infected"), "{first:?}");
        // every answer of the round is kept, and the revision is added after them
        assert_eq!(newest.len(), first.len() + 1, "{first:?} → {newest:?}");
        assert_eq!(newest[..first.len()], first[..]);
        let other_label = badge["options"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["id"] == other)
            .unwrap()["label"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            newest.last().unwrap().ends_with(&format!(": {other_label}")),
            "{newest:?}"
        );
        let bad = api
            .call(
                &api.alice,
                Method::POST,
                "/api/v1/query/revise",
                Some(json!({"history_id": a.body["history_id"], "ambiguity_id": id, "option_id": "nope"})),
            )
            .await;
        assert_eq!(bad.status, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(bad.body["code"], "unknown_option");
        let foreign = api
            .call(&api.bob, Method::POST, "/api/v1/query/revise", Some(revise))
            .await;
        assert_eq!(foreign.status, StatusCode::NOT_FOUND);
    })
    .await;
}

#[tokio::test]
async fn bad_input_is_a_json_4xx_and_never_a_500() {
    each_backend(test_config(), async |api| {
        let cases: Vec<(String, StatusCode, &str)> = vec![
            (
                json!({"question": "   "}).to_string(),
                StatusCode::BAD_REQUEST,
                "empty_question",
            ),
            (
                json!({"question": "x".repeat(1001)}).to_string(),
                StatusCode::BAD_REQUEST,
                "question_too_long",
            ),
            (
                "{\"question\": ".into(),
                StatusCode::BAD_REQUEST,
                "malformed_json",
            ),
            ("[1, 2]".into(), StatusCode::BAD_REQUEST, "invalid_json_fields"),
            (
                json!({"question": 7}).to_string(),
                StatusCode::BAD_REQUEST,
                "invalid_json_fields",
            ),
            (
                json!({"question": "ok", "thread_id": "../../etc"}).to_string(),
                StatusCode::NOT_FOUND,
                "not_found",
            ),
        ];
        for (body, want, code) in cases {
            let r = api
                .raw(Some(&api.alice), Method::POST, "/api/v1/query", &body)
                .await;
            assert_eq!(r.status, want, "{body}: {}", r.body);
            assert_eq!(r.body["code"], code, "{body}");
            assert!(r.body["message"].as_str().is_some_and(|m| !m.is_empty()));
        }
        let anonymous = api
            .raw(
                None,
                Method::POST,
                "/api/v1/query",
                &json!({"question": "how many wounds"}).to_string(),
            )
            .await;
        assert_eq!(anonymous.status, StatusCode::UNAUTHORIZED);
        assert_eq!(anonymous.body["code"], "unauthenticated");
        let bad_round = api
            .clarify(json!({"clarification_id": "not-an-id", "answers": []}))
            .await;
        assert_eq!(bad_round.status, StatusCode::NOT_FOUND);

        let hostile = [
            "'; DROP TABLE patients; --",
            "show wounds where 1=1; DELETE FROM wounds",
            "wounds at clinic \" OR \"1\"=\"1",
            "how many wounds\u{0000} UNION SELECT password_hash FROM users",
            "🤖🤖🤖 ∑∫ ≠ \\x00 %s %n {{7*7}}",
            "patients named Robert'); DROP TABLE students;--",
        ];
        for q in hostile {
            let r = api.ask(json!({"question": q, "interactive": false})).await;
            assert!(
                r.status.is_success() || r.status.is_client_error(),
                "{q}: {} {}",
                r.status,
                r.body
            );
            if let Some(sql) = r.body["sql"].as_str() {
                for word in ["DROP", "DELETE", "UNION", "password_hash", "1=1", "Robert"] {
                    assert!(!sql.contains(word), "{q}: user text reached SQL: {sql}");
                }
            }
        }
        // nothing stored was lost: the wounds are all still there
        let r = api
            .ask(json!({"question": "how many wounds are there", "interactive": false}))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
    })
    .await;
}

#[tokio::test]
async fn an_oversized_body_is_a_json_413_and_loses_nothing() {
    each_backend(test_config(), async |api| {
        let r = api.ask(json!({"question": "show me serious wounds"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
        let id = r.body["clarification_id"].clone();
        let padding = "x".repeat(server::http::MAX_BODY_BYTES);
        let huge_ask = json!({"question": "how many wounds", "padding": padding}).to_string();
        let huge_clarify = json!({"clarification_id": id, "answers": [{"question_id": SERIOUS, "custom": padding}]}).to_string();
        for (path, body) in [("/api/v1/query", &huge_ask), ("/api/v1/query/clarify", &huge_clarify)] {
            let r = api.raw(Some(&api.alice), Method::POST, path, body).await;
            assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{path}");
            assert_eq!(r.body["code"], "body_too_large", "{path}: {}", r.body);
            assert!(r.body["message"].as_str().unwrap().contains("KiB"), "{}", r.body);
        }
        // the round is untouched and still answerable
        let a = api
            .clarify(json!({"clarification_id": id, "answers": [{"question_id": SERIOUS, "option_id": "infected"}]}))
            .await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    })
    .await;
}

#[tokio::test]
async fn the_audit_log_records_sql_and_the_number_of_values_never_the_values() {
    each_backend(test_config(), async |api| {
        let r = api.ask(json!({"question": "how many wounds at the heel"})).await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        let log = api.state.store.audit_log_of(api.alice_id, 10).await.unwrap();
        let entry = log.first().expect("an audit row");
        assert_eq!(entry.sql, r.body["sql"].as_str().unwrap());
        assert_eq!(entry.param_count, r.body["param_count"].as_i64().unwrap());
        assert!(entry.param_count >= 1);
        assert!(!entry.sql.to_lowercase().contains("heel"), "{}", entry.sql);
        assert_eq!(entry.row_count, r.body["table"]["row_count"].as_i64().unwrap());
    })
    .await;
}

/// Answers every question of a round with its default.
fn defaults_for(round: &Value) -> Value {
    let answers: Vec<Value> = round["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            let options = q["options"].as_array().unwrap();
            let pick = options.iter().find(|o| o["default"] == true).unwrap();
            json!({"question_id": q["id"], "option_id": pick["id"]})
        })
        .collect();
    json!({"clarification_id": round["clarification_id"], "answers": answers})
}

fn ids(round: &Value) -> Vec<String> {
    round["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["id"].as_str().unwrap().to_owned())
        .collect()
}

// Questions whose size or date reading is an assumption under the default sensitivity
// but a question under "More questions": switching before answering round 1 makes that
// reading a new question for round 2.
const TWO_ROUNDS: [&str; 4] = [
    "average size of serious wounds",
    "how many serious wounds by date",
    "recent serious wounds by date",
    "show me serious wounds",
];

/// Asks each candidate under "balanced", switches to "more" and answers round 1 with
/// the defaults; returns the first round-1 body and the reply that came back.
async fn two_rounds(api: &Api) -> Option<(Value, Reply)> {
    for q in TWO_ROUNDS {
        set_settings(api, &api.alice, false, "balanced").await;
        let first = api.ask(json!({"question": q})).await;
        assert_eq!(first.status, StatusCode::ACCEPTED, "{q}: {}", first.body);
        set_settings(api, &api.alice, false, "more").await;
        let next = api.clarify(defaults_for(&first.body)).await;
        if next.status == StatusCode::ACCEPTED {
            return Some((first.body, next));
        }
        assert_eq!(next.status, StatusCode::OK, "{q}: {}", next.body);
    }
    None
}

#[tokio::test]
async fn a_second_round_asks_only_new_questions_and_then_clarion_answers() {
    each_backend(test_config(), async |api| {
        let (first, second) = two_rounds(api).await.expect("one candidate takes two rounds");
        assert_eq!(first["round"], 1);
        assert_eq!(second.body["round"], 2);
        assert_ne!(second.body["clarification_id"], first["clarification_id"]);
        let asked_first = ids(&first);
        assert!(!ids(&second.body).is_empty());
        assert!(
            ids(&second.body).iter().all(|id| !asked_first.contains(id)),
            "never the same ambiguity twice"
        );
        let done = api.clarify(defaults_for(&second.body)).await;
        assert_eq!(
            done.status,
            StatusCode::OK,
            "after two rounds Clarion answers: {}",
            done.body
        );
        assert_eq!(done.body["rounds"], 2);
        for id in asked_first.iter().chain(&ids(&second.body)) {
            assert!(
                assumption(&done.body, id).is_none_or(|a| a["source"] == "chosen"),
                "{id} was answered, not assumed"
            );
        }
    })
    .await;
}

#[tokio::test]
async fn when_the_rounds_are_used_up_the_next_questions_become_assumptions() {
    // Same scenario as above with one round allowed: the would-be second round's
    // questions are answered on their best guesses and reported.
    let config = OrchestratorConfig {
        max_rounds: 1,
        ..test_config()
    };
    each_backend(config, async |api| {
        for q in TWO_ROUNDS {
            set_settings(api, &api.alice, false, "balanced").await;
            let first = api.ask(json!({"question": q})).await;
            assert_eq!(first.status, StatusCode::ACCEPTED, "{q}: {}", first.body);
            assert_eq!(first.body["max_rounds"], 1);
            set_settings(api, &api.alice, false, "more").await;
            let done = api.clarify(defaults_for(&first.body)).await;
            assert_eq!(
                done.status,
                StatusCode::OK,
                "{q}: never a second round: {}",
                done.body
            );
            assert_eq!(done.body["rounds"], 1);
            for open in done.body["open_questions"].as_array().unwrap() {
                let id = open["id"].as_str().unwrap();
                assert!(
                    !ids(&first.body).contains(&id.to_owned()),
                    "{q}: {id} was answered"
                );
                assert_eq!(
                    assumption(&done.body, id).expect("best guess shown")["source"],
                    "default"
                );
            }
        }
    })
    .await;
}

/// The "Counted the records each option matches" step of a round, and its options' counts.
fn counting(round: &Value) -> (String, Vec<Option<i64>>) {
    let detail = round["thinking"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "Counted the records each option matches")
        .map(|s| s["detail"].as_str().unwrap_or("").to_owned())
        .unwrap_or_default();
    let counts = question(round, SERIOUS)["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["count"].as_i64())
        .collect();
    (detail, counts)
}

#[tokio::test]
async fn a_repeated_round_reuses_its_counts_until_the_data_changes() {
    each_backend(test_config(), async |api| {
        let first = api.ask(json!({"question": "show me serious wounds"})).await;
        assert_eq!(first.status, StatusCode::ACCEPTED, "{}", first.body);
        let (detail, counts) = counting(&first.body);
        assert!(!detail.contains("unchanged"), "{detail}");
        assert!(counts.iter().all(Option::is_some), "{counts:?}");

        // the same question over the same data: the same counts, not counted again
        let again = api.ask(json!({"question": "show me serious wounds"})).await;
        let (detail, same) = counting(&again.body);
        assert_eq!(same, counts);
        assert!(
            detail.contains("unchanged since they were last counted"),
            "{detail}"
        );

        // a new wound changes the data version: counted again
        let copy = "INSERT INTO wounds (id, patient_id, clinic_id, etiology, location, stage, depth, \
                    onset_date, healed_date, status, infected, initial_area_cm2) \
                    SELECT id + 1, patient_id, clinic_id, etiology, location, stage, depth, onset_date, \
                    healed_date, status, infected, initial_area_cm2 FROM wounds \
                    WHERE id = (SELECT MAX(id) FROM wounds)";
        match api.state.store.database() {
            server::db::Database::Sqlite(p) => {
                sqlx::query(copy).execute(p).await.unwrap();
            }
            server::db::Database::Postgres(p) => {
                sqlx::query(copy).execute(p).await.unwrap();
            }
        }
        let after = api.ask(json!({"question": "show me serious wounds"})).await;
        let (detail, _) = counting(&after.body);
        assert!(
            !detail.contains("unchanged"),
            "the new row was not seen: {detail}"
        );
    })
    .await;
}

/// Runs one statement on the test database (to break and mend the clinical tables).
async fn exec_sql(api: &Api, sql: &str) {
    match api.state.store.database() {
        server::db::Database::Sqlite(p) => {
            sqlx::query(sql).execute(p).await.unwrap();
        }
        server::db::Database::Postgres(p) => {
            sqlx::query(sql).execute(p).await.unwrap();
        }
    }
}

#[tokio::test]
async fn a_round_whose_answer_fails_stays_answerable_and_the_retry_is_answered() {
    each_backend(test_config(), async |api| {
        let r = api.ask(json!({"question": "show me serious wounds"})).await;
        assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
        let answer = json!({"clarification_id": r.body["clarification_id"], "answers": [{"question_id": SERIOUS, "option_id": "infected"}]});
        // The clinical table is away while the answer runs: the answer fails...
        exec_sql(api, "ALTER TABLE wounds RENAME TO wounds_away").await;
        let failed = api.clarify(answer.clone()).await;
        exec_sql(api, "ALTER TABLE wounds_away RENAME TO wounds").await;
        assert!(failed.status.is_server_error(), "{}: {}", failed.status, failed.body);
        // ...and the round was not closed by it: the same answer, sent again, is answered.
        let retry = api.clarify(answer.clone()).await;
        assert_eq!(retry.status, StatusCode::OK, "{}", retry.body);
        assert_eq!(status(&retry), "answered");
        // Once answered, it is closed.
        assert_eq!(api.clarify(answer).await.status, StatusCode::CONFLICT);
    })
    .await;
}

/// A request as a signed-in browser or integrator makes it (bearer token), with a body.
async fn browser(api: &Api, method: Method, path: &str, form: Option<&str>) -> (StatusCode, String, String) {
    let (status, body, location) = api.page(&api.alice, method, path, form).await;
    (status, location.unwrap_or_default(), body)
}

#[tokio::test]
async fn no_get_runs_a_query_opening_a_thread_shows_the_stored_rows_and_rerun_is_a_post() {
    each_backend(test_config(), async |api| {
        let audits = async || api.state.store.audit_log_of(api.alice_id, 10_000).await.unwrap().len();
        let a = api.ask(json!({"question": "show me serious wounds"})).await;
        let a = api
            .clarify(json!({"clarification_id": a.body["clarification_id"], "answers": [{"question_id": SERIOUS, "option_id": "infected"}]}))
            .await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
        let thread = a.body["thread_id"].as_str().unwrap().to_owned();
        let history_id = a.body["history_id"].as_str().unwrap().to_owned();
        let before = audits().await;

        // The thread, as JSON and as a page, carries the rows as shown, and runs nothing.
        let t = api.call(&api.alice, Method::GET, &format!("/api/v1/threads/{thread}"), None).await;
        assert_eq!(t.status, StatusCode::OK);
        assert_eq!(t.body["answers"][0]["history"]["id"], history_id.as_str());
        assert_eq!(t.body["answers"][0]["table"], a.body["table"], "the rows as they were shown");
        for path in [
            format!("/threads/{thread}"),
            "/history".to_string(),
            "/?q=how%20many%20patients".to_string(),
            "/".to_string(),
        ] {
            let (status, _, html) = browser(api, Method::GET, &path, None).await;
            assert_eq!(status, StatusCode::OK, "{path}");
            if path.starts_with("/threads/") {
                assert!(html.contains("Rows as they were when asked"), "{path}");
            }
        }
        assert_eq!(audits().await, before, "no GET ran a query");
        let h = api.call(&api.alice, Method::GET, "/api/v1/history", None).await;
        assert_eq!(h.body.as_array().unwrap().len(), 1, "and none was added to the history");

        // Re-run is a form post: a new thread, the same choice, one audited statement.
        let (status, location, _) =
            browser(api, Method::POST, "/history/rerun", Some(&format!("history_id={history_id}"))).await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        assert!(location.starts_with("/threads/") && !location.ends_with(&thread), "{location}");
        assert_eq!(audits().await, before + 1);
        let h = api.call(&api.alice, Method::GET, "/api/v1/history", None).await;
        let newest = &h.body[0];
        assert_eq!(newest["chosen"], json!(["serious: Infected"]), "{newest}");
        assert_eq!(newest["row_count"], a.body["table"]["row_count"]);

        // Someone else's entry, or garbage: back to History with a code, nothing run.
        for bad in ["history_id=0123456789abcdef0123456789abcdef", "history_id=%27%3B+DROP+TABLE+users", ""] {
            let (status, location, _) = browser(api, Method::POST, "/history/rerun", Some(bad)).await;
            assert_eq!(status, StatusCode::SEE_OTHER, "{bad}");
            assert_eq!(location, "/history?rerun_error=not_found", "{bad}");
        }
        assert_eq!(audits().await, before + 1);
    })
    .await;
}

#[tokio::test]
async fn work_is_bounded_per_user_per_round_and_refused_questions_leave_no_thread() {
    let config = OrchestratorConfig {
        user_concurrent_queries: 1,
        preview_cap: 1,
        ..test_config()
    };
    each_backend(config, async |api| {
        // One question running (its slot held): alice's next is told to wait; bob is not affected.
        let held = api.state.orchestrator.slot(api.alice_id).unwrap();
        let r = api.ask(json!({"question": "how many patients"})).await;
        assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS, "{}", r.body);
        assert_eq!(r.body["code"], "too_many_queries");
        let bob = api
            .call(
                &api.bob,
                Method::POST,
                "/api/v1/query",
                Some(json!({"question": "how many patients"})),
            )
            .await;
        assert_eq!(bob.status, StatusCode::OK, "{}", bob.body);
        drop(held);
        assert_eq!(
            api.ask(json!({"question": "how many patients"})).await.status,
            StatusCode::OK
        );

        // At most one option count per round.
        let round = api.ask(json!({"question": "show me serious wounds"})).await;
        assert_eq!(round.status, StatusCode::ACCEPTED, "{}", round.body);
        let counted: usize = round.body["questions"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|q| q["options"].as_array().unwrap())
            .filter(|o| o["count"].is_i64())
            .count();
        assert_eq!(counted, 1, "{}", round.body);

        // A refused question (a data change) leaves no thread behind.
        let threads = async || api.state.store.threads(api.alice_id, 1000).await.unwrap().len();
        let before = threads().await;
        let refused = api.ask(json!({"question": "delete all patients"})).await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            refused.body
        );
        assert_eq!(threads().await, before);
    })
    .await;
}

#[tokio::test]
async fn housekeeping_deletes_closed_rounds_after_the_retention_and_threads_only_when_asked() {
    let config = OrchestratorConfig {
        thread_retention: Some(Duration::from_secs(2 * 86_400)),
        ..test_config()
    };
    each_backend(config, async |api| {
        let r = api.ask(json!({"question": "show me serious wounds"})).await;
        let id = r.body["clarification_id"].as_str().unwrap().to_owned();
        let answer =
            json!({"clarification_id": id, "answers": [{"question_id": SERIOUS, "option_id": "infected"}]});
        assert_eq!(api.clarify(answer).await.status, StatusCode::OK);
        let orch = &api.state.orchestrator;
        let now = chrono::Utc::now();
        // Within the retention: kept.
        assert_eq!(
            orch.housekeeping(now + chrono::Duration::days(1)).await.unwrap(),
            (0, 0)
        );
        // Past it: the round goes (7 days), the thread too (2 days, as configured).
        let (rounds, threads) = orch.housekeeping(now + chrono::Duration::days(8)).await.unwrap();
        assert_eq!((rounds, threads), (1, 1));
        let t = api
            .call(
                &api.alice,
                Method::GET,
                &format!("/api/v1/threads/{}", r.body["thread_id"].as_str().unwrap()),
                None,
            )
            .await;
        assert_eq!(t.status, StatusCode::NOT_FOUND);
        // History stays.
        let h = api.call(&api.alice, Method::GET, "/api/v1/history", None).await;
        assert_eq!(h.body.as_array().unwrap().len(), 1);
    })
    .await;
}

#[tokio::test]
async fn the_history_limit_is_checked_as_documented() {
    each_backend(test_config(), async |api| {
        for bad in ["abc", "0", "501", "-1", "1e3", "9999999999999999999999", ""] {
            let r = api
                .call(
                    &api.alice,
                    Method::GET,
                    &format!("/api/v1/history?limit={bad}"),
                    None,
                )
                .await;
            assert_eq!(r.status, StatusCode::BAD_REQUEST, "{bad}: {}", r.body);
            assert_eq!(r.body["code"], "bad_limit", "{bad}");
        }
        for ok in ["1", "500"] {
            let r = api
                .call(
                    &api.alice,
                    Method::GET,
                    &format!("/api/v1/history?limit={ok}"),
                    None,
                )
                .await;
            assert_eq!(r.status, StatusCode::OK, "{ok}: {}", r.body);
        }
    })
    .await;
}

#[tokio::test]
async fn two_clinicians_with_one_name_are_two_groups_each_named_with_its_id() {
    each_backend(test_config(), async |api| {
        exec_sql(
            api,
            "UPDATE clinicians SET name = (SELECT name FROM clinicians WHERE id = 1) WHERE id = 2",
        )
        .await;
        let r = api
            .ask(json!({"question": "number of assessments per clinician"}))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        let table = &r.body["table"];
        let names: Vec<&str> = table["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        // grouped by the key too, which the table does not show as a column of its own
        assert_eq!(names.len(), 2, "{table}");
        assert_eq!(names[0], "clinicians.name", "{table}");
        assert!(r.body["sql"].as_str().unwrap().contains("\"clinicians\".\"id\""));
        let labels: Vec<&str> = table["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row[0].as_str().unwrap())
            .collect();
        let distinct: std::collections::HashSet<&&str> = labels.iter().collect();
        assert_eq!(
            distinct.len(),
            labels.len(),
            "every row names one clinician: {labels:?}"
        );
        for id in [1, 2] {
            assert!(
                labels.iter().any(|l| l.ends_with(&format!("(id {id})"))),
                "clinician {id} is its own row, said with its id: {labels:?}"
            );
        }
        assert_eq!(
            labels.iter().filter(|l| l.contains("(id ")).count(),
            2,
            "only the namesakes say their id: {labels:?}"
        );
        // one clinician on many rows (a row per month) is no namesake
        let r = api
            .ask(json!({"question": "number of assessments per month by clinician"}))
            .await;
        assert_eq!(r.status, StatusCode::OK, "{}", r.body);
        let rows = r.body["table"]["rows"].as_array().unwrap().clone();
        let with_id: Vec<&Value> = rows
            .iter()
            .filter(|row| {
                row.as_array()
                    .unwrap()
                    .iter()
                    .any(|c| c.as_str().is_some_and(|s| s.contains("(id ")))
            })
            .collect();
        assert!(
            rows.len() > with_id.len() && !with_id.is_empty(),
            "{}",
            r.body["table"]
        );
        for row in with_id {
            assert!(
                row.as_array().unwrap().iter().any(|c| c
                    .as_str()
                    .is_some_and(|s| s.ends_with("(id 1)") || s.ends_with("(id 2)"))),
                "{row}"
            );
        }
        let counts: i64 = table["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|row| row[1].as_i64().unwrap())
            .sum();
        assert!(counts > 0);
        exec_sql(
            api,
            "UPDATE clinicians SET name = 'Namesake Restored' WHERE id = 2",
        )
        .await;
    })
    .await;
}

/// An answer's table is serialized once: the response carries exactly the text stored
/// with its History entry, and that text is the table's plain serialization (what was
/// sent and stored before), for a clear question and for a round's answer.
#[tokio::test]
async fn the_answer_table_in_the_response_is_the_text_stored_with_its_history_entry() {
    use axum::body::Body;
    use axum::http::{Request, header};
    use http_body_util::BodyExt;
    use serde_json::value::RawValue;
    use tower::ServiceExt;

    /// The raw body of a JSON request as alice.
    async fn raw_body(api: &Api, path: &str, body: Value) -> (StatusCode, Vec<u8>) {
        let req = Request::builder()
            .method(Method::POST)
            .uri(path)
            .header(header::HOST, "clarion.test")
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::AUTHORIZATION, format!("Bearer {}", api.alice))
            .body(Body::from(body.to_string()))
            .unwrap();
        let res = api.app.clone().oneshot(req).await.unwrap();
        let status = res.status();
        (
            status,
            res.into_body().collect().await.unwrap().to_bytes().to_vec(),
        )
    }

    #[derive(serde::Deserialize)]
    struct Sent<'a> {
        thread_id: String,
        #[serde(borrow)]
        table: &'a RawValue,
    }

    async fn check(api: &Api, bytes: &[u8]) {
        let sent: Sent = serde_json::from_slice(bytes).unwrap();
        let stored = api
            .state
            .store
            .thread_history(
                api.alice_id,
                &server::store::ThreadId::new(sent.thread_id.clone()),
            )
            .await
            .unwrap();
        let (_, text) = stored.last().expect("a History entry");
        assert_eq!(text.as_deref(), Some(sent.table.get()), "stored and sent alike");
        let table: app::protocol::ResultTable = serde_json::from_str(sent.table.get()).unwrap();
        assert!(table.row_count > 0);
        assert_eq!(
            serde_json::to_string(&table).unwrap(),
            sent.table.get(),
            "the table's plain serialization"
        );
        // the whole body is the answer's plain serialization too
        let outcome: app::protocol::QueryOutcome = serde_json::from_slice(bytes).unwrap();
        assert_eq!(serde_json::to_vec(&outcome).unwrap(), bytes);
    }

    each_backend(test_config(), async |api| {
        for question in [
            "how many open wounds by clinic",
            "list open wounds with their current area",
        ] {
            let (status, bytes) = raw_body(api, "/api/v1/query", json!({"question": question})).await;
            assert_eq!(
                status,
                StatusCode::OK,
                "{question}: {}",
                String::from_utf8_lossy(&bytes)
            );
            check(api, &bytes).await;
        }
        let round = api.ask(json!({"question": "show me serious wounds"})).await;
        assert_eq!(round.status, StatusCode::ACCEPTED, "{}", round.body);
        let answers: Vec<Value> = round.body["questions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| {
                let options = q["options"].as_array().unwrap();
                let default = options
                    .iter()
                    .find(|o| o["default"] == true)
                    .unwrap_or(&options[0]);
                json!({"question_id": q["id"], "option_id": default["id"]})
            })
            .collect();
        let body = json!({"clarification_id": round.body["clarification_id"], "answers": answers});
        let (status, bytes) = raw_body(api, "/api/v1/query/clarify", body).await;
        assert_eq!(status, StatusCode::OK, "{}", String::from_utf8_lossy(&bytes));
        check(api, &bytes).await;
    })
    .await;
}

#[tokio::test]
async fn a_cut_inside_a_tie_is_said_and_ties_included_shows_every_tied_row() {
    each_backend(test_config(), async |api| {
        let cut = api
            .ask(json!({"question": "the 3 patients with the most wounds"}))
            .await;
        assert_eq!(cut.status, StatusCode::OK, "{}", cut.body);
        assert_eq!(
            cut.body["table"]["rows"].as_array().map(Vec::len),
            Some(3),
            "{}",
            cut.body
        );
        let all = api
            .ask(json!({"question": "the 3 patients with the most wounds, ties included"}))
            .await;
        assert_eq!(all.status, StatusCode::OK, "{}", all.body);
        assert_eq!(all.body["notice"], Value::Null, "{}", all.body);
        let rows = all.body["table"]["rows"].as_array().expect("rows").len();
        assert!(rows >= 3, "{}", all.body);
        // the notice says exactly how many more rows tie, or nothing when none do
        if rows > 3 {
            let notice = cut.body["notice"].as_str().expect("a notice").to_owned();
            let more = rows - 3;
            let said = if more == 1 {
                "1 more row ties with the last one shown".to_owned()
            } else {
                format!("{more} more rows tie with the last one shown")
            };
            assert!(notice.starts_with(&said), "{notice} / {said}");
        } else {
            assert_eq!(cut.body["notice"], Value::Null, "{}", cut.body);
        }
    })
    .await;
}
