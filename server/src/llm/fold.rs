//! Folding a language-model reply into the engine's understanding (F24), pure: the
//! proposals are checked against the model and the allowed values
//! ([`super::validate`]) and scored 0.75 (valid) or 0.3 (invalid); valid pieces become
//! resolutions of the words' ambiguities (the plan they make must run), a valid
//! clarification replaces the word's question with typed options. The orchestrator
//! folds replies with this after its calls; `server eval --llm` folds them the same way.

use super::{ModelReply, validate};
use crate::engine::{
    AllowedValuesSnapshot, Ambiguity, AmbiguityKind, AmbiguityOption, Decision, Effect, EngineInput,
    GateThresholds, Resolution, Resolutions, Understanding, understand,
};
use crate::semantic::SemanticModel;
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

/// The unexplained words a model may read: open in a plan that runs (not refused), not
/// applied, and not `settled` (answered, remembered or asked before, by ambiguity id).
pub fn open_words(u: &Understanding, settled: impl Fn(&str) -> bool) -> Vec<&Ambiguity> {
    if matches!(u.decision, Decision::Refuse { .. }) || u.plan.is_none() {
        return Vec::new();
    }
    u.ambiguities
        .iter()
        .filter(|a| a.kind == AmbiguityKind::UnknownWord)
        .filter(|a| !u.applied.iter().any(|c| c.ambiguity_id == a.id))
        .filter(|a| !settled(&a.id))
        .collect()
}

/// What reading a model reply needs besides the reply. Pure: no I/O, so the
/// evaluation (`server eval --llm`) folds replies exactly as the orchestrator does.
pub struct Fold<'a> {
    pub model: &'a SemanticModel,
    pub allowed: &'a AllowedValuesSnapshot,
    /// The records the question is about.
    pub entity: &'a str,
    pub thresholds: GateThresholds,
    /// Whether the user can be asked (interactive).
    pub asking: bool,
    /// The engine input of the reading (its resolutions are replaced).
    pub input: EngineInput<'a>,
}

/// A proposed piece now in the resolutions.
pub struct Applied {
    pub ambiguity_id: String,
    pub resolution: Resolution,
    pub piece: LlmPiece,
}

/// What a reply changed: a summary when something was used, the pieces applied, and
/// what was rejected and why.
#[derive(Default)]
pub struct Folded {
    pub summary: Option<String>,
    pub applied: Vec<Applied>,
    pub rejected: Vec<String>,
}

/// Folds a reply about the unexplained `words` into `u` and `resolutions`: valid pieces
/// become resolutions (0.75, never an answer without a badge), a valid clarification
/// replaces the word's question; invalid proposals are listed in `rejected`.
pub fn fold_reply(
    f: &Fold<'_>,
    words: &[Ambiguity],
    reply: ModelReply,
    u: &mut Understanding,
    resolutions: &mut Resolutions,
) -> Folded {
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
            .or_else(|| (words.len() == 1).then(|| &words[0]))
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
                    f.model,
                    f.allowed,
                    f.entity,
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
            apply_pieces(f, u, resolutions, valid, &mut rejected)
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
                        f.model,
                        f.allowed,
                        f.entity,
                        &o.label,
                        o.constraint.as_ref(),
                        o.change.as_ref(),
                    );
                    match checked.outcome {
                        Ok(r) => opts.push(AmbiguityOption {
                            id: format!("{PROPOSED}{}", i + 1),
                            label: checked.label.clone(),
                            description: if super::reply::looks_like_sql(&o.description) {
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
                clarification(f, u, resolutions, &a, &question, opts, &mut rejected)
            }
        },
    };
    let (summary, applied) = match outcome {
        Some((summary, applied)) => (Some(summary), applied),
        None => (None, Vec::new()),
    };
    Folded {
        summary,
        applied,
        rejected,
    }
}

/// The option effect a checked reading stands for (a typed constraint or plan change).
pub fn effect_of(resolution: Resolution) -> Effect {
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

/// Applies valid pieces when the gate lets a 0.75 piece through (it does at every
/// sensitivity: the lowest "ask" threshold is 0.75, and boundaries go to the higher
/// tier), after checking that the plan they make can run. Returns what was applied.
fn apply_pieces(
    f: &Fold<'_>,
    u: &mut Understanding,
    resolutions: &mut Resolutions,
    valid: Vec<(Ambiguity, validate::Checked, Resolution)>,
    rejected: &mut Vec<String>,
) -> Option<(String, Vec<Applied>)> {
    if valid.is_empty() {
        return None;
    }
    if validate::VALID < f.thresholds.low {
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
        return (!summary.is_empty()).then(|| (summary.join("; "), Vec::new()));
    }
    let mut next = resolutions.clone();
    for (a, _, r) in &valid {
        next.answers.insert(a.id.clone(), r.clone());
    }
    let again = understand(&EngineInput {
        resolutions: &next,
        ..f.input
    });
    if matches!(again.decision, Decision::Refuse { .. }) || again.plan.is_none() {
        rejected.push("together they make a plan that cannot run".into());
        return None;
    }
    let mut summary = Vec::new();
    let mut applied = Vec::new();
    for (a, checked, r) in valid {
        summary.push(format!("\"{}\" → {}", a.text, checked.label));
        applied.push(Applied {
            ambiguity_id: a.id.clone(),
            resolution: r,
            piece: LlmPiece {
                ambiguity_id: a.id.clone(),
                word: a.text.clone(),
                label: checked.label,
            },
        });
    }
    *resolutions = next;
    *u = again;
    // A proposed piece is 0.75: never an answer without a badge.
    u.confidence = u.confidence.min(validate::VALID);
    if u.decision == Decision::Answer {
        u.decision = Decision::AnswerWithAssumptions;
    }
    Some((summary.join("; "), applied))
}

/// A proposed clarification with at least one valid option replaces the word's
/// question (interactive), or its best guess is applied as a piece (non-interactive).
#[allow(clippy::too_many_arguments)]
fn clarification(
    f: &Fold<'_>,
    u: &mut Understanding,
    resolutions: &mut Resolutions,
    a: &Ambiguity,
    question: &str,
    mut opts: Vec<AmbiguityOption>,
    rejected: &mut Vec<String>,
) -> Option<(String, Vec<Applied>)> {
    if opts.is_empty() {
        return None;
    }
    if !opts.iter().any(|o| o.default) {
        opts[0].default = true;
    }
    if !f.asking {
        let best = opts.iter().find(|o| o.default)?;
        let r = proposed_resolution(best)?;
        let checked = validate::Checked {
            label: best.label.clone(),
            outcome: Ok(r.clone()),
        };
        return apply_pieces(f, u, resolutions, vec![(a.clone(), checked, r)], rejected);
    }
    // "Ignore this word" stays available, as in the engine's own question.
    if let Some(ignore) = a.options.iter().find(|o| o.id == "ignore") {
        let mut ignore = ignore.clone();
        ignore.default = false;
        opts.truncate(4);
        opts.push(ignore);
    }
    let text = question.trim();
    let text = if text.is_empty() || super::reply::looks_like_sql(text) {
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
    Some((
        format!("a question about \"{}\" with {n} proposed reading(s)", a.text),
        Vec::new(),
    ))
}
