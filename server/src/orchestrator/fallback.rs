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
    self, Ambiguity, AmbiguityKind, AmbiguityOption, Decision, Effect, EngineInput, GateThresholds,
    QueryPlan, Resolution, Resolutions, Understanding, understand,
};
use crate::llm::{self, Llm, ModelReply, validate};
use crate::semantic::SemanticModel;
use crate::store::{NewLlmCall, Store};
use app::protocol::{Assumption, AssumptionSource};
use serde::{Deserialize, Serialize};

/// Option ids of proposed options start with this.
const PROPOSED: &str = "llm:";
/// The option a free-text answer read by the engine becomes (F28).
pub const READ_BY_ENGINE: &str = "own:words";
/// The option a free-text answer read by the language model becomes (F28).
pub const READ_BY_MODEL: &str = "llm:words";

/// A piece the language model proposed that is in the resolutions (for its badge).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LlmPiece {
    /// The ambiguity it resolves (`unknown:stalling`).
    pub ambiguity_id: String,
    /// The words it reads.
    pub word: String,
    /// What it means ("Latest area above 15 cm²").
    pub label: String,
}

/// True for the id of an option the language model proposed.
pub fn is_proposed_id(id: &str) -> bool {
    id.starts_with(PROPOSED)
}

/// The typed resolution of a proposed option, or of a free-text answer read back (none
/// for the engine's own options).
pub fn proposed_resolution(o: &AmbiguityOption) -> Option<Resolution> {
    if !is_proposed_id(&o.id) && o.id != READ_BY_ENGINE {
        return None;
    }
    match (&o.effect.constraint, &o.effect.change) {
        (Some(c), _) => Some(Resolution::Custom {
            constraint: c.clone(),
        }),
        (None, Some(ch)) => Some(Resolution::Change { change: ch.clone() }),
        _ => None,
    }
}

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
        })
        .collect()
}

/// The unexplained words worth asking about: not answered, not remembered, not asked
/// before in this question.
fn open_words<'u>(u: &'u Understanding, job: &Job) -> Vec<&'u Ambiguity> {
    u.ambiguities
        .iter()
        .filter(|a| a.kind == AmbiguityKind::UnknownWord)
        .filter(|a| !u.applied.iter().any(|c| c.ambiguity_id == a.id))
        .filter(|a| !job.asked.contains(&a.id) && !job.resolutions.answers.contains_key(&a.id))
        .collect()
}

/// Whether the engine left something the model could read (cheap; no I/O).
pub fn wanted(u: &Understanding, job: &Job) -> bool {
    job.allow_llm
        && !matches!(u.decision, Decision::Refuse { .. })
        && u.plan.is_some()
        && !open_words(u, job).is_empty()
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
    let find = |word: &str| -> Option<&Ambiguity> {
        let w = word.trim().to_lowercase();
        words
            .iter()
            .find(|a| a.text.to_lowercase() == w)
            .or_else(|| {
                words
                    .iter()
                    .find(|a| a.text.to_lowercase().contains(&w) && !w.is_empty())
            })
            .copied()
            .or_else(|| (words.len() == 1).then(|| words[0]))
    };
    let mut rejected: Vec<String> = Vec::new();
    let outcome = match reply {
        ModelReply::Plan { pieces } => {
            let mut valid: Vec<(Ambiguity, validate::Checked, Resolution)> = Vec::new();
            for p in pieces {
                let Some(a) = find(&p.word) else {
                    rejected.push(format!("\"{}\" is not a word of the question", short(&p.word)));
                    continue;
                };
                if valid.iter().any(|(v, ..)| v.id == a.id) {
                    continue;
                }
                let checked = validate::check(
                    cx.model,
                    &cx.loaded.allowed,
                    &entity,
                    &p.label,
                    p.constraint.as_ref(),
                    p.change.as_ref(),
                );
                match &checked.outcome {
                    Ok(r) => {
                        let r = r.clone();
                        valid.push((a.clone(), checked, r));
                    }
                    Err(why) => rejected.push(format!("\"{}\": {why}", a.text)),
                }
            }
            apply_pieces(&cx, job, u, resolutions, valid, &mut rejected)
        }
        ModelReply::Clarification {
            word,
            question,
            options,
        } => match find(&word) {
            None => {
                rejected.push(format!("\"{}\" is not a word of the question", short(&word)));
                None
            }
            Some(a) => {
                let a = a.clone();
                let mut opts: Vec<AmbiguityOption> = Vec::new();
                for (i, o) in options.iter().enumerate() {
                    let checked = validate::check(
                        cx.model,
                        &cx.loaded.allowed,
                        &entity,
                        &o.label,
                        o.constraint.as_ref(),
                        o.change.as_ref(),
                    );
                    match checked.outcome {
                        Ok(r) => opts.push(AmbiguityOption {
                            id: format!("{PROPOSED}{}", i + 1),
                            label: checked.label.clone(),
                            description: if llm::reply::looks_like_sql(&o.description) {
                                String::new()
                            } else {
                                o.description.trim().to_owned()
                            },
                            default: o.default,
                            effect: effect_of(r),
                        }),
                        Err(why) => rejected.push(format!("option \"{}\": {why}", short(&o.label))),
                    }
                }
                clarification(&cx, job, u, resolutions, &a, &question, opts, &mut rejected)
            }
        },
    };
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

/// The option effect a checked reading stands for (a typed constraint or plan change).
pub(super) fn effect_of(resolution: Resolution) -> Effect {
    match resolution {
        Resolution::Custom { constraint } => Effect {
            constraint: Some(constraint),
            ..Effect::default()
        },
        Resolution::Change { change } => Effect {
            change: Some(change),
            ..Effect::default()
        },
        _ => Effect::default(),
    }
}

fn short(s: &str) -> String {
    s.chars().take(40).collect()
}

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

/// Applies valid pieces when the gate lets a 0.75 piece through (it does at every
/// sensitivity: the lowest "ask" threshold is 0.75, and boundaries go to the higher
/// tier), after checking that the plan they make can run. Returns what was applied.
fn apply_pieces(
    cx: &Ctx<'_>,
    job: &mut Job,
    u: &mut Understanding,
    resolutions: &mut Resolutions,
    valid: Vec<(Ambiguity, validate::Checked, Resolution)>,
    rejected: &mut Vec<String>,
) -> Option<String> {
    if valid.is_empty() {
        return None;
    }
    if validate::VALID < cx.thresholds.low {
        // Below the ask threshold: offered as the preselected option of the question.
        let mut summary = Vec::new();
        for (a, checked, r) in valid {
            if let Some(amb) = u.ambiguities.iter_mut().find(|x| x.id == a.id) {
                let effect = match r {
                    Resolution::Custom { constraint } => Effect {
                        constraint: Some(constraint),
                        ..Effect::default()
                    },
                    Resolution::Change { change } => Effect {
                        change: Some(change),
                        ..Effect::default()
                    },
                    _ => continue,
                };
                amb.options.iter_mut().for_each(|o| o.default = false);
                amb.options.insert(
                    0,
                    AmbiguityOption {
                        id: format!("{PROPOSED}1"),
                        label: checked.label.clone(),
                        description: "Proposed by the language model".into(),
                        default: true,
                        effect,
                    },
                );
                amb.options.truncate(5);
                summary.push(format!(
                    "\"{}\" → {} (offered as the best guess)",
                    a.text, checked.label
                ));
            }
        }
        return (!summary.is_empty()).then(|| summary.join("; "));
    }
    let mut next = resolutions.clone();
    for (a, _, r) in &valid {
        next.answers.insert(a.id.clone(), r.clone());
    }
    let again = understand(&EngineInput {
        resolutions: &next,
        ..cx.input
    });
    if matches!(again.decision, Decision::Refuse { .. }) || again.plan.is_none() {
        rejected.push("together they make a plan that cannot run".into());
        return None;
    }
    let mut summary = Vec::new();
    for (a, checked, r) in valid {
        job.resolutions.answers.insert(a.id.clone(), r);
        summary.push(format!("\"{}\" → {}", a.text, checked.label));
        job.llm_pieces.push(LlmPiece {
            ambiguity_id: a.id.clone(),
            word: a.text.clone(),
            label: checked.label,
        });
    }
    *resolutions = next;
    *u = again;
    // A proposed piece is 0.75: never an answer without a badge.
    u.confidence = u.confidence.min(validate::VALID);
    if u.decision == Decision::Answer {
        u.decision = Decision::AnswerWithAssumptions;
    }
    Some(summary.join("; "))
}

/// A proposed clarification with at least one valid option replaces the word's
/// question (interactive), or its best guess is applied as a piece (non-interactive).
#[allow(clippy::too_many_arguments)]
fn clarification(
    cx: &Ctx<'_>,
    job: &mut Job,
    u: &mut Understanding,
    resolutions: &mut Resolutions,
    a: &Ambiguity,
    question: &str,
    mut opts: Vec<AmbiguityOption>,
    rejected: &mut Vec<String>,
) -> Option<String> {
    if opts.is_empty() {
        return None;
    }
    if !opts.iter().any(|o| o.default) {
        opts[0].default = true;
    }
    if !cx.asking {
        let best = opts.iter().find(|o| o.default)?;
        let r = proposed_resolution(best)?;
        let checked = validate::Checked {
            label: best.label.clone(),
            outcome: Ok(r.clone()),
        };
        return apply_pieces(cx, job, u, resolutions, vec![(a.clone(), checked, r)], rejected);
    }
    // "Ignore this word" stays available, as in the engine's own question.
    if let Some(ignore) = a.options.iter().find(|o| o.id == "ignore") {
        let mut ignore = ignore.clone();
        ignore.default = false;
        opts.truncate(4);
        opts.push(ignore);
    }
    let text = question.trim();
    let text = if text.is_empty() || llm::reply::looks_like_sql(text) {
        a.question.clone()
    } else {
        text.to_owned()
    };
    let n = opts.iter().filter(|o| is_proposed_id(&o.id)).count();
    let amb = u.ambiguities.iter_mut().find(|x| x.id == a.id)?;
    amb.question = text;
    amb.options = opts;
    amb.ask = true;
    amb.reason = format!(
        "\"{}\" is not a word of the data; the language model proposed readings.",
        a.text
    );
    amb.confidence = amb.confidence.min(validate::VALID);
    u.decision = Decision::Clarify;
    Some(format!(
        "a question about \"{}\" with {n} proposed reading(s)",
        a.text
    ))
}
