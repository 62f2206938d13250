//! Stage 11 — suggestions (F18): 2–3 follow-ups from the plan's schema area, a
//! cross-area one once the thread has stayed 3 questions in one area, and recovery
//! suggestions that relax one constraint when a result comes back empty.
//!
//! Suggestions come from the model's area templates ("Break down by clinic", "Only open
//! wounds"). Each template is understood as a follow-up of the current plan by the
//! engine itself, so a suggestion is only offered when it parses and changes something;
//! the resulting plan is attached. Pure.

use crate::semantic::{SchemaArea, SemanticModel, SuggestionKind};

use super::plan::QueryPlan;
use super::{ConversationContext, Suggestion};

/// The schema area of a plan (the first area holding its entity).
pub fn area_of<'m>(model: &'m SemanticModel, plan: &QueryPlan) -> Option<&'m SchemaArea> {
    model.areas.iter().find(|a| a.entities.contains(&plan.entity))
}

/// How many questions in a row (this one included) stay in the plan's area.
pub fn streak(model: &SemanticModel, plan: &QueryPlan, context: &ConversationContext) -> u32 {
    let here = area_of(model, plan).map(|a| a.name.as_str());
    let before = context
        .previous
        .as_ref()
        .and_then(|p| area_of(model, p))
        .map(|a| a.name.as_str());
    if here.is_some() && here == before {
        context.same_area_streak.max(1) + 1
    } else {
        1
    }
}

/// 2–3 follow-up suggestions for a plan. `follow` understands a suggestion's text as a
/// follow-up of `plan` (the pipeline, passed in so this stage does not depend on it).
pub(crate) fn suggest_with(
    model: &SemanticModel,
    plan: &QueryPlan,
    context: &ConversationContext,
    follow: &dyn Fn(&QueryPlan, &str) -> Option<QueryPlan>,
) -> Vec<Suggestion> {
    let Some(area) = area_of(model, plan) else {
        return Vec::new();
    };
    let mut out: Vec<Suggestion> = Vec::new();
    let mut kinds: Vec<SuggestionKind> = Vec::new();
    let try_add =
        |out: &mut Vec<Suggestion>, area: &SchemaArea, text: &str, kind: SuggestionKind, cross: bool| {
            let Some(next) = follow(plan, text) else {
                return false;
            };
            if next == *plan {
                return false;
            }
            out.push(Suggestion {
                text: text.to_owned(),
                kind,
                area: area.name.clone(),
                cross_area: cross,
                plan: Some(next),
            });
            true
        };
    // one of each kind first, then the rest
    for pass in 0..2 {
        for s in &area.suggestions {
            if out.len() >= 3 {
                break;
            }
            if pass == 0 && kinds.contains(&s.kind) || out.iter().any(|o| o.text == s.text) {
                continue;
            }
            if try_add(&mut out, area, &s.text, s.kind, false) {
                kinds.push(s.kind);
            }
        }
    }
    if streak(model, plan, context) >= 3 {
        let cross = area
            .related
            .iter()
            .filter_map(|r| model.area(r))
            .find_map(|other| {
                other.suggestions.iter().find_map(|s| {
                    let mut tmp = Vec::new();
                    try_add(&mut tmp, other, &s.text, s.kind, true).then(|| tmp.remove(0))
                })
            });
        if let Some(c) = cross {
            if out.len() >= 3 {
                out.pop();
            }
            out.push(c);
        }
    }
    out
}

/// Suggestions that relax one constraint of a plan whose result was empty: widen the
/// time range to all time, or drop one filter. Each carries the relaxed plan.
pub fn suggest_relaxations(model: &SemanticModel, plan: &QueryPlan) -> Vec<Suggestion> {
    let area = area_of(model, plan).map_or_else(String::new, |a| a.name.clone());
    let mut out = Vec::new();
    if plan.time_range.is_some() {
        let mut p = plan.clone();
        p.time_range = None;
        out.push(Suggestion {
            text: "Same for all time".into(),
            kind: SuggestionKind::Relax,
            area: area.clone(),
            cross_area: false,
            plan: Some(p),
        });
    }
    for (i, f) in plan.filters.iter().enumerate() {
        if out.len() >= 3 {
            break;
        }
        let mut p = plan.clone();
        p.filters.remove(i);
        let what = super::explain::describe(model, &plan.entity, f);
        let attr = f
            .attributes()
            .first()
            .map(|a| a.split('.').nth(1).unwrap_or(a).replace('_', " "));
        let text = match attr {
            Some(a) => format!("Same without the {a} filter"),
            None => format!("Same without \"{what}\""),
        };
        if out.iter().any(|s: &Suggestion| s.text == text) {
            continue;
        }
        out.push(Suggestion {
            text,
            kind: SuggestionKind::Relax,
            area: area.clone(),
            cross_area: false,
            plan: Some(p),
        });
    }
    out
}
