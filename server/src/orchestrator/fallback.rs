//! The language-model fallback (F24): asked only when the engine could not settle
//! something — words it reports as unexplained (F26) — never on the fast path. The
//! model's proposals are checked against the model and the allowed values
//! (`crate::llm::validate`), scored 0.75 (valid) or 0.3 (invalid) and gated with the
//! user's thresholds like any engine piece:
//!
//! - a valid piece (0.75) is applied as a resolution of the word's ambiguity and shown
//!   as an assumption badge "proposed by the language model", changeable in a click;
//! - a valid clarification replaces the word's question (same ambiguity id: loop
//!   prevention and remembered choices work as for any question), its options typed;
//! - anything else (time-out, HTTP error, malformed or schema-invalid reply, invalid
//!   pieces, SQL text) leaves the engine's own result — the coverage question or the
//!   "ignored" assumption — with a thinking step saying why the model was not used.

use super::{Job, Loaded, convert};
use crate::engine::{
    self, Ambiguity, AmbiguityOption, EngineInput, GateThresholds, QueryPlan, Resolution, Resolutions,
    Understanding, understand,
};
use crate::llm::{self, Llm, ModelReply, validate};
use crate::semantic::SemanticModel;
use crate::store::{NewLlmCall, Store};
use app::protocol::{Assumption, AssumptionSource};

pub use crate::llm::fold::{
    Fold, Folded, LlmPiece, READ_BY_ENGINE, READ_BY_MODEL, effect_of, fold_reply, is_proposed_id,
    proposed_resolution,
};

/// The plan an option would give, proposed options included (for option counts).
pub fn option_plan_any(input: &EngineInput<'_>, a: &Ambiguity, o: &AmbiguityOption) -> Option<QueryPlan> {
    match proposed_resolution(o) {
        Some(r) => {
            let mut res = input.resolutions.clone();
            res.answers.insert(a.id.clone(), r);
            understand(&EngineInput {
                resolutions: &res,
                ..*input
            })
            .plan
        }
        None => engine::option_plan(input, &a.id, &o.id),
    }
}

/// Badges for the proposed pieces still in force.
pub fn badges(u: &Understanding, resolutions: &Resolutions, pieces: &[LlmPiece]) -> Vec<Assumption> {
    pieces
        .iter()
        .filter(|p| resolutions.answers.contains_key(&p.ambiguity_id))
        .map(|p| Assumption {
            piece: p.word.clone(),
            assumed: p.label.clone(),
            source: AssumptionSource::LanguageModel,
            ambiguity_id: Some(p.ambiguity_id.clone()),
            option_id: Some("custom".into()),
            // The reading in use first (shown as such, never re-sent), then the engine's own.
            options: std::iter::once(app::protocol::Choice {
                id: "custom".into(),
                label: p.label.clone(),
                description: "Proposed by the language model".into(),
                default: false,
                count: None,
                counts_of: String::new(),
            })
            .chain(
                u.ambiguity(&p.ambiguity_id)
                    .map(|a| convert::choices(a, None))
                    .unwrap_or_default(),
            )
            .collect(),
            // the model's own certainty is not comparable with Clarion's: none is claimed
            confidence: None,
            reasoning: format!(
                "Clarion's own reading could not place “{}”; the language model proposed this, and it was checked against the data model.",
                p.word
            ),
        })
        .collect()
}

/// The unexplained words worth asking about: not answered, not remembered, not asked
/// before in this question.
fn open_words<'u>(u: &'u Understanding, job: &Job) -> Vec<&'u Ambiguity> {
    crate::llm::fold::open_words(u, |id| {
        job.asked.iter().any(|a| a == id) || job.resolutions.answers.contains_key(id)
    })
}

/// Whether the engine left something the model could read (cheap; no I/O).
pub fn wanted(u: &Understanding, job: &Job) -> bool {
    job.allow_llm && !open_words(u, job).is_empty()
}

/// Everything [`consult`] reads besides the job.
pub struct Ctx<'a> {
    pub llm: &'a Llm,
    pub store: &'a Store,
    pub model: &'a SemanticModel,
    pub loaded: &'a Loaded,
    pub thresholds: GateThresholds,
    pub asking: bool,
    /// The engine input of the first reading (its resolutions are replaced).
    pub input: EngineInput<'a>,
}

/// Asks the model about the open words and folds what is valid into `u` and
/// `resolutions` (and the job's resolutions and pieces). Never fails: on any problem
/// the engine's own result stands and a thinking step says why.
pub async fn consult(cx: Ctx<'_>, job: &mut Job, u: &mut Understanding, resolutions: &mut Resolutions) {
    let not_used = |job: &mut Job, why: String| {
        job.thinking
            .push(convert::step("Language model not used", why, None));
    };
    let words = open_words(u, job);
    let (named, words): (Vec<&Ambiguity>, Vec<&Ambiguity>) = words
        .into_iter()
        .partition(|a| llm::card::maybe_a_name(&job.question, &a.text));
    if !named.is_empty() {
        not_used(
            job,
            format!(
                "{} word(s) may be a name or an identifier and are never sent",
                named.len()
            ),
        );
    }
    if words.is_empty() {
        return;
    }
    match cx.store.llm_enabled().await {
        Ok(true) => {}
        Ok(false) => return not_used(job, "it is switched off in Settings; asking instead".into()),
        Err(e) => tracing::warn!(error = %e, "language model switch unreadable; treated as on"),
    }
    let max = cx.llm.config().max_calls;
    if job.llm_calls >= max {
        return not_used(job, format!("this question already used its {max} model call(s)"));
    }
    let entity = u.entity.clone().unwrap_or_default();
    let unexplained: Vec<llm::Unexplained> = words
        .iter()
        .map(|a| llm::Unexplained {
            ambiguity_id: a.id.clone(),
            word: a.text.clone(),
        })
        .collect();
    let req = llm::WordsRequest {
        model: cx.model,
        allowed: &cx.loaded.allowed,
        question: &job.question,
        entity: &entity,
        unexplained: &unexplained,
        previous: job.context.previous.as_ref(),
        resolutions: &job.resolutions,
        today: cx.input.today,
    };
    let (record, reply) = cx.llm.read_words(&req).await;
    job.llm_calls += 1;
    let cost = cost_text(&record);
    let fallback_text = if words.iter().any(|a| a.ask) && cx.asking {
        "asking instead"
    } else {
        "the word is treated as the engine read it"
    };
    let reply = match reply {
        Ok(r) => r,
        Err(e) => {
            audit(cx.store, job.user_id, &record, record.outcome).await;
            job.thinking.push(convert::step(
                "Language model not used",
                format!("{e}; {fallback_text}"),
                Some(record.latency),
            ));
            return;
        }
    };
    let fold = Fold {
        model: cx.model,
        allowed: &cx.loaded.allowed,
        entity: &entity,
        thresholds: cx.thresholds,
        asking: cx.asking,
        input: cx.input,
    };
    let words: Vec<Ambiguity> = words.into_iter().cloned().collect();
    let Folded {
        summary: outcome,
        applied,
        rejected,
    } = fold_reply(&fold, &words, reply, u, resolutions);
    for p in applied {
        job.resolutions
            .answers
            .insert(p.ambiguity_id.clone(), p.resolution);
        job.llm_pieces.push(p.piece);
    }
    let used = outcome.is_some();
    cx.llm.record_usable(used);
    audit(
        cx.store,
        job.user_id,
        &record,
        if used { "ok" } else { "invalid" },
    )
    .await;
    match outcome {
        Some(summary) => {
            let mut detail = format!("{cost}: {summary}");
            if !rejected.is_empty() {
                detail.push_str(&format!("; not used: {}", rejected.join("; ")));
            }
            job.thinking.push(convert::step(
                "Asked the language model",
                detail,
                Some(record.latency),
            ));
        }
        None => {
            job.thinking.push(convert::step(
                "Asked the language model",
                cost,
                Some(record.latency),
            ));
            let why = if rejected.is_empty() {
                "it proposed nothing usable".to_owned()
            } else {
                format!(
                    "what it proposed was invalid (confidence 0.3): {}",
                    rejected.join("; ")
                )
            };
            not_used(job, format!("{why}; {fallback_text}"));
        }
    }
}

/// Reads a free-text clarification answer the engine could not read (F28): one call,
/// within the question's call budget and the runtime switch, its single proposed piece
/// checked like any other. Returns the typed resolution and its label, or why not (the
/// caller then says what the engine accepts). Recorded like every call.
pub async fn read_answer(
    llm: &Llm,
    store: &Store,
    user_id: i64,
    calls: &mut u32,
    r: &llm::AnswerRequest<'_>,
    thinking: &mut Vec<app::protocol::ThinkingStep>,
) -> Result<(Resolution, String), String> {
    match store.llm_enabled().await {
        Ok(true) => {}
        Ok(false) => return Err("the language model is switched off in Settings".into()),
        Err(e) => tracing::warn!(error = %e, "language model switch unreadable; treated as on"),
    }
    let max = llm.config().max_calls;
    if *calls >= max {
        return Err(format!("this question already used its {max} model call(s)"));
    }
    if answer_may_name(r.answer) {
        return Err("it may hold a name or an identifier, which is never sent".into());
    }
    let (record, reply) = llm.read_answer(r).await;
    *calls += 1;
    let cost = cost_text(&record);
    let pieces = match reply {
        Ok(ModelReply::Plan { pieces }) => pieces,
        Ok(ModelReply::Clarification { .. }) => Vec::new(),
        Err(e) => {
            audit(store, user_id, &record, record.outcome).await;
            thinking.push(convert::step(
                "Language model not used",
                e.to_string(),
                Some(record.latency),
            ));
            return Err(e.to_string());
        }
    };
    let Some(p) = pieces.into_iter().next() else {
        llm.record_usable(true);
        audit(store, user_id, &record, "ok").await;
        thinking.push(convert::step(
            "Asked the language model",
            format!("{cost}: it could not read the answer"),
            Some(record.latency),
        ));
        return Err("it could not read it either".into());
    };
    let checked = validate::check(
        r.model,
        r.allowed,
        r.entity,
        &p.label,
        p.constraint.as_ref(),
        p.change.as_ref(),
    );
    let used = checked.outcome.is_ok();
    llm.record_usable(used);
    audit(store, user_id, &record, if used { "ok" } else { "invalid" }).await;
    match checked.outcome {
        Ok(res) => {
            let label = match &res {
                Resolution::Custom { constraint } => engine::explain::describe(r.model, r.entity, constraint),
                _ => checked.label.clone(),
            };
            thinking.push(convert::step(
                "Asked the language model",
                format!("{cost}: your words → {label}"),
                Some(record.latency),
            ));
            Ok((res, label))
        }
        Err(why) => {
            thinking.push(convert::step(
                "Asked the language model",
                format!("{cost}: what it proposed was invalid (confidence 0.3): {why}"),
                Some(record.latency),
            ));
            Err(format!("what it proposed was invalid: {why}"))
        }
    }
}

/// A free-text answer with a capitalised word (other than its first, a month or a day)
/// or anything that looks like an identifier may name a patient: it is never sent.
fn answer_may_name(text: &str) -> bool {
    text.split_whitespace()
        .filter(|w| {
            let w = w.trim_matches(|c: char| !c.is_alphanumeric()).to_lowercase();
            !crate::engine::time::MONTHS.contains(&w.as_str()) && !WEEKDAYS.contains(&w.as_str())
        })
        .any(|w| llm::card::maybe_a_name(text, w))
}

const WEEKDAYS: [&str; 7] = [
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
];

/// "llama3, 640 ms, 812 tokens".
fn cost_text(r: &llm::CallRecord) -> String {
    let mut s = format!("{}, {} ms", r.model, r.latency.as_millis());
    if let Some(t) = r.tokens {
        s.push_str(&format!(", {t} tokens"));
    }
    s
}

async fn audit(store: &Store, user_id: i64, r: &llm::CallRecord, outcome: &str) {
    tracing::info!(
        model = %r.model,
        prompt = r.prompt_version,
        tokens = r.tokens,
        latency_ms = r.latency.as_millis() as u64,
        outcome,
        "language model used"
    );
    let call = NewLlmCall {
        user_id: Some(user_id),
        model: &r.model,
        prompt_version: r.prompt_version,
        tokens: r.tokens.map(i64::from),
        latency_ms: r.latency.as_millis() as i64,
        outcome,
    };
    if let Err(e) = store.record_llm_call(call, chrono::Utc::now()).await {
        tracing::warn!(error = %e, "could not record a language-model call");
    }
}
