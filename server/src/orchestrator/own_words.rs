//! "Describe it in your own words" (F28): a free-text answer to a clarification question
//! is read by the engine first (`engine::read_own_words`: "area over 15", "since
//! March"), and only what it cannot read goes to the language model, when one is
//! configured (`fallback::read_answer`). Nothing runs yet: the round is stored again
//! with the reading as a new, preselected option — "I read that as: latest area > 15
//! cm²" — which the clinician confirms (or changes) like any option. Text nobody can
//! read is a 400 whose message says what the engine accepts; nothing is stored, so
//! nothing the clinician chose is lost.

use super::{Orchestrator, OrchestratorError, RoundState, answers, convert, fallback};
use crate::engine::{
    self, AllowedValuesSnapshot, AmbiguityOption, CustomValue, EngineInput, Resolution, understand,
};
use crate::llm;
use crate::store::{Round, RoundId};
use app::protocol::ErrorCode;
use app::protocol::{Choice, ClarificationRound, ClarifyRequest, QueryOutcome, Question};
use std::time::Instant;

impl Orchestrator {
    /// Reads the round's free-text answers and returns the round again, each read answer
    /// as its question's preselected option (any option picked for another question stays
    /// picked).
    pub(super) async fn read_back(
        &self,
        user_id: i64,
        id: &RoundId,
        round: &Round,
        mut state: RoundState,
        req: &ClarifyRequest,
        allowed: &AllowedValuesSnapshot,
    ) -> Result<QueryOutcome, OrchestratorError> {
        let inner = &*self.inner;
        let model = inner.model;
        let today = self.today();
        let mut questions: Vec<Question> =
            serde_json::from_str(&round.questions_json).map_err(OrchestratorError::internal)?;
        let mut thinking = Vec::new();
        let mut calls = state.llm_calls;
        for answer in &req.answers {
            let Some(ai) = state.ambiguities.iter().position(|a| a.id == answer.question_id) else {
                return Err(OrchestratorError::bad(
                    ErrorCode::UnknownQuestion,
                    format!("\"{}\" is not a question of this round.", answer.question_id),
                ));
            };
            let Some(text) = answer.in_own_words.as_deref() else {
                if let Some(o) = answer.option_id.as_deref() {
                    preselect(
                        &mut state.ambiguities[ai].options,
                        &mut questions,
                        &answer.question_id,
                        o,
                    );
                }
                continue;
            };
            let amb = state.ambiguities[ai].clone();
            if answer.option_id.is_some() || answer.custom.is_some() || answer.dont_know {
                return Err(OrchestratorError::bad(
                    ErrorCode::InvalidAnswer,
                    format!(
                        "Answer \"{}\" with exactly one of: option_id, custom, in_own_words, dont_know.",
                        amb.question
                    ),
                ));
            }
            let text = text.trim();
            if text.is_empty() {
                return Err(OrchestratorError::bad(
                    ErrorCode::InvalidCustomValue,
                    "Describe it in a few words, or pick one of the options.",
                ));
            }
            if text.chars().count() > 200 {
                return Err(OrchestratorError::bad(
                    ErrorCode::InvalidCustomValue,
                    "That description is too long (200 characters at most).",
                ));
            }
            let entity = state
                .entity
                .clone()
                .or_else(|| custom_owner(&amb.custom))
                .unwrap_or_default();
            // 1. The engine: the question's own kind of value, then a condition or a time.
            let typed = match &amb.custom {
                CustomValue::None | CustomValue::FreeConstraint { .. } => None,
                kind => answers::custom_constraint(model, allowed, Some(&entity), kind, text).ok(),
            };
            let engine_read = match typed {
                Some(c) => Ok((engine::explain::describe(model, &entity, &c), c)),
                None => engine::read_own_words(model, &entity, text, today)
                    .map(|(c, label)| (label, c))
                    .map_err(|e| e.message),
            };
            let t = Instant::now();
            let (option_id, label, resolution, description) = match engine_read {
                Ok((label, constraint)) => {
                    thinking.push(convert::step(
                        "Read your words",
                        format!("\"{text}\" → {label}"),
                        Some(t.elapsed()),
                    ));
                    (
                        fallback::READ_BY_ENGINE,
                        label,
                        Resolution::Custom { constraint },
                        "Your words, as Clarion read them",
                    )
                }
                Err(engine_says) => {
                    let word = &amb.text;
                    let Some(llm_backend) = inner.llm.as_ref() else {
                        return Err(OrchestratorError::bad(
                            ErrorCode::InvalidCustomValue,
                            format!("I couldn't read \"{text}\" for “{word}”. {engine_says}"),
                        ));
                    };
                    let options: Vec<(String, String)> = amb
                        .options
                        .iter()
                        .filter(|o| o.id != fallback::READ_BY_ENGINE && o.id != fallback::READ_BY_MODEL)
                        .map(|o| (o.id.clone(), o.label.clone()))
                        .collect();
                    let request = llm::AnswerRequest {
                        model,
                        allowed,
                        question: &amb.question,
                        word,
                        answer: text,
                        entity: &entity,
                        options: &options,
                        today,
                    };
                    match fallback::read_answer(
                        llm_backend,
                        &inner.store,
                        user_id,
                        &mut calls,
                        &request,
                        &mut thinking,
                    )
                    .await
                    {
                        Ok((r, label)) => (
                            fallback::READ_BY_MODEL,
                            label,
                            r,
                            "Proposed by the language model",
                        ),
                        Err(why) => {
                            // The call (if any) is counted even though nothing is stored.
                            self.store_calls(user_id, id, &state, &questions, calls).await;
                            return Err(OrchestratorError::bad(
                                ErrorCode::InvalidCustomValue,
                                format!(
                                    "I couldn't read \"{text}\" for “{word}”, and the language model was not used or could not read it ({why}). {}",
                                    engine::OWN_WORDS_HINT
                                ),
                            ));
                        }
                    }
                }
            };
            // The reading must make a plan that runs, like any custom value.
            let mut res = state.resolutions.clone();
            res.answers.insert(amb.id.clone(), resolution.clone());
            self.check_custom_renders(&state.question, &state.context, allowed, &res)?;
            let effect = fallback::effect_of(resolution);
            let a = &mut state.ambiguities[ai];
            a.options
                .retain(|o| o.id != fallback::READ_BY_ENGINE && o.id != fallback::READ_BY_MODEL);
            a.options.iter_mut().for_each(|o| o.default = false);
            a.options.insert(
                0,
                AmbiguityOption {
                    id: option_id.to_owned(),
                    label: label.clone(),
                    description: description.to_owned(),
                    default: true,
                    effect,
                },
            );
            if let Some(q) = questions.iter_mut().find(|q| q.id == amb.id) {
                q.options
                    .retain(|o| o.id != fallback::READ_BY_ENGINE && o.id != fallback::READ_BY_MODEL);
                q.options.iter_mut().for_each(|o| o.default = false);
                q.options.insert(
                    0,
                    Choice {
                        id: option_id.to_owned(),
                        label,
                        description: description.to_owned(),
                        default: true,
                        count: None,
                        counts_of: String::new(),
                    },
                );
            }
        }
        state.llm_calls = calls;
        let state_json = serde_json::to_string(&state).map_err(OrchestratorError::internal)?;
        let questions_json = serde_json::to_string(&questions).map_err(OrchestratorError::internal)?;
        inner
            .store
            .update_pending_round(user_id, id, &state_json, &questions_json, chrono::Utc::now())
            .await?;
        let input = EngineInput::new(model, &state.question, today)
            .with_allowed(allowed)
            .with_context(&state.context)
            .with_resolutions(&state.resolutions);
        Ok(QueryOutcome::NeedsClarification(ClarificationRound {
            clarification_id: id.as_str().to_owned(),
            thread_id: round.thread_id.as_str().to_owned(),
            round: u32::try_from(round.round_number).unwrap_or(1),
            max_rounds: inner.config.max_rounds,
            reason:
                "I read your words as the option marked below. Check it, then submit to run the question."
                    .into(),
            questions,
            understood_so_far: understand(&input).restatement,
            thinking,
            expires_at: round.expires_at.to_rfc3339(),
        }))
    }

    /// Keeps the count of model calls made for a reading that failed (the call budget
    /// holds across attempts); a failure to store it is logged, never shown.
    async fn store_calls(
        &self,
        user_id: i64,
        id: &RoundId,
        state: &RoundState,
        questions: &[Question],
        calls: u32,
    ) {
        if calls == state.llm_calls {
            return;
        }
        let mut s = state.clone();
        s.llm_calls = calls;
        let (Ok(state_json), Ok(questions_json)) =
            (serde_json::to_string(&s), serde_json::to_string(questions))
        else {
            return;
        };
        if let Err(e) = self
            .inner
            .store
            .update_pending_round(user_id, id, &state_json, &questions_json, chrono::Utc::now())
            .await
        {
            tracing::warn!(error = %e, "could not record a model call on its round");
        }
    }
}

/// The entity a question's custom value belongs to, when the round has none.
fn custom_owner(kind: &CustomValue) -> Option<String> {
    match kind {
        CustomValue::Number { attribute, .. }
        | CustomValue::DateRange { attribute }
        | CustomValue::AllowedValue { attribute } => attribute.split('.').next().map(str::to_owned),
        CustomValue::FreeConstraint { entity } => Some(entity.clone()),
        CustomValue::None => None,
    }
}

/// Makes `option` the preselected option of question `qid` (the round shown back keeps
/// what the clinician picked elsewhere).
fn preselect(options: &mut [AmbiguityOption], questions: &mut [Question], qid: &str, option: &str) {
    if !options.iter().any(|o| o.id == option) {
        return;
    }
    options.iter_mut().for_each(|o| o.default = o.id == option);
    if let Some(q) = questions.iter_mut().find(|q| q.id == qid) {
        q.options.iter_mut().for_each(|o| o.default = o.id == option);
    }
}
