//! One conformance suite for Clarion's own tables, run against SQLite and PostgreSQL.
//!
//! Every test runs the same assertions on each backend (`common::all_backends`),
//! with the clock passed in so expiry is deterministic. Ownership is checked
//! everywhere: another user's id must behave exactly like a missing one.

mod common;

use app::protocol::{Sensitivity, Settings};
use chrono::{DateTime, Duration, TimeZone, Utc};
use server::store::{
    AnswerChoice, AuditOutcome, ClinicScope, FeedbackReason, HistoryId, MessageRole, NewAnswer,
    NewAuditEntry, NewHistoryEntry, NewMessage, NewRound, NewSaved, PreferenceChoice, PreferenceEvidence,
    Rating, Role, Round, RoundId, RoundStatus, SavedCounts, SavedId, Store, StoreError, Thread, ThreadId,
    User,
};

fn t0() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 1, 9, 0, 0).unwrap()
}

async fn two_users(store: &Store) -> (User, User) {
    let (a, _) = store
        .ensure_user("nurse", "Nurse Kim", Role::Clinician, "pw-nurse")
        .await
        .unwrap();
    let (b, _) = store
        .ensure_user("other", "Dr. Other", Role::Clinician, "pw-other")
        .await
        .unwrap();
    (a, b)
}

fn new_round<'a>(thread: &'a ThreadId, asked: &'a [String], expires_at: DateTime<Utc>) -> NewRound<'a> {
    NewRound {
        thread_id: thread,
        question: "Show me patients with serious wounds",
        round_number: 1,
        previous_round: None,
        understanding_json: r#"{"entity":"patients","filters":[]}"#,
        questions_json: r#"[{"id":"serious","options":["depth","infection"]}]"#,
        asked_ambiguity_ids: asked,
        expires_at,
    }
}

/// True for the store's "no such thing (for you)" (a place is only looked at, not moved).
macro_rules! not_found {
    ($r:expr) => {
        matches!($r, Err(StoreError::NotFound))
    };
}

/// Runs `test` on a fresh database of every backend, dropping each afterwards.
async fn each_backend(test: impl AsyncFn(&common::TestDb)) {
    for t in common::all_backends().await {
        test(&t).await;
        t.cleanup().await;
    }
}

/// The backend of a test database, a store over it, and its two users.
async fn users_on(t: &common::TestDb) -> (server::db::Backend, Store, User, User) {
    let store = Store::new(t.db.clone());
    let (a, other) = two_users(&store).await;
    (t.db.backend(), store, a, other)
}

/// A store over a test database, its two users, and a pending round (15 minutes to
/// live from `t0`) in a thread of the first.
struct WithRound {
    b: server::db::Backend,
    store: Store,
    a: User,
    other: User,
    thread: Thread,
    round: Round,
}

/// A first round asking nothing yet, open for 15 minutes from `t0`.
fn open_round(thread: &ThreadId) -> NewRound<'_> {
    new_round(thread, &[], t0() + Duration::minutes(15))
}

async fn with_round(t: &common::TestDb) -> WithRound {
    let (b, store, a, other) = users_on(t).await;
    let thread = store.create_thread(a.id, "q", t0()).await.unwrap();
    let round = store
        .create_round(a.id, open_round(&thread.id), t0())
        .await
        .unwrap();
    WithRound {
        b,
        store,
        a,
        other,
        thread,
        round,
    }
}

fn option(ambiguity: &str, option: &str) -> NewAnswer {
    NewAnswer {
        ambiguity_id: ambiguity.into(),
        choice: AnswerChoice::Option(option.into()),
        remember: false,
    }
}

// ---------------------------------------------------------------- users, settings

#[tokio::test]
async fn settings_default_then_persist_and_update_on_every_backend() {
    each_backend(async |t| {
        let backend = t.db.backend();
        let store = Store::new(t.db.clone());
        let (user, created) = store
            .ensure_user("nurse", "Nurse Kim", Role::Clinician, "pw")
            .await
            .unwrap();
        assert!(created, "{backend:?}");
        assert_eq!(
            store.settings(user.id).await.unwrap(),
            Settings::default(),
            "{backend:?}"
        );

        let s = Settings {
            skip_clarifications: true,
            sensitivity: Sensitivity::More,
        };
        store.save_settings(user.id, &s).await.unwrap();
        assert_eq!(store.settings(user.id).await.unwrap(), s, "{backend:?}");

        let s2 = Settings {
            skip_clarifications: false,
            sensitivity: Sensitivity::Fewer,
        };
        store.save_settings(user.id, &s2).await.unwrap();
        assert_eq!(store.settings(user.id).await.unwrap(), s2, "{backend:?}");
    })
    .await;
}

#[tokio::test]
async fn ensure_user_is_idempotent_and_keeps_users_apart() {
    each_backend(async |t| {
        let store = Store::new(t.db.clone());
        let (a, created_a) = store.ensure_user("a", "A", Role::Clinician, "pw").await.unwrap();
        let (a2, created_again) = store
            .ensure_user("a", "Someone else", Role::Admin, "x")
            .await
            .unwrap();
        assert!(created_a && !created_again);
        assert_eq!(a, a2, "an existing account is never overwritten");
        let (b, _) = store.ensure_user("b", "B", Role::Admin, "pw").await.unwrap();
        assert!(b.is_admin && !a.is_admin);

        store
            .save_settings(
                a.id,
                &Settings {
                    skip_clarifications: true,
                    sensitivity: Sensitivity::More,
                },
            )
            .await
            .unwrap();
        assert_eq!(
            store.settings(b.id).await.unwrap(),
            Settings::default(),
            "b does not see a's settings"
        );
        let names: Vec<String> = store
            .list_users()
            .await
            .unwrap()
            .into_iter()
            .map(|u| u.username)
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(store.user_by_id(b.id).await.unwrap(), b);
        assert!(not_found!(store.user_by_id(b.id + 100).await));
    })
    .await;
}

#[tokio::test]
async fn hostile_usernames_are_data_not_sql() {
    each_backend(async |t| {
        let store = Store::new(t.db.clone());
        let evil = "x'; DROP TABLE users; --";
        let (u, _) = store
            .ensure_user(evil, "Evil", Role::Clinician, "pw")
            .await
            .unwrap();
        assert_eq!(u.username, evil);
        assert!(store.user_by_username(evil).await.unwrap().is_some());
        assert!(store.user_by_username("x").await.unwrap().is_none());
    })
    .await;
}

#[tokio::test]
async fn migrations_are_idempotent() {
    each_backend(async |t| {
        t.db.migrate().await.expect("second migration run is a no-op");
        let again = server::db::Database::connect_and_migrate(&t.url)
            .await
            .expect("reconnect + migrate");
        again.ping().await.unwrap();
        again.close().await;
    })
    .await;
}

#[tokio::test]
async fn a_taken_username_is_a_conflict_and_passwords_are_stored_only_as_argon2_hashes() {
    each_backend(async |t| {
        let b = t.db.backend();
        let store = Store::new(t.db.clone());
        store
            .create_user("dana", "Dana", Role::Clinician, "first-password")
            .await
            .unwrap();
        let again = store.create_user("dana", "Dana 2", Role::Admin, "x").await;
        assert!(matches!(again, Err(StoreError::Conflict(_))), "{b:?}: {again:?}");

        let (user, hash) = store.credentials("dana").await.unwrap().unwrap();
        assert_eq!(user.display_name, "Dana");
        assert!(hash.starts_with("$argon2id$"), "{b:?}: {hash}");
        assert!(!hash.contains("first-password"));
        assert!(store.credentials("nobody").await.unwrap().is_none());
    })
    .await;
}

#[tokio::test]
async fn resetting_a_password_replaces_the_hash_and_ends_every_session() {
    each_backend(async |t| {
        let b = t.db.backend();
        let store = Store::new(t.db.clone());
        let (user, _) = store
            .ensure_user("dana", "Dana", Role::Clinician, "old-password")
            .await
            .unwrap();
        let (_, old_hash) = store.credentials("dana").await.unwrap().unwrap();
        store
            .create_session(user.id, "digest-1", t0(), t0() + Duration::hours(1))
            .await
            .unwrap();
        store
            .create_session(user.id, "digest-2", t0(), t0() + Duration::hours(1))
            .await
            .unwrap();

        store.set_password("dana", "new-password").await.unwrap();
        let (_, new_hash) = store.credentials("dana").await.unwrap().unwrap();
        assert_ne!(old_hash, new_hash, "{b:?}");
        for digest in ["digest-1", "digest-2"] {
            assert!(store.session_user(digest, t0()).await.unwrap().is_none(), "{b:?}");
        }
        assert!(not_found!(store.set_password("nobody", "x").await));
    })
    .await;
}

// ---------------------------------------------------------------- sessions, tokens, failures

#[tokio::test]
async fn a_session_resolves_to_its_user_until_it_expires_or_is_deleted() {
    each_backend(async |t| {
        let (b, store, a, other) = users_on(t).await;
        let expires = t0() + Duration::hours(12);
        store
            .create_session(a.id, "digest-a", t0(), expires)
            .await
            .unwrap();
        store
            .create_session(other.id, "digest-b", t0(), expires)
            .await
            .unwrap();

        assert_eq!(
            store.session_user("digest-a", t0()).await.unwrap(),
            Some(a.clone()),
            "{b:?}"
        );
        let just_before = expires - Duration::microseconds(1);
        assert_eq!(
            store.session_user("digest-a", just_before).await.unwrap(),
            Some(a.clone())
        );
        assert_eq!(
            store.session_user("digest-a", expires).await.unwrap(),
            None,
            "{b:?}: expired at expires_at"
        );
        assert_eq!(store.session_user("unknown", t0()).await.unwrap(), None);

        assert!(store.delete_session("digest-a").await.unwrap());
        assert!(!store.delete_session("digest-a").await.unwrap());
        assert_eq!(store.session_user("digest-a", t0()).await.unwrap(), None);
        assert_eq!(
            store.session_user("digest-b", t0()).await.unwrap(),
            Some(other.clone())
        );

        assert_eq!(store.purge_expired_sessions(expires).await.unwrap(), 1, "{b:?}");
        assert_eq!(store.session_user("digest-b", t0()).await.unwrap(), None);

        store.create_session(a.id, "s1", t0(), expires).await.unwrap();
        store.create_session(a.id, "s2", t0(), expires).await.unwrap();
        assert_eq!(store.delete_sessions_of(a.id).await.unwrap(), 2);
    })
    .await;
}

#[tokio::test]
async fn api_tokens_resolve_to_their_owner_and_are_listed_and_revoked_per_user() {
    each_backend(async |t| {
        let (b, store, a, other) = users_on(t).await;
        let tok = store
            .create_api_token(a.id, "nightly export", "tok-digest", "clarion_ab12cd", t0(), None)
            .await
            .unwrap();
        assert_eq!(tok.name, "nightly export");
        assert_eq!(tok.last_used_at, None);

        let later = t0() + Duration::minutes(5);
        assert_eq!(
            store.api_token_user("tok-digest", later).await.unwrap(),
            Some(a.clone()),
            "{b:?}"
        );
        assert_eq!(store.api_token_user("nope", later).await.unwrap(), None);
        let listed = store.api_tokens(a.id).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].last_used_at, Some(later), "{b:?}: use is recorded");
        assert_eq!(listed[0].prefix, "clarion_ab12cd");
        assert!(store.api_tokens(other.id).await.unwrap().is_empty());

        assert!(
            not_found!(store.revoke_api_token(other.id, tok.id).await),
            "{b:?}: another user cannot revoke it"
        );
        assert!(store.api_token_user("tok-digest", later).await.unwrap().is_some());
        store.revoke_api_token(a.id, tok.id).await.unwrap();
        assert_eq!(store.api_token_user("tok-digest", later).await.unwrap(), None);
    })
    .await;
}

#[tokio::test]
async fn login_attempts_are_counted_per_pair_account_address_and_minute_within_the_window() {
    each_backend(async |t| {
        let b = t.db.backend();
        let store = Store::new(t.db.clone());
        let mut ids = Vec::new();
        for i in 0..3 {
            ids.push(
                store
                    .begin_login_attempt("demo", "10.0.0.1", t0() + Duration::minutes(i))
                    .await
                    .unwrap(),
            );
        }
        store.begin_login_attempt("demo", "10.0.0.2", t0()).await.unwrap();
        store
            .begin_login_attempt("admin", "10.0.0.1", t0())
            .await
            .unwrap();

        let since = t0() - Duration::minutes(15);
        let minute = t0() + Duration::seconds(90);
        let c = store
            .login_attempt_counts(ids[2], "demo", "10.0.0.1", since, minute)
            .await
            .unwrap();
        assert_eq!((c.pair, c.pair_oldest), (3, Some(t0())), "{b:?}");
        // The account, from any address, without the attempt being checked.
        assert_eq!(
            (c.account_others, c.account_latest),
            (3, Some(t0() + Duration::minutes(1))),
            "{b:?}"
        );
        assert_eq!((c.address, c.address_oldest), (4, Some(t0())), "{b:?}");
        assert_eq!(
            c.last_minute, 1,
            "{b:?}: only the attempt at t0+2m is in the last minute"
        );
        // Only attempts after `since` count.
        let c = store
            .login_attempt_counts(ids[2], "demo", "10.0.0.1", t0(), minute)
            .await
            .unwrap();
        assert_eq!(c.pair, 2);
        let none = store
            .login_attempt_counts(0, "nobody", "10.0.0.9", since, minute)
            .await
            .unwrap();
        assert_eq!((none.pair, none.pair_oldest, none.address), (0, None, 0));

        // A refused attempt is forgotten; a success clears its pair.
        store.forget_login_attempt(ids[2]).await.unwrap();
        let c = store
            .login_attempt_counts(0, "demo", "10.0.0.1", since, minute)
            .await
            .unwrap();
        assert_eq!(c.pair, 2);
        store.clear_login_failures("demo", "10.0.0.1").await.unwrap();
        let c = store
            .login_attempt_counts(0, "demo", "10.0.0.1", since, minute)
            .await
            .unwrap();
        assert_eq!((c.pair, c.account_others), (0, 1), "{b:?}");
        assert_eq!(store.purge_login_failures(t0()).await.unwrap(), 2, "{b:?}");
    })
    .await;
}

#[tokio::test]
async fn threads_and_messages_belong_to_one_user() {
    each_backend(async |t| {
        let (b, store, a, other) = users_on(t).await;
        let thread = store.create_thread(a.id, "Serious wounds", t0()).await.unwrap();
        assert!(thread.id.is_well_formed(), "{b:?}: {}", thread.id);
        assert_eq!((thread.created_at, thread.updated_at), (t0(), t0()));

        let q = store
            .append_message(
                a.id,
                &thread.id,
                NewMessage {
                    role: MessageRole::User,
                    body: "Show me patients with serious wounds",
                    payload_json: None,
                    from_suggestion: false,
                },
                t0() + Duration::seconds(1),
            )
            .await
            .unwrap();
        let answer_time = t0() + Duration::seconds(2);
        store
            .append_message(
                a.id,
                &thread.id,
                NewMessage {
                    role: MessageRole::Assistant,
                    body: "42 patients have a full-thickness wound.",
                    payload_json: Some(r#"{"plan":{"entity":"patients"}}"#),
                    from_suggestion: false,
                },
                answer_time,
            )
            .await
            .unwrap();

        let messages = store.messages(a.id, &thread.id).await.unwrap();
        assert_eq!(messages.len(), 2, "{b:?}");
        assert_eq!(messages[0], q);
        assert_eq!(messages[1].role, MessageRole::Assistant);
        assert_eq!(
            messages[1].payload_json.as_deref(),
            Some(r#"{"plan":{"entity":"patients"}}"#)
        );
        assert_eq!(
            store.thread(a.id, &thread.id).await.unwrap().updated_at,
            answer_time,
            "{b:?}: appending marks the thread active"
        );

        // Another user: not found, and nothing is written.
        assert!(not_found!(store.thread(other.id, &thread.id).await));
        assert!(not_found!(store.messages(other.id, &thread.id).await));
        let sneaky = store
            .append_message(
                other.id,
                &thread.id,
                NewMessage {
                    role: MessageRole::User,
                    body: "injected",
                    payload_json: None,
                    from_suggestion: false,
                },
                t0(),
            )
            .await;
        assert!(not_found!(sneaky), "{b:?}: {sneaky:?}");
        assert_eq!(store.messages(a.id, &thread.id).await.unwrap().len(), 2);
        assert!(store.threads(other.id, 10).await.unwrap().is_empty());
        assert!(not_found!(store.delete_thread(other.id, &thread.id).await));
        assert!(not_found!(store.thread(a.id, &ThreadId::random()).await));
    })
    .await;
}

#[tokio::test]
async fn threads_are_listed_most_recently_active_first() {
    each_backend(async |t| {
        let store = Store::new(t.db.clone());
        let (a, _) = two_users(&store).await;
        let old = store.create_thread(a.id, "old", t0()).await.unwrap();
        let new = store
            .create_thread(a.id, "new", t0() + Duration::minutes(1))
            .await
            .unwrap();
        let titles = |v: Vec<server::store::Thread>| v.into_iter().map(|t| t.title).collect::<Vec<_>>();
        assert_eq!(titles(store.threads(a.id, 10).await.unwrap()), ["new", "old"]);
        store
            .append_message(
                a.id,
                &old.id,
                NewMessage {
                    role: MessageRole::User,
                    body: "follow-up",
                    payload_json: None,
                    from_suggestion: false,
                },
                t0() + Duration::minutes(2),
            )
            .await
            .unwrap();
        assert_eq!(titles(store.threads(a.id, 10).await.unwrap()), ["old", "new"]);
        assert_eq!(titles(store.threads(a.id, 1).await.unwrap()), ["old"]);
        store.delete_thread(a.id, &new.id).await.unwrap();
        assert_eq!(titles(store.threads(a.id, 10).await.unwrap()), ["old"]);
    })
    .await;
}

// ---------------------------------------------------------------- clarification rounds

#[tokio::test]
async fn a_round_stores_everything_needed_to_resume_it() {
    each_backend(async |t| {
        let (b, store, a, _) = users_on(t).await;
        let thread = store.create_thread(a.id, "q", t0()).await.unwrap();
        let asked = vec!["serious".to_string(), "time_window".to_string()];
        let expires = t0() + Duration::minutes(15);
        let created = store
            .create_round(a.id, new_round(&thread.id, &asked, expires), t0())
            .await
            .unwrap();
        assert!(created.id.is_well_formed(), "{b:?}");
        assert_eq!(created.status, RoundStatus::Pending);

        // What another replica sees when it loads the round by id.
        let loaded = store
            .round(a.id, &created.id, t0() + Duration::minutes(1))
            .await
            .unwrap();
        assert_eq!(loaded, created, "{b:?}");
        assert_eq!(loaded.thread_id, thread.id);
        assert_eq!(loaded.question, "Show me patients with serious wounds");
        assert_eq!(loaded.understanding_json, r#"{"entity":"patients","filters":[]}"#);
        assert_eq!(
            loaded.questions_json,
            r#"[{"id":"serious","options":["depth","infection"]}]"#
        );
        assert_eq!(loaded.asked_ambiguity_ids, asked);
        assert_eq!(loaded.round_number, 1);
        assert_eq!(
            (loaded.created_at, loaded.expires_at, loaded.closed_at),
            (t0(), expires, None)
        );

        // A second round links to the first.
        let second = store
            .create_round(
                a.id,
                NewRound {
                    round_number: 2,
                    previous_round: Some(&created.id),
                    ..new_round(&thread.id, &[], expires)
                },
                t0(),
            )
            .await
            .unwrap();
        assert_eq!(second.previous_round_id.as_ref(), Some(&created.id));
        assert!(second.asked_ambiguity_ids.is_empty());
        let in_thread = store.rounds_in_thread(a.id, &thread.id, t0()).await.unwrap();
        assert_eq!(
            in_thread.iter().map(|r| r.round_number).collect::<Vec<_>>(),
            [1, 2],
            "{b:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_round_is_answered_once_with_its_answers_and_a_second_answer_is_a_conflict() {
    each_backend(async |t| {
        let WithRound {
            b, store, a, round, ..
        } = with_round(t).await;
        let answers = vec![
            NewAnswer {
                remember: true,
                ..option("serious", "full_thickness")
            },
            NewAnswer {
                ambiguity_id: "area".into(),
                choice: AnswerChoice::Custom(r#"{"op":">","value":15,"unit":"cm2"}"#.into()),
                remember: false,
            },
            NewAnswer {
                ambiguity_id: "time_window".into(),
                choice: AnswerChoice::DontKnow,
                remember: false,
            },
        ];
        let when = t0() + Duration::minutes(3);
        let answered = store.answer_round(a.id, &round.id, &answers, when).await.unwrap();
        assert_eq!(answered.status, RoundStatus::Answered, "{b:?}");
        assert_eq!(answered.closed_at, Some(when));

        let stored = store.answers(a.id, &round.id).await.unwrap();
        let got: Vec<(String, AnswerChoice, bool)> = stored
            .into_iter()
            .map(|x| (x.ambiguity_id, x.choice, x.remember))
            .collect();
        let want: Vec<(String, AnswerChoice, bool)> = answers
            .iter()
            .map(|x| (x.ambiguity_id.clone(), x.choice.clone(), x.remember))
            .collect();
        assert_eq!(got, want, "{b:?}");

        // A different question id, so only the status check can refuse it.
        let again = store
            .answer_round(a.id, &round.id, &[option("wound_type", "pressure")], when)
            .await;
        assert!(matches!(again, Err(StoreError::Conflict(_))), "{b:?}: {again:?}");
        assert!(matches!(
            store.pending_round(a.id, &round.id, when).await,
            Err(StoreError::Conflict(_))
        ));
        assert_eq!(
            store.answers(a.id, &round.id).await.unwrap().len(),
            3,
            "nothing added"
        );
    })
    .await;
}

#[tokio::test]
async fn two_replicas_racing_to_answer_the_same_round_produce_exactly_one_winner() {
    each_backend(async |t| {
        let b = t.db.backend();
        // Two stores over two pools: as two server processes would be.
        let replica = server::db::Database::connect(&t.url).await.unwrap();
        let one = Store::new(t.db.clone());
        let two = Store::new(replica.clone());
        let (a, _) = two_users(&one).await;
        let thread = one.create_thread(a.id, "q", t0()).await.unwrap();
        for _ in 0..5 {
            let round = one
                .create_round(a.id, open_round(&thread.id), t0())
                .await
                .unwrap();
            // Different question ids, so only the compare-and-set can stop the loser.
            let first = [option("serious", "full_thickness")];
            let second = [option("wound_type", "pressure")];
            let (r1, r2) = tokio::join!(
                one.answer_round(a.id, &round.id, &first, t0()),
                two.answer_round(a.id, &round.id, &second, t0()),
            );
            let wins = [r1.is_ok(), r2.is_ok()].iter().filter(|w| **w).count();
            assert_eq!(wins, 1, "{b:?}: {r1:?} / {r2:?}");
            for r in [r1, r2] {
                assert!(matches!(r, Ok(_) | Err(StoreError::Conflict(_))), "{b:?}: {r:?}");
            }
            assert_eq!(one.answers(a.id, &round.id).await.unwrap().len(), 1, "{b:?}");
        }
        replica.close().await;
    })
    .await;
}

#[tokio::test]
async fn an_expired_round_is_reported_expired_and_cannot_be_answered_or_cancelled() {
    each_backend(async |t| {
        let WithRound {
            b, store, a, round, ..
        } = with_round(t).await;
        let expires = round.expires_at;

        let just_before = expires - Duration::microseconds(1);
        assert_eq!(
            store
                .pending_round(a.id, &round.id, just_before)
                .await
                .unwrap()
                .id,
            round.id
        );
        assert_eq!(
            store.round(a.id, &round.id, expires).await.unwrap().status,
            RoundStatus::Expired,
            "{b:?}: a round is expired from expires_at on"
        );
        assert!(matches!(
            store.pending_round(a.id, &round.id, expires).await,
            Err(StoreError::Expired)
        ));
        let late = store
            .answer_round(a.id, &round.id, &[option("serious", "full_thickness")], expires)
            .await;
        assert!(matches!(late, Err(StoreError::Expired)), "{b:?}: {late:?}");
        assert!(
            store.answers(a.id, &round.id).await.unwrap().is_empty(),
            "nothing stored"
        );
        assert!(matches!(
            store.abandon_round(a.id, &round.id, expires).await,
            Err(StoreError::Expired)
        ));

        // Housekeeping rewrites the row; reads said "expired" already.
        assert_eq!(store.expire_rounds(just_before).await.unwrap(), 0, "{b:?}");
        assert_eq!(store.expire_rounds(expires).await.unwrap(), 1, "{b:?}");
        let r = store.round(a.id, &round.id, t0()).await.unwrap();
        assert_eq!(
            (r.status, r.closed_at),
            (RoundStatus::Expired, Some(expires)),
            "{b:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_cancelled_round_is_closed_for_good() {
    each_backend(async |t| {
        let WithRound {
            b, store, a, round, ..
        } = with_round(t).await;
        let cancelled = store.abandon_round(a.id, &round.id, t0()).await.unwrap();
        assert_eq!(cancelled.status, RoundStatus::Abandoned, "{b:?}");
        assert!(matches!(
            store
                .answer_round(a.id, &round.id, &[option("serious", "x")], t0())
                .await,
            Err(StoreError::Conflict(_))
        ));
        assert!(matches!(
            store.abandon_round(a.id, &round.id, t0()).await,
            Err(StoreError::Conflict(_))
        ));
        assert_eq!(
            store.expire_rounds(t0() + Duration::days(1)).await.unwrap(),
            0,
            "{b:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn another_users_round_is_not_found_everywhere_and_stays_pending() {
    each_backend(async |t| {
        let WithRound {
            b,
            store,
            a,
            other,
            thread,
            round,
        } = with_round(t).await;

        assert!(
            not_found!(store.round(other.id, &round.id, t0()).await.map(|_| ())),
            "{b:?}"
        );
        assert!(not_found!(
            store.pending_round(other.id, &round.id, t0()).await.map(|_| ())
        ));
        assert!(not_found!(
            store
                .answer_round(other.id, &round.id, &[option("serious", "x")], t0())
                .await
                .map(|_| ())
        ));
        assert!(not_found!(
            store.abandon_round(other.id, &round.id, t0()).await.map(|_| ())
        ));
        assert!(not_found!(store.answers(other.id, &round.id).await.map(|_| ())));
        assert!(not_found!(
            store
                .rounds_in_thread(other.id, &thread.id, t0())
                .await
                .map(|_| ())
        ));
        // Nor can a round be put into someone else's thread.
        assert!(not_found!(
            store
                .create_round(other.id, open_round(&thread.id), t0())
                .await
                .map(|_| ())
        ));
        // An id that was never issued behaves the same.
        assert!(not_found!(
            store.round(a.id, &RoundId::random(), t0()).await.map(|_| ())
        ));
        assert!(not_found!(
            store
                .answer_round(a.id, &RoundId::new("' OR 1=1 --"), &[], t0())
                .await
                .map(|_| ())
        ));

        assert_eq!(
            store.round(a.id, &round.id, t0()).await.unwrap().status,
            RoundStatus::Pending,
            "{b:?}: the owner's round is untouched"
        );
        assert!(
            store
                .rounds_in_thread(a.id, &thread.id, t0())
                .await
                .unwrap()
                .len()
                == 1
        );
    })
    .await;
}

#[tokio::test]
async fn answering_the_same_question_twice_in_one_round_stores_nothing() {
    each_backend(async |t| {
        let WithRound {
            b, store, a, round, ..
        } = with_round(t).await;
        let dup = [option("serious", "a"), option("serious", "b")];
        let r = store.answer_round(a.id, &round.id, &dup, t0()).await;
        assert!(matches!(r, Err(StoreError::Conflict(_))), "{b:?}: {r:?}");
        assert_eq!(
            store.round(a.id, &round.id, t0()).await.unwrap().status,
            RoundStatus::Pending,
            "{b:?}: the transaction rolled back"
        );
        assert!(store.answers(a.id, &round.id).await.unwrap().is_empty());
        store
            .answer_round(a.id, &round.id, &[option("serious", "a")], t0())
            .await
            .unwrap();
    })
    .await;
}

#[tokio::test]
async fn deleting_a_thread_deletes_its_messages_rounds_and_answers() {
    each_backend(async |t| {
        let WithRound {
            b,
            store,
            a,
            thread,
            round,
            ..
        } = with_round(t).await;
        store
            .answer_round(a.id, &round.id, &[option("serious", "a")], t0())
            .await
            .unwrap();
        store.delete_thread(a.id, &thread.id).await.unwrap();
        assert!(not_found!(store.round(a.id, &round.id, t0()).await), "{b:?}");
        assert!(not_found!(store.answers(a.id, &round.id).await));
    })
    .await;
}

/// The writes one answer to a round makes, in one transaction: the new thread it is
/// asked in, the round's answers, what the user said, the audit entry, the history
/// entry, Clarion's message and a learned preference.
async fn answer_writes(
    tx: &mut server::store::StoreTx,
    a: &User,
    thread: &ThreadId,
    round: &RoundId,
) -> Result<(), StoreError> {
    tx.create_thread(a.id, thread, "q", t0()).await?;
    let said = |body| NewMessage {
        role: MessageRole::User,
        body,
        payload_json: None,
        from_suggestion: false,
    };
    tx.append_message(a.id, thread, said("serious = deep"), t0())
        .await?;
    tx.answer_round(a.id, round, &[option("serious", "a")], t0())
        .await?;
    tx.audit(
        NewAuditEntry {
            user_id: Some(a.id),
            sql: "SELECT 1",
            param_count: 0,
            row_count: 1,
            duration_ms: 1,
            outcome: AuditOutcome::Ok,
            scope: Some("all"),
        },
        t0(),
    )
    .await?;
    tx.add_history(
        a.id,
        NewHistoryEntry {
            thread_id: Some(thread),
            question: "q",
            plan_json: "{}",
            sql: "SELECT 1",
            clarifications_json: "{}",
            assumptions_json: "[]",
            row_count: 1,
            duration_ms: 1,
            result_json: None,
            verified_id: None,
            suggestions_shown: None,
        },
        t0(),
    )
    .await?;
    tx.append_message(a.id, thread, said("Serious wounds"), t0())
        .await?;
    let choice = PreferenceChoice::Option("a".into());
    tx.record_preference(
        a.id,
        PreferenceEvidence {
            signature: "serious",
            choice: &choice,
            label: "serious = a",
            remember: false,
            success: false,
        },
        t0(),
    )
    .await?;
    Ok(())
}

#[tokio::test]
async fn a_requests_writes_are_stored_together_when_committed_and_not_at_all_when_one_fails() {
    each_backend(async |t| {
        let WithRound {
            b, store, a, round, ..
        } = with_round(t).await;
        let nothing_written = async |thread: &ThreadId| {
            assert!(not_found!(store.thread(a.id, thread).await), "{b:?}: no thread");
            assert_eq!(
                store.round(a.id, &round.id, t0()).await.unwrap().status,
                RoundStatus::Pending,
                "{b:?}: the round stays open"
            );
            assert!(store.answers(a.id, &round.id).await.unwrap().is_empty(), "{b:?}");
            assert!(store.audit_log_of(a.id, 10).await.unwrap().is_empty(), "{b:?}");
            assert!(store.history(a.id, 10).await.unwrap().is_empty(), "{b:?}");
            assert!(store.preferences(a.id).await.unwrap().is_empty(), "{b:?}");
        };

        // A constraint violation after every other write (the same question answered
        // twice: a unique index) fails the transaction, and none of it is stored.
        let thread = ThreadId::random();
        let mut tx = store.begin().await.unwrap();
        answer_writes(&mut tx, &a, &thread, &round.id).await.unwrap();
        let dup = [option("serious", "a")];
        let r = tx.answer_round(a.id, &round.id, &dup, t0()).await;
        assert!(matches!(r, Err(StoreError::Conflict(_))), "{b:?}: {r:?}");
        drop(tx);
        nothing_written(&thread).await;

        // Not visible to anyone else before the commit; all of it after.
        let mut tx = store.begin().await.unwrap();
        answer_writes(&mut tx, &a, &thread, &round.id).await.unwrap();
        nothing_written(&thread).await;
        tx.commit().await.unwrap();
        let messages = store.messages(a.id, &thread).await.unwrap();
        assert_eq!(messages.len(), 2, "{b:?}");
        assert_eq!(
            store.round(a.id, &round.id, t0()).await.unwrap().status,
            RoundStatus::Answered,
            "{b:?}"
        );
        assert_eq!(store.answers(a.id, &round.id).await.unwrap().len(), 1, "{b:?}");
        assert_eq!(store.audit_log_of(a.id, 10).await.unwrap().len(), 1, "{b:?}");
        let history = store.history(a.id, 10).await.unwrap();
        assert_eq!(history.len(), 1, "{b:?}");
        assert_eq!(history[0].thread_id.as_ref(), Some(&thread), "{b:?}");
        assert_eq!(store.preferences(a.id).await.unwrap().len(), 1, "{b:?}");
    })
    .await;
}

// ---------------------------------------------------------------- preferences

#[tokio::test]
async fn preference_evidence_counts_repeats_and_remembers_one_choice_per_signature() {
    each_backend(async |t| {
        let (b, store, a, _) = users_on(t).await;
        let deep = PreferenceChoice::Option("full_thickness".into());
        let infected = PreferenceChoice::Option("infected".into());
        let evidence = |choice, remember, success| PreferenceEvidence {
            signature: "term:serious|entity:wounds",
            choice,
            label: "serious = full-thickness depth",
            remember,
            success,
        };

        for i in 0..3 {
            let p = store
                .record_preference(a.id, evidence(&deep, false, i != 1), t0() + Duration::minutes(i))
                .await
                .unwrap();
            assert_eq!(p.count, i + 1, "{b:?}: the upsert increments");
        }
        let prefs = store
            .preferences_for(a.id, "term:serious|entity:wounds")
            .await
            .unwrap();
        assert_eq!(prefs.len(), 1, "{b:?}: one row per choice");
        let p = &prefs[0];
        assert_eq!((p.count, p.successes, p.remembered), (3, 2, false), "{b:?}");
        assert_eq!(
            (p.created_at, p.last_used_at),
            (t0(), t0() + Duration::minutes(2))
        );
        assert_eq!(p.choice, deep);

        store
            .record_preference(a.id, evidence(&infected, true, false), t0())
            .await
            .unwrap();
        let remembered = store.remembered_preferences(a.id).await.unwrap();
        assert_eq!(remembered.len(), 1);
        assert_eq!(remembered[0].choice, infected, "{b:?}");

        // Remembering another choice for the same signature forgets the first.
        store
            .record_preference(a.id, evidence(&deep, true, false), t0())
            .await
            .unwrap();
        let remembered = store.remembered_preferences(a.id).await.unwrap();
        assert_eq!(remembered.len(), 1, "{b:?}");
        assert_eq!(
            (remembered[0].choice.clone(), remembered[0].count),
            (deep.clone(), 4)
        );

        // Most used first.
        let ordered = store
            .preferences_for(a.id, "term:serious|entity:wounds")
            .await
            .unwrap();
        assert_eq!(
            ordered.iter().map(|p| p.count).collect::<Vec<_>>(),
            [4, 1],
            "{b:?}"
        );

        // Custom values are separate choices, keyed by their JSON.
        let custom = PreferenceChoice::Custom(r#"{"op":">","value":15}"#.into());
        store
            .record_preference(
                a.id,
                PreferenceEvidence {
                    signature: "threshold:area",
                    choice: &custom,
                    label: "area > 15 cm²",
                    remember: false,
                    success: true,
                },
                t0(),
            )
            .await
            .unwrap();
        let all = store.preferences(a.id).await.unwrap();
        assert_eq!(all.len(), 3);
        assert!(
            all.iter()
                .any(|p| p.choice == custom && p.label == "area > 15 cm²"),
            "{b:?}"
        );

        let id = all[0].id;
        store.add_preference_success(a.id, id).await.unwrap();
        let after = store.preferences(a.id).await.unwrap();
        assert_eq!(after[0].successes, all[0].successes + 1);
    })
    .await;
}

#[tokio::test]
async fn preferences_are_private_and_can_be_forgotten_or_deleted() {
    each_backend(async |t| {
        let (b, store, a, other) = users_on(t).await;
        let choice = PreferenceChoice::Option("last_90_days".into());
        let p = store
            .record_preference(
                a.id,
                PreferenceEvidence {
                    signature: "term:recent",
                    choice: &choice,
                    label: "recent = last 90 days",
                    remember: true,
                    success: false,
                },
                t0(),
            )
            .await
            .unwrap();
        assert!(store.preferences(other.id).await.unwrap().is_empty(), "{b:?}");
        assert!(store.remembered_preferences(other.id).await.unwrap().is_empty());
        for r in [
            store.forget_preference(other.id, p.id).await,
            store.delete_preference(other.id, p.id).await,
            store.add_preference_success(other.id, p.id).await,
        ] {
            assert!(not_found!(r), "{b:?}: {r:?}");
        }
        assert_eq!(store.remembered_preferences(a.id).await.unwrap().len(), 1);

        store.forget_preference(a.id, p.id).await.unwrap();
        assert!(
            store.remembered_preferences(a.id).await.unwrap().is_empty(),
            "{b:?}"
        );
        assert_eq!(store.preferences(a.id).await.unwrap()[0].count, 1, "counts stay");
        store.delete_preference(a.id, p.id).await.unwrap();
        assert!(store.preferences(a.id).await.unwrap().is_empty());
        assert!(not_found!(store.delete_preference(a.id, p.id).await));
    })
    .await;
}

// ---------------------------------------------------------------- history, audit

#[tokio::test]
async fn history_is_private_newest_first_and_keeps_what_is_needed_to_rerun() {
    each_backend(async |t| {
        let (b, store, a, other) = users_on(t).await;
        let thread = store.create_thread(a.id, "q", t0()).await.unwrap();
        let entry = |question| NewHistoryEntry {
            thread_id: Some(&thread.id),
            question,
            plan_json: r#"{"entity":"wounds","measures":["count"]}"#,
            sql: "SELECT COUNT(*) FROM wounds WHERE depth = $1",
            clarifications_json: r#"[{"ambiguity":"serious","option":"full_thickness"}]"#,
            assumptions_json: r#"[{"term":"recent","option":"last_90_days"}]"#,
            row_count: 1,
            duration_ms: 12,
            result_json: None,
            verified_id: None,
            suggestions_shown: None,
        };
        let first = store
            .add_history(a.id, entry("How many serious wounds?"), t0())
            .await
            .unwrap();
        store
            .add_history(a.id, entry("Only the diabetic ones"), t0() + Duration::minutes(1))
            .await
            .unwrap();
        assert!(first.id.is_well_formed());

        let list = store.history(a.id, 10).await.unwrap();
        assert_eq!(
            list.iter().map(|h| h.question.as_str()).collect::<Vec<_>>(),
            ["Only the diabetic ones", "How many serious wounds?"],
            "{b:?}"
        );
        let loaded = store.history_entry(a.id, &first.id).await.unwrap();
        assert_eq!(loaded, first, "{b:?}");
        assert_eq!(loaded.sql, "SELECT COUNT(*) FROM wounds WHERE depth = $1");
        assert_eq!(loaded.thread_id.as_ref(), Some(&thread.id));
        assert_eq!(
            (loaded.row_count, loaded.duration_ms, loaded.created_at),
            (1, 12, t0())
        );

        assert!(store.history(other.id, 10).await.unwrap().is_empty(), "{b:?}");
        assert!(not_found!(store.history_entry(other.id, &first.id).await));
        assert!(not_found!(store.history_entry(a.id, &HistoryId::random()).await));
        // History cannot be filed under someone else's thread.
        assert!(not_found!(store.add_history(other.id, entry("x"), t0()).await));
        // Without a thread (e.g. the API) is fine.
        let loose = store
            .add_history(
                a.id,
                NewHistoryEntry {
                    thread_id: None,
                    ..entry("loose")
                },
                t0(),
            )
            .await
            .unwrap();
        assert_eq!(loose.thread_id, None);
    })
    .await;
}

#[tokio::test]
async fn the_audit_log_records_who_ran_what_with_the_parameter_count_but_no_values() {
    each_backend(async |t| {
        let (b, store, a, other) = users_on(t).await;
        let sql = "SELECT p.full_name FROM patients p WHERE p.mrn = $1 AND p.bmi > $2";
        store
            .audit(
                NewAuditEntry {
                    user_id: Some(a.id),
                    sql,
                    param_count: 2,
                    row_count: 1,
                    duration_ms: 4,
                    outcome: AuditOutcome::Ok,
                    scope: Some("1,2"),
                },
                t0(),
            )
            .await
            .unwrap();
        store
            .audit(
                NewAuditEntry {
                    user_id: None,
                    sql: "SELECT 1",
                    param_count: 0,
                    row_count: 0,
                    duration_ms: 5000,
                    outcome: AuditOutcome::Timeout,
                    scope: None,
                },
                t0() + Duration::seconds(1),
            )
            .await
            .unwrap();

        let log = store.audit_log(10).await.unwrap();
        assert_eq!(log.len(), 2, "{b:?}");
        assert_eq!(
            (log[0].user_id, log[0].outcome),
            (None, AuditOutcome::Timeout),
            "newest first"
        );
        let mine = &log[1];
        assert_eq!(mine.username.as_deref(), Some("nurse"), "{b:?}");
        assert_eq!((mine.sql.as_str(), mine.param_count, mine.row_count), (sql, 2, 1));
        assert_eq!(mine.at, t0());
        assert_eq!(
            (mine.scope.as_deref(), log[0].scope.as_deref()),
            (Some("1,2"), None)
        );

        assert_eq!(store.audit_log_of(a.id, 10).await.unwrap().len(), 1);
        assert!(
            store.audit_log_of(other.id, 10).await.unwrap().is_empty(),
            "{b:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn timestamps_read_back_exactly_to_the_microsecond() {
    each_backend(async |t| {
        let (b, store, a, _) = users_on(t).await;
        let odd = Utc.timestamp_opt(1_740_819_600, 123_456_789).unwrap();
        let thread = store.create_thread(a.id, "q", odd).await.unwrap();
        let loaded = store.thread(a.id, &thread.id).await.unwrap();
        assert_eq!(loaded.created_at.timestamp_subsec_nanos(), 123_456_000, "{b:?}");
        assert_eq!(loaded, thread);
    })
    .await;
}

#[tokio::test]
async fn a_clinic_scope_is_all_by_default_then_exactly_the_clinics_set_and_per_user() {
    each_backend(async |t| {
        let (b, store, a, other) = users_on(t).await;
        assert_eq!(store.clinic_scope(a.id).await.unwrap(), ClinicScope::All, "{b:?}");
        store
            .set_clinic_scope(a.id, &ClinicScope::clinics([3, 1, 3]))
            .await
            .unwrap();
        assert_eq!(
            store.clinic_scope(a.id).await.unwrap(),
            ClinicScope::Clinics(vec![1, 3])
        );
        assert_eq!(
            store.clinic_scope(other.id).await.unwrap(),
            ClinicScope::All,
            "{b:?}"
        );
        // replaced, not added to
        store
            .set_clinic_scope(a.id, &ClinicScope::clinics([2]))
            .await
            .unwrap();
        assert_eq!(
            store.clinic_scope(a.id).await.unwrap(),
            ClinicScope::Clinics(vec![2])
        );
        // none at all is a scope of its own, not "all"
        store
            .set_clinic_scope(a.id, &ClinicScope::clinics([]))
            .await
            .unwrap();
        assert_eq!(
            store.clinic_scope(a.id).await.unwrap(),
            ClinicScope::Clinics(vec![])
        );
        store.set_clinic_scope(a.id, &ClinicScope::All).await.unwrap();
        assert_eq!(store.clinic_scope(a.id).await.unwrap(), ClinicScope::All);
        assert!(not_found!(
            store.set_clinic_scope(999_999, &ClinicScope::All).await
        ));
        assert!(not_found!(store.clinic_scope(999_999).await));
    })
    .await;
}

// ---------------------------------------------------------------- feedback (issue 15, points 3 and 7)

#[tokio::test]
async fn refused_and_failed_questions_are_kept_apart_from_answers_with_their_message() {
    use server::store::HistoryStatus;
    each_backend(async |t| {
        let (b, store, a, other) = users_on(t).await;
        let answered = store
            .add_history(
                a.id,
                NewHistoryEntry {
                    thread_id: None,
                    question: "how many wounds",
                    plan_json: "{}",
                    sql: "SELECT 1",
                    clarifications_json: "{}",
                    assumptions_json: "[]",
                    row_count: 1,
                    duration_ms: 3,
                    result_json: None,
                    verified_id: None,
                    suggestions_shown: None,
                },
                t0(),
            )
            .await
            .unwrap();
        assert_eq!(answered.status, HistoryStatus::Answered, "{b:?}");
        let refused = store
            .add_unanswered(
                a.id,
                "delete all wounds",
                HistoryStatus::Refused,
                "Clarion only reads data.",
                2,
                t0() + Duration::minutes(1),
            )
            .await
            .unwrap();
        let failed = store
            .add_unanswered(
                a.id,
                "every assessment ever",
                HistoryStatus::Failed,
                "The query took longer than 5000 ms and was stopped.",
                5001,
                t0() + Duration::minutes(2),
            )
            .await
            .unwrap();
        assert_eq!(refused.message.as_deref(), Some("Clarion only reads data."));
        assert_eq!((refused.thread_id.as_ref(), refused.sql.as_str()), (None, ""));
        // An answered entry cannot be written without its plan.
        assert!(matches!(
            store
                .add_unanswered(a.id, "x", HistoryStatus::Answered, "m", 1, t0())
                .await,
            Err(StoreError::Conflict(_))
        ));

        // The plain history (re-run, revise, the default list) holds answers only.
        let plain: Vec<_> = store.history(a.id, 10).await.unwrap();
        assert_eq!(
            plain.iter().map(|h| &h.id).collect::<Vec<_>>(),
            [&answered.id],
            "{b:?}"
        );
        let all = store
            .history_with(
                a.id,
                &[
                    HistoryStatus::Answered,
                    HistoryStatus::Refused,
                    HistoryStatus::Failed,
                ],
                10,
            )
            .await
            .unwrap();
        assert_eq!(
            all.iter()
                .map(|h| (h.question.as_str(), h.status))
                .collect::<Vec<_>>(),
            [
                ("every assessment ever", HistoryStatus::Failed),
                ("delete all wounds", HistoryStatus::Refused),
                ("how many wounds", HistoryStatus::Answered)
            ],
            "{b:?}"
        );
        let only_refused = store
            .history_with(a.id, &[HistoryStatus::Refused], 10)
            .await
            .unwrap();
        assert_eq!(only_refused, vec![refused.clone()], "{b:?}");
        assert_eq!(
            store
                .history_with(a.id, &[HistoryStatus::Failed], 10)
                .await
                .unwrap(),
            vec![failed.clone()]
        );
        // Not re-runnable, not votable, and nobody else's.
        assert!(not_found!(store.history_entry(a.id, &refused.id).await));
        assert!(not_found!(
            store
                .set_answer_feedback(a.id, &refused.id, Rating::Down, None, None, t0())
                .await
        ));
        assert!(
            store
                .history_with(other.id, &[HistoryStatus::Refused, HistoryStatus::Failed], 10)
                .await
                .unwrap()
                .is_empty()
        );
    })
    .await;
}

#[tokio::test]
async fn answer_feedback_is_one_row_per_user_and_answer_and_a_later_vote_replaces_it() {
    each_backend(async |t| {
        let WithRound {
            b,
            store,
            a,
            other,
            thread,
            round,
        } = with_round(t).await;
        let entry = store
            .add_history(
                a.id,
                NewHistoryEntry {
                    thread_id: Some(&thread.id),
                    question: "serious wounds",
                    plan_json: "{}",
                    sql: "SELECT 1",
                    clarifications_json: "{}",
                    assumptions_json: "[]",
                    row_count: 1,
                    duration_ms: 3,
                    result_json: None,
                    verified_id: None,
                    suggestions_shown: None,
                },
                t0(),
            )
            .await
            .unwrap();
        assert_eq!(store.answer_feedback(a.id, &entry.id).await.unwrap(), None);
        let up = store
            .set_answer_feedback(a.id, &entry.id, Rating::Up, None, None, t0())
            .await
            .unwrap();
        assert_eq!((up.rating, up.reason), (Rating::Up, None), "{b:?}");
        let down = store
            .set_answer_feedback(
                a.id,
                &entry.id,
                Rating::Down,
                Some(FeedbackReason::WrongCohort),
                Some("counted healed wounds; it's \"wrong\"'); DROP TABLE users;--"),
                t0() + Duration::minutes(5),
            )
            .await
            .unwrap();
        let stored = store.answer_feedback(a.id, &entry.id).await.unwrap().unwrap();
        assert_eq!(stored, down, "{b:?}");
        assert_eq!(
            (stored.rating, stored.reason, stored.updated_at),
            (
                Rating::Down,
                Some(FeedbackReason::WrongCohort),
                t0() + Duration::minutes(5)
            )
        );
        assert!(stored.comment.unwrap().contains("DROP TABLE"));
        // Thumbs up again clears the reason and comment.
        store
            .set_answer_feedback(
                a.id,
                &entry.id,
                Rating::Up,
                None,
                None,
                t0() + Duration::minutes(6),
            )
            .await
            .unwrap();
        let again = store.answer_feedback(a.id, &entry.id).await.unwrap().unwrap();
        assert_eq!(
            (again.rating, again.reason, again.comment),
            (Rating::Up, None, None)
        );
        // A reason with thumbs up is refused before anything is written.
        assert!(matches!(
            store
                .set_answer_feedback(
                    a.id,
                    &entry.id,
                    Rating::Up,
                    Some(FeedbackReason::Other),
                    None,
                    t0()
                )
                .await,
            Err(StoreError::Conflict(_))
        ));
        // Someone else's answer or an unknown id: not found, nothing written.
        assert!(not_found!(
            store
                .set_answer_feedback(other.id, &entry.id, Rating::Down, None, None, t0())
                .await
        ));
        assert_eq!(store.answer_feedback(other.id, &entry.id).await.unwrap(), None);
        assert!(not_found!(
            store
                .set_answer_feedback(a.id, &HistoryId::random(), Rating::Up, None, None, t0())
                .await
        ));

        // The round's "helpful?" vote: same rules.
        let thread_of = store
            .set_clarification_feedback(a.id, &round.id, true, t0())
            .await
            .unwrap();
        assert_eq!(thread_of, thread.id.as_str());
        store
            .set_clarification_feedback(a.id, &round.id, false, t0() + Duration::minutes(1))
            .await
            .unwrap();
        assert_eq!(
            store.clarification_feedback(a.id, &round.id).await.unwrap(),
            Some(false)
        );
        assert!(not_found!(
            store
                .set_clarification_feedback(other.id, &round.id, true, t0())
                .await
        ));
        assert_eq!(
            store.clarification_feedback(other.id, &round.id).await.unwrap(),
            None
        );
        assert!(not_found!(
            store
                .set_clarification_feedback(a.id, &RoundId::random(), true, t0())
                .await
        ));

        // Analytics: one vote each, as it stands now, inside the window only.
        let c = store
            .feedback_counts(t0() - Duration::days(1), t0() + Duration::days(1))
            .await
            .unwrap();
        assert_eq!(
            (c.thumbs_up, c.thumbs_down, c.helpful_yes, c.helpful_no),
            (1, 0, 0, 1),
            "{b:?}"
        );
        assert_eq!(c.reasons.len(), 4);
        let later = store
            .feedback_counts(t0() + Duration::days(1), t0() + Duration::days(2))
            .await
            .unwrap();
        assert_eq!((later.thumbs_up, later.helpful_no), (0, 0));
    })
    .await;
}

#[tokio::test]
async fn a_success_is_counted_once_per_answer_on_the_preferences_it_used() {
    each_backend(async |t| {
        let (b, store, a, other) = users_on(t).await;
        let infected = PreferenceChoice::Option("infected".into());
        let deep = PreferenceChoice::Option("full_thickness".into());
        for choice in [&infected, &deep] {
            store
                .record_preference(
                    a.id,
                    PreferenceEvidence {
                        signature: "term:serious@wounds",
                        choice,
                        label: "serious = …",
                        remember: false,
                        success: false,
                    },
                    t0(),
                )
                .await
                .unwrap();
        }
        let entry = store
            .add_history(
                a.id,
                NewHistoryEntry {
                    thread_id: None,
                    question: "serious wounds",
                    plan_json: "{}",
                    sql: "SELECT 1",
                    clarifications_json: "{}",
                    assumptions_json: "[]",
                    row_count: 1,
                    duration_ms: 3,
                    result_json: None,
                    verified_id: None,
                    suggestions_shown: None,
                },
                t0(),
            )
            .await
            .unwrap();
        let used = vec![("term:serious@wounds".to_owned(), infected.key())];
        assert!(not_found!(store.count_success(other.id, &entry.id, &used).await));
        assert_eq!(
            store.count_success(a.id, &entry.id, &used).await.unwrap(),
            1,
            "{b:?}"
        );
        assert_eq!(
            store.count_success(a.id, &entry.id, &used).await.unwrap(),
            0,
            "{b:?}"
        );
        let prefs = store.preferences_for(a.id, "term:serious@wounds").await.unwrap();
        let successes = |c: &PreferenceChoice| prefs.iter().find(|p| &p.choice == c).unwrap().successes;
        assert_eq!((successes(&infected), successes(&deep)), (1, 0), "{b:?}");
        assert!(not_found!(
            store.count_success(a.id, &HistoryId::random(), &used).await
        ));
    })
    .await;
}

#[tokio::test]
async fn verified_feedback_counts_the_votes_on_each_verified_questions_answers() {
    use server::store::NewVerified;
    each_backend(async |t| {
        let (b, store, a, other) = users_on(t).await;
        let v = store
            .add_verified(
                NewVerified {
                    name: "Serious wounds",
                    question: "serious wounds",
                    phrasings: &["serious wounds".to_owned()],
                    definition_json: "{}",
                    plan_json: "{}",
                    verified_by: a.id,
                },
                t0(),
            )
            .await
            .unwrap();
        for (u, rating) in [(&a, Rating::Up), (&other, Rating::Down), (&other, Rating::Up)] {
            let e = store
                .add_history(
                    u.id,
                    NewHistoryEntry {
                        thread_id: None,
                        question: "serious wounds",
                        plan_json: "{}",
                        sql: "SELECT 1",
                        clarifications_json: "{}",
                        assumptions_json: "[]",
                        row_count: 1,
                        duration_ms: 3,
                        result_json: None,
                        verified_id: Some(v.id),
                        suggestions_shown: None,
                    },
                    t0(),
                )
                .await
                .unwrap();
            assert_eq!(e.verified_id, Some(v.id));
            store
                .set_answer_feedback(u.id, &e.id, rating, None, None, t0())
                .await
                .unwrap();
        }
        let f = store.verified_feedback().await.unwrap();
        assert_eq!(f.len(), 1, "{b:?}");
        assert_eq!(
            (f[0].verified_id, f[0].thumbs_up, f[0].thumbs_down),
            (v.id, 2, 1),
            "{b:?}"
        );
    })
    .await;
}

// ---------------------------------------------------------------- saved questions

#[tokio::test]
async fn saved_questions_are_private_renamed_deleted_counted_and_keep_hostile_text_as_data() {
    each_backend(async |t| {
        let (b, store, a, other) = users_on(t).await;
        let saved = |name, clarified| NewSaved {
            name,
            question: "show me serious wounds",
            definition_json: r#"{"resolutions":{"answers":{"term:serious@wounds":{"kind":"option","id":"infected"}}}}"#,
            plan_json: r#"{"entity":"wounds"}"#,
            source_history_id: Some("00112233445566778899aabbccddeeff"),
            clarified,
        };
        let first = store.add_saved(a.id, saved("Serious wounds", true), t0()).await.unwrap();
        let hostile = "Robert'); DROP TABLE saved_questions;-- \u{1F4A9} <script>";
        let second = store
            .add_saved(a.id, saved(hostile, false), t0() + Duration::minutes(1))
            .await
            .unwrap();
        assert!(first.id.is_well_formed() && second.id.is_well_formed(), "{b:?}");
        assert_ne!(first.id, second.id);
        assert_eq!(
            (first.run_count, first.last_run_at, first.created_at, first.clarified),
            (0, None, t0(), true),
            "{b:?}"
        );
        assert_eq!(first.source_history_id.as_deref(), Some("00112233445566778899aabbccddeeff"));

        // Newest first, only the owner's; another user's id is a missing one.
        let names: Vec<String> = store.saved_list(a.id, 50).await.unwrap().into_iter().map(|s| s.name).collect();
        assert_eq!(names, [hostile, "Serious wounds"], "{b:?}");
        assert!(store.saved_list(other.id, 50).await.unwrap().is_empty());
        assert_eq!(store.saved_count_of(a.id).await.unwrap(), 2);
        assert_eq!(store.saved_list(a.id, 1).await.unwrap().len(), 1);
        assert!(not_found!(store.saved(other.id, &first.id).await));
        assert!(not_found!(store.saved(a.id, &SavedId::random()).await));
        assert!(not_found!(store.rename_saved(other.id, &first.id, "mine now").await));
        assert!(not_found!(store.delete_saved(other.id, &first.id).await));
        assert!(not_found!(store.count_saved_run(other.id, &first.id, t0()).await));

        // Rename and runs.
        let renamed = store.rename_saved(a.id, &first.id, "Infected wounds").await.unwrap();
        assert_eq!(renamed.name, "Infected wounds");
        assert_eq!(renamed.definition_json, first.definition_json, "{b:?}");
        store.count_saved_run(a.id, &first.id, t0() + Duration::hours(1)).await.unwrap();
        store.count_saved_run(a.id, &first.id, t0() + Duration::hours(2)).await.unwrap();
        let run = store.saved(a.id, &first.id).await.unwrap();
        assert_eq!((run.run_count, run.last_run_at), (2, Some(t0() + Duration::hours(2))), "{b:?}");

        // The saved-question rate's counts, over a half-open window.
        store
            .add_saved(other.id, saved("theirs", true), t0() + Duration::days(1))
            .await
            .unwrap();
        assert_eq!(
            store.saved_counts(t0(), t0() + Duration::days(2)).await.unwrap(),
            SavedCounts { saved: 3, clarified: 2, users: 2 },
            "{b:?}"
        );
        assert_eq!(
            store.saved_counts(t0() + Duration::minutes(1), t0() + Duration::days(1)).await.unwrap(),
            SavedCounts { saved: 1, clarified: 0, users: 1 },
            "{b:?}"
        );

        // Delete: gone for good; the other user's stays.
        store.delete_saved(a.id, &first.id).await.unwrap();
        assert!(not_found!(store.saved(a.id, &first.id).await));
        assert!(not_found!(store.delete_saved(a.id, &first.id).await));
        assert_eq!(store.saved_list(a.id, 50).await.unwrap().len(), 1);
        assert_eq!(store.saved_list(other.id, 50).await.unwrap().len(), 1);
    })
    .await;
}
