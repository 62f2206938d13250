//! Feedback and the whole history through the real router (issue 15, points 3 and 7), on
//! SQLite and PostgreSQL: a vote on an answer round-trips and a later one replaces it;
//! a thumbs-up counts the preference the answer used as successful, once; a follow-up
//! counts the answer it follows; bad votes are 400/422 with their codes; someone else's
//! or an unknown id is 404; the round's "helpful?" vote; the form posts and their
//! confirmations; refused questions in History with their message, filterable.

mod common;

use axum::http::{Method, StatusCode};
use common::api::{Api, test_config};
use serde_json::{Value, json};

const SERIOUS: &str = "term:serious@wounds";

async fn each_backend(test: impl AsyncFn(&Api)) {
    for db in common::all_backends().await {
        let api = Api::start(db, test_config()).await;
        test(&api).await;
        api.finish().await;
    }
}

/// alice asks "show me serious wounds" and answers "infected": (answer, round id).
async fn answered(api: &Api) -> (Value, String) {
    let round = api.ask(json!({"question": "show me serious wounds"})).await;
    assert_eq!(round.status, StatusCode::ACCEPTED, "{}", round.body);
    let cid = round.body["clarification_id"].as_str().unwrap().to_owned();
    let a = api
        .clarify(
            json!({"clarification_id": cid, "answers": [{"question_id": SERIOUS, "option_id": "infected"}]}),
        )
        .await;
    assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    (a.body, cid)
}

/// Posts the answer's feedback form as the browser does (`POST /feedback`).
async fn vote(api: &Api, token: &str, form: &str) -> (StatusCode, String, Option<String>) {
    api.page(token, Method::POST, "/feedback", Some(form)).await
}

async fn successes(api: &Api, option: &str) -> i64 {
    api.state
        .store
        .preferences_for(api.alice_id, SERIOUS)
        .await
        .unwrap()
        .iter()
        .find(|p| p.choice == server::store::PreferenceChoice::Option(option.into()))
        .map(|p| p.successes)
        .unwrap_or(-1)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn answer_feedback_round_trips_replaces_counts_success_once_and_refuses_bad_votes() {
    each_backend(async |api| {
        let (answer, _) = answered(api).await;
        let hid = answer["history_id"].as_str().unwrap();
        let path = format!("/api/v1/history/{hid}/feedback");
        assert_eq!(successes(api, "infected").await, 0, "nothing counted yet");

        // Thumbs down with a reason and a comment, stored as sent.
        let down = api
            .call(
                &api.alice,
                Method::PUT,
                &path,
                Some(
                    json!({"rating": "down", "reason": "wrong_cohort", "comment": "  counted healed ones  "}),
                ),
            )
            .await;
        assert_eq!(down.status, StatusCode::OK, "{}", down.body);
        assert_eq!(down.body["rating"], "down");
        assert_eq!(down.body["reason"], "wrong_cohort");
        assert_eq!(down.body["comment"], "counted healed ones");
        assert_eq!(down.body["successes_counted"], 0);
        assert_eq!(successes(api, "infected").await, 0, "a thumbs down is no success");

        // A later thumbs up replaces it (one row) and counts the choice once.
        let up = api
            .call(&api.alice, Method::PUT, &path, Some(json!({"rating": "up"})))
            .await;
        assert_eq!(up.status, StatusCode::OK, "{}", up.body);
        assert_eq!(up.body["successes_counted"], 1, "{}", up.body);
        assert!(up.body.get("reason").is_none(), "{}", up.body);
        assert_eq!(successes(api, "infected").await, 1);
        let again = api
            .call(&api.alice, Method::PUT, &path, Some(json!({"rating": "up"})))
            .await;
        assert_eq!(again.body["successes_counted"], 0, "counted once per answer");
        assert_eq!(successes(api, "infected").await, 1);
        let stored = api
            .state
            .store
            .answer_feedback(api.alice_id, &server::store::HistoryId::new(hid.to_owned()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.rating, server::store::Rating::Up);

        // Bad votes: the documented codes and statuses, nothing changed.
        for (body, status, code) in [
            (json!({"rating": "sideways"}), 400, "bad_rating"),
            (json!({"rating": "down", "reason": "ugly"}), 400, "bad_reason"),
            (
                json!({"rating": "down", "comment": "x".repeat(1001)}),
                400,
                "comment_too_long",
            ),
            (
                json!({"rating": "up", "reason": "other"}),
                422,
                "reason_with_thumbs_up",
            ),
            (
                json!({"rating": "up", "comment": "great"}),
                422,
                "reason_with_thumbs_up",
            ),
            (json!({"reason": "other"}), 400, "invalid_json_fields"),
        ] {
            let r = api.call(&api.alice, Method::PUT, &path, Some(body.clone())).await;
            assert_eq!(r.status.as_u16(), status, "{body}: {}", r.body);
            assert_eq!(r.body["code"], code, "{body}");
        }
        // Someone else's answer and unknown or malformed ids: 404, never a 500.
        for (token, p) in [
            (&api.bob, path.clone()),
            (
                &api.alice,
                "/api/v1/history/00000000000000000000000000000000/feedback".to_string(),
            ),
            (&api.alice, "/api/v1/history/not-an-id/feedback".to_string()),
        ] {
            let r = api
                .call(token, Method::PUT, &p, Some(json!({"rating": "up"})))
                .await;
            assert_eq!(r.status, StatusCode::NOT_FOUND, "{p}: {}", r.body);
            assert_eq!(r.body["code"], "not_found");
        }
        let still = api
            .state
            .store
            .answer_feedback(api.alice_id, &server::store::HistoryId::new(hid.to_owned()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            still.rating,
            server::store::Rating::Up,
            "refused votes changed nothing"
        );
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_counts_the_answer_it_follows_as_used_without_edits() {
    each_backend(async |api| {
        let (answer, _) = answered(api).await;
        let thread = answer["thread_id"].as_str().unwrap();
        assert_eq!(successes(api, "infected").await, 0);
        let next = api
            .ask(json!({"question": "only the diabetic patients", "thread_id": thread, "interactive": false}))
            .await;
        assert!(next.status.is_success(), "{}", next.body);
        assert_eq!(
            successes(api, "infected").await,
            1,
            "the followed answer was used"
        );
        // A thumbs-up on that answer afterwards does not count it again.
        let hid = answer["history_id"].as_str().unwrap();
        let up = api
            .call(
                &api.alice,
                Method::PUT,
                &format!("/api/v1/history/{hid}/feedback"),
                Some(json!({"rating": "up"})),
            )
            .await;
        assert_eq!(up.body["successes_counted"], 0, "{}", up.body);
        assert_eq!(successes(api, "infected").await, 1);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clarification_feedback_is_per_user_and_replaced_by_a_later_vote() {
    each_backend(async |api| {
        let round = api.ask(json!({"question": "show me serious wounds"})).await;
        let cid = round.body["clarification_id"].as_str().unwrap();
        let path = format!("/api/v1/clarifications/{cid}/feedback");
        let yes = api.call(&api.alice, Method::PUT, &path, Some(json!({"helpful": true}))).await;
        assert_eq!(yes.status, StatusCode::OK, "{}", yes.body);
        assert_eq!(yes.body, json!({"clarification_id": cid, "helpful": true}));
        let no = api.call(&api.alice, Method::PUT, &path, Some(json!({"helpful": false}))).await;
        assert_eq!(no.body["helpful"], false);
        let id = server::store::RoundId::new(cid.to_owned());
        assert_eq!(
            api.state.store.clarification_feedback(api.alice_id, &id).await.unwrap(),
            Some(false)
        );
        let foreign = api.call(&api.bob, Method::PUT, &path, Some(json!({"helpful": true}))).await;
        assert_eq!(foreign.status, StatusCode::NOT_FOUND, "{}", foreign.body);
        let unknown = api
            .call(&api.alice, Method::PUT, "/api/v1/clarifications/zz/feedback", Some(json!({"helpful": true})))
            .await;
        assert_eq!(unknown.status, StatusCode::NOT_FOUND);
        let bad = api.call(&api.alice, Method::PUT, &path, Some(json!({"helpful": "very"}))).await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST, "{}", bad.body);
        // The round can still be answered: a vote changes nothing of it.
        let a = api
            .clarify(json!({"clarification_id": cid, "answers": [{"question_id": SERIOUS, "option_id": "infected"}]}))
            .await;
        assert_eq!(a.status, StatusCode::OK, "{}", a.body);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_feedback_forms_post_and_confirm() {
    each_backend(async |api| {
        let (answer, cid) = answered(api).await;
        let hid = answer["history_id"].as_str().unwrap();
        let thread = answer["thread_id"].as_str().unwrap();
        // Thumbs down with a reason: back to the thread, which confirms it.
        let (status, _, location) = vote(
            api,
            &api.alice,
            &format!("history_id={hid}&rating=down&reason=wrong_numbers&comment=too%20high"),
        )
        .await;
        assert_eq!(status, StatusCode::SEE_OTHER);
        let location = location.unwrap();
        assert_eq!(location, format!("/threads/{thread}?feedback=sent"));
        let (status, html, _) = api.page(&api.alice, Method::GET, &location, None).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            html.contains("data-testid=\"feedback-sent\""),
            "the thread confirms the vote"
        );
        assert!(
            html.contains("action=/feedback class=fb>"),
            "and still offers the form"
        );
        let stored = api
            .state
            .store
            .answer_feedback(api.alice_id, &server::store::HistoryId::new(hid.to_owned()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(stored.reason, Some(server::store::FeedbackReason::WrongNumbers));
        assert_eq!(stored.comment.as_deref(), Some("too high"));
        // A bare thumbs down (the empty "Choose a reason" is no reason): the thread says it
        // was noted and offers the optional reason form (server markup).
        let (_, _, location) = vote(
            api,
            &api.alice,
            &format!("history_id={hid}&rating=down&reason=&comment="),
        )
        .await;
        let location = location.unwrap();
        assert_eq!(location, format!("/threads/{thread}?feedback=down&answer={hid}"));
        let (_, html, _) = api.page(&api.alice, Method::GET, &location, None).await;
        assert!(
            html.contains("data-testid=\"feedback-reason\""),
            "the reason form"
        );
        assert!(html.contains(&format!("value=\"{hid}\"")), "for that answer");
        // Only a hex id is taken from the address.
        let (_, html, _) = api
            .page(
                &api.alice,
                Method::GET,
                &format!("/threads/{thread}?feedback=down&answer=%22%3E%3Cb%3Ehi"),
                None,
            )
            .await;
        assert!(!html.contains("feedback-reason") && !html.contains("<b>hi"));
        // A reason with "👍 Yes" (not in the form, but posted anyway) is ignored.
        let (_, _, location) = vote(
            api,
            &api.alice,
            &format!("history_id={hid}&rating=up&reason=other&comment=x"),
        )
        .await;
        assert_eq!(location.unwrap(), format!("/threads/{thread}?feedback=sent"));
        let up = api
            .state
            .store
            .answer_feedback(api.alice_id, &server::store::HistoryId::new(hid.to_owned()))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (up.rating, up.reason, up.comment),
            (server::store::Rating::Up, None, None)
        );
        // Bob's vote on alice's answer, or a made-up rating: History explains.
        let (_, _, location) = vote(api, &api.bob, &format!("history_id={hid}&rating=up")).await;
        assert_eq!(location.as_deref(), Some("/history?feedback_error=not_found"));
        let (_, _, location) = vote(api, &api.alice, &format!("history_id={hid}&rating=meh")).await;
        assert_eq!(location.as_deref(), Some("/history?feedback_error=bad_input"));
        let (_, html, _) = api
            .page(&api.alice, Method::GET, "/history?feedback_error=bad_input", None)
            .await;
        assert!(html.contains("data-testid=\"feedback-error\""));

        // The panel's vote answers into its frame, which only this site may frame.
        let res = vote(api, &api.alice, &format!("clarification_id={cid}&helpful=yes")).await;
        assert_eq!(res.0, StatusCode::OK);
        assert!(res.1.contains("noted as helpful"), "{}", res.1);
        let (status, html, _) = vote(api, &api.bob, &format!("clarification_id={cid}&helpful=no")).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert!(html.contains("can no longer be rated"));
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_questions_are_in_history_with_their_message_and_filterable() {
    each_backend(async |api| {
        answered(api).await;
        let refused = api
            .ask(json!({"question": "delete all wounds at Riverside"}))
            .await;
        assert_eq!(
            refused.status,
            StatusCode::UNPROCESSABLE_ENTITY,
            "{}",
            refused.body
        );
        let message = refused.body["message"].as_str().unwrap().to_owned();

        let list = |show: &'static str| async move {
            let r = api
                .call(&api.alice, Method::GET, &format!("/api/v1/history{show}"), None)
                .await;
            assert_eq!(r.status, StatusCode::OK, "{show}: {}", r.body);
            r.body
                .as_array()
                .unwrap()
                .iter()
                .map(|h| {
                    (
                        h["question"].as_str().unwrap().to_owned(),
                        h["status"].as_str().unwrap().to_owned(),
                    )
                })
                .collect::<Vec<_>>()
        };
        let default = list("").await;
        assert_eq!(
            default,
            [("show me serious wounds".to_owned(), "answered".to_owned())]
        );
        assert_eq!(
            list("?show=all").await,
            [
                ("delete all wounds at Riverside".to_owned(), "refused".to_owned()),
                ("show me serious wounds".to_owned(), "answered".to_owned())
            ]
        );
        assert_eq!(list("?show=refused").await.len(), 1);
        assert!(list("?show=failed").await.is_empty());
        let r = api
            .call(&api.alice, Method::GET, "/api/v1/history?show=refused", None)
            .await;
        assert_eq!(r.body[0]["message"], message.as_str(), "the message the user saw");
        assert!(
            r.body[0].get("thread_id").is_none(),
            "a refused question leaves no thread"
        );
        let bad = api
            .call(&api.alice, Method::GET, "/api/v1/history?show=everything", None)
            .await;
        assert_eq!(bad.status, StatusCode::BAD_REQUEST);
        assert_eq!(bad.body["code"], "bad_parameter");
        // Bob sees none of it.
        let theirs = api
            .call(&api.bob, Method::GET, "/api/v1/history?show=all", None)
            .await;
        assert!(theirs.body.as_array().unwrap().is_empty());
        // A refused entry cannot be voted on or re-run.
        let rid = r.body[0]["id"].as_str().unwrap();
        let vote = api
            .call(
                &api.alice,
                Method::PUT,
                &format!("/api/v1/history/{rid}/feedback"),
                Some(json!({"rating": "down"})),
            )
            .await;
        assert_eq!(vote.status, StatusCode::NOT_FOUND);

        // The History page lists it with its message, under "all" (the page's default)
        // and "refused", not under "answered".
        for (path, shown) in [
            ("/history", true),
            ("/history?show=refused", true),
            ("/history?show=answered", false),
        ] {
            let (status, html, _) = api.page(&api.alice, Method::GET, path, None).await;
            assert_eq!(status, StatusCode::OK);
            assert_eq!(html.contains("data-testid=\"history-message\""), shown, "{path}");
        }
        let (_, html, _) = api
            .page(&api.alice, Method::GET, "/history?show=failed", None)
            .await;
        assert!(html.contains("No failed questions."), "an empty filter says so");
        // The refused question is not an answer in Analytics' counts.
        let counts = api
            .state
            .store
            .analytics(chrono::Utc::now(), 2, 5)
            .await
            .unwrap()
            .totals();
        assert_eq!(counts.auto_resolved + counts.answered_after_round, 1);
    })
    .await;
}
