//! The administrators' analytics queries (F21) and changing one's own password,
//! run against SQLite and PostgreSQL with the same assertions.

mod common;

use chrono::{DateTime, Duration, TimeZone, Utc};
use server::store::{
    AnswerChoice, ChoiceCount, HistoryId, MessageRole, NewAnswer, NewHistoryEntry, NewMessage, NewRound,
    Rating, Role, RoundId, Store, ThreadId, User,
};

/// "Now" for every test: 2025-03-03 09:00 UTC.
fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2025, 3, 3, 9, 0, 0).unwrap()
}

fn at(days_ago: i64, h: u32, m: u32) -> DateTime<Utc> {
    let d = now().date_naive() - Duration::days(days_ago);
    d.and_hms_opt(h, m, 0).unwrap().and_utc()
}

async fn each_backend(test: impl AsyncFn(&common::TestDb)) {
    for t in common::all_backends().await {
        test(&t).await;
        t.cleanup().await;
    }
}

async fn user(store: &Store, name: &str, role: Role) -> User {
    store
        .ensure_user(name, name, role, "pw-123456789")
        .await
        .unwrap()
        .0
}

struct Seed<'a> {
    store: &'a Store,
}

impl Seed<'_> {
    async fn thread(&self, u: &User, at: DateTime<Utc>) -> ThreadId {
        self.store.create_thread(u.id, "q", at).await.unwrap().id
    }

    async fn answer(&self, u: &User, thread: &ThreadId, question: &str, at: DateTime<Utc>) {
        self.answer_with(u, thread, question, "[]", at).await;
    }

    async fn answer_with(
        &self,
        u: &User,
        thread: &ThreadId,
        question: &str,
        assumptions: &str,
        at: DateTime<Utc>,
    ) {
        self.store
            .add_history(
                u.id,
                NewHistoryEntry {
                    thread_id: Some(thread),
                    question,
                    plan_json: "{}",
                    sql: "SELECT 1",
                    clarifications_json: "{}",
                    assumptions_json: assumptions,
                    row_count: 3,
                    duration_ms: 4,
                    result_json: None,
                    verified_id: None,
                    suggestions_shown: None,
                },
                at,
            )
            .await
            .unwrap();
    }

    #[allow(clippy::too_many_arguments)]
    async fn round(
        &self,
        u: &User,
        thread: &ThreadId,
        question: &str,
        number: i32,
        previous: Option<&RoundId>,
        asked: &[&str],
        at: DateTime<Utc>,
        ttl_minutes: i64,
    ) -> RoundId {
        let asked: Vec<String> = asked.iter().map(|s| s.to_string()).collect();
        self.store
            .create_round(
                u.id,
                NewRound {
                    thread_id: thread,
                    question,
                    round_number: number,
                    previous_round: previous,
                    understanding_json: "{}",
                    questions_json: "[]",
                    asked_ambiguity_ids: &asked,
                    expires_at: at + Duration::minutes(ttl_minutes),
                },
                at,
            )
            .await
            .unwrap()
            .id
    }
}

fn opt(ambiguity: &str, option: &str) -> NewAnswer {
    NewAnswer {
        ambiguity_id: ambiguity.into(),
        choice: AnswerChoice::Option(option.into()),
        remember: false,
    }
}

#[tokio::test]
async fn analytics_counts_questions_rounds_and_choices_per_day_on_every_backend() {
    each_backend(async |t| {
        let store = Store::new(t.db.clone());
        let a = user(&store, "nurse", Role::Clinician).await;
        let b = user(&store, "doctor", Role::Clinician).await;
        let s = Seed { store: &store };

        // Two days ago: one direct answer (and a revision of it, not a new
        // question), and one question answered after a round.
        let t1 = s.thread(&a, at(2, 10, 0)).await;
        s.answer(&a, &t1, "open wounds by clinic", at(2, 10, 0)).await;
        s.answer(&a, &t1, "open wounds by clinic", at(2, 10, 5)).await;
        let t2 = s.thread(&a, at(2, 11, 0)).await;
        let r2 = s
            .round(
                &a,
                &t2,
                "serious wounds",
                1,
                None,
                &["term:serious@wounds"],
                at(2, 11, 0),
                15,
            )
            .await;
        store
            .answer_round(
                a.id,
                &r2,
                &[opt("term:serious@wounds", "full_thickness")],
                at(2, 11, 1),
            )
            .await
            .unwrap();
        s.answer(&a, &t2, "serious wounds", at(2, 11, 2)).await;

        // Yesterday (another user): a first round answered, its second round
        // cancelled; and a first round left to expire.
        let t3 = s.thread(&b, at(1, 9, 0)).await;
        let r3 = s
            .round(
                &b,
                &t3,
                "large recent wounds",
                1,
                None,
                &["term:large@wounds", "column:date@wounds"],
                at(1, 9, 0),
                15,
            )
            .await;
        store
            .answer_round(
                b.id,
                &r3,
                &[
                    opt("term:large@wounds", "gt_10"),
                    NewAnswer {
                        ambiguity_id: "column:date@wounds".into(),
                        choice: AnswerChoice::DontKnow,
                        remember: false,
                    },
                ],
                at(1, 9, 1),
            )
            .await
            .unwrap();
        let r4 = s
            .round(
                &b,
                &t3,
                "large recent wounds",
                2,
                Some(&r3),
                &["term:recent@wounds"],
                at(1, 9, 2),
                15,
            )
            .await;
        store.abandon_round(b.id, &r4, at(1, 9, 3)).await.unwrap();
        let t4 = s.thread(&b, at(1, 12, 0)).await;
        s.round(
            &b,
            &t4,
            "large wounds",
            1,
            None,
            &["term:large@wounds"],
            at(1, 12, 0),
            15,
        )
        .await;

        // Today: a round still open, and a direct answer.
        let t5 = s.thread(&a, at(0, 8, 55)).await;
        s.round(
            &a,
            &t5,
            "large wounds",
            1,
            None,
            &["term:large@wounds"],
            at(0, 8, 55),
            15,
        )
        .await;
        let t6 = s.thread(&a, at(0, 8, 59)).await;
        s.answer(&a, &t6, "how many patients", at(0, 8, 59)).await;

        // Outside the window: never counted.
        let old = s.thread(&a, at(40, 9, 0)).await;
        s.answer(&a, &old, "old question", at(40, 9, 0)).await;
        s.round(
            &a,
            &old,
            "old large",
            1,
            None,
            &["term:large@wounds"],
            at(40, 9, 1),
            15,
        )
        .await;

        let got = store.analytics(now(), 7, 10).await.unwrap();
        let backend = t.db.backend();
        assert_eq!(got.days.len(), 7, "{backend:?}");
        assert_eq!(got.days[0].date, at(6, 0, 0).date_naive());
        assert_eq!(got.since, at(6, 0, 0));
        assert_eq!(got.until, at(-1, 0, 0));
        let [d2, d1, d0] = [&got.days[4], &got.days[5], &got.days[6]];
        assert_eq!(
            (
                d2.questions,
                d2.clarified,
                d2.auto_resolved,
                d2.answered_after_round
            ),
            (2, 1, 1, 1),
            "two days ago, {backend:?}"
        );
        assert_eq!(
            (d2.rounds, d2.rounds_answered, d2.rounds_abandoned, d2.rounds_open),
            (1, 1, 0, 0)
        );
        assert_eq!(
            (d1.questions, d1.clarified, d1.auto_resolved),
            (2, 2, 0),
            "yesterday, {backend:?}"
        );
        assert_eq!(
            (d1.rounds, d1.rounds_answered, d1.rounds_abandoned, d1.rounds_open),
            (3, 1, 2, 0),
            "a cancelled and an expired round are both abandoned, {backend:?}"
        );
        assert_eq!(
            (d0.questions, d0.clarified, d0.auto_resolved),
            (2, 1, 1),
            "today, {backend:?}"
        );
        assert_eq!((d0.rounds, d0.rounds_open), (1, 1));
        assert!(got.days[..4].iter().all(|d| d.questions == 0 && d.rounds == 0));

        let total = got.totals();
        assert_eq!(
            (
                total.questions,
                total.clarified,
                total.auto_resolved,
                total.answered_after_round
            ),
            (6, 4, 2, 1)
        );
        assert_eq!(
            (
                total.rounds,
                total.rounds_answered,
                total.rounds_abandoned,
                total.rounds_open
            ),
            (5, 2, 2, 1)
        );

        let ids: Vec<(&str, i64)> = got
            .ambiguities
            .iter()
            .map(|a| (a.ambiguity_id.as_str(), a.asked))
            .collect();
        assert_eq!(
            ids,
            vec![
                ("term:large@wounds", 3),
                ("column:date@wounds", 1),
                ("term:serious@wounds", 1),
                ("term:recent@wounds", 1),
            ],
            "most asked first, then most answered, then by id; {backend:?}"
        );
        assert_eq!(
            got.ambiguities[0].choices,
            vec![ChoiceCount {
                kind: "option".into(),
                option_id: Some("gt_10".into()),
                count: 1,
                answers: 0,
                successes: 0,
            }],
            "a choice whose question was never answered has no answers to succeed"
        );
        assert_eq!(got.ambiguities[1].choices[0].kind, "dont_know");
        assert!(got.ambiguities[3].choices.is_empty());

        let top = store.analytics(now(), 7, 2).await.unwrap();
        assert_eq!(top.ambiguities.len(), 2);

        // One day: only today.
        let today = store.analytics(now(), 1, 10).await.unwrap();
        assert_eq!(today.days.len(), 1);
        assert_eq!(today.totals().questions, 2);
        assert_eq!(today.ambiguities.len(), 1);
    })
    .await;
}

#[tokio::test]
async fn answers_resolved_by_a_remembered_or_usual_definition_are_counted_apart() {
    each_backend(async |t| {
        let store = Store::new(t.db.clone());
        let seed = Seed { store: &store };
        let u = user(&store, "pref", Role::Clinician).await;
        let badge = |source: &str| {
            format!(r#"[{{"piece":"serious","assumed":"Infected","source":"{source}","options":[]}}]"#)
        };
        for (i, source) in [
            "usual_definition",
            "saved_definition",
            "default",
            "low_confidence",
        ]
        .into_iter()
        .enumerate()
        {
            let th = seed.thread(&u, at(0, 9, 0)).await;
            seed.answer_with(&u, &th, &format!("q{i}"), &badge(source), at(0, 9, i as u32))
                .await;
        }
        let th = seed.thread(&u, at(1, 9, 0)).await;
        seed.answer(&u, &th, "plain", at(1, 9, 0)).await;
        let got = store.analytics(now(), 30, 10).await.unwrap();
        let total = got.totals();
        assert_eq!(
            (total.auto_resolved, total.auto_resolved_by_preference),
            (5, 2),
            "{total:?}"
        );
        assert_eq!(got.days.last().unwrap().auto_resolved_by_preference, 2);
    })
    .await;
}

impl Seed<'_> {
    /// An answer with its own duration and the pills it showed; its id.
    async fn answer_full(
        &self,
        u: &User,
        thread: &ThreadId,
        question: &str,
        duration_ms: i64,
        pills: Option<i64>,
        at: DateTime<Utc>,
    ) -> HistoryId {
        self.store
            .add_history(
                u.id,
                NewHistoryEntry {
                    thread_id: Some(thread),
                    question,
                    plan_json: "{}",
                    sql: "SELECT 1",
                    clarifications_json: "{}",
                    assumptions_json: "[]",
                    row_count: 3,
                    duration_ms,
                    result_json: None,
                    verified_id: None,
                    suggestions_shown: pills,
                },
                at,
            )
            .await
            .unwrap()
            .id
    }

    /// The user's question in a thread (typed, or sent from a pill).
    async fn says(&self, u: &User, thread: &ThreadId, body: &str, from_suggestion: bool, at: DateTime<Utc>) {
        self.store
            .append_message(
                u.id,
                thread,
                NewMessage {
                    role: MessageRole::User,
                    body,
                    payload_json: None,
                    from_suggestion,
                },
                at,
            )
            .await
            .unwrap();
    }
}

#[tokio::test]
async fn time_to_answer_revisions_repeats_choice_success_and_pills_on_every_backend() {
    each_backend(async |t| {
        let store = Store::new(t.db.clone());
        let s = Seed { store: &store };
        let a = user(&store, "nurse", Role::Clinician).await;
        let b = user(&store, "doctor", Role::Clinician).await;
        let backend = t.db.backend();
        let secs = |base: DateTime<Utc>, n: i64| base + Duration::seconds(n);

        // Earlier rounds, outside the 7-day window: 40 days ago (too long ago to make
        // a repeat) and 20 days ago (recent enough).
        let old = s.thread(&a, at(40, 9, 0)).await;
        s.round(
            &a,
            &old,
            "large",
            1,
            None,
            &["term:large@wounds"],
            at(40, 9, 0),
            15,
        )
        .await;
        let prev = s.thread(&a, at(20, 9, 0)).await;
        s.round(
            &a,
            &prev,
            "serious",
            1,
            None,
            &["term:serious@wounds"],
            at(20, 9, 0),
            15,
        )
        .await;

        // Today, a: asked at 8:00:00, a round at 8:00:01 (a repeat of 20 days ago),
        // answered at 8:00:31 with three pills; the answer gets a follow-up from a pill
        // (learning counts it a success).
        let q0 = at(0, 8, 0);
        let t1 = s.thread(&a, q0).await;
        s.says(&a, &t1, "serious wounds", false, q0).await;
        let r1 = s
            .round(
                &a,
                &t1,
                "serious wounds",
                1,
                None,
                &["term:serious@wounds"],
                secs(q0, 1),
                15,
            )
            .await;
        store
            .answer_round(a.id, &r1, &[opt("term:serious@wounds", "infected")], secs(q0, 20))
            .await
            .unwrap();
        let h1 = s
            .answer_full(&a, &t1, "serious wounds", 900, Some(3), secs(q0, 31))
            .await;
        s.says(&a, &t1, "by clinic", true, secs(q0, 60)).await;
        store.count_success(a.id, &h1, &[]).await.unwrap();

        // Today, b: the same ambiguity (not a repeat: another user), chosen, answered,
        // counted a success and then voted thumbs down: not a success.
        let t2 = s.thread(&b, at(0, 8, 5)).await;
        let r2 = s
            .round(
                &b,
                &t2,
                "serious wounds",
                1,
                None,
                &["term:serious@wounds"],
                at(0, 8, 5),
                15,
            )
            .await;
        store
            .answer_round(
                b.id,
                &r2,
                &[opt("term:serious@wounds", "full_thickness")],
                at(0, 8, 6),
            )
            .await
            .unwrap();
        let h2 = s
            .answer_full(&b, &t2, "serious wounds", 700, Some(2), at(0, 8, 7))
            .await;
        store.count_success(b.id, &h2, &[]).await.unwrap();
        store
            .set_answer_feedback(b.id, &h2, Rating::Down, None, None, at(0, 8, 8))
            .await
            .unwrap();

        // Yesterday and today, a asks about "large" again: yesterday's is not a repeat
        // (40 days), today's is (yesterday).
        let t3 = s.thread(&a, at(1, 9, 0)).await;
        s.round(&a, &t3, "large", 1, None, &["term:large@wounds"], at(1, 9, 0), 15)
            .await;
        let t4 = s.thread(&a, at(0, 8, 30)).await;
        s.round(
            &a,
            &t4,
            "large",
            1,
            None,
            &["term:large@wounds"],
            at(0, 8, 30),
            15,
        )
        .await;

        // Two days ago, a direct answer of 4 ms with one pill, revised afterwards (the
        // revision shows two pills); and a direct answer of 400 ms stored before pills
        // were recorded.
        let t5 = s.thread(&a, at(2, 9, 0)).await;
        s.answer_full(&a, &t5, "open wounds", 4, Some(1), at(2, 9, 0))
            .await;
        s.answer_full(&a, &t5, "open wounds", 5, Some(2), at(2, 9, 5))
            .await;
        let t6 = s.thread(&a, at(2, 10, 0)).await;
        s.answer_full(&a, &t6, "patients", 400, None, at(2, 10, 0)).await;
        // A pill click outside the window is not counted.
        s.says(&a, &old, "by clinic", true, at(40, 9, 5)).await;

        let got = store.analytics(now(), 7, 10).await.unwrap();
        let total = got.totals();
        assert_eq!(
            total.answer_ms,
            vec![4, 400, 31_000, 120_000],
            "direct answers: their own time; after a round: from the question; {backend:?}"
        );
        assert_eq!(total.median_ms(), Some(400), "nearest rank");
        assert_eq!(total.p90_ms(), Some(120_000));
        assert_eq!(total.answers(), 4);
        assert_eq!(total.answers_revised, 1, "{backend:?}");
        assert_eq!(
            (total.rounds, total.repeat_rounds),
            (4, 2),
            "a's serious (20 days before) and large (the day before) are repeats; {backend:?}"
        );
        assert_eq!(
            (
                total.pill_answers,
                total.pill_answers_two_plus,
                total.pills_shown,
                total.pills_clicked
            ),
            (3, 2, 8, 1),
            "{backend:?}"
        );
        let d0 = got.days.last().unwrap();
        assert_eq!(
            (d0.pills_clicked, d0.repeat_rounds, d0.median_ms()),
            (1, 2, Some(31_000))
        );

        let serious = got
            .ambiguities
            .iter()
            .find(|x| x.ambiguity_id == "term:serious@wounds")
            .unwrap();
        let by_option = |o: &str| {
            serious
                .choices
                .iter()
                .find(|c| c.option_id.as_deref() == Some(o))
                .map(|c| (c.count, c.answers, c.successes))
        };
        assert_eq!(by_option("infected"), Some((1, 1, 1)), "{backend:?}");
        assert_eq!(
            by_option("full_thickness"),
            Some((1, 1, 0)),
            "a success voted down since is not one; {backend:?}"
        );

        // An explicit range: two days ago only.
        let day = at(2, 0, 0).date_naive();
        let one = store.analytics_range(day, day, now(), 10).await.unwrap();
        assert_eq!(one.days.len(), 1);
        assert_eq!(one.totals().answers(), 2);
        assert_eq!(one.totals().answers_revised, 1);
        assert_eq!(one.totals().rounds, 0);
    })
    .await;
}

#[tokio::test]
async fn analytics_of_an_empty_database_is_all_zeros() {
    each_backend(async |t| {
        let store = Store::new(t.db.clone());
        let got = store.analytics(now(), 30, 10).await.unwrap();
        assert_eq!(got.days.len(), 30);
        assert_eq!(got.totals().questions, 0);
        assert!(got.ambiguities.is_empty());
    })
    .await;
}

#[tokio::test]
async fn the_analytics_view_names_terms_and_options_in_the_models_words() {
    each_backend(async |t| {
        let store = Store::new(t.db.clone());
        let a = user(&store, "nurse", Role::Clinician).await;
        let s = Seed { store: &store };
        let model = server::semantic::SemanticModel::wound_care_shared();
        let large = model.term("large").expect("the model defines 'large'");
        let option = large.options.iter().find(|o| o.default).unwrap();
        let th = s.thread(&a, at(0, 8, 0)).await;
        let r = s
            .round(
                &a,
                &th,
                "large wounds",
                1,
                None,
                &["term:large@wounds"],
                at(0, 8, 0),
                15,
            )
            .await;
        store
            .answer_round(a.id, &r, &[opt("term:large@wounds", &option.id)], at(0, 8, 1))
            .await
            .unwrap();
        s.answer(&a, &th, "large wounds", at(0, 8, 2)).await;

        let view = server::backend::analytics_view(model, &store.analytics(now(), 7, 10).await.unwrap());
        assert_eq!(view.days.len(), 7);
        assert_eq!(view.until, "2025-03-03");
        assert_eq!(view.totals.clarified, 1);
        assert_eq!(view.totals.auto_resolution_rate(), Some(0.0));
        let term = &view.terms[0];
        assert_eq!(term.phrase, large.phrase);
        assert_eq!(term.applies_to, model.entity("wounds").unwrap().label);
        assert_eq!(term.choices[0].label, option.label);
        assert!(term.choices[0].default);
    })
    .await;
}

#[tokio::test]
async fn changing_a_password_needs_the_current_one_and_ends_every_session() {
    each_backend(async |t| {
        let store = Store::new(t.db.clone());
        let (u, _) = store
            .ensure_user("nurse", "Nurse", Role::Clinician, "old-password-1")
            .await
            .unwrap();
        let other = user(&store, "other", Role::Clinician).await;
        store
            .create_session(u.id, "digest-a", now(), now() + Duration::hours(1))
            .await
            .unwrap();
        store
            .create_session(other.id, "digest-b", now(), now() + Duration::hours(1))
            .await
            .unwrap();

        let auth = server::auth::Auth::new(store.clone(), server::auth::AuthConfig::default());
        let (_, token) = auth.create_api_token(u.id, "export", now(), None).await.unwrap();
        let verify = |pw: &'static str, hash: String| async move {
            server::auth::password::verify(pw, Some(&hash)).await.unwrap()
        };

        // A wrong current password changes nothing.
        assert!(matches!(
            auth.change_password(&u, "wrong", "new-password-2", now()).await,
            Err(server::auth::LoginError::BadCredentials)
        ));
        let hash = store.credentials("nurse").await.unwrap().unwrap().1;
        assert!(verify("old-password-1", hash).await);
        assert!(store.session_user("digest-a", now()).await.unwrap().is_some());

        // The right one replaces the hash (argon2, salted) and signs the user out
        // everywhere: sessions and API tokens.
        auth.change_password(&u, "old-password-1", "new-password-2", now())
            .await
            .unwrap();
        let hash = store.credentials("nurse").await.unwrap().unwrap().1;
        assert!(hash.starts_with("$argon2"));
        assert!(verify("new-password-2", hash.clone()).await);
        assert!(!verify("old-password-1", hash).await);
        assert!(store.session_user("digest-a", now()).await.unwrap().is_none());
        assert!(auth.token_user(&token, now()).await.unwrap().is_none());
        // Nobody else is affected.
        assert!(store.session_user("digest-b", now()).await.unwrap().is_some());

        // The old password no longer works as the current one; unknown users are NotFound.
        assert!(matches!(
            auth.change_password(&u, "old-password-1", "x-password-3", now())
                .await,
            Err(server::auth::LoginError::BadCredentials)
        ));
        let ghost = server::store::User {
            id: 999_999,
            ..u.clone()
        };
        assert!(matches!(
            auth.change_password(&ghost, "a", "b", now()).await,
            Err(server::auth::LoginError::Store(
                server::store::StoreError::NotFound
            ))
        ));
    })
    .await;
}
