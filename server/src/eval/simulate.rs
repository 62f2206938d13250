//! The simulated clinician: runs the engine on one labeled item the way a user would
//! meet it — the previous question first (for follow-ups), then the question, then
//! answers to whatever is asked — and records what happened.
//!
//! The simulated user answers an ambiguity that matches an expected one (same
//! dictionary term, else same kind) with the item's pick: the option with that id, else
//! the option whose typed effect equals `pick_constraint` / `pick_change`, else that
//! typed value as a custom answer. Anything else it answers "I don't know — use your
//! best judgment". When the engine answered without asking but shows the expected
//! ambiguity as an assumption, the user changes the badge (F9) instead — only to an
//! offered option, never to a custom value — and that re-run is not a clarification
//! round.
//!
//! Pure apart from timing each engine call: no database, no SQL. A panic inside the
//! engine is caught and recorded as the item's outcome, never propagated.

use chrono::NaiveDate;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::time::{Duration, Instant};

use super::set::{Behaviour, Expected, Item};
use crate::engine::{
    AllowedValuesSnapshot, Ambiguity, AmbiguityKind, ConversationContext, Decision, EngineIndex, EngineInput,
    QueryPlan, Resolution, Resolutions, Understanding, understand,
};
use crate::semantic::SemanticModel;

/// Clarification rounds the simulated user sits through before giving up.
pub const MAX_ROUNDS: u32 = 3;

/// What the engine needs besides the question.
#[derive(Clone, Copy)]
pub struct Env<'a> {
    /// The semantic model.
    pub model: &'a SemanticModel,
    /// Its vocabulary index, built once.
    pub index: &'a EngineIndex,
    /// Allowed values loaded from the evaluation database.
    pub allowed: &'a AllowedValuesSnapshot,
    /// The dataset's anchor date.
    pub today: NaiveDate,
    /// What reads the words the engine left unexplained (the language model under
    /// `server eval --llm`); none: the engine alone.
    pub reader: Option<&'a dyn WordReader>,
}

/// Reads what the engine could not (`server eval --llm`: the language model, folded as
/// the orchestrator folds it).
pub trait WordReader: Sync {
    /// The resolutions to run `question` with: `answers` plus the readings settled for
    /// it before, with chosen proposed options replaced by their typed readings.
    fn prepare(&self, question: &str, answers: &Resolutions) -> Resolutions;
    /// After the engine: the understanding with a reading folded in, when it left
    /// unexplained words and none was asked for this question yet.
    fn after(&self, question: &str, input: &EngineInput<'_>, u: Understanding) -> Understanding;
}

/// The routing decision, without its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DecisionKind {
    /// Answered directly.
    Answer,
    /// Answered with assumption badges.
    AnswerWithAssumptions,
    /// Asked a clarification question.
    Clarify,
    /// Refused.
    Refuse,
    /// The engine panicked.
    Panic,
}

impl DecisionKind {
    fn of(d: &Decision) -> Self {
        match d {
            Decision::Answer => DecisionKind::Answer,
            Decision::AnswerWithAssumptions => DecisionKind::AnswerWithAssumptions,
            Decision::Clarify => DecisionKind::Clarify,
            Decision::Refuse { .. } => DecisionKind::Refuse,
        }
    }

    /// Asked or refused: a positive for ambiguity detection.
    pub fn flags(self) -> bool {
        matches!(self, DecisionKind::Clarify | DecisionKind::Refuse)
    }

    /// Produced an answer.
    pub fn answers(self) -> bool {
        matches!(self, DecisionKind::Answer | DecisionKind::AnswerWithAssumptions)
    }
}

/// An ambiguity as the report shows it.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Seen {
    /// Its kind.
    pub kind: AmbiguityKind,
    /// The dictionary term, if any.
    pub term: Option<String>,
    /// The words it concerns.
    pub text: String,
    /// It was asked (not only assumed).
    pub asked: bool,
    /// The option ids offered, the default first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

impl Seen {
    fn of(a: &Ambiguity) -> Self {
        let mut options: Vec<String> = a
            .options
            .iter()
            .filter(|o| o.default)
            .map(|o| o.id.clone())
            .collect();
        options.extend(a.options.iter().filter(|o| !o.default).map(|o| o.id.clone()));
        Seen {
            kind: a.kind,
            term: a.term.clone(),
            text: a.text.clone(),
            asked: a.ask,
            options,
        }
    }
}

/// One engine call's result, summarised.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Observation {
    /// The decision.
    pub decision: DecisionKind,
    /// The refusal reason, when refused.
    pub refuse_reason: Option<String>,
    /// Every open ambiguity (asked and assumed).
    pub ambiguities: Vec<Seen>,
    /// The panic message, when the engine panicked.
    pub panic: Option<String>,
    /// The engine's restatement of what it will compute.
    pub restatement: String,
    /// The plan (the draft with defaults when clarifying); none when refused.
    #[serde(skip)]
    pub plan: Option<QueryPlan>,
}

impl Observation {
    fn of(result: &Result<Understanding, String>) -> Self {
        match result {
            Ok(u) => Observation {
                decision: DecisionKind::of(&u.decision),
                refuse_reason: match &u.decision {
                    Decision::Refuse { reason, .. } => Some(format!("{reason:?}")),
                    _ => None,
                },
                ambiguities: u.ambiguities.iter().map(Seen::of).collect(),
                panic: None,
                restatement: u.restatement.clone(),
                plan: u.plan.clone(),
            },
            Err(msg) => Observation {
                decision: DecisionKind::Panic,
                refuse_reason: None,
                ambiguities: Vec::new(),
                panic: Some(msg.clone()),
                restatement: String::new(),
                plan: None,
            },
        }
    }

    /// The kinds asked in this round (refusals count as out of domain).
    pub fn asked_kinds(&self) -> Vec<AmbiguityKind> {
        let mut kinds: Vec<AmbiguityKind> = match self.decision {
            DecisionKind::Clarify => self
                .ambiguities
                .iter()
                .filter(|a| a.asked)
                .map(|a| a.kind)
                .collect(),
            DecisionKind::Refuse => vec![AmbiguityKind::OutOfDomain],
            _ => Vec::new(),
        };
        kinds.sort();
        kinds.dedup();
        kinds
    }
}

/// Everything the simulation of one item produced.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Trace {
    /// The first answer of the engine to the question.
    pub first: Observation,
    /// The state after the simulated user's first answer (or badge change); `None`
    /// when the engine refused or panicked.
    pub after_one: Option<Observation>,
    /// The final state after at most [`MAX_ROUNDS`] rounds.
    pub last: Observation,
    /// Clarification rounds until an answer (capped).
    pub rounds: u32,
    /// Still clarifying after [`MAX_ROUNDS`] rounds.
    pub gave_up: bool,
    /// Duration of the first engine call on the question.
    #[serde(skip)]
    pub latency: Duration,
    /// The previous question could not be turned into a plan (follow-ups only).
    pub context_problem: Option<String>,
}

/// Calls the engine, timing it and catching panics.
pub fn call(
    env: &Env<'_>,
    question: &str,
    context: &ConversationContext,
    answers: &Resolutions,
) -> (Result<Understanding, String>, Duration) {
    let check = crate::sql::RenderCheck { model: env.model };
    let prepared = env.reader.map(|r| r.prepare(question, answers));
    let input = EngineInput::new(env.model, question, env.today)
        .with_index(env.index)
        .with_check(&check)
        .with_allowed(env.allowed)
        .with_context(context)
        .with_resolutions(prepared.as_ref().unwrap_or(answers));
    let started = Instant::now();
    let result = catch_unwind(AssertUnwindSafe(|| understand(&input)));
    // The engine's own time only: a model call is reported on its own.
    let elapsed = started.elapsed();
    let result = match (result, env.reader) {
        (Ok(u), Some(r)) => catch_unwind(AssertUnwindSafe(|| r.after(question, &input, u))),
        (result, _) => result,
    };
    let result = result.map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".to_owned())
    });
    (result, elapsed)
}

/// The expected ambiguity an engine ambiguity corresponds to: the same dictionary
/// term, else the same kind on overlapping words, else the same kind.
pub fn matching<'e>(amb: &Seen, expected: &'e [Expected]) -> Option<&'e Expected> {
    let by_term = expected.iter().find(|e| e.term.is_some() && e.term == amb.term);
    let text = amb.text.to_lowercase();
    let overlaps = |e: &&Expected| {
        let span = e.span.to_lowercase();
        !text.is_empty() && (text.contains(&span) || span.contains(&text))
    };
    by_term
        .or_else(|| expected.iter().filter(|e| e.kind == amb.kind).find(overlaps))
        .or_else(|| expected.iter().find(|e| e.kind == amb.kind))
}

/// The simulated user's change to an assumption badge: only to an offered option (by
/// id, or by the typed effect it labels), never a custom value; `None` when nothing
/// offered is the intended reading or it is applied already.
pub fn badge_change(amb: &Ambiguity, expected: &[Expected]) -> Option<Resolution> {
    match answer_for(amb, expected) {
        (r @ Resolution::Option { .. }, true) if !is_default_pick(amb, &r) => Some(r),
        _ => None,
    }
}

/// The simulated user's answer to one ambiguity, and whether it was the item's
/// intended pick (rather than "I don't know").
pub fn answer_for(amb: &Ambiguity, expected: &[Expected]) -> (Resolution, bool) {
    let Some(e) = matching(&Seen::of(amb), expected) else {
        return (Resolution::DontKnow, false);
    };
    if let Some(id) = &e.pick
        && amb.option(id).is_some()
    {
        return (Resolution::Option { id: id.clone() }, true);
    }
    if let Some(c) = &e.pick_constraint {
        if let Some(o) = amb
            .options
            .iter()
            .find(|o| o.effect.constraint.as_ref() == Some(c))
        {
            return (Resolution::Option { id: o.id.clone() }, true);
        }
        return (
            Resolution::Custom {
                constraint: c.clone(),
            },
            true,
        );
    }
    if let Some(ch) = &e.pick_change {
        if let Some(o) = amb.options.iter().find(|o| o.effect.change.as_ref() == Some(ch)) {
            return (Resolution::Option { id: o.id.clone() }, true);
        }
        return (Resolution::Change { change: ch.clone() }, true);
    }
    (Resolution::DontKnow, false)
}

/// Understands `previous` (answering every question with "I don't know") and returns
/// its plan as the thread context.
fn context_for(env: &Env<'_>, previous: &str) -> Result<ConversationContext, String> {
    let mut answers = Resolutions::empty();
    for _ in 0..=MAX_ROUNDS {
        let (result, _) = call(env, previous, &ConversationContext::empty(), &answers);
        let u = result.map_err(|p| format!("the engine panicked on the previous question: {p}"))?;
        match u.decision {
            Decision::Refuse { .. } => return Err("the previous question was refused".into()),
            Decision::Clarify => {
                for a in u.questions() {
                    answers.answers.insert(a.id.clone(), Resolution::DontKnow);
                }
            }
            _ => {
                return u
                    .plan
                    .map(|p| ConversationContext::after(p, 0))
                    .ok_or_else(|| "the previous question produced no plan".into());
            }
        }
    }
    Err("the previous question was still being clarified after the round limit".into())
}

/// Runs one item.
pub fn simulate(env: &Env<'_>, item: &Item) -> Trace {
    let (context, context_problem) = match item.previous.as_deref().map(|p| context_for(env, p)) {
        None => (ConversationContext::empty(), None),
        Some(Ok(c)) => (c, None),
        Some(Err(why)) => (ConversationContext::empty(), Some(why)),
    };
    let (first_result, latency) = call(env, &item.question, &context, &Resolutions::empty());
    let first = Observation::of(&first_result);
    let Ok(mut current) = first_result else {
        return Trace {
            after_one: None,
            last: first.clone(),
            first,
            rounds: 0,
            gave_up: false,
            latency,
            context_problem,
        };
    };
    let mut answers = Resolutions::empty();
    let mut after_one = None;
    let mut last_result: Result<Understanding, String> = Ok(current.clone());

    if DecisionKind::of(&current.decision).answers() {
        // Change the badge of the expected ambiguity, if the engine assumed it.
        for a in &current.ambiguities {
            if let Some(resolution) = badge_change(a, &item.expect) {
                answers.answers.insert(a.id.clone(), resolution);
            }
        }
        if !answers.answers.is_empty() {
            let (result, _) = call(env, &item.question, &context, &answers);
            last_result = result;
        }
        after_one = Some(Observation::of(&last_result));
    }

    let mut rounds = 0;
    let mut gave_up = false;
    while let Ok(u) = &last_result {
        current = u.clone();
        if !matches!(current.decision, Decision::Clarify) {
            break;
        }
        if rounds == MAX_ROUNDS {
            gave_up = true;
            break;
        }
        rounds += 1;
        // One panel: the asked questions, plus any assumption of the expected
        // ambiguity (changed right after as a badge; simulated in the same re-run).
        for a in &current.ambiguities {
            if answers.answers.contains_key(&a.id) {
                continue;
            }
            let resolution = if a.ask {
                Some(answer_for(a, &item.expect).0)
            } else {
                badge_change(a, &item.expect)
            };
            if let Some(resolution) = resolution {
                answers.answers.insert(a.id.clone(), resolution);
            }
        }
        let (result, _) = call(env, &item.question, &context, &answers);
        last_result = result;
        if rounds == 1 && after_one.is_none() {
            after_one = Some(Observation::of(&last_result));
        }
    }
    let after_one = if item.behaviour == Behaviour::Refuse || first.decision == DecisionKind::Refuse {
        None
    } else {
        after_one
    };
    Trace {
        first,
        after_one,
        last: Observation::of(&last_result),
        rounds,
        gave_up,
        latency,
        context_problem,
    }
}

/// Choosing `resolution` for `amb` changes nothing (it is the default already).
fn is_default_pick(amb: &Ambiguity, resolution: &Resolution) -> bool {
    match resolution {
        Resolution::Option { id } => amb.default_option().is_some_and(|o| &o.id == id),
        Resolution::DontKnow => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{AmbiguityOption, CustomValue, Effect, Severity};
    use crate::semantic::{CompareOp, Constraint, PlanChange, SortOrder, Value};

    fn amb(kind: AmbiguityKind, term: Option<&str>, text: &str, options: Vec<AmbiguityOption>) -> Ambiguity {
        Ambiguity {
            id: format!("{}:{text}", kind.as_str()),
            kind,
            severity: Severity::High,
            span: None,
            text: text.into(),
            question: "?".into(),
            options,
            custom: CustomValue::None,
            reason: String::new(),
            term: term.map(str::to_owned),
            confidence: 0.5,
            ask: true,
        }
    }

    fn opt(id: &str, default: bool, effect: Effect) -> AmbiguityOption {
        AmbiguityOption {
            id: id.into(),
            label: id.into(),
            description: String::new(),
            default,
            effect,
        }
    }

    fn expected(kind: AmbiguityKind, span: &str, term: Option<&str>) -> Expected {
        Expected {
            kind,
            span: span.into(),
            term: term.map(str::to_owned),
            pick: None,
            pick_constraint: None,
            pick_change: None,
            assumed: false,
        }
    }

    #[test]
    fn the_user_picks_the_labeled_option_of_the_matching_term() {
        let a = amb(
            AmbiguityKind::VagueQualifier,
            Some("large"),
            "big",
            vec![
                opt("gt10", true, Effect::default()),
                opt("gt25", false, Effect::default()),
            ],
        );
        let mut e = expected(AmbiguityKind::VagueQualifier, "big", Some("large"));
        e.pick = Some("gt25".into());
        assert_eq!(
            answer_for(&a, &[e]),
            (Resolution::Option { id: "gt25".into() }, true)
        );
    }

    #[test]
    fn an_unexpected_question_gets_i_dont_know() {
        let a = amb(
            AmbiguityKind::Column,
            Some("clinic_column"),
            "clinic",
            vec![opt("treating", true, Effect::default())],
        );
        let mut e = expected(AmbiguityKind::VagueQualifier, "serious", Some("serious"));
        e.pick = Some("infected".into());
        assert_eq!(answer_for(&a, &[e]), (Resolution::DontKnow, false));
    }

    #[test]
    fn a_typed_pick_selects_the_option_with_that_effect_or_becomes_a_custom_value() {
        let open = Constraint::Compare {
            attribute: "wounds.status".into(),
            op: CompareOp::Eq,
            value: Value::Text("open".into()),
            unit: None,
        };
        let mut e = expected(AmbiguityKind::MissingCohort, "wound size", None);
        e.pick_constraint = Some(open.clone());
        let with = amb(
            AmbiguityKind::MissingCohort,
            None,
            "wound size",
            vec![
                opt("all", true, Effect::default()),
                opt(
                    "open_only",
                    false,
                    Effect {
                        constraint: Some(open.clone()),
                        ..Effect::default()
                    },
                ),
            ],
        );
        assert_eq!(
            answer_for(&with, std::slice::from_ref(&e)),
            (
                Resolution::Option {
                    id: "open_only".into()
                },
                true
            )
        );
        let without = amb(
            AmbiguityKind::MissingCohort,
            None,
            "size",
            vec![opt("all", true, Effect::default())],
        );
        assert_eq!(
            answer_for(&without, &[e]),
            (Resolution::Custom { constraint: open }, true)
        );
    }

    #[test]
    fn a_typed_plan_change_is_sent_as_a_change() {
        let sort = PlanChange::Sort {
            attribute: "wounds.latest_area".into(),
            order: SortOrder::Desc,
            limit: Some(10),
        };
        let mut e = expected(AmbiguityKind::RankingWithoutMeasure, "top 10", None);
        e.pick_change = Some(sort.clone());
        let a = amb(
            AmbiguityKind::RankingWithoutMeasure,
            None,
            "top 10",
            vec![opt("x", true, Effect::default())],
        );
        assert_eq!(answer_for(&a, &[e]), (Resolution::Change { change: sort }, true));
    }

    #[test]
    fn a_badge_is_changed_only_to_an_offered_non_default_option() {
        let mut a = amb(
            AmbiguityKind::VagueQualifier,
            Some("large"),
            "big",
            vec![
                opt("gt10", true, Effect::default()),
                opt("gt25", false, Effect::default()),
            ],
        );
        a.ask = false;
        let mut e = expected(AmbiguityKind::VagueQualifier, "big", Some("large"));
        e.pick = Some("gt25".into());
        assert_eq!(
            badge_change(&a, std::slice::from_ref(&e)),
            Some(Resolution::Option { id: "gt25".into() })
        );
        e.pick = Some("gt10".into());
        assert_eq!(
            badge_change(&a, std::slice::from_ref(&e)),
            None,
            "already applied"
        );
        e.pick = None;
        e.pick_change = Some(PlanChange::SetLimit { n: 3 });
        assert_eq!(badge_change(&a, &[e]), None, "no custom values on a badge");
    }

    #[test]
    fn matching_prefers_the_term_then_the_kind_on_the_same_words() {
        let e1 = expected(AmbiguityKind::VagueQualifier, "large", Some("large"));
        let e2 = expected(AmbiguityKind::VagueQualifier, "infected", Some("infected"));
        let seen = |kind, term: Option<&str>, text: &str| Seen {
            kind,
            term: term.map(str::to_owned),
            text: text.into(),
            asked: true,
            options: Vec::new(),
        };
        let both = [e1.clone(), e2.clone()];
        assert_eq!(
            matching(&seen(AmbiguityKind::Column, Some("infected"), "x"), &both),
            Some(&e2)
        );
        assert_eq!(
            matching(&seen(AmbiguityKind::VagueQualifier, None, "infected"), &both),
            Some(&e2)
        );
        assert_eq!(
            matching(&seen(AmbiguityKind::VagueQualifier, None, "elsewhere"), &both),
            Some(&e1)
        );
        assert_eq!(
            matching(&seen(AmbiguityKind::Entity, None, "how many"), &both),
            None
        );
    }
}
