//! The server's implementation of `app::backend::Backend` (the UI's port).
//!
//! Each method is one product step for the signed-in user it is given (the
//! auth layer established who that is; this module never picks a user).
//! Errors are logged here with their cause and turned into messages safe to
//! show a clinician.

use crate::auth::{Auth, LoginError};
use crate::orchestrator::{Orchestrator, OrchestratorError};
use crate::store::{Store, StoreError};
use app::backend::{AuthUser, Backend, BackendError};
use app::protocol::{
    Answer, AskRequest, ClarifyRequest, ErrorCode, HistoryItem, PreferenceItem, QueryOutcome, ReviseRequest,
    Settings, ThreadView,
};

/// The backend handed to server functions through Leptos context.
#[derive(Clone, Debug)]
pub struct ServerBackend {
    store: Store,
    orchestrator: Orchestrator,
    auth: Auth,
}

impl ServerBackend {
    pub fn new(store: Store, orchestrator: Orchestrator, auth: Auth) -> Self {
        ServerBackend {
            store,
            orchestrator,
            auth,
        }
    }
}

/// Maps an orchestrator error to what the user may see (the one mapping, shared with the JSON API).
pub fn from_orchestrator(e: OrchestratorError) -> BackendError {
    e.into_public()
}

/// Maps a storage failure to what the user may see; faults are logged with their
/// cause and a reference the user can quote.
pub fn internal(e: StoreError) -> BackendError {
    crate::error::internal_fault(&e)
}

#[async_trait::async_trait]
impl Backend for ServerBackend {
    async fn settings(&self, user: &AuthUser) -> Result<Settings, BackendError> {
        self.store.settings(user.id).await.map_err(internal)
    }

    async fn save_settings(&self, user: &AuthUser, settings: Settings) -> Result<Settings, BackendError> {
        self.store
            .save_settings(user.id, &settings)
            .await
            .map_err(internal)?;
        self.store.settings(user.id).await.map_err(internal)
    }

    async fn glossary(&self, _user: &AuthUser) -> Result<app::protocol::Glossary, BackendError> {
        let mut g = crate::semantic::glossary::glossary(crate::semantic::SemanticModel::wound_care_shared());
        g.verified = self
            .orchestrator
            .verified_questions()
            .await
            .map_err(from_orchestrator)?
            .into_iter()
            .map(|v| (v.name, v.question, format!("Verified by {}", v.verified_by_name)))
            .collect();
        Ok(g)
    }

    async fn ask(&self, user: &AuthUser, req: AskRequest) -> Result<QueryOutcome, BackendError> {
        self.orchestrator
            .ask(user.id, &req)
            .await
            .map_err(from_orchestrator)
    }

    async fn clarify(&self, user: &AuthUser, req: ClarifyRequest) -> Result<QueryOutcome, BackendError> {
        self.orchestrator
            .clarify(user.id, &req)
            .await
            .map_err(from_orchestrator)
    }

    async fn cancel(&self, user: &AuthUser, clarification_id: String) -> Result<(), BackendError> {
        self.orchestrator
            .cancel(user.id, &clarification_id)
            .await
            .map_err(from_orchestrator)
    }

    async fn revise(&self, user: &AuthUser, req: ReviseRequest) -> Result<Answer, BackendError> {
        self.orchestrator
            .revise(user.id, &req)
            .await
            .map_err(from_orchestrator)
    }

    async fn thread(&self, user: &AuthUser, id: String) -> Result<ThreadView, BackendError> {
        self.orchestrator
            .thread(user.id, &id)
            .await
            .map_err(from_orchestrator)
    }

    async fn rerun(&self, user: &AuthUser, history_id: String) -> Result<Answer, BackendError> {
        self.orchestrator
            .rerun(user.id, &history_id)
            .await
            .map_err(from_orchestrator)
    }

    async fn replay(
        &self,
        user: &AuthUser,
        history_id: String,
    ) -> Result<app::protocol::ResultTable, BackendError> {
        self.orchestrator
            .replay(user.id, &history_id)
            .await
            .map_err(from_orchestrator)
    }

    async fn history(
        &self,
        user: &AuthUser,
        limit: i64,
        show: app::protocol::HistoryShow,
    ) -> Result<Vec<HistoryItem>, BackendError> {
        self.orchestrator
            .history_filtered(user.id, show, limit.clamp(1, 500))
            .await
            .map_err(from_orchestrator)
    }

    async fn saved_questions(
        &self,
        user: &AuthUser,
    ) -> Result<Vec<app::protocol::SavedQuestion>, BackendError> {
        self.orchestrator
            .saved_questions(user.id)
            .await
            .map_err(from_orchestrator)
    }

    async fn saved_draft(&self, user: &AuthUser, history_id: String) -> Result<HistoryItem, BackendError> {
        self.orchestrator
            .saved_draft(user.id, &history_id)
            .await
            .map_err(from_orchestrator)
    }

    async fn preferences(&self, user: &AuthUser) -> Result<Vec<PreferenceItem>, BackendError> {
        self.orchestrator
            .preferences(user.id)
            .await
            .map_err(from_orchestrator)
    }

    async fn delete_preference(&self, user: &AuthUser, id: i64) -> Result<(), BackendError> {
        self.orchestrator
            .delete_preference(user.id, id)
            .await
            .map_err(from_orchestrator)
    }

    async fn api_tokens(&self, user: &AuthUser) -> Result<Vec<app::protocol::ApiTokenItem>, BackendError> {
        let tokens = self.store.api_tokens(user.id).await.map_err(internal)?;
        Ok(tokens.into_iter().map(token_item).collect())
    }

    async fn create_api_token(
        &self,
        user: &AuthUser,
        name: String,
        expires_in_days: Option<u32>,
    ) -> Result<app::protocol::CreatedApiToken, BackendError> {
        let now = chrono::Utc::now();
        let expires = expires_in_days.map(|d| now + chrono::Duration::days(i64::from(d)));
        let (token, secret) = self
            .auth
            .create_api_token(user.id, &name, now, expires)
            .await
            .map_err(internal)?;
        tracing::info!(user_id = user.id, token_id = token.id, "API token created");
        Ok(app::protocol::CreatedApiToken {
            token: token_item(token),
            secret,
        })
    }

    async fn revoke_api_token(&self, user: &AuthUser, id: i64) -> Result<(), BackendError> {
        match self.store.revoke_api_token(user.id, id).await {
            Ok(()) => {
                tracing::info!(user_id = user.id, token_id = id, "API token revoked");
                Ok(())
            }
            Err(StoreError::NotFound) => Err(BackendError::not_found()),
            Err(e) => Err(internal(e)),
        }
    }

    async fn change_password(
        &self,
        user: &AuthUser,
        current: String,
        new: String,
    ) -> Result<(), BackendError> {
        let account = crate::store::User {
            id: user.id,
            username: user.username.clone(),
            display_name: user.display_name.clone(),
            is_admin: user.is_admin,
        };
        match self
            .auth
            .change_password(&account, &current, &new, chrono::Utc::now())
            .await
        {
            Ok(()) => Ok(()),
            Err(LoginError::BadCredentials) => {
                Err(BackendError::bad_input("Your current password is not correct."))
            }
            Err(LoginError::BadInput(m)) => Err(BackendError::bad_input(m)),
            Err(e @ LoginError::RateLimited { .. }) => {
                Err(BackendError::new(ErrorCode::TooManyAttempts, e.to_string()))
            }
            Err(e @ LoginError::Busy(_)) => Err(BackendError::new(ErrorCode::Busy, e.to_string())),
            Err(LoginError::Store(StoreError::NotFound)) => Err(BackendError::unauthenticated()),
            Err(LoginError::Store(e)) => Err(internal(e)),
        }
    }

    async fn analytics(
        &self,
        user: &AuthUser,
        range: app::protocol::AnalyticsQuery,
    ) -> Result<app::protocol::Analytics, BackendError> {
        if !user.is_admin {
            return Err(BackendError::forbidden());
        }
        let now = chrono::Utc::now();
        let (first, last) = analytics_range(&range, now.date_naive())?;
        let counts = self
            .store
            .analytics_range(first, last, now, 12)
            .await
            .map_err(internal)?;
        // Everything else over the same days (never past now: nothing is later).
        let end = counts.until.min(now + chrono::Duration::seconds(1));
        let calls = self.store.llm_usage(counts.since, end).await.map_err(internal)?;
        let mut view = analytics_view(crate::semantic::SemanticModel::wound_care_shared(), &counts);
        view.model_calls = calls
            .into_iter()
            .map(|d| app::protocol::ModelCallsDay {
                date: d.date.to_string(),
                calls: d.calls,
                failures: d.failures,
                tokens: d.tokens,
                mean_latency_ms: d.mean_latency_ms,
            })
            .collect();
        let votes = self.store.verified_feedback().await.map_err(internal)?;
        view.verified = self
            .store
            .active_verified()
            .await
            .map_err(internal)?
            .into_iter()
            .map(|v| {
                let f = votes.iter().find(|f| f.verified_id == v.id);
                app::protocol::VerifiedUse {
                    name: v.name,
                    verified_by: v.verified_by_name,
                    uses: v.use_count,
                    thumbs_up: f.map_or(0, |f| f.thumbs_up),
                    thumbs_down: f.map_or(0, |f| f.thumbs_down),
                }
            })
            .collect();
        let feedback = self
            .store
            .feedback_counts(counts.since, end)
            .await
            .map_err(internal)?;
        view.feedback = feedback_view(&feedback);
        view.saved = self
            .store
            .saved_counts(counts.since, end)
            .await
            .map_err(internal)?
            .saved;
        Ok(view)
    }

    async fn language_model(
        &self,
        user: &AuthUser,
    ) -> Result<app::protocol::LanguageModelStatus, BackendError> {
        if !user.is_admin {
            return Err(BackendError::forbidden());
        }
        let enabled = self.store.llm_enabled().await.map_err(internal)?;
        Ok(language_model_view(self.orchestrator.llm(), enabled))
    }

    async fn set_language_model(
        &self,
        user: &AuthUser,
        enabled: bool,
    ) -> Result<app::protocol::LanguageModelStatus, BackendError> {
        if !user.is_admin {
            return Err(BackendError::forbidden());
        }
        self.store.set_llm_enabled(enabled).await.map_err(internal)?;
        tracing::info!(by = user.id, enabled, "language model switched");
        Ok(language_model_view(self.orchestrator.llm(), enabled))
    }
}

/// The language model as the Settings page shows it: never the key, only whether one is set.
pub fn language_model_view(
    llm: Option<&crate::llm::Llm>,
    enabled: bool,
) -> app::protocol::LanguageModelStatus {
    let Some(llm) = llm else {
        return app::protocol::LanguageModelStatus {
            enabled,
            breaker: "off".into(),
            ..Default::default()
        };
    };
    let status = llm.status();
    app::protocol::LanguageModelStatus {
        configured: true,
        enabled,
        model: llm.config().model.clone(),
        endpoint: llm.config().endpoint_display(),
        key_set: llm.config().api_key.is_some(),
        breaker: status.state.to_owned(),
        consecutive_failures: status.consecutive_failures,
        paused_for_secs: status.paused_for_secs,
    }
}

/// A stored token as Settings lists it.
fn token_item(t: crate::store::ApiToken) -> app::protocol::ApiTokenItem {
    app::protocol::ApiTokenItem {
        id: t.id,
        name: t.name,
        prefix: t.prefix,
        created_at: t.created_at.to_rfc3339(),
        expires_at: t.expires_at.map(|d| d.to_rfc3339()),
        last_used_at: t.last_used_at.map(|d| d.to_rfc3339()),
    }
}

/// The first and last day (UTC, both included) an Analytics request names, checked:
/// `days` (1–366) counts back from `today`; `from`–`until` are ISO dates (`until`
/// defaults to `today`), in order, at most 366 days apart. What is not a date or not a
/// whole number in range breaks the request's schema: `bad_parameter` (400); real dates
/// that make no range to show are `bad_range` (422). Each message says what to change;
/// never a fault.
pub fn analytics_range(
    q: &app::protocol::AnalyticsQuery,
    today: chrono::NaiveDate,
) -> Result<(chrono::NaiveDate, chrono::NaiveDate), BackendError> {
    use crate::store::ANALYTICS_MAX_DAYS as MAX;
    let bad = |m: String| BackendError::new(ErrorCode::BadParameter, m);
    let range = |m: String| BackendError::new(ErrorCode::BadRange, m);
    let date = |name: &str, v: &str| {
        let v = v.trim();
        let d = chrono::NaiveDate::parse_from_str(v, "%Y-%m-%d")
            .ok()
            .filter(|_| v.len() == 10)
            .ok_or_else(|| {
                bad(format!(
                    "{name} must be a date written YYYY-MM-DD (for example 2026-03-01), not \"{}\".",
                    v.chars().take(40).collect::<String>()
                ))
            })?;
        // every day of the range, and the day after it, must exist on both backends
        if !(1970..=9998).contains(&chrono::Datelike::year(&d)) {
            return Err(range(format!("{name} must be a day from 1970 to 9998, not {d}.")));
        }
        Ok(d)
    };
    // An empty value is no date (the page leaves empty form fields out itself).
    let (from, until) = (q.from.as_deref(), q.until.as_deref());
    let Some(from) = from else {
        let days = i64::from(q.days.unwrap_or(30));
        if !(1..=MAX).contains(&days) {
            return Err(bad(format!("days must be a whole number from 1 to {MAX}.")));
        }
        if let Some(u) = until {
            date("until", u)?;
            return Err(range("until needs from: give the first day too.".to_owned()));
        }
        return Ok((today - chrono::Duration::days(days - 1), today));
    };
    let first = date("from", from)?;
    let last = match until {
        Some(u) => date("until", u)?,
        None => today,
    };
    if let Some(days) = q.days {
        if !(1..=MAX).contains(&i64::from(days)) {
            return Err(bad(format!("days must be a whole number from 1 to {MAX}.")));
        }
        return Err(range("Give either days or from and until, not both.".to_owned()));
    }
    if first > last {
        return Err(range(format!(
            "The range starts after it ends: from ({first}) must be on or before until ({last})."
        )));
    }
    let span = (last - first).num_days() + 1;
    if span > MAX {
        return Err(range(format!(
            "That range has {span} days; at most {MAX} can be shown at once."
        )));
    }
    Ok((first, last))
}

/// The store's analytics counts as the Analytics page shows them, with the
/// ambiguity and option ids turned into the words of the model.
pub fn analytics_view(
    model: &crate::semantic::SemanticModel,
    counts: &crate::store::AnalyticsCounts,
) -> app::protocol::Analytics {
    use app::protocol::{Analytics, AnalyticsChoice, AnalyticsDay, AnalyticsTerm};
    let day = |d: &crate::store::DayCounts| AnalyticsDay {
        date: d.date.to_string(),
        questions: d.questions,
        clarified: d.clarified,
        auto_resolved: d.auto_resolved,
        auto_resolved_by_preference: d.auto_resolved_by_preference,
        answered_after_round: d.answered_after_round,
        rounds: d.rounds,
        rounds_answered: d.rounds_answered,
        rounds_abandoned: d.rounds_abandoned,
        rounds_open: d.rounds_open,
        answers_revised: d.answers_revised,
        repeat_rounds: d.repeat_rounds,
        pill_answers: d.pill_answers,
        pill_answers_two_plus: d.pill_answers_two_plus,
        pills_shown: d.pills_shown,
        pills_clicked: d.pills_clicked,
        median_ms: d.median_ms(),
        p90_ms: d.p90_ms(),
    };
    let pretty = |s: &str| s.replace('_', " ");
    let terms = counts
        .ambiguities
        .iter()
        .map(|a| {
            // Ids read `<kind>:<term or attribute>@<entity>` (`term:large@wounds`).
            let (_, rest) = a.ambiguity_id.split_once(':').unwrap_or(("", &a.ambiguity_id));
            let (name, entity) = rest.split_once('@').unwrap_or((rest, ""));
            let term = model.term(name);
            AnalyticsTerm {
                id: a.ambiguity_id.clone(),
                phrase: term.map(|t| t.phrase.clone()).unwrap_or_else(|| pretty(name)),
                applies_to: model.entity(entity).map(|e| e.label.clone()).unwrap_or_default(),
                asked: a.asked,
                choices: a
                    .choices
                    .iter()
                    .map(|c| {
                        let option = c
                            .option_id
                            .as_deref()
                            .and_then(|o| term.and_then(|t| t.options.iter().find(|x| x.id == o)));
                        let label = match (c.kind.as_str(), option, c.option_id.as_deref()) {
                            ("custom", _, _) => "A custom value".to_owned(),
                            ("dont_know", _, _) => "I don't know (best guess)".to_owned(),
                            (_, Some(o), _) => o.label.clone(),
                            (_, None, Some(id)) => pretty(id),
                            _ => "Other".to_owned(),
                        };
                        AnalyticsChoice {
                            label,
                            default: option.is_some_and(|o| o.default),
                            count: c.count,
                            answers: c.answers,
                            successes: c.successes,
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    Analytics {
        since: counts.since.date_naive().to_string(),
        until: counts.days.last().map(|d| d.date.to_string()).unwrap_or_default(),
        totals: day(&counts.totals()),
        days: counts.days.iter().map(day).collect(),
        terms,
        model_calls: Vec::new(),
        verified: Vec::new(),
        feedback: Default::default(),
        saved: 0,
    }
}

/// The store's feedback figures as Analytics shows them.
pub fn feedback_view(c: &crate::store::FeedbackCounts) -> app::protocol::FeedbackSummary {
    use crate::store::FeedbackReason as R;
    use app::protocol::FeedbackReason as P;
    app::protocol::FeedbackSummary {
        thumbs_up: c.thumbs_up,
        thumbs_down: c.thumbs_down,
        reasons: c
            .reasons
            .iter()
            .map(|(r, n)| {
                let r = match r {
                    R::WrongCohort => P::WrongCohort,
                    R::WrongNumbers => P::WrongNumbers,
                    R::TooManyQuestions => P::TooManyQuestions,
                    R::Other => P::Other,
                };
                (r, *n)
            })
            .collect(),
        helpful_yes: c.helpful_yes,
        helpful_no: c.helpful_no,
    }
}
