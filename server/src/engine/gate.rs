//! The confidence gate (F3): answer, answer with assumptions, or clarify.
use serde::{Deserialize, Serialize};

use super::Sensitivity;

/// The gate's thresholds: below `low` → ask; `low..high` → assume; `high` and above →
/// answer. Boundaries go to the higher tier.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateThresholds {
    /// Below this a piece is asked about.
    pub low: f64,
    /// From this a piece needs no badge.
    pub high: f64,
}

impl Default for GateThresholds {
    fn default() -> Self {
        GateThresholds { low: 0.6, high: 0.85 }
    }
}

impl GateThresholds {
    /// The thresholds for a clarification-sensitivity setting.
    pub fn for_sensitivity(s: Sensitivity) -> Self {
        match s {
            Sensitivity::Fewer => GateThresholds { low: 0.5, high: 0.75 },
            Sensitivity::Balanced => GateThresholds::default(),
            Sensitivity::More => GateThresholds {
                low: 0.75,
                high: 0.95,
            },
        }
    }
}

use super::ambiguity::Candidate;
use super::plan_ops::Chosen;
use super::{
    AppliedChoice, Decision, LinkMethod, LinkedPiece, Preferences, Resolution, Resolutions, Severity,
};

/// How each detected ambiguity was settled.
#[derive(Clone, Debug, Default)]
pub(crate) struct Settlement {
    /// The interpretation used for each candidate (same order).
    pub chosen: Vec<Chosen>,
    /// How it was chosen (same order): `Default` for open ones.
    pub how: Vec<LinkMethod>,
    /// The option id chosen (same order; `custom` for custom values).
    pub option_ids: Vec<String>,
    /// Still open: reported as ambiguities (and assumptions).
    pub open: Vec<bool>,
    /// Answered "I don't know": default applied, never asked again.
    pub dont_know: Vec<bool>,
    /// Choices applied without asking.
    pub applied: Vec<AppliedChoice>,
}

/// Records an ambiguity settled by the user — answered in this round, or a remembered
/// choice (`how`) — with confidence 1.0.
fn settled_by_user(
    s: &mut Settlement,
    a: &mut super::Ambiguity,
    chosen: Chosen,
    option_id: String,
    how: LinkMethod,
) {
    s.chosen.push(chosen);
    s.how.push(how);
    s.option_ids.push(option_id.clone());
    s.open.push(false);
    s.dont_know.push(false);
    s.applied.push(AppliedChoice {
        ambiguity_id: a.id.clone(),
        option_id,
        how,
    });
    a.confidence = 1.0;
}

/// Applies answers and remembered choices, moves offered defaults, and scores what is
/// left: confidence from severity and attribute weight, and whether to ask.
pub(crate) fn settle(
    candidates: &mut [Candidate],
    preferences: &Preferences,
    resolutions: &Resolutions,
    thresholds: GateThresholds,
) -> Settlement {
    let mut s = Settlement::default();
    for c in candidates.iter_mut() {
        let a = &mut c.ambiguity;
        let default_effect =
            |a: &super::Ambiguity| a.default_option().map(|o| o.effect.clone()).unwrap_or_default();
        let default_id = |a: &super::Ambiguity| a.default_option().map(|o| o.id.clone()).unwrap_or_default();
        match resolutions.answers.get(&a.id) {
            Some(Resolution::Option { id }) if a.option(id).is_some() => {
                let effect = a.option(id).map(|o| o.effect.clone()).unwrap_or_default();
                settled_by_user(
                    &mut s,
                    a,
                    Chosen::Effect(effect),
                    id.clone(),
                    LinkMethod::Answered,
                );
                continue;
            }
            Some(Resolution::Custom { constraint }) => {
                settled_by_user(
                    &mut s,
                    a,
                    Chosen::Custom(constraint.clone()),
                    "custom".into(),
                    LinkMethod::Answered,
                );
                continue;
            }
            Some(Resolution::Change { change }) => {
                let effect = super::Effect {
                    change: Some(change.clone()),
                    ..super::Effect::default()
                };
                settled_by_user(
                    &mut s,
                    a,
                    Chosen::Effect(effect),
                    "custom".into(),
                    LinkMethod::Answered,
                );
                continue;
            }
            Some(Resolution::DontKnow) | Some(Resolution::Option { .. }) => {
                s.chosen.push(Chosen::Effect(default_effect(a)));
                s.how.push(LinkMethod::Default);
                s.option_ids.push(default_id(a));
                s.open.push(true);
                s.dont_know.push(true);
                s.applied.push(AppliedChoice {
                    ambiguity_id: a.id.clone(),
                    option_id: "dont_know".into(),
                    how: LinkMethod::Default,
                });
                a.confidence = a.severity.default_confidence() * c.weight.min(1.0);
                a.ask = false;
                continue;
            }
            None => {}
        }
        if let Some(id) = preferences.remembered_for(&a.id)
            && let Some(o) = a.option(id)
        {
            let (effect, id) = (o.effect.clone(), o.id.clone());
            settled_by_user(&mut s, a, Chosen::Effect(effect), id, LinkMethod::Remembered);
            continue;
        }
        let mut bonus = 0.0;
        if let Some(id) = preferences.offered_for(&a.id)
            && a.option(id).is_some()
        {
            for o in &mut a.options {
                o.default = o.id == id;
            }
            bonus = 0.1;
        }
        let weight = if c.weight < 1.0 { c.weight } else { 1.0 };
        a.confidence = ((a.severity.default_confidence() + bonus) * weight).min(1.0);
        a.ask = a.severity == Severity::Critical || a.confidence < thresholds.low;
        s.chosen.push(Chosen::Effect(default_effect(a)));
        s.how.push(LinkMethod::Default);
        s.option_ids.push(default_id(a));
        s.open.push(true);
        s.dont_know.push(false);
    }
    s
}

/// The routing decision from the pieces and the open ambiguities.
pub(crate) fn decide(
    pieces: &[LinkedPiece],
    open: &[super::Ambiguity],
    thresholds: GateThresholds,
) -> Decision {
    if open.iter().any(|a| a.ask) {
        return Decision::Clarify;
    }
    let weakest = pieces.iter().map(|p| p.confidence).fold(1.0_f64, f64::min);
    if !open.is_empty() || weakest < thresholds.high {
        return Decision::AnswerWithAssumptions;
    }
    Decision::Answer
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensitivity_moves_both_thresholds() {
        let fewer = GateThresholds::for_sensitivity(Sensitivity::Fewer);
        let more = GateThresholds::for_sensitivity(Sensitivity::More);
        let balanced = GateThresholds::for_sensitivity(Sensitivity::Balanced);
        assert_eq!(balanced, GateThresholds { low: 0.6, high: 0.85 });
        assert!(fewer.low < balanced.low && fewer.high < balanced.high);
        assert!(more.low > balanced.low && more.high > balanced.high);
    }

    #[test]
    fn boundaries_go_to_the_higher_tier() {
        let t = GateThresholds::default();
        let piece = |c: f64| LinkedPiece {
            kind: super::super::PieceKind::Attribute,
            target: "x".into(),
            value: None,
            text: String::new(),
            span: None,
            how: LinkMethod::Exact,
            confidence: c,
        };
        assert_eq!(decide(&[piece(0.85)], &[], t), Decision::Answer);
        assert_eq!(decide(&[piece(0.849)], &[], t), Decision::AnswerWithAssumptions);
    }
}
