//! Stage 7 — the ambiguity detectors (F2). Each reads the [`Reading`] and produces
//! structured diagnostics: kind, severity, span, a hypothesis-first question, 2–5 typed
//! options with exactly one default (the best guess), the custom value accepted, and a
//! one-line reason.
//!
//! | detector | fires on |
//! |---|---|
//! | [`vague_terms`] | dictionary terms for the entity they modify ("large" for wounds, "busy" for clinics) — kinds vague qualifier, value, threshold, ranking, aggregation |
//! | [`values`] | a phrase matching values of two attributes, or several values |
//! | [`columns`] | a word naming several columns in a grouping, metric, comparison or list ("by date", "average size") — unless one option is the question's own entity's |
//! | [`time_column`] | a time range or trend whose date column was not said (low severity) |
//! | [`missing_window`] | a trend without a window (medium); a rate or average without one (low) |
//! | [`missing_cohort`] | counting or listing every wound or patient with no filter at all (low) |
//! | [`thresholds`] | "more visits than usual", "higher than normal" |
//! | [`ranking`] | "top 10 wounds" with nothing to rank by |
//! | [`entity`] | only a dictionary term or "who" says what is counted |
//! | [`reference`] | "it", "them", "that" with nothing to point at |
//! | [`intent_question`] | intent confidence below 0.6 ("show me data") |
//!
//! Out-of-domain input is caught before any of this (see [`out_of_domain`]). Ids are
//! stable signatures (`term:large@wounds`) so remembered choices and loop prevention can
//! match them. Pure.

use crate::semantic::{
    CompareOp, Constraint, Grain, MeasureAgg, PlanChange, SemanticModel, SortOrder, Span, SpanUnit, Term,
    TermKind, TermOption, Value, split_qualified,
};

use super::coverage::{Coverage, is_known_word};
use super::plan::{Dimension, Intent, QueryPlan};
use super::plan_ops::{self, Slot};
use super::reading::{CmpSubject, ColSpec, Ctx, DimSpec, EntitySource, MetricSpec, RankKey, Reading};
use super::tokenize::Token;
use super::{Ambiguity, AmbiguityKind, AmbiguityOption, CustomValue, Effect, PlanPatch, Severity, TextSpan};

/// A detected ambiguity and where its answer goes in the plan.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Candidate {
    pub ambiguity: Ambiguity,
    pub slot: Slot,
    /// The lowest attribute weight the default touches (pushes a guess down a tier).
    pub weight: f64,
    /// The token where the qualifier was said (for the share split).
    pub at: Option<usize>,
}

/// A column word settled without asking (one option is the entity's own).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Settled {
    pub slot: Slot,
    pub attribute: String,
}

/// What the detectors found.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Detected {
    pub candidates: Vec<Candidate>,
    pub settled: Vec<Settled>,
    /// Term readings settled by the entity they modify (no ambiguity): constraint, anchor and
    /// the term's first token.
    pub direct: Vec<(Constraint, String, usize)>,
}

impl Detected {
    /// A question whose answer fills `slot`, at full weight, said at no particular token.
    fn push_question(&mut self, ambiguity: Ambiguity, slot: Slot) {
        self.candidates.push(Candidate {
            ambiguity,
            slot,
            weight: 1.0,
            at: None,
        });
    }

    /// A question whose answer is a filter (not negated) on `anchor`, at full weight.
    fn push_filter(&mut self, ambiguity: Ambiguity, anchor: String, at: Option<usize>) {
        self.candidates.push(Candidate {
            ambiguity,
            slot: Slot::Filter {
                anchor,
                negated: false,
            },
            weight: 1.0,
            at,
        });
    }
}

/// Runs every detector.
pub(crate) fn detect(ctx: &Ctx<'_>, r: &Reading, low: f64) -> Detected {
    let mut d = Detected::default();
    intent_question(ctx, r, low, &mut d);
    reference(ctx, r, &mut d);
    entity(ctx, r, &mut d);
    vague_terms(ctx, r, &mut d);
    ranked_average(ctx, r, &mut d);
    values(ctx, r, &mut d);
    visit_values(ctx, r, &mut d);
    unknown_names(ctx, r, &mut d);
    columns(ctx, r, &mut d);
    thresholds(ctx, r, &mut d);
    ranking(ctx, r, &mut d);
    time_column(ctx, r, &mut d);
    missing_window(ctx, r, &mut d);
    missing_cohort(ctx, r, &mut d);
    status_scope(ctx, r, &mut d);
    // one question per id
    let mut seen = std::collections::HashSet::new();
    d.candidates.retain(|c| seen.insert(c.ambiguity.id.clone()));
    d
}

fn entity_of(r: &Reading) -> String {
    r.entity.clone().unwrap_or_else(|| "wounds".into())
}

#[allow(clippy::too_many_arguments)]
fn new_ambiguity(
    id: String,
    kind: AmbiguityKind,
    severity: Severity,
    span: Option<TextSpan>,
    text: String,
    question: String,
    options: Vec<AmbiguityOption>,
    custom: CustomValue,
    reason: String,
) -> Ambiguity {
    Ambiguity {
        id,
        kind,
        severity,
        span,
        text,
        question,
        options,
        custom,
        reason,
        term: None,
        confidence: severity.default_confidence(),
        ask: false,
    }
}

fn option(id: &str, label: &str, description: &str, default: bool, effect: Effect) -> AmbiguityOption {
    AmbiguityOption {
        id: id.into(),
        label: label.into(),
        description: description.into(),
        default,
        effect,
    }
}

fn constraint_effect(c: Constraint) -> Effect {
    Effect {
        constraint: Some(c),
        ..Effect::default()
    }
}

fn change_effect(c: PlanChange) -> Effect {
    Effect {
        change: Some(c),
        ..Effect::default()
    }
}

fn patch_effect(p: PlanPatch) -> Effect {
    Effect {
        patch: Some(p),
        ..Effect::default()
    }
}

fn no_change() -> Effect {
    patch_effect(PlanPatch::NoChange)
}

fn choose_attribute(attribute: String) -> Effect {
    change_effect(PlanChange::ChooseAttribute { attribute })
}

fn choose_entity(entity: String) -> Effect {
    change_effect(PlanChange::ChooseEntity { entity })
}

/// `attribute = value`, with no unit.
fn equals(attribute: impl Into<String>, value: Value) -> Constraint {
    Constraint::Compare {
        attribute: attribute.into(),
        op: CompareOp::Eq,
        value,
        unit: None,
    }
}

/// Ensures exactly one default (the first, when none is marked).
fn one_default(options: &mut [AmbiguityOption]) {
    let mut seen = false;
    for o in options.iter_mut() {
        if o.default && !seen {
            seen = true;
        } else {
            o.default = false;
        }
    }
    if !seen && let Some(o) = options.first_mut() {
        o.default = true;
    }
}

/// A critical term's question is critical; otherwise it has the given severity.
fn term_severity(term: &Term, otherwise: Severity) -> Severity {
    if term.critical {
        Severity::Critical
    } else {
        otherwise
    }
}

/// A vague word that decides who is in the cohort ("large", "recent", "doing well",
/// "high pain"): its readings are different thresholds or definitions, so its best
/// guess is a guess and a wrong one is a wrong cohort nobody sees. Its default is below
/// the ask threshold of the balanced and "more questions" sensitivities (asked, best
/// guess preselected, a count per reading) and above that of "fewer questions" (an
/// assumption badge). A word with a single reading has nothing to choose between.
///
/// Two cases are settled enough to be a badge: the default follows a published
/// definition the model names (`standard`: "obese" = BMI 30 or more), or the words said
/// name the very value the default compares with ("high exudate" where exudate is
/// recorded as none/low/moderate/high): only which visit is left, and that is a badge.
fn cohort_severity(term: &Term, said: &str) -> Severity {
    let readings = term.options.iter().filter(|o| o.constraint.is_some()).count();
    if readings < 2 || term.standard.is_some() || names_default_value(term, said) {
        Severity::Medium
    } else {
        Severity::High
    }
}

/// Whether a word of `said` is a category value the term's default compares with.
fn names_default_value(term: &Term, said: &str) -> bool {
    let Some(c) = term
        .options
        .iter()
        .find(|o| o.default)
        .or(term.options.first())
        .and_then(|o| o.constraint.as_ref())
    else {
        return false;
    };
    let mut values = Vec::new();
    text_values(c, &mut values);
    let words: Vec<String> = said
        .split(|ch: char| !ch.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    values
        .iter()
        .any(|v| words.iter().any(|w| *w == v.to_lowercase()))
}

/// The text values a constraint compares with (equality and sets, at any depth).
fn text_values<'c>(c: &'c Constraint, out: &mut Vec<&'c str>) {
    match c {
        Constraint::Compare {
            op: CompareOp::Eq,
            value: Value::Text(v),
            ..
        } => out.push(v),
        Constraint::InSet { values, .. } if values.len() == 1 => {
            if let Some(Value::Text(v)) = values.first() {
                out.push(v);
            }
        }
        Constraint::All { of } => of.iter().for_each(|c| text_values(c, out)),
        _ => {}
    }
}

fn weight_of(model: &SemanticModel, effect: &Effect) -> f64 {
    let mut w: f64 = 1.0;
    if let Some(c) = &effect.constraint {
        for a in c.attributes() {
            w = w.min(model.attribute(a).map_or(1.0, |r| r.attribute.weight));
        }
    }
    if let Some(PlanChange::ChooseAttribute { attribute } | PlanChange::Sort { attribute, .. }) =
        &effect.change
    {
        w = w.min(model.attribute(attribute).map_or(1.0, |r| r.attribute.weight));
    }
    w
}

fn term_options(term: &Term, negated: bool, limit: Option<u32>) -> Vec<AmbiguityOption> {
    term.options
        .iter()
        .map(|o| term_option(o, negated, limit))
        .collect()
}

fn term_option(o: &TermOption, negated: bool, limit: Option<u32>) -> AmbiguityOption {
    let constraint = o.constraint.clone().map(|c| plan_ops::negate(c, negated));
    let change = o.change.clone().map(|c| match (c, limit) {
        (PlanChange::Sort { attribute, order, .. }, Some(n)) => PlanChange::Sort {
            attribute,
            order,
            limit: Some(n),
        },
        (
            PlanChange::Rank {
                measure, per, order, ..
            },
            Some(n),
        ) => PlanChange::Rank {
            measure,
            per,
            order,
            limit: n,
        },
        (c, _) => c,
    });
    let label = if negated {
        format!("Not: {}", o.label)
    } else {
        o.label.clone()
    };
    AmbiguityOption {
        id: o.id.clone(),
        label,
        description: o.description.clone(),
        default: o.default,
        effect: Effect {
            constraint,
            change,
            patch: None,
        },
    }
}

/// The custom value a question accepts, from its default option.
fn custom_for(model: &SemanticModel, effect: &Effect, entity: &str) -> CustomValue {
    match &effect.constraint {
        Some(Constraint::Compare {
            attribute, op, unit, ..
        }) => {
            let ty = model.attribute_type(attribute);
            if ty.is_some_and(|t| t.is_numeric()) {
                CustomValue::Number {
                    attribute: attribute.clone(),
                    op: *op,
                    unit: unit.clone(),
                }
            } else if model.allowed_values(attribute).is_some() {
                CustomValue::AllowedValue {
                    attribute: attribute.clone(),
                }
            } else {
                CustomValue::FreeConstraint {
                    entity: entity.to_owned(),
                }
            }
        }
        Some(Constraint::InSet { attribute, .. }) => CustomValue::AllowedValue {
            attribute: attribute.clone(),
        },
        Some(Constraint::TimeWindow { dimension, .. }) => {
            let attr = dimension
                .as_deref()
                .and_then(|d| model.time_dimension(d))
                .map(|d| d.attribute.clone())
                .or_else(|| plan_ops::default_time_attribute(model, entity));
            attr.map_or(CustomValue::None, |attribute| CustomValue::DateRange {
                attribute,
            })
        }
        Some(_) => CustomValue::FreeConstraint {
            entity: entity.to_owned(),
        },
        None => match &effect.change {
            Some(PlanChange::Sort { attribute, .. }) => CustomValue::Number {
                attribute: attribute.clone(),
                op: CompareOp::Gt,
                unit: None,
            },
            _ => CustomValue::None,
        },
    }
}

/// The attribute part of `entity.attribute` (all of it when unqualified).
fn attribute_name(qualified: &str) -> &str {
    qualified.split('.').nth(1).unwrap_or(qualified)
}

/// An attribute as said: `wounds.latest_area` → "latest area".
fn short_label(qualified: &str) -> String {
    plan_ops::attribute_label(attribute_name(qualified))
}

/// The words of the question under `span`, if any.
fn span_text(ctx: &Ctx<'_>, span: Option<TextSpan>) -> String {
    span.map(|s| s.slice(ctx.question).to_owned()).unwrap_or_default()
}

fn phrase_text(ctx: &Ctx<'_>, mi: usize) -> (TextSpan, String) {
    let m = &ctx.mentions[mi];
    (m.span, m.span.slice(ctx.question).to_owned())
}

// -------------------------------------------------------------------------------------

/// Whether a word right beside tokens `first..last` says the present ("currently
/// infected", "necrotic now", "still sloughy").
fn said_now(ctx: &Ctx<'_>, first: usize, last: usize) -> bool {
    let now = |w: &str| matches!(w, "now" | "currently" | "still" | "presently" | "today");
    now(ctx.w(first.wrapping_sub(1))) || now(ctx.w(last)) || now(ctx.w(last + 1))
}

/// Dictionary terms for the entity they modify.
pub(crate) fn vague_terms(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    let model = ctx.model;
    let plan_entity = entity_of(r);
    for tu in &r.terms {
        let term = &model.terms[tu.term];
        if term.id == "over_time" {
            continue; // the time-window detector asks about trends
        }
        let mut anchor = tu.anchor.clone();
        // "assessments with signs of infection": the entity's own yes/no column
        if let Some(attr) = local_boolean(model, &anchor, &ctx.mentions[tu.mention].phrase) {
            d.direct.push((
                plan_ops::negate(equals(attr, Value::Bool(true)), tu.negated),
                anchor.clone(),
                ctx.mentions[tu.mention].first,
            ));
            continue;
        }
        if !term.applies_to.contains(&anchor) {
            if term.applies_to.contains(&plan_entity) {
                anchor = plan_entity.clone();
            } else {
                // not ambiguous here: an option about the entity itself is meant
                // ("diabetic patients" → patients with diabetes)
                let local: Vec<&TermOption> = term
                    .options
                    .iter()
                    .filter(|o| {
                        o.constraint.as_ref().is_some_and(|c| {
                            let attrs = c.attributes();
                            !attrs.is_empty()
                                && attrs
                                    .iter()
                                    .all(|a| split_qualified(a).is_some_and(|(e, _)| e == anchor))
                        })
                    })
                    .collect();
                if let [only] = local.as_slice()
                    && let Some(c) = &only.constraint
                {
                    d.direct.push((
                        plan_ops::negate(c.clone(), tu.negated),
                        anchor.clone(),
                        ctx.mentions[tu.mention].first,
                    ));
                    continue;
                }
                // "recent infections at Lakeview" (a clinic): the term is about the
                // related rows it applies to — asked about, never dropped
                match term.applies_to.first() {
                    // a ranking word for other rows is read as a ranking (read::ranking)
                    Some(e) if term.kind != TermKind::Ranking => anchor = e.clone(),
                    _ => continue,
                }
            }
        }
        // "necrotic at their first assessment": the term's reading at the record's first
        // visit, unless a word beside it says now ("and infected now")
        let m = &ctx.mentions[tu.mention];
        // with two visits said, the term is of the visit said after it
        let term_first = match r.other_visit_from {
            Some(from) => (m.first < from) == r.visit_first,
            None => r.visit_first,
        };
        if term_first
            && r.visit_hint == Some(true)
            && !said_now(ctx, m.first, m.last)
            && let Some(c) = plan_ops::term_at_first_visit(model, tu.term)
        {
            d.direct.push((
                plan_ops::negate(c, tu.negated),
                anchor.clone(),
                ctx.mentions[tu.mention].first,
            ));
            continue;
        }
        // "infected wounds ever": a word next to the term names one of its options
        let next_word = |k: usize| ctx.tokens.get(k).map(|t| t.text.as_str()).filter(|w| *w != ",");
        let hint = [
            next_word(m.last),
            m.first.checked_sub(1).and_then(next_word),
            next_word(m.last + 1),
        ]
        .into_iter()
        .flatten()
        .find_map(|w| term.options.iter().find(|o| o.id == w && o.constraint.is_some()))
        .or_else(|| scope_option(ctx, r, term, m.first, m.last));
        if let Some(o) = hint
            && let Some(c) = &o.constraint
        {
            d.direct.push((
                plan_ops::negate(c.clone(), tu.negated),
                anchor.clone(),
                ctx.mentions[tu.mention].first,
            ));
            continue;
        }
        let said = phrase_text(ctx, tu.mention).1;
        let (kind, slot, severity) = match term.kind {
            TermKind::Ranking => {
                if r.rank.as_ref().is_some_and(|k| k.key != RankKey::None) {
                    continue;
                }
                (
                    AmbiguityKind::RankingWithoutMeasure,
                    Slot::Rank,
                    term_severity(term, Severity::Medium),
                )
            }
            TermKind::Threshold => (
                AmbiguityKind::ThresholdWithoutNumber,
                Slot::Filter {
                    anchor: anchor.clone(),
                    negated: tu.negated,
                },
                term_severity(term, cohort_severity(term, &said)),
            ),
            TermKind::Value => (
                AmbiguityKind::Value,
                Slot::Filter {
                    anchor: anchor.clone(),
                    negated: tu.negated,
                },
                term_severity(term, Severity::Medium),
            ),
            TermKind::Aggregation => {
                // "average" beside a column word ("average wound size") leaves the metric's
                // slot to that word's own choice; the mean is the column's aggregate there.
                // Groups kept by their average ("care settings whose average bmi is below
                // 29") cannot be kept by a median: no badge offering one
                if term.id == "average"
                    && (!matches!(r.metric, MetricSpec::Agg { .. } | MetricSpec::Measure(_))
                        || r.having.is_some()
                        || r.pieces.iter().any(|p| p.target == "per group"))
                {
                    continue;
                }
                let slot = if r.metric != MetricSpec::None && r.metric != MetricSpec::Count {
                    Slot::Metric
                } else if term.options.iter().any(|o| o.constraint.is_some()) {
                    Slot::Filter {
                        anchor: anchor.clone(),
                        negated: false,
                    }
                } else {
                    continue; // "typical wound" with nothing aggregated
                };
                (
                    AmbiguityKind::Aggregation,
                    slot,
                    term_severity(term, Severity::Low),
                )
            }
            TermKind::Measure => (AmbiguityKind::Column, Slot::Metric, Severity::Medium),
            _ => (
                AmbiguityKind::VagueQualifier,
                Slot::Filter {
                    anchor: anchor.clone(),
                    negated: tu.negated,
                },
                term_severity(term, cohort_severity(term, &said)),
            ),
        };
        let limit = r.rank.as_ref().and_then(|k| k.n);
        let mut options = term_options(term, tu.negated, limit);
        if term.kind == TermKind::Time
            && let Some(dim) = &r.time_dimension
        {
            // "recently assessed": the window is on the date that was said
            for o in &mut options {
                if let Some(c) = o.effect.constraint.take() {
                    o.effect.constraint = Some(with_dimension(c, dim));
                }
            }
        }
        if r.visit_hint == Some(false) && !r.visit_first {
            let before: Vec<Option<Constraint>> =
                options.iter().map(|o| o.effect.constraint.clone()).collect();
            at_any_visit(model, &mut options, r.time.is_some(), r.every_visit);
            // "signs of infection at least once since 1 Sept": at some visit of the window
            // the question names — the one reading of the term at the visits settles it
            // (its record-level readings, "ever diagnosed", carry no date to window)
            let per_visit: Vec<&AmbiguityOption> = options
                .iter()
                .filter(|o| {
                    o.effect.constraint.is_some()
                        && !before.contains(&o.effect.constraint)
                        && o.effect.change.is_none()
                })
                .collect();
            if (r.time.is_some() || r.visit_hint_at.is_some())
                && let [only] = per_visit.as_slice()
                && let Some(c) = &only.effect.constraint
            {
                d.direct
                    .push((c.clone(), anchor.clone(), ctx.mentions[tu.mention].first));
                continue;
            }
        }
        one_default(&mut options);
        let Some(default) = options.iter().find(|o| o.default).cloned() else {
            continue;
        };
        let (span, text) = phrase_text(ctx, tu.mention);
        let reason = if term.description.is_empty() {
            format!("\"{text}\" can mean different things for {anchor}.")
        } else {
            term.description.clone()
        };
        let mut a = new_ambiguity(
            format!("term:{}@{}", term.id, anchor),
            kind,
            severity,
            Some(span),
            text,
            term.question.clone(),
            options,
            custom_for(model, &default.effect, &anchor),
            reason,
        );
        a.term = Some(term.id.clone());
        d.candidates.push(Candidate {
            weight: weight_of(model, &default.effect),
            ambiguity: a,
            slot,
            at: Some(tu.first),
        });
    }
    // the measure-kind term read as the metric ("rate by clinic")
    if let MetricSpec::TermMeasure { term, mention } = r.metric {
        let t = &model.terms[term];
        let mut options = term_options(t, false, None);
        one_default(&mut options);
        let (span, text) = phrase_text(ctx, mention);
        let mut a = new_ambiguity(
            format!("term:{}@{}", t.id, plan_entity),
            AmbiguityKind::Column,
            term_severity(t, Severity::Medium),
            Some(span),
            text.clone(),
            t.question.clone(),
            options,
            CustomValue::None,
            format!("\"{text}\" could be several measures."),
        );
        a.term = Some(t.id.clone());
        d.push_question(a, Slot::Metric);
    }
}

/// "the region with the highest average initial area", "bottom 3 etiologies by mean
/// pain": which group comes first depends on the kind of average (a few outliers move a
/// mean, not a median), so the aggregate word's dictionary reading is shown as an
/// assumption (its default, correctable), never settled silently.
fn ranked_average(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    let model = ctx.model;
    let Some(rank) = r.rank.as_ref() else { return };
    let RankKey::AggBy { agg, measured, .. } = &rank.key else {
        return;
    };
    if !matches!(agg, MeasureAgg::Avg | MeasureAgg::Median) {
        return;
    }
    let Some((a, b, _)) = ctx.cues.agg else { return };
    let word = ctx.tokens.get(a).map_or("", |t| t.text.as_str());
    // the dictionary term the word is (or a variant of)
    let Some(term_ix) = model.terms.iter().position(|t| {
        t.kind == TermKind::Aggregation && (t.phrase == word || t.variants.iter().any(|v| v == word))
    }) else {
        return;
    };
    if d.candidates
        .iter()
        .any(|c| c.ambiguity.term.as_deref() == Some(model.terms[term_ix].id.as_str()))
    {
        return;
    }
    let term = &model.terms[term_ix];
    let mut options = term_options(term, false, None);
    one_default(&mut options);
    let Some(default) = options.iter().find(|o| o.default).cloned() else {
        return;
    };
    let anchor = split_qualified(measured).map_or_else(|| entity_of(r), |(e, _)| e.to_owned());
    let span = ctx.span_of(a, b);
    let text = span.slice(ctx.question).to_owned();
    let mut amb = new_ambiguity(
        format!("term:{}@{}", term.id, anchor),
        AmbiguityKind::Aggregation,
        term_severity(term, Severity::Low),
        Some(span),
        text,
        term.question.clone(),
        options,
        custom_for(model, &default.effect, &anchor),
        if term.description.is_empty() {
            "Which group comes first depends on the kind of average.".to_owned()
        } else {
            term.description.clone()
        },
    );
    amb.term = Some(term.id.clone());
    d.candidates.push(Candidate {
        weight: weight_of(model, &default.effect),
        ambiguity: amb,
        slot: Slot::Metric,
        at: Some(a),
    });
}

/// "recorded high exudate at least once in the last 30 days", "had high pain at any visit":
/// the question says the value holds at some visit, so a term's options that read a
/// record's latest value read every visit's value instead (the visit the question's own
/// window selects, when it has one). Options with a window of their own are dropped when
/// the question has one. The labels say which visit.
fn at_any_visit(
    model: &SemanticModel,
    options: &mut Vec<AmbiguityOption>,
    question_window: bool,
    every: bool,
) {
    // "… at every visit": the labels say every visit (the plan holds it at each of them)
    let which = if every { "at every visit" } else { "at any visit" };
    let which_assessment = if every {
        "at every assessment"
    } else {
        "at any assessment"
    };
    fn per_visit(model: &SemanticModel, c: &Constraint) -> Option<Constraint> {
        c.on_attribute(
            &|a| match model.attribute(a).and_then(|x| x.attribute.derived.clone()) {
                Some(crate::semantic::Derived::Latest { attribute, .. }) => Some(attribute),
                _ => None,
            },
        )
    }
    let windowed = |c: &Constraint| {
        let mut found = false;
        c.visit(&mut |x| found |= matches!(x, Constraint::TimeWindow { .. } | Constraint::OlderThan { .. }));
        found
    };
    let mut changed = false;
    for o in options.iter_mut() {
        let Some(c) = o.effect.constraint.as_ref().and_then(|c| per_visit(model, c)) else {
            continue;
        };
        o.effect.constraint = Some(c);
        o.label = if o.label.contains("at the latest visit") {
            o.label.replace("at the latest visit", which)
        } else if let Some(rest) = o.label.strip_prefix("Latest ") {
            let mut cs = rest.chars();
            let first = cs
                .next()
                .map(|ch| ch.to_uppercase().collect::<String>())
                .unwrap_or_default();
            format!("{first}{} {which}", cs.as_str())
        } else {
            format!("{} ({which})", o.label)
        };
        o.description = o
            .description
            .replace("at the latest assessment", which_assessment)
            .replace("at the latest visit", which);
        changed = true;
    }
    if changed && question_window {
        let keep: Vec<bool> = options
            .iter()
            .map(|o| !o.effect.constraint.as_ref().is_some_and(windowed))
            .collect();
        if keep.iter().any(|k| *k) {
            let mut it = keep.into_iter();
            options.retain(|_| it.next().unwrap_or(true));
        }
    }
}

/// When a status holds, said around a term: "ever", "never", "at any time", "at some point",
/// "a history of", "at any visit" name its any-time option (`ever`); "now",
/// "currently", "at the moment", "at the latest visit" its current one (`now` /
/// `latest`). Only words of the same clause count (up to 5 tokens either side).
fn scope_option<'t>(
    ctx: &Ctx<'_>,
    r: &Reading,
    term: &'t Term,
    first: usize,
    last: usize,
) -> Option<&'t TermOption> {
    #[derive(PartialEq)]
    enum Scope {
        Ever,
        Now,
    }
    let w = |k: usize| ctx.tokens.get(k).map_or("", |t| t.text.as_str());
    let lo = (first.saturating_sub(5)..first)
        .rev()
        .find(|&k| matches!(w(k), "," | ";"))
        .map_or(first.saturating_sub(5), |k| k + 1);
    let hi = (last..(last + 5).min(ctx.tokens.len()))
        .find(|&k| matches!(w(k), "," | ";"))
        .unwrap_or((last + 5).min(ctx.tokens.len()));
    let scope = (lo..hi)
        .filter(|k| !(first..last).contains(k))
        .find_map(|k| match (w(k), w(k + 1)) {
            // "never" is "not ever": the any-time option, negated
            ("ever" | "never" | "previously" | "anytime", _)
            | ("not", "once")
            | ("history", "of")
            | ("any" | "some", "time" | "point") => Some(Scope::Ever),
            ("now" | "currently" | "presently" | "still", _)
            | ("at", "present")
            | ("the", "moment")
            | ("right", "now") => Some(Scope::Now),
            _ => None,
        })
        .or(match r.visit_hint {
            Some(false) if r.time.is_none() && r.visit_hint_at.is_none() => Some(Scope::Ever),
            Some(true) => Some(Scope::Now),
            _ => None,
        })?;
    let ids: &[&str] = if scope == Scope::Ever {
        &["ever"]
    } else {
        &["now", "latest"]
    };
    ids.iter().find_map(|id| {
        term.options
            .iter()
            .find(|o| o.id == *id && o.constraint.is_some())
    })
}

/// Puts a time dimension on time windows that leave it to the entity.
fn with_dimension(c: Constraint, dim: &str) -> Constraint {
    match c {
        Constraint::TimeWindow {
            dimension: None,
            last,
        } => Constraint::TimeWindow {
            dimension: Some(dim.to_owned()),
            last,
        },
        Constraint::OlderThan { dimension: None, age } => Constraint::OlderThan {
            dimension: Some(dim.to_owned()),
            age,
        },
        Constraint::All { of } => Constraint::All {
            of: of.into_iter().map(|c| with_dimension(c, dim)).collect(),
        },
        Constraint::Any { of } => Constraint::Any {
            of: of.into_iter().map(|c| with_dimension(c, dim)).collect(),
        },
        Constraint::Not { of } => Constraint::Not {
            of: Box::new(with_dimension(*of, dim)),
        },
        other => other,
    }
}

/// A plain yes/no column of `entity` one of whose longer names contains the phrase
/// ("signs of infection" in "clinical signs of infection").
fn local_boolean(model: &SemanticModel, entity: &str, phrase: &str) -> Option<String> {
    if !phrase.contains(' ') {
        return None;
    }
    let e = model.entity(entity)?;
    let padded = format!(" {phrase} ");
    e.attributes
        .iter()
        .filter(|a| a.ty == crate::semantic::AttributeType::Boolean && a.column.is_some())
        .find(|a| {
            std::iter::once(&a.name).chain(&a.synonyms).any(|s| {
                let n = super::vocab::normalise(s);
                n != phrase && format!(" {n} ").contains(&padded)
            })
        })
        .map(|a| format!("{entity}.{}", a.name))
}

/// A phrase matching values of two attributes, or several values of one.
pub(crate) fn values(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    let model = ctx.model;
    let entity = entity_of(r);
    for vc in &r.values {
        let (span, text) = phrase_text(ctx, vc.mention);
        let mut attrs: Vec<&str> = vc.hits.iter().map(|h| h.0.as_str()).collect();
        attrs.dedup();
        let mut options = Vec::new();
        let id;
        let question;
        if attrs.len() >= 2 {
            id = format!(
                "value:{}@{entity}",
                ctx.mentions[vc.mention].phrase.replace(' ', "_")
            );
            question = format!("Which \"{text}\" do you mean?");
            let mut seen: Vec<&str> = Vec::new();
            for (a, v, label) in &vc.hits {
                if seen.contains(&a.as_str()) || options.len() >= 5 {
                    continue;
                }
                seen.push(a);
                let attr_label = model
                    .attribute(a)
                    .map_or_else(|| a.clone(), |x| plan_ops::attribute_label(&x.attribute.name));
                let c = plan_ops::negate(equals(a, v.clone()), vc.negated);
                let own = split_qualified(a).is_some_and(|(e, _)| e == entity);
                options.push(option(
                    a,
                    &format!("{label} ({attr_label})"),
                    &format!("{attr_label} is {label}"),
                    own,
                    constraint_effect(c),
                ));
            }
        } else {
            let attribute = attrs.first().map_or("", |a| a);
            id = format!(
                "value:{}@{attribute}",
                ctx.mentions[vc.mention].phrase.replace(' ', "_")
            );
            question = format!("Which one is \"{text}\"?");
            for (a, v, label) in vc.hits.iter().take(4) {
                let c = plan_ops::negate(equals(a, v.clone()), vc.negated);
                let oid = v.as_str().map_or_else(|| v.to_string(), str::to_owned);
                options.push(option(&oid, label, "", false, constraint_effect(c)));
            }
            let all: Vec<Value> = vc.hits.iter().map(|h| h.1.clone()).collect();
            let c = plan_ops::negate(
                Constraint::InSet {
                    attribute: attribute.to_owned(),
                    values: all,
                },
                vc.negated,
            );
            options.push(option(
                "any",
                "Any of them",
                "All the matching values.",
                true,
                constraint_effect(c),
            ));
        }
        one_default(&mut options);
        if options.len() < 2 {
            continue;
        }
        let custom = match attrs.first() {
            Some(a) => CustomValue::AllowedValue {
                attribute: (*a).to_owned(),
            },
            None => CustomValue::None,
        };
        let a = new_ambiguity(
            id,
            AmbiguityKind::Value,
            Severity::High,
            Some(span),
            text.clone(),
            question,
            options,
            custom,
            format!("\"{text}\" matches more than one value."),
        );
        d.push_filter(a, entity.clone(), Some(vc.first));
    }
}

/// A per-visit value said of wounds or patients: at the latest visit, or any visit.
pub(crate) fn visit_values(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    let entity = entity_of(r);
    // "moderate or high exudate": values of one measurement listed together are one
    // question, any of them
    type Group<'a> = (
        &'a crate::engine::reading::VisitValue,
        Vec<Value>,
        TextSpan,
        Vec<String>,
    );
    let mut groups: Vec<Group<'_>> = Vec::new();
    for v in &r.visit_values {
        if let Some(g) = groups
            .iter_mut()
            .find(|g| g.0.per_visit == v.per_visit && g.0.negated == v.negated)
        {
            if !g.1.contains(&v.value) {
                g.1.push(v.value.clone());
                g.3.push(v.label.to_lowercase());
            }
            g.2 = TextSpan::new(g.2.start.min(v.span.start), g.2.end.max(v.span.end));
            continue;
        }
        groups.push((v, vec![v.value.clone()], v.span, vec![v.label.clone()]));
    }
    for (v, values, span, labels) in groups {
        let eq = |a: &str| {
            let c = match values.as_slice() {
                [one] => equals(a, one.clone()),
                _ => Constraint::InSet {
                    attribute: a.to_owned(),
                    values: values.clone(),
                },
            };
            plan_ops::negate(c, v.negated)
        };
        let name = attribute_name(&v.per_visit);
        let label = plan_ops::attribute_label(name);
        let not = if v.negated { "No " } else { "" };
        let listed = match labels.as_slice() {
            [one] => one.clone(),
            [init @ .., last] => format!("{} or {last}", init.join(", ")),
            [] => v.label.clone(),
        };
        let what = if v.negated { listed.to_lowercase() } else { listed };
        let options = vec![
            option(
                "latest",
                &format!("{not}{what} at the latest visit"),
                "The most recent assessment.",
                true,
                constraint_effect(eq(&v.latest)),
            ),
            option(
                "any_visit",
                &format!("{not}{what} at any visit"),
                "At least one assessment, ever.",
                false,
                constraint_effect(eq(&v.per_visit)),
            ),
        ];
        let text = span.slice(ctx.question).to_owned();
        let a = new_ambiguity(
            format!("aggregation:{name}@{entity}"),
            AmbiguityKind::Aggregation,
            Severity::Medium,
            Some(span),
            text,
            format!("{} when?", capitalise(&label)),
            options,
            CustomValue::AllowedValue {
                attribute: v.per_visit.clone(),
            },
            format!("The {label} is recorded at every assessment."),
        );
        d.push_filter(a, entity.clone(), Some(v.first));
    }
}

/// A word that looks like a name but matches nothing ("at Riverside"): never ignored
/// silently — the closest known names are offered, or leaving it out.
pub(crate) fn unknown_names(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    let entity = entity_of(r);
    for span in &r.unknown_names {
        let word = span.slice(ctx.question).to_lowercase();
        let mut near: Vec<(usize, String, String)> = Vec::new();
        for attribute in ["clinics.name", "clinics.region", "clinicians.name"] {
            let Some(values) = ctx.allowed.get(attribute) else {
                continue;
            };
            for v in &values.values {
                let lower = v.to_lowercase();
                let best = lower
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .filter_map(|w| super::vocab::bounded_distance(&word, w, 2))
                    .min();
                if let Some(dist) = best {
                    near.push((dist, attribute.to_owned(), v.clone()));
                }
            }
        }
        near.sort();
        let mut options: Vec<AmbiguityOption> = near
            .iter()
            .take(3)
            .map(|(_, a, v)| {
                let c = equals(a, Value::Text(v.clone()));
                option(
                    v,
                    v,
                    &format!("{} is {v}", short_label(a)),
                    false,
                    constraint_effect(c),
                )
            })
            .collect();
        options.push(option(
            "ignore",
            &format!("Leave \"{}\" out", span.slice(ctx.question)),
            "Answer without it.",
            options.is_empty(),
            no_change(),
        ));
        if options.len() < 2 {
            options.push(option(
                "other",
                "Something else (type it below)",
                "",
                false,
                no_change(),
            ));
        }
        // "harborveiw", "lakeveiw": one letter off (or two swapped) one known name, and no
        // other name as near — the typo is read as that name, shown as an assumption
        let typo = word.chars().count() >= 6
            && near.first().is_some_and(|(dist, _, _)| *dist == 1)
            && near.iter().filter(|(dist, _, _)| *dist <= 1).count() == 1;
        if typo && let Some(first) = options.first_mut() {
            first.default = true;
        }
        one_default(&mut options);
        let text = span.slice(ctx.question).to_owned();
        let a = new_ambiguity(
            format!("value:{}@unknown", word.replace(' ', "_")),
            AmbiguityKind::Value,
            if typo { Severity::Low } else { Severity::High },
            Some(*span),
            text.clone(),
            format!("I don't recognise \"{text}\". Which is it?"),
            options,
            CustomValue::AllowedValue {
                attribute: "clinics.name".into(),
            },
            format!("\"{text}\" is not a clinic, region, clinician or value I know."),
        );
        d.push_filter(a, entity.clone(), None);
    }
}

/// Content words nothing explained (F26): one question per run of words, whose options
/// are the nearest dictionary terms (a typo or a shared stem away), "ignore this word",
/// and free text. The best guess is a near-typo's term, otherwise leaving the word out —
/// which, answered without asking, is shown as an assumption, never dropped silently.
pub(crate) fn unknown_words(ctx: &Ctx<'_>, r: &Reading, cov: &Coverage, d: &mut Detected) {
    let model = ctx.model;
    let entity = entity_of(r);
    let label = model
        .entity(&entity)
        .map_or_else(|| entity.clone(), |e| plan_ops::plural(&e.label.to_lowercase()));
    for u in &cov.unexplained {
        let mut words: Vec<&str> = ctx.tokens[u.first..u.last]
            .iter()
            .filter(|t| t.is_wordlike() && !is_known_word(&t.text))
            .map(|t| t.text.as_str())
            .collect();
        if words.is_empty() {
            // known words used in a way nothing reads ("large clinics")
            words = ctx.tokens[u.first..u.last]
                .iter()
                .filter(|t| t.is_wordlike())
                .map(|t| t.text.as_str())
                .collect();
        }
        let mut near: Vec<(usize, usize)> = Vec::new();
        for (ti, term) in model.terms.iter().enumerate() {
            let fits = term.applies_to.is_empty() || term.applies_to.contains(&entity);
            if !fits
                || matches!(
                    term.kind,
                    TermKind::Ranking | TermKind::Column | TermKind::Aggregation
                )
            {
                continue;
            }
            let best = term
                .phrases()
                .flat_map(str::split_whitespace)
                .filter(|pw| !is_known_word(pw))
                .flat_map(|pw| words.iter().filter_map(move |w| near_word(w, pw)))
                .min();
            if let Some(dist) = best {
                near.push((dist, ti));
            }
        }
        near.sort_unstable();
        let mut options: Vec<AmbiguityOption> = Vec::new();
        for &(dist, ti) in near.iter().take(3) {
            let term = &model.terms[ti];
            let Some(mut opt) = unknown_word_choice(term) else {
                continue;
            };
            opt.default = dist <= 1 && options.is_empty();
            options.push(opt);
        }
        // then what words said about these records usually mean (the model's list for
        // the entity: "crusty wounds" may be sloughy or necrotic ones)
        let described = model
            .entity(&entity)
            .map(|e| e.unknown_word_terms.as_slice())
            .unwrap_or_default();
        for id in described {
            let Some(term) = model.terms.iter().find(|t| t.id == *id) else {
                continue;
            };
            if let Some(opt) = unknown_word_choice(term).filter(|c| !options.iter().any(|o| o.id == c.id)) {
                options.push(opt);
            }
        }
        let text = u.text.clone();
        let guessed = options.iter().any(|o| o.default);
        options.push(option(
            "ignore",
            "Ignore this word",
            &format!("Answer without \"{text}\"."),
            !guessed,
            no_change(),
        ));
        one_default(&mut options);
        let a = new_ambiguity(
            format!("unknown:{}", words.join("_")),
            AmbiguityKind::UnknownWord,
            Severity::High,
            Some(u.span),
            text.clone(),
            format!("I don't know what \"{text}\" means for {label}. What did you mean?"),
            options,
            CustomValue::FreeConstraint {
                entity: entity.clone(),
            },
            format!("\"{text}\" is not a word, value or dictionary term of the data."),
        );
        d.push_filter(a, entity.clone(), Some(u.first));
    }
}

/// A dictionary term offered for an unknown word: its default reading, labelled with the
/// term's phrase, never preselected.
fn unknown_word_choice(term: &Term) -> Option<AmbiguityOption> {
    let o = term.default_option()?;
    let mut opt = term_option(o, false, None);
    opt.id = format!("term:{}", term.id);
    opt.label = format!("\"{}\": {}", term.phrase, o.label);
    opt.default = false;
    Some(opt)
}

/// How far an unexplained word is from a dictionary word: 0 the same, 1–2 a typo away,
/// 2 for a shared stem of five letters ("stalling" / "stalled").
fn near_word(w: &str, pw: &str) -> Option<usize> {
    if w == pw {
        return Some(0);
    }
    let short = w.chars().count().min(pw.chars().count());
    if short >= 4
        && let Some(dist) = super::vocab::bounded_distance(w, pw, if short >= 6 { 2 } else { 1 })
    {
        return Some(dist);
    }
    let common = w.chars().zip(pw.chars()).take_while(|(a, b)| a == b).count();
    (common >= 5).then_some(2)
}

/// The options of a column term that fit a slot (unit-compatible, reachable).
fn column_options<'t>(model: &SemanticModel, term: &'t Term, unit: Option<&str>) -> Vec<&'t TermOption> {
    term.options
        .iter()
        .filter(|o| match &o.change {
            Some(PlanChange::ChooseAttribute { attribute }) => match (unit, model.attribute(attribute)) {
                (Some(u), Some(r)) => r
                    .attribute
                    .unit
                    .as_deref()
                    .is_some_and(|au| super::link::convert(1.0, u, au).is_some()),
                (_, r) => r.is_some(),
            },
            _ => false,
        })
        .collect()
}

fn chosen_attribute(o: &TermOption) -> Option<&str> {
    match &o.change {
        Some(PlanChange::ChooseAttribute { attribute }) => Some(attribute),
        _ => None,
    }
}

/// Settles a column term or makes it a question.
#[allow(clippy::too_many_arguments)]
fn column_choice(
    ctx: &Ctx<'_>,
    d: &mut Detected,
    term_ix: usize,
    slot: Slot,
    entity: &str,
    unit: Option<&str>,
    span: TextSpan,
    metric_slot: bool,
    visit_hint: Option<bool>,
) {
    let model = ctx.model;
    let term = &model.terms[term_ix];
    let mut opts = column_options(model, term, unit);
    // "at the latest assessment" / "at any visit" said which level is meant
    if let Some(latest) = visit_hint {
        let own_latest = format!("{entity}.latest_");
        let at_level = |o: &&TermOption| {
            chosen_attribute(o).is_some_and(|a| {
                if latest {
                    a.starts_with(&own_latest)
                } else {
                    a.starts_with("assessments.")
                }
            })
        };
        if opts.iter().any(at_level) {
            opts.retain(at_level);
        }
    }
    if metric_slot {
        // an average needs a number
        opts.retain(|o| {
            chosen_attribute(o)
                .and_then(|a| model.attribute_type(a))
                .is_some_and(|t| t.is_numeric())
        });
    }
    let local: Vec<&&TermOption> = opts
        .iter()
        .filter(|o| {
            chosen_attribute(o)
                .and_then(split_qualified)
                .is_some_and(|(e, _)| e == entity)
        })
        .collect();
    let settle = |d: &mut Detected, o: &TermOption| {
        if let Some(a) = chosen_attribute(o) {
            d.settled.push(Settled {
                slot: slot.clone(),
                attribute: a.to_owned(),
            });
        }
    };
    if let [only] = opts.as_slice() {
        settle(d, only);
        return;
    }
    let mixed_levels = metric_slot
        && opts
            .iter()
            .filter_map(|o| chosen_attribute(o))
            .any(|a| a.starts_with("assessments."))
        && opts
            .iter()
            .filter_map(|o| chosen_attribute(o))
            .any(|a| a.starts_with("wounds."));
    // offer only the relationships each record has one of
    let mut only_reachable = false;
    if let [only] = local.as_slice()
        && !mixed_levels
    {
        let default_is_foreign = opts
            .iter()
            .find(|o| o.default)
            .and_then(|o| chosen_attribute(o))
            .and_then(split_qualified)
            .is_none_or(|(e, _)| e != entity);
        // "open wounds by clinic": the same column reached through another of the
        // record's one-to-one relationships (the patient's registered clinic beside the
        // wound's treating clinic) groups the records differently, so the choice is
        // shown as an assumption, not settled silently
        let column = chosen_attribute(only).and_then(split_qualified).map(|(_, c)| c);
        let other_relationship = matches!(slot, Slot::Dimension(_))
            && opts.iter().any(|o| {
                chosen_attribute(o)
                    .and_then(split_qualified)
                    .is_some_and(|(e, c)| e != entity && Some(c) == column && model.has_one(entity, e))
            });
        if (only.default || default_is_foreign) && !other_relationship {
            settle(d, only);
            return;
        }
        only_reachable = other_relationship;
    }
    if opts.is_empty() {
        return;
    }
    let mut options: Vec<AmbiguityOption> = opts
        .iter()
        .filter(|o| {
            !only_reachable
                || chosen_attribute(o)
                    .and_then(split_qualified)
                    .is_some_and(|(e, _)| e == entity || model.has_one(entity, e))
        })
        .map(|o| term_option(o, false, None))
        .collect();
    if !options.iter().any(|o| o.default) {
        // the term's default does not fit (unit): prefer the entity's own option
        if let Some(first_local) = local
            .first()
            .and_then(|o| options.iter_mut().find(|x| x.id == o.id))
        {
            first_local.default = true;
        }
    }
    one_default(&mut options);
    let (kind, id) = if mixed_levels {
        (
            AmbiguityKind::Aggregation,
            format!("aggregation:{}@{entity}", term.id),
        )
    } else {
        (AmbiguityKind::Column, format!("column:{}@{entity}", term.id))
    };
    let text = span.slice(ctx.question).to_owned();
    let severity = if matches!(slot, Slot::Column(_)) || only_reachable {
        // a list column, or which of the record's relationships a grouping follows
        Severity::Low
    } else if mixed_levels {
        // averaging per visit or per wound changes the number a lot
        Severity::High
    } else {
        Severity::Medium
    };
    let default = options
        .iter()
        .find(|o| o.default)
        .map(|o| o.effect.clone())
        .unwrap_or_default();
    let mut a = new_ambiguity(
        id,
        kind,
        severity,
        Some(span),
        text.clone(),
        term.question.clone(),
        options,
        CustomValue::None,
        format!("\"{text}\" can name more than one column."),
    );
    a.term = Some(term.id.clone());
    d.candidates.push(Candidate {
        ambiguity: a,
        slot,
        weight: weight_of(model, &default),
        at: None,
    });
}

/// The option of a column word the question's own rows settle: "pressure injuries by
/// stage" keeps only pressure injuries, so the stage is theirs (the option's `when`).
fn settled_by_rows<'m>(model: &'m SemanticModel, term: usize, r: &Reading) -> Option<&'m str> {
    let holds = |w: &Constraint| {
        r.filters.iter().any(|f| match (&f.constraint, w) {
            (a, b) if a == b => true,
            (
                Constraint::InSet { attribute, values },
                Constraint::Compare {
                    attribute: wa,
                    op: CompareOp::Eq,
                    value,
                    ..
                },
            ) => attribute == wa && values.len() == 1 && values[0] == *value,
            _ => false,
        })
    };
    model.terms[term]
        .options
        .iter()
        .find(|o| o.when.as_ref().is_some_and(holds))
        .and_then(chosen_attribute)
}

/// The column word's reading the rows settle is the best guess, shown as an assumption
/// (a badge, one click from the other readings), never asked.
fn rows_say_it(model: &SemanticModel, term: usize, attribute: &str, added: &mut [Candidate]) {
    for c in added {
        if c.ambiguity.term.as_deref() != Some(model.terms[term].id.as_str()) {
            continue;
        }
        let chosen = |o: &AmbiguityOption| matches!(&o.effect.change, Some(PlanChange::ChooseAttribute { attribute: a }) if a == attribute);
        if c.ambiguity.options.iter().any(chosen) {
            for o in &mut c.ambiguity.options {
                o.default = chosen(o);
            }
            c.ambiguity.severity = Severity::Low;
        }
    }
}

/// Column words in groupings, metrics, comparisons and list columns.
pub(crate) fn columns(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    let entity = entity_of(r);
    for (i, dim) in r.dims.iter().enumerate() {
        if let DimSpec::ColumnTerm { term, .. } = dim.spec {
            let by_rows = settled_by_rows(ctx.model, term, r);
            let before = d.candidates.len();
            column_choice(
                ctx,
                d,
                term,
                Slot::Dimension(i),
                &entity,
                None,
                dim.span,
                false,
                None,
            );
            if let Some(attribute) = by_rows {
                rows_say_it(ctx.model, term, attribute, &mut d.candidates[before..]);
            }
        }
    }
    if let MetricSpec::AggColumn { term, mention, .. } = r.metric {
        let span = ctx.mentions[mention].span;
        let owner = r.per_unit.clone().unwrap_or_else(|| entity.clone());
        column_choice(ctx, d, term, Slot::Metric, &owner, None, span, true, r.visit_hint);
    }
    per_unit_aggregation(ctx, r, d);
    for (i, c) in r.cmps.iter().enumerate() {
        match &c.subject {
            CmpSubject::Column { term } => {
                column_choice(
                    ctx,
                    d,
                    *term,
                    Slot::Comparison(i),
                    &entity,
                    c.unit.as_deref(),
                    c.span,
                    false,
                    r.visit_hint,
                );
            }
            CmpSubject::Aggregation { per_visit, latest } => {
                let model = ctx.model;
                let label = model.attribute(per_visit).map_or_else(
                    || per_visit.clone(),
                    |x| plan_ops::attribute_label(&x.attribute.name),
                );
                let options = vec![
                    option(
                        "latest",
                        &format!("The latest {label}"),
                        "The value at each wound's most recent assessment.",
                        true,
                        choose_attribute(latest.clone()),
                    ),
                    option(
                        "any_visit",
                        &format!("{} at any visit", capitalise(&label)),
                        "At least one assessment matches.",
                        false,
                        choose_attribute(per_visit.clone()),
                    ),
                ];
                let text = c.span.slice(ctx.question).to_owned();
                let a = new_ambiguity(
                    format!("aggregation:{}@{entity}", attribute_name(per_visit)),
                    AmbiguityKind::Aggregation,
                    Severity::Medium,
                    Some(c.span),
                    text,
                    format!(
                        "Which {label} per {}?",
                        plan_ops::plural(&entity).trim_end_matches('s')
                    ),
                    options,
                    CustomValue::None,
                    format!(
                        "Each {} has a {label} at every assessment.",
                        entity.trim_end_matches('s')
                    ),
                );
                d.push_question(a, Slot::Comparison(i));
            }
            CmpSubject::Attribute(_) => {}
        }
    }
    for (i, col) in r.columns.iter().enumerate() {
        if let ColSpec::ColumnTerm { term, mention } = col {
            let by_rows = settled_by_rows(ctx.model, *term, r);
            let before = d.candidates.len();
            let span = ctx.mentions[*mention].span;
            column_choice(ctx, d, *term, Slot::Column(i), &entity, None, span, false, None);
            if let Some(attribute) = by_rows {
                rows_say_it(ctx.model, *term, attribute, &mut d.candidates[before..]);
            }
        }
    }
}

/// "average area of open pressure injuries", "max wound area by etiology": a measurement
/// aggregated over a cohort of wounds that says nothing about visits (no visit words, no
/// date range, no "at the latest assessment") — one value per wound or every visit is
/// open. `Some("wounds")` when the question is about wounds only in that sense.
fn about_wounds_only(ctx: &Ctx<'_>, r: &Reading) -> Option<&'static str> {
    if r.visit_hint.is_some() || r.time.is_some() || r.follow_up {
        return None;
    }
    let visit_word = ctx.tokens.iter().any(|t| {
        matches!(
            t.text.as_str(),
            "recorded"
                | "measured"
                | "ever"
                | "assessment"
                | "assessments"
                | "visit"
                | "visits"
                | "measurement"
                | "measurements"
                | "reading"
                | "readings"
        )
    });
    if visit_word {
        return None;
    }
    let on_wounds = |a: &str| a.starts_with("wounds.");
    let wound_named = ctx
        .mentions
        .iter()
        .any(|m| m.entity().is_some_and(|e| ctx.model.entities[e].name == "wounds"));
    let wound_filter = r
        .filters
        .iter()
        .any(|f| f.constraint.attributes().iter().any(|a| on_wounds(a)))
        || r.dims
            .iter()
            .any(|d| matches!(&d.spec, DimSpec::Attribute(a) if on_wounds(a)));
    (wound_named || wound_filter).then_some("wounds")
}

/// "mean pain score per wound": every visit's score, or one (the latest) per wound.
fn per_unit_aggregation(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    let model = ctx.model;
    let (agg, attribute) = match &r.metric {
        MetricSpec::Measure(mx) => (
            Some(model.measures[*mx].agg),
            model.measures[*mx].attribute.clone(),
        ),
        MetricSpec::Agg { agg, attribute } => (Some(*agg), Some(attribute.clone())),
        _ => (None, None),
    };
    let Some(attribute) = attribute.filter(|a| a.starts_with("assessments.")) else {
        return;
    };
    let Some(unit) = r
        .per_unit
        .as_deref()
        .filter(|u| matches!(*u, "wounds" | "patients"))
        .or_else(|| {
            agg.is_some_and(|a| {
                matches!(
                    a,
                    MeasureAgg::Avg | MeasureAgg::Median | MeasureAgg::Max | MeasureAgg::Min
                )
            })
            .then_some(())
            .and_then(|()| about_wounds_only(ctx, r))
        })
    else {
        return;
    };
    let Some(_latest) = plan_ops::latest_of(model, &attribute) else {
        return;
    };
    let label = short_label(&attribute);
    let options = vec![
        option(
            "latest",
            &format!("Each {}'s latest {label}", unit.trim_end_matches('s')),
            "One value per wound: its most recent assessment.",
            true,
            change_effect(PlanChange::ChooseAggregation {
                aggregation: crate::semantic::Aggregation::Latest,
            }),
        ),
        option(
            "every_visit",
            &format!("Every assessment's {label}"),
            "All visits count, so wounds seen often weigh more.",
            false,
            no_change(),
        ),
    ];
    let span = r.metric_span;
    let a = new_ambiguity(
        format!("aggregation:{}@{unit}", attribute_name(&attribute)),
        AmbiguityKind::Aggregation,
        Severity::High,
        span,
        span_text(ctx, span),
        format!(
            "{} over what: one {label} per {} or every assessment?",
            match agg {
                Some(MeasureAgg::Max) => "Largest",
                Some(MeasureAgg::Min) => "Smallest",
                Some(MeasureAgg::Median) => "Median",
                _ => "Average",
            },
            unit.trim_end_matches('s')
        ),
        options,
        CustomValue::None,
        format!("The {label} is measured at every assessment; a wound has many."),
    );
    d.push_question(a, Slot::Metric);
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// The date columns a time range may use for an entity, default first.
pub(crate) fn time_options(model: &SemanticModel, entity: &str) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = Vec::new();
    let default = model
        .entity(entity)
        .and_then(|e| e.default_time_dimension.clone());
    let children: Vec<&str> = match entity {
        "wounds" => vec!["assessments"],
        "patients" => vec!["wounds", "assessments"],
        "clinics" => vec!["wounds", "assessments"],
        "clinicians" => vec!["assessments"],
        _ => vec![],
    };
    let push = |out: &mut Vec<(String, String, String)>, d: &crate::semantic::TimeDimension| {
        if !out.iter().any(|(n, _, _)| *n == d.name) && d.name != "birth" {
            out.push((d.name.clone(), d.label.clone(), d.attribute.clone()));
        }
    };
    if let Some(dd) = default.as_deref().and_then(|n| model.time_dimension(n)) {
        push(&mut out, dd);
    }
    for d in &model.time_dimensions {
        if split_qualified(&d.attribute).is_some_and(|(e, _)| e == entity) {
            push(&mut out, d);
        }
    }
    for c in children {
        if let Some(d) = model.default_time_dimension(c) {
            push(&mut out, d);
        }
    }
    out
}

/// The related entity (one-to-many from `entity`, with a date of its own) whose rows the
/// question's filters are about: the last such step on the way to a filtered attribute
/// ("patients" → wounds → **assessments** → clinicians for "seen by a physician"), or the
/// visits when the question speaks of "an assessment showing …".
fn filtered_child_with_date(model: &SemanticModel, entity: &str, r: &Reading) -> Option<String> {
    let mut found: Option<String> = None;
    for f in &r.filters {
        for a in f.constraint.attributes() {
            let Some((e, _)) = split_qualified(a) else {
                continue;
            };
            if e == entity {
                continue;
            }
            let Some(path) = model.join_path(entity, e) else {
                continue;
            };
            let mut at;
            let mut child = None;
            for step in &path {
                at = if step.forward {
                    step.join.to_entity().to_owned()
                } else {
                    step.join.from_entity().to_owned()
                };
                if !step.forward && model.default_time_dimension(&at).is_some() {
                    child = Some(at.clone());
                }
            }
            if child.is_some() {
                found = child;
            }
        }
    }
    found.or_else(|| {
        (r.visit_hint == Some(false) && entity != "assessments").then(|| "assessments".to_owned())
    })
}

/// A time range or trend whose date column was not said.
pub(crate) fn time_column(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    let entity = entity_of(r);
    if r.follow_up
        && ctx.previous.is_some_and(|p| {
            p.time_range.is_some() || p.dimensions.iter().any(|d| matches!(d, Dimension::Time { .. }))
        })
    {
        return;
    }
    if r.time_dimension.is_some() {
        return;
    }
    let needs = r
        .time
        .as_ref()
        .is_some_and(|t| !t.all_time && t.dimension.is_none())
        || (r.intent == Intent::Trend && r.time.as_ref().is_none_or(|t| t.dimension.is_none()));
    if !needs {
        return;
    }
    let mut opts = time_options(ctx.model, &entity);
    if opts.len() < 2 {
        return;
    }
    // "patients seen by a physician in the last 30 days", "wounds with slough at an
    // assessment in 2025": the range is about the related rows the filters are on
    if let Some(child) = filtered_child_with_date(ctx.model, &entity, r)
        && let Some(i) = opts
            .iter()
            .position(|(_, _, a)| split_qualified(a).is_some_and(|(e, _)| e == child))
    {
        let preferred = opts.remove(i);
        opts.insert(0, preferred);
    }
    // "the most assessments in 2025", "wounds opened … patients seen in 2025": the records
    // named right before the period are the ones it dates
    if let Some(t) = &r.time
        && let Some(k) = ctx.tokens.iter().position(|x| x.span.start == t.span.start)
        && let Some(named) = ctx
            .mentions
            .iter()
            .filter(|m| {
                m.last == k
                    || m.last + 1 == k
                        && matches!(
                            ctx.w(m.last),
                            "in" | "during" | "since" | "from" | "recorded" | "done" | "seen"
                        )
            })
            .find_map(|m| {
                // the entity word, or what a count names ("number of assessments")
                m.entity()
                    .map(|e| ctx.model.entities[e].name.clone())
                    .or_else(|| {
                        m.attributes().find_map(|(e, a)| {
                            crate::engine::link::counts_related(
                                ctx.model,
                                &format!(
                                    "{}.{}",
                                    ctx.model.entities[e].name, ctx.model.entities[e].attributes[a].name
                                ),
                            )
                        })
                    })
                    .or_else(|| m.measure().map(|x| ctx.model.measures[x].entity.clone()))
            })
        && let Some(i) = opts.iter().position(|(_, _, a)| {
            ctx.model
                .default_time_dimension(&named)
                .is_some_and(|d| d.attribute == *a)
        })
    {
        let preferred = opts.remove(i);
        opts.insert(0, preferred);
    }
    let options: Vec<AmbiguityOption> = opts
        .iter()
        .enumerate()
        .take(5)
        .map(|(i, (name, label, attr))| option(name, label, "", i == 0, choose_attribute(attr.clone())))
        .collect();
    let (span, text) = match &r.time {
        Some(t) => (Some(t.span), t.span.slice(ctx.question).to_owned()),
        None => (None, String::new()),
    };
    let a = new_ambiguity(
        format!("column:date@{entity}"),
        AmbiguityKind::Column,
        Severity::Low,
        span,
        text,
        "Which date?".into(),
        options,
        CustomValue::None,
        format!(
            "{} have more than one date.",
            capitalise(&plan_ops::plural(entity.trim_end_matches('s')))
        ),
    );
    d.push_question(a, Slot::TimeAttribute);
}

fn window(n: u32, unit: SpanUnit) -> Constraint {
    Constraint::TimeWindow {
        dimension: None,
        last: Span { n, unit },
    }
}

/// The last `n` units.
fn window_option(id: &str, label: &str, default: bool, n: u32, unit: SpanUnit) -> AmbiguityOption {
    option(id, label, "", default, constraint_effect(window(n, unit)))
}

/// The last `n` units, by `grain`.
fn stepped_window(n: u32, unit: SpanUnit, grain: Grain) -> Effect {
    Effect {
        constraint: Some(window(n, unit)),
        change: Some(PlanChange::SetGrain {
            grain,
            dimension: None,
        }),
        patch: None,
    }
}

/// A trend without a window; a rate or average without one.
pub(crate) fn missing_window(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    if r.time.is_some() {
        return;
    }
    let entity = entity_of(r);
    let attribute = plan_ops::default_time_attribute(ctx.model, &entity);
    let custom = attribute.map_or(CustomValue::None, |attribute| CustomValue::DateRange {
        attribute,
    });
    if r.intent == Intent::Trend {
        let grain_said = r.grain;
        let options = match grain_said {
            // "wounds healed each year": a yearly series over the last 12 months is two
            // part-years; every year is what such a question wants
            Some(g) => vec![
                window_option(
                    "last_12_months",
                    "Last 12 months",
                    g != Grain::Year,
                    12,
                    SpanUnit::Months,
                ),
                window_option("last_2_years", "Last 2 years", false, 2, SpanUnit::Years),
                option(
                    "all_time",
                    "All time",
                    "Every recorded date.",
                    g == Grain::Year,
                    patch_effect(PlanPatch::ClearTimeRange),
                ),
            ]
            .into_iter()
            .map(|mut o| {
                if o.id != "all_time" {
                    o.effect.change = Some(PlanChange::SetGrain {
                        grain: g,
                        dimension: None,
                    });
                }
                o
            })
            .collect(),
            None => {
                let term = ctx.model.terms.iter().find(|t| t.id == "over_time");
                match term {
                    Some(t) => term_options(t, false, None),
                    None => vec![
                        option(
                            "monthly_12",
                            "By month, last 12 months",
                            "",
                            true,
                            stepped_window(12, SpanUnit::Months, Grain::Month),
                        ),
                        option(
                            "weekly_12",
                            "By week, last 12 weeks",
                            "",
                            false,
                            stepped_window(12, SpanUnit::Weeks, Grain::Week),
                        ),
                    ],
                }
            }
        };
        let mut options = options;
        one_default(&mut options);
        // "has it changed?" compares periods nobody named: ask; "trend of …" is a
        // usual chart: assume the last 12 months by month
        let (severity, span) = match ctx.cues.change_verb.or(r.change_term) {
            Some(k) => (Severity::High, Some(ctx.tokens[k].span)),
            None => (
                Severity::Medium,
                ctx.cues
                    .trend
                    .map(|(a, b)| TextSpan::new(ctx.tokens[a].span.start, ctx.tokens[b - 1].span.end)),
            ),
        };
        let a = new_ambiguity(
            format!("time_window@{entity}"),
            AmbiguityKind::MissingTimeWindow,
            severity,
            span,
            span_text(ctx, span),
            "Over what period, and by what step?".into(),
            options,
            custom,
            "A trend needs a period; none was given.".into(),
        );
        d.push_question(a, Slot::TimeWindow);
        return;
    }
    let rate_or_average = match &r.metric {
        MetricSpec::Measure(mx) => matches!(
            ctx.model.measures[*mx].agg,
            MeasureAgg::Share | MeasureAgg::Avg | MeasureAgg::Median
        ),
        MetricSpec::Agg { agg, .. } | MetricSpec::AggColumn { agg, .. } => {
            matches!(agg, MeasureAgg::Avg | MeasureAgg::Median)
        }
        MetricSpec::Share | MetricSpec::TermMeasure { .. } => true,
        _ => false,
    };
    // only rates and averages over events (wounds, assessments) drift with the period
    let metric_entity = match &r.metric {
        MetricSpec::Measure(mx) => ctx.model.measures[*mx].entity.clone(),
        MetricSpec::Agg { attribute, .. } => {
            split_qualified(attribute).map_or_else(|| entity.clone(), |(e, _)| e.to_owned())
        }
        _ => entity.clone(),
    };
    if !rate_or_average
        || !matches!(
            r.intent,
            Intent::Aggregate | Intent::GroupBy | Intent::Rank | Intent::Compare
        )
        || !matches!(metric_entity.as_str(), "wounds" | "assessments")
    {
        return;
    }
    let options = vec![
        option(
            "all_time",
            "All recorded data",
            "No date limit.",
            true,
            no_change(),
        ),
        window_option("last_12_months", "Last 12 months", false, 12, SpanUnit::Months),
        window_option("last_90_days", "Last 90 days", false, 90, SpanUnit::Days),
    ];
    let a = new_ambiguity(
        format!("time_window@{entity}"),
        AmbiguityKind::MissingTimeWindow,
        Severity::Low,
        None,
        String::new(),
        "Over what period?".into(),
        options,
        custom,
        "Rates and averages depend on the period; none was given.".into(),
    );
    d.push_question(a, Slot::TimeWindow);
}

/// Counting or listing every wound or patient, with nothing to narrow it.
pub(crate) fn missing_cohort(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    let entity = entity_of(r);
    size_average_cohort(ctx, r, d);
    let narrowed = !r.filters.is_empty()
        || !r.terms.is_empty()
        || !r.values.is_empty()
        || !r.cmps.is_empty()
        || r.time.is_some()
        || r.rank.is_some()
        || !r.gaps.is_empty()
        || r.follow_up
        || r.unresolved_pronoun.is_some()
        || r.intent_confidence < 0.6
        // "the number of open wounds and the number of amputated wounds": each count says
        // its own records
        || !r.count_conditions.is_empty();
    let plain_count = match &r.metric {
        MetricSpec::Count | MetricSpec::None => true,
        MetricSpec::Measure(mx) => {
            let m = &ctx.model.measures[*mx];
            m.agg == MeasureAgg::Count && m.filter.is_none() && m.entity == entity
        }
        _ => false,
    };
    if narrowed || !matches!(r.intent, Intent::Count | Intent::List | Intent::GroupBy) || !plain_count {
        return;
    }
    let options = match entity.as_str() {
        "wounds" => [
            status_options("All wounds, any status", "Open, healed and amputated."),
            vec![option(
                "onset_12_months",
                "Started in the last 12 months",
                "",
                false,
                constraint_effect(Constraint::TimeWindow {
                    dimension: Some("onset".into()),
                    last: Span {
                        n: 12,
                        unit: SpanUnit::Months,
                    },
                }),
            )],
        ]
        .concat(),
        _ => return,
    };
    let _ = ctx;
    let a = new_ambiguity(
        format!("cohort@{entity}"),
        AmbiguityKind::MissingCohort,
        Severity::Low,
        None,
        String::new(),
        format!("All {entity}, or only some?"),
        options,
        CustomValue::FreeConstraint {
            entity: entity.clone(),
        },
        format!(
            "No filter was given, so every {} ever recorded counts.",
            entity.trim_end_matches('s')
        ),
    );
    d.push_filter(a, entity, None);
}

/// "All (default)" and "Open wounds only": the two status readings of a wound question.
fn status_options(all_label: &str, all_description: &str) -> Vec<AmbiguityOption> {
    let open = equals("wounds.status", Value::Text("open".into()));
    vec![
        option("all", all_label, all_description, true, no_change()),
        option(
            "open",
            "Open wounds only",
            "Wounds not yet healed.",
            false,
            constraint_effect(open),
        ),
    ]
}

/// A condition said of wounds ("serious wounds", "large ulcers", "infected wounds") with
/// no word for when: whether healed and amputated wounds count is a choice, shown as an
/// assumption (changeable in a click), never silent. The best guess is any status — what
/// the labeled evaluation set's answers count; "Open wounds only" is one click away.
pub(crate) fn status_scope(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    let model = ctx.model;
    if r.follow_up || r.intent_confidence < 0.6 {
        return;
    }
    // "how many patients have a DFU", "patients with a full-thickness wound": the people
    // who have such a wound now, or who ever had one — the same choice, about their wounds
    let of_wounds = |a: &str| {
        a.starts_with("wounds.") && !matches!(a, "wounds.status" | "wounds.healed_date" | "wounds.id")
    };
    let owners_of_a_kind = model.has_many(r.entity.as_deref().unwrap_or(""), "wounds")
        && (r
            .values
            .iter()
            .any(|v| v.hits.iter().any(|(a, _, _)| of_wounds(a)))
            || r.filters
                .iter()
                .any(|f| f.constraint.attributes().iter().any(|a| of_wounds(a))));
    if r.entity.as_deref() != Some("wounds") && !owners_of_a_kind {
        return;
    }
    let conditioned = owners_of_a_kind
        || r.terms.iter().any(|t| {
            t.anchor == "wounds"
                && !matches!(
                    model.terms[t.term].kind,
                    TermKind::Time | TermKind::Status | TermKind::Aggregation
                )
        })
        || !r.visit_values.is_empty()
        || r.filters.iter().any(|f| {
            f.constraint
                .attributes()
                .iter()
                .any(|a| a.starts_with("wounds.latest_") || a.starts_with("assessments."))
        });
    if !conditioned {
        return;
    }
    let said = |a: &str| a == "wounds.status" || a == "wounds.healed_date";
    let status_said = r
        .filters
        .iter()
        .any(|f| f.constraint.attributes().iter().any(|a| said(a)))
        || r.values.iter().any(|v| v.hits.iter().any(|(a, _, _)| said(a)))
        || r.terms.iter().any(|t| {
            model.terms[t.term].options.iter().any(|o| {
                o.constraint
                    .as_ref()
                    .is_some_and(|c| c.attributes().iter().any(|a| said(a)))
            })
        })
        || r.time.is_some()
        || r.cmps
            .iter()
            .any(|c| matches!(&c.subject, CmpSubject::Attribute(a) if said(a)))
        || ctx.tokens.iter().any(|t| {
            matches!(
                t.text.as_str(),
                "ever"
                    | "all"
                    | "any"
                    | "whatever"
                    | "regardless"
                    | "including"
                    | "incl"
                    | "healed"
                    | "closed"
                    | "open"
                    | "current"
                    | "currently"
                    | "now"
                    | "still"
                    | "active"
                    | "historic"
                    | "historical"
                    | "past"
                    | "previous"
                    | "previously"
                    | "amputated"
                    | "status"
            )
        });
    if status_said {
        return;
    }
    let options = status_options(
        "Any status",
        if owners_of_a_kind {
            "Whoever has or ever had such a wound: open, healed or amputated."
        } else {
            "Open, healed and amputated wounds: a healed wound's latest measurements are its last ones."
        },
    );
    let a = new_ambiguity(
        "status@wounds".into(),
        AmbiguityKind::MissingCohort,
        Severity::Low,
        None,
        String::new(),
        "Only open wounds, or any status?".into(),
        options,
        CustomValue::None,
        "The question does not say whether healed and amputated wounds count.".into(),
    );
    d.push_filter(a, "wounds".into(), None);
}

/// The status filter a size average needs: healed wounds are small, so an average over
/// every wound is not the average open wound.
fn size_average_cohort(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    let model = ctx.model;
    let size_attr = |a: &str| {
        matches!(
            a,
            "wounds.latest_area"
                | "wounds.latest_length"
                | "wounds.latest_width"
                | "wounds.latest_depth"
                | "assessments.area"
                | "assessments.length"
                | "assessments.width"
                | "assessments.depth"
        )
    };
    let is_size = match &r.metric {
        MetricSpec::Agg {
            agg: MeasureAgg::Avg | MeasureAgg::Median,
            attribute,
        } => size_attr(attribute),
        MetricSpec::AggColumn {
            agg: MeasureAgg::Avg | MeasureAgg::Median,
            term,
            ..
        } => {
            matches!(model.terms[*term].id.as_str(), "size" | "area" | "depth_column")
        }
        MetricSpec::Measure(mx) => {
            let m = &model.measures[*mx];
            matches!(m.agg, MeasureAgg::Avg | MeasureAgg::Median)
                && m.attribute.as_deref().is_some_and(size_attr)
        }
        _ => false,
    };
    let status_said = r
        .filters
        .iter()
        .any(|f| f.constraint.attributes().contains(&"wounds.status"))
        || r.terms.iter().any(|t| {
            model.terms[t.term]
                .default_option()
                .and_then(|o| o.constraint.as_ref())
                .is_some_and(|c| {
                    let mut found = false;
                    c.visit(&mut |x| found |= x.attributes().contains(&"wounds.status"));
                    found
                })
        });
    // "using every assessment done in 2025", "across all wounds": the cohort is said
    let all_said = (0..ctx.tokens.len()).any(|k| {
        let w = |i: usize| ctx.tokens.get(i).map_or("", |t| t.text.as_str());
        if !matches!(w(k), "every" | "all") || matches!(w(k.wrapping_sub(1)), "for" | "per" | "by" | "of") {
            return false;
        }
        let mut j = k + 1;
        while matches!(w(j), "the" | "our" | "of" | "their") {
            j += 1;
        }
        ctx.mentions.iter().any(|m| {
            m.first == j
                && m.entity()
                    .is_some_and(|e| matches!(model.entities[e].name.as_str(), "wounds" | "assessments"))
        })
    });
    if !is_size
        || status_said
        || all_said
        || r.follow_up
        || !matches!(r.entity.as_deref(), None | Some("wounds" | "assessments"))
    {
        return;
    }
    let status = |v: &str| equals("wounds.status", Value::Text(v.into()));
    let options = vec![
        option(
            "open",
            "Open wounds",
            "Wounds not yet healed.",
            true,
            constraint_effect(status("open")),
        ),
        option(
            "all",
            "All wounds",
            "Open, healed and amputated.",
            false,
            no_change(),
        ),
        option(
            "healed",
            "Healed wounds",
            "",
            false,
            constraint_effect(status("healed")),
        ),
    ];
    let span = r.metric_span;
    let a = new_ambiguity(
        "cohort@wounds".into(),
        AmbiguityKind::MissingCohort,
        Severity::High,
        span,
        span_text(ctx, span),
        "Which wounds should the average cover?".into(),
        options,
        CustomValue::FreeConstraint {
            entity: "wounds".into(),
        },
        "Healed wounds are small; averaging over every wound is not the size of the wounds being treated."
            .into(),
    );
    d.push_filter(a, "wounds".into(), None);
}

/// Threshold options for an attribute by its unit: (id, label, op, value), default first.
fn threshold_values(unit: Option<&str>, op: CompareOp) -> Vec<(String, f64)> {
    let up = matches!(op, CompareOp::Gt | CompareOp::Gte);
    let v: Vec<f64> = match (unit, up) {
        (Some("points"), true) => vec![7.0, 5.0, 4.0],
        (Some("points"), false) => vec![3.0, 1.0, 0.0],
        (Some("cm2"), true) => vec![25.0, 10.0, 50.0],
        (Some("cm2"), false) => vec![5.0, 2.0, 1.0],
        (Some("cm"), true) => vec![5.0, 2.0, 10.0],
        (Some("cm"), false) => vec![1.0, 0.5, 2.0],
        (Some("days"), true) => vec![90.0, 30.0, 180.0],
        (Some("days"), false) => vec![30.0, 14.0, 60.0],
        (Some("years"), true) => vec![80.0, 65.0, 75.0],
        (Some("years"), false) => vec![40.0, 50.0, 65.0],
        (Some("kg/m2"), true) => vec![30.0, 35.0, 25.0],
        (Some("kg/m2"), false) => vec![18.5, 20.0, 25.0],
        (Some("percent"), true) => vec![0.0, 10.0, 25.0],
        (Some("percent"), false) => vec![-40.0, -50.0, -25.0],
        (_, true) => vec![5.0, 10.0, 3.0],
        (_, false) => vec![2.0, 1.0, 5.0],
    };
    v.into_iter()
        .map(|x| {
            (
                format!(
                    "{}{}",
                    if up { "gt" } else { "lt" },
                    x.to_string().replace(['.', '-'], "_")
                ),
                x,
            )
        })
        .collect()
}

/// "More visits than usual", "pain higher than normal".
pub(crate) fn thresholds(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    let model = ctx.model;
    let entity = entity_of(r);
    for g in &r.gaps {
        let text = g.span.slice(ctx.question).to_owned();
        let (id, options, custom) = if let Some(a) = &g.attribute {
            let attr = model.attribute(a);
            let unit = attr.and_then(|x| x.attribute.unit.clone());
            let integer = attr.is_some_and(|x| x.attribute.ty == crate::semantic::AttributeType::Integer);
            let options: Vec<AmbiguityOption> = threshold_values(unit.as_deref(), g.op)
                .into_iter()
                .enumerate()
                .map(|(i, (oid, v))| {
                    let value = if integer && v.fract() == 0.0 {
                        Value::Integer(v as i64)
                    } else {
                        Value::Real(v)
                    };
                    let sym = g.op.symbol();
                    let u = unit
                        .as_deref()
                        .map(|u| format!(" {}", crate::semantic::unit_symbol(u)))
                        .unwrap_or_default();
                    let label = format!("{} {sym} {v}{u}", short_label(a));
                    option(
                        &oid,
                        &capitalise(&label),
                        "",
                        i == 0,
                        constraint_effect(Constraint::Compare {
                            attribute: a.clone(),
                            op: g.op,
                            value,
                            unit: unit.clone(),
                        }),
                    )
                })
                .collect();
            (
                format!("threshold:{}@{entity}", attribute_name(a)),
                options,
                CustomValue::Number {
                    attribute: a.clone(),
                    op: g.op,
                    unit,
                },
            )
        } else {
            let related = g.related.clone().unwrap_or_else(|| "assessments".into());
            let rc = |value: u32, within: Option<Span>| Constraint::RelatedCount {
                per: Some(entity.clone()),
                related: related.clone(),
                op: if g.op == CompareOp::Lt {
                    CompareOp::Lt
                } else {
                    CompareOp::Gte
                },
                value,
                within,
                condition: None,
            };
            let month = Some(Span {
                n: 30,
                unit: SpanUnit::Days,
            });
            let options = if g.op == CompareOp::Lt {
                vec![
                    option(
                        "lt2_30d",
                        &format!("Fewer than 2 {related} in 30 days"),
                        "",
                        true,
                        constraint_effect(rc(2, month)),
                    ),
                    option(
                        "lt1_30d",
                        &format!("No {related} in 30 days"),
                        "",
                        false,
                        constraint_effect(rc(1, month)),
                    ),
                ]
            } else {
                vec![
                    option(
                        "gte4_30d",
                        &format!("4 or more {related} in 30 days"),
                        "About weekly.",
                        true,
                        constraint_effect(rc(4, month)),
                    ),
                    option(
                        "gte8_30d",
                        &format!("8 or more {related} in 30 days"),
                        "About twice a week.",
                        false,
                        constraint_effect(rc(8, month)),
                    ),
                    option(
                        "gte10",
                        &format!("10 or more {related} ever"),
                        "",
                        false,
                        constraint_effect(rc(10, None)),
                    ),
                ]
            };
            (
                format!("threshold:{related}@{entity}"),
                options,
                CustomValue::FreeConstraint {
                    entity: entity.clone(),
                },
            )
        };
        if options.len() < 2 {
            continue;
        }
        let a = new_ambiguity(
            id,
            AmbiguityKind::ThresholdWithoutNumber,
            Severity::High,
            Some(g.span),
            text.clone(),
            match (&g.attribute, g.op) {
                (Some(a), op) => format!(
                    "{} what {}?",
                    if op == CompareOp::Lt { "Below" } else { "Above" },
                    short_label(a)
                ),
                (None, CompareOp::Lt) => "How few is too few?".to_owned(),
                (None, _) => "How many is too many?".to_owned(),
            },
            options,
            custom,
            format!("\"{text}\" has no number; there is no usual value in the data to compare with."),
        );
        d.push_filter(a, entity.clone(), None);
    }
}

/// "Top 10 wounds" with nothing to rank by.
pub(crate) fn ranking(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    let model = ctx.model;
    let Some(rank) = &r.rank else { return };
    if rank.key != RankKey::None || r.follow_up && ctx.previous.is_some_and(|p| !p.order.is_empty()) {
        return;
    }
    let entity = rank.subject.clone().unwrap_or_else(|| entity_of(r));
    // a ranking term for this entity asks instead ("busiest clinics")
    if r.terms.iter().any(|t| {
        model.terms[t.term].kind == TermKind::Ranking && model.terms[t.term].applies_to.contains(&entity)
    }) {
        return;
    }
    let n = rank.n.unwrap_or(10);
    let order = rank.order;
    let sort = |attr: &str| {
        change_effect(PlanChange::Sort {
            attribute: attr.into(),
            order,
            limit: Some(n),
        })
    };
    let rank_by = |measure: &str| {
        change_effect(PlanChange::Rank {
            measure: measure.into(),
            per: entity.clone(),
            order,
            limit: n,
        })
    };
    let by_order = |desc: &'static str, asc: &'static str| if order == SortOrder::Desc { desc } else { asc };
    let word = by_order("Highest", "Lowest");
    let most = by_order("Most", "Fewest");
    let mut options = match entity.as_str() {
        "wounds" => vec![
            option(
                "latest_area",
                &format!("{} current area", by_order("Largest", "Smallest")),
                "",
                true,
                sort("wounds.latest_area"),
            ),
            option(
                "days_open",
                &format!("{} open", by_order("Longest", "Shortest")),
                "Days since onset (or until healed).",
                false,
                sort("wounds.days_open"),
            ),
            option(
                "latest_pain",
                &format!("{word} current pain"),
                "",
                false,
                sort("wounds.latest_pain"),
            ),
            option(
                "assessment_count",
                &format!("{most} assessments"),
                "",
                false,
                sort("wounds.assessment_count"),
            ),
        ],
        "patients" => vec![
            option(
                "wound_count",
                &format!("{most} wounds"),
                "",
                true,
                sort("patients.wound_count"),
            ),
            option("age", &format!("{word} age"), "", false, sort("patients.age")),
            option("bmi", &format!("{word} BMI"), "", false, sort("patients.bmi")),
        ],
        "clinics" => vec![
            option(
                "healing_rate",
                &format!("{word} healing rate"),
                "",
                true,
                rank_by("healing_rate"),
            ),
            option(
                "patient_count",
                &format!("{most} patients"),
                "",
                false,
                rank_by("patient_count"),
            ),
            option(
                "open_wound_count",
                &format!("{most} open wounds"),
                "",
                false,
                rank_by("open_wound_count"),
            ),
            option(
                "assessment_count",
                &format!("{most} assessments"),
                "",
                false,
                rank_by("assessment_count"),
            ),
        ],
        "clinicians" => vec![
            option(
                "assessment_count",
                &format!("{most} assessments"),
                "",
                true,
                sort("clinicians.assessment_count"),
            ),
            option(
                "healing_rate",
                &format!("{word} healing rate of their wounds"),
                "",
                false,
                rank_by("healing_rate"),
            ),
        ],
        _ => vec![
            option(
                "area",
                &format!("{word} area"),
                "",
                true,
                sort("assessments.area"),
            ),
            option(
                "pain",
                &format!("{word} pain"),
                "",
                false,
                sort("assessments.pain_score"),
            ),
            option(
                "recent",
                "Most recent",
                "",
                false,
                change_effect(PlanChange::Sort {
                    attribute: "assessments.assessed_on".into(),
                    order: SortOrder::Desc,
                    limit: Some(n),
                }),
            ),
        ],
    };
    options.retain(|o| match &o.effect.change {
        Some(PlanChange::Sort { attribute, .. }) => model.attribute(attribute).is_some(),
        Some(PlanChange::Rank { measure, .. }) => model.measure(measure).is_some(),
        _ => true,
    });
    one_default(&mut options);
    if options.len() < 2 {
        return;
    }
    let text = rank.span.slice(ctx.question).to_owned();
    let a = new_ambiguity(
        format!("ranking@{entity}"),
        AmbiguityKind::RankingWithoutMeasure,
        Severity::High,
        Some(rank.span),
        text.clone(),
        format!("\"{}\" by what?", text.trim()),
        options,
        CustomValue::None,
        "A ranking needs something to rank by; none was given.".into(),
    );
    d.push_question(a, Slot::Rank);
}

/// Only a dictionary term or "who" says what is counted or listed.
pub(crate) fn entity(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    let model = ctx.model;
    let (options, id, severity, text, span): (
        Vec<AmbiguityOption>,
        String,
        Severity,
        String,
        Option<TextSpan>,
    ) = match r.entity_source {
        EntitySource::Term
            if r.term_entities.len() >= 2
                && matches!(r.intent, Intent::Count | Intent::List | Intent::GroupBy) =>
        {
            let opts = r
                .term_entities
                .iter()
                .filter(|e| model.entity(e).is_some())
                .take(4)
                .enumerate()
                .map(|(i, e)| entity_option(model, e, i == 0))
                .collect();
            let t = r.terms.first().map(|t| &model.terms[t.term]);
            let severity = if r.intent == Intent::Count {
                Severity::High
            } else {
                Severity::Medium
            };
            (
                opts,
                format!("entity@{}", t.map_or("question", |t| t.id.as_str())),
                severity,
                // no word names the records: the term's words are the term's own
                // question (its badge reads "healing = Open and getting smaller"), so
                // this one is about something missing, like a missing cohort ("which
                // records = Wounds")
                String::new(),
                None,
            )
        }
        EntitySource::Missing | EntitySource::Implied
            if r.intent == Intent::Count
                && r.metric == MetricSpec::Count
                && (r.entity.is_none() || r.count_context_only) =>
        {
            let default = if r.entity.as_deref() == Some("clinicians") {
                "assessments"
            } else {
                "wounds"
            };
            let opts = ["wounds", "patients", "assessments"]
                .into_iter()
                .map(|e| entity_option(model, e, e == default))
                .collect();
            let span = ctx
                .cues
                .count
                .map(|k| TextSpan::new(ctx_span(ctx.tokens, k).start, ctx_span(ctx.tokens, k + 1).end));
            let text = span_text(ctx, span);
            (opts, "entity@count".into(), Severity::High, text, span)
        }
        EntitySource::Who => {
            let opts = vec![
                option("patients", "Patients", "", true, choose_entity("patients".into())),
                option(
                    "clinicians",
                    "Clinicians",
                    "",
                    false,
                    choose_entity("clinicians".into()),
                ),
            ];
            let span = ctx.cues.who.map(|k| ctx_span(ctx.tokens, k));
            (opts, "entity:who".into(), Severity::Medium, "who".into(), span)
        }
        _ => return,
    };
    if options.len() < 2 {
        return;
    }
    let question = if id == "entity:who" {
        "Patients or clinicians?".to_owned()
    } else {
        "Count or list what?".to_owned()
    };
    let a = new_ambiguity(
        id,
        AmbiguityKind::Entity,
        severity,
        span,
        text,
        question,
        options,
        CustomValue::None,
        "The question does not say which records to count or list.".into(),
    );
    d.push_question(a, Slot::Entity);
}

/// Count or list `entity` instead, labelled with its plural.
fn entity_option(model: &SemanticModel, entity: &str, default: bool) -> AmbiguityOption {
    let label = model
        .entity(entity)
        .map_or_else(|| entity.to_owned(), |x| capitalise(&plan_ops::plural(&x.label)));
    option(entity, &label, "", default, choose_entity(entity.to_owned()))
}

fn ctx_span(tokens: &[Token], k: usize) -> TextSpan {
    tokens.get(k).map_or_else(TextSpan::default, |t| t.span)
}

/// Example plans offered when the question gives too little to go on.
pub(crate) fn example_plans(
    model: &SemanticModel,
    entity: Option<&str>,
    today: chrono::NaiveDate,
) -> Vec<(String, String, QueryPlan)> {
    let open = || equals("wounds.status", Value::Text("open".into()));
    let mut out = Vec::new();
    let by = |e: &str, dim: &str, label: &str, id: &str, filter: Option<Constraint>| {
        let mut p = QueryPlan::new(e, today);
        p.intent = Intent::GroupBy;
        p.metrics = vec![plan_ops::count_metric(model, e)];
        p.dimensions = vec![Dimension::Attribute {
            attribute: dim.into(),
        }];
        p.filters.extend(filter);
        (id.to_owned(), label.to_owned(), p)
    };
    match entity {
        Some(e) if model.entity(e).is_some() => {
            let mut list = QueryPlan::new(e, today);
            list.intent = Intent::List;
            let mut count = QueryPlan::new(e, today);
            count.intent = Intent::Count;
            count.metrics = vec![plan_ops::count_metric(model, e)];
            let plural = model
                .entity(e)
                .map_or_else(|| e.to_owned(), |x| plan_ops::plural(&x.label));
            out.push(("list".into(), format!("List the {plural}"), list));
            out.push(("count".into(), format!("Count the {plural}"), count));
            if let Some(area) = model.areas_of(e).next()
                && let Some(attr) = area.attributes.iter().find(|a| a.starts_with(e))
            {
                let label = format!("Count {plural} by {}", short_label(attr));
                out.push(by(e, attr, &label, "count_by", None));
            }
        }
        _ => {
            out.push(by(
                "wounds",
                "clinics.name",
                "Open wounds by clinic",
                "open_wounds_by_clinic",
                Some(open()),
            ));
            out.push(by(
                "wounds",
                "wounds.etiology",
                "Open wounds by type",
                "open_wounds_by_etiology",
                Some(open()),
            ));
            out.push(by(
                "patients",
                "clinics.name",
                "Patients by clinic",
                "patients_by_clinic",
                None,
            ));
            let mut trend = QueryPlan::new("assessments", today);
            trend.intent = Intent::Trend;
            trend.metrics = vec![plan_ops::count_metric(model, "assessments")];
            trend.dimensions = vec![Dimension::Time {
                attribute: "assessments.assessed_on".into(),
                grain: Grain::Month,
            }];
            let (start, end) = plan_ops::window_range(
                today,
                Span {
                    n: 12,
                    unit: SpanUnit::Months,
                },
            );
            trend.time_range = Some(plan_ops::time_range(start, end, "assessments.assessed_on".into()));
            out.push((
                "assessments_per_month".into(),
                "Assessments per month, last 12 months".into(),
                trend,
            ));
        }
    }
    out.retain(|(_, _, p)| model.entity(&p.entity).is_some());
    out
}

/// The first `n` example plans as options, the first the default.
fn example_options(ctx: &Ctx<'_>, entity: Option<&str>, n: usize) -> Vec<AmbiguityOption> {
    let mut options: Vec<AmbiguityOption> = example_plans(ctx.model, entity, ctx.today)
        .into_iter()
        .take(n)
        .map(|(id, label, plan)| {
            option(
                &id,
                &label,
                "",
                false,
                patch_effect(PlanPatch::ReplacePlan { plan: Box::new(plan) }),
            )
        })
        .collect();
    one_default(&mut options);
    options
}

/// "It", "them", "that" with nothing to point at.
pub(crate) fn reference(ctx: &Ctx<'_>, r: &Reading, d: &mut Detected) {
    let Some(span) = r.unresolved_pronoun else { return };
    if ctx.previous.is_some() {
        return;
    }
    let entity = r
        .entity
        .as_deref()
        .filter(|_| r.entity_source == EntitySource::Named);
    let options = example_options(ctx, entity, 4);
    let text = span.slice(ctx.question).to_owned();
    let a = new_ambiguity(
        format!("reference:{}", text.to_lowercase()),
        AmbiguityKind::UnresolvedReference,
        Severity::Critical,
        Some(span),
        text.clone(),
        "What would you like to know more about?".into(),
        options,
        CustomValue::None,
        format!("\"{text}\" refers to something earlier, but this conversation has nothing before it."),
    );
    d.push_question(a, Slot::Plan);
}

/// Too little to go on ("show me data"): ask what to do first (F1).
pub(crate) fn intent_question(ctx: &Ctx<'_>, r: &Reading, low: f64, d: &mut Detected) {
    let _ = low;
    if r.intent_confidence >= 0.6 || r.follow_up || r.unresolved_pronoun.is_some() {
        return;
    }
    let entity = r
        .entity
        .as_deref()
        .filter(|_| matches!(r.entity_source, EntitySource::Named | EntitySource::Measure));
    let options = bare_pair_options(ctx, r).unwrap_or_else(|| example_options(ctx, entity, 5));
    let a = new_ambiguity(
        "intent".into(),
        AmbiguityKind::Intent,
        Severity::Critical,
        None,
        ctx.question.trim().to_owned(),
        "What would you like to see?".into(),
        options,
        CustomValue::None,
        "The question does not say what to count, list or compare.".into(),
    );
    d.push_question(a, Slot::Plan);
}

/// "smoking and wounds": the readings of two topics side by side — the records that match
/// the other topic (the draft, preselected), how many there are, and the records counted
/// by the other topic's attribute.
fn bare_pair_options(ctx: &Ctx<'_>, r: &Reading) -> Option<Vec<AmbiguityOption>> {
    if !ctx.cues.bare_pair {
        return None;
    }
    let model = ctx.model;
    let e = r.entity.as_deref().filter(|e| model.entity(e).is_some())?;
    let entity_span = r.entity_span?;
    let and = ctx.tokens.iter().position(|t| t.text == "and")?;
    let and_start = ctx.tokens[and].span.start;
    // the words of the side that is not the records' word
    let other: Vec<&str> = if entity_span.start > and_start {
        ctx.tokens[..and].iter()
    } else {
        ctx.tokens[and + 1..].iter()
    }
    .filter(|t| t.is_wordlike())
    .map(|t| t.text.as_str())
    .collect();
    let attribute = r
        .filters
        .iter()
        .find_map(|f| f.constraint.attributes().first().map(|a| (*a).to_owned()))?;
    if other.is_empty() {
        return None;
    }
    let other = other.join(" ");
    let plural = model
        .entity(e)
        .map_or_else(|| e.to_owned(), |x| plan_ops::plural(&x.label));
    let mut by = QueryPlan::new(e, ctx.today);
    by.intent = Intent::GroupBy;
    by.metrics = vec![plan_ops::count_metric(model, e)];
    by.dimensions = vec![Dimension::Attribute {
        attribute: attribute.clone(),
    }];
    Some(vec![
        option(
            "matching",
            &format!("List the {plural} that match \u{201c}{other}\u{201d}"),
            "",
            true,
            patch_effect(PlanPatch::NoChange),
        ),
        option(
            "count_matching",
            &format!("Count the {plural} that match \u{201c}{other}\u{201d}"),
            "",
            false,
            patch_effect(PlanPatch::SetIntent {
                intent: Intent::Count,
            }),
        ),
        option(
            "count_by",
            &format!("Count {plural} by {}", short_label(&attribute)),
            "",
            false,
            patch_effect(PlanPatch::ReplacePlan { plan: Box::new(by) }),
        ),
    ])
}

/// Why a question is outside what the engine answers, if it is.
pub(crate) fn out_of_domain(
    tokens: &[Token],
    linked_anything: bool,
    in_phrase: &[bool],
) -> Option<(super::RefuseReason, &'static str)> {
    use super::RefuseReason;
    let words: Vec<&str> = tokens
        .iter()
        .filter(|t| t.is_wordlike())
        .map(|t| t.text.as_str())
        .collect();
    // the words no phrase of the model claims ("treatment" in "responding to treatment"
    // is that phrase's, not a request for advice)
    let free: Vec<&str> = tokens
        .iter()
        .enumerate()
        .filter(|(k, t)| t.is_wordlike() && !in_phrase.get(*k).copied().unwrap_or(false))
        .map(|(_, t)| t.text.as_str())
        .collect();
    let has = |w: &str| words.contains(&w) || tokens.iter().any(|t| t.text == w);
    let first = words.first().copied().unwrap_or("");
    let second = words.get(1).copied().unwrap_or("");
    // requests to change data, and SQL
    let sql_punct = tokens.iter().any(|t| t.text == ";")
        || tokens.windows(2).any(|p| p[0].text == "-" && p[1].text == "-");
    let sql_words = (has("drop") && (has("table") || has("database")))
        || (has("select") && has("from") && (has("*") || sql_punct || words.contains(&"where")))
        || (has("insert") && has("into"))
        || (has("delete") && has("from"))
        || (has("update") && has("set"))
        || has("truncate")
        || (has("alter") && has("table"))
        || has("union") && has("select");
    let verbs = [
        "delete",
        "remove",
        "drop",
        "erase",
        "update",
        "modify",
        "edit",
        "insert",
        "change",
        "mark",
        "rename",
        "wipe",
        "purge",
        "discharge",
        "reopen",
        "assign",
        "merge",
        "overwrite",
        "set",
        "add",
        "create",
        "close",
        "reassign",
        "transfer",
        "admit",
        "register",
        "cancel",
        "archive",
        "restore",
        "correct",
        "fix",
        "enter",
        "log",
        "save",
        "store",
        "replace",
        "move",
        "copy",
        "import",
        "upload",
        "record",
        "flag",
        "tag",
        "reset",
    ];
    // the verb leads the request, perhaps after a polite opening ("please", "can you",
    // "i want to", "go ahead and"): an instruction, not a question about the records
    let lead = |k: usize| -> usize {
        let w = |i: usize| words.get(i).copied().unwrap_or("");
        match (w(k), w(k + 1), w(k + 2)) {
            ("please" | "pls" | "kindly", _, _) => k + 1,
            ("can" | "could" | "would" | "will", "you" | "u" | "we" | "i", "please") => k + 3,
            ("can" | "could" | "would" | "will", "you" | "u" | "we" | "i", _) => k + 2,
            ("i" | "we", "want" | "need" | "wish", "to") => k + 3,
            ("i" | "we", "d" | "would", "like") if w(k + 3) == "to" => k + 4,
            ("let" | "lets", "us", _) => k + 2,
            ("let" | "lets", _, _) => k + 1,
            ("id", "like", "to") => k + 3,
            ("go", "ahead", "and") => k + 3,
            _ => k,
        }
    };
    let mut at = 0;
    loop {
        let next = lead(at);
        if next == at {
            break;
        }
        at = next;
    }
    let verb = words.get(at).copied().unwrap_or("");
    let after = words.get(at + 1).copied().unwrap_or("");
    let noun_use = matches!(
        after,
        "by" | "over" | "in" | "of" | "rate" | "rates" | "count" | "counts" | "date" | "dates"
    );
    let data_verb = verbs.contains(&verb) && !noun_use;
    if sql_words || data_verb || (sql_punct && (has("drop") || has("delete"))) {
        return Some((
            RefuseReason::DataChange,
            "I can't change or delete data, and I don't run SQL.",
        ));
    }
    let off_topic = [
        "weather",
        "forecast",
        "rain",
        "temperature",
        "stock",
        "stocks",
        "bitcoin",
        "football",
        "soccer",
        "recipe",
        "joke",
        "capital",
        "president",
        "movie",
        "song",
        "translate",
        "poem",
        "news",
        "sports",
        "election",
        "horoscope",
        "flight",
        "hotel",
        "restaurant",
        "password",
        "email",
        "essay",
        "lottery",
    ];
    if !linked_anything && words.iter().any(|w| off_topic.contains(w)) {
        return Some((RefuseReason::OutOfDomain, ""));
    }
    // not a question about the data, whatever it mentions: writing, jokes, secrets,
    // instructions to the assistant, the application's own tables
    let never = [
        "poem",
        "joke",
        "essay",
        "song",
        "story",
        "weather",
        "recipe",
        "password",
        "passwords",
        "passwd",
        "credentials",
        "prompt",
        "instructions",
        "jailbreak",
    ];
    let app_tables = (has("users") || has("sessions") || has("audit")) && (has("table") || has("tables"));
    if words.iter().any(|w| never.contains(w)) || app_tables {
        return Some((RefuseReason::OutOfDomain, ""));
    }
    // the application itself: accounts, access, settings
    let admin = [
        "admin",
        "administrator",
        "permission",
        "permissions",
        "login",
        "logins",
        "sudo",
        "privileges",
        "privilege",
    ];
    if words.iter().any(|w| admin.contains(w))
        || (has("grant") && has("access"))
        || (has("reset") && has("account"))
    {
        return Some((RefuseReason::OutOfDomain, ""));
    }
    // clinical advice and definitions: not questions about the records
    let advice = [
        "treatment",
        "treatments",
        "dressing",
        "dressings",
        "guideline",
        "guidelines",
        "protocol",
        "protocols",
        "advice",
        "advise",
        "recommend",
        "recommended",
        "recommendation",
        "recommendations",
        "prescribe",
        "medication",
        "medications",
        "antibiotic",
        "antibiotics",
        "cure",
        "symptoms",
        "prevention",
        "therapy",
    ];
    let how_to = first == "how"
        && matches!(second, "to" | "do" | "should" | "can" | "would")
        && words.iter().any(|w| {
            matches!(
                *w,
                "treat"
                    | "manage"
                    | "dress"
                    | "prevent"
                    | "heal"
                    | "clean"
                    | "debride"
                    | "care"
                    | "stage"
                    | "measure"
                    | "document"
            )
        });
    let asks_count = matches!((first, second), ("how", "many" | "much"))
        || has("number")
        || has("count")
        || has("percentage");
    // clinical data the records do not hold — laboratory values, vascular tests,
    // medications, prescriptions: a question about them has no answer here, whatever it
    // asks of them, and is never read as a value of a column the records do hold
    let not_held = [
        "abpi",
        "abi",
        "hba1c",
        "a1c",
        "glucose",
        "albumin",
        "haemoglobin",
        "hemoglobin",
        "creatinine",
        "egfr",
        "crp",
        "cholesterol",
        "lab",
        "labs",
        "bloods",
        "doppler",
        "tcpo2",
        "medication",
        "medications",
        "medicine",
        "medicines",
        "drug",
        "drugs",
        "prescription",
        "prescriptions",
        "prescribed",
        "warfarin",
        "insulin",
        "metformin",
        "aspirin",
        "heparin",
        "apixaban",
        "rivaroxaban",
        "anticoagulant",
        "anticoagulants",
        "anticoagulated",
        "statin",
        "statins",
        "steroid",
        "steroids",
        "prednisolone",
    ];
    if words.iter().any(|w| not_held.contains(w)) {
        return Some((
            RefuseReason::OutOfDomain,
            "The records don't hold that: lab results (such as HbA1c or albumin), vascular tests (such as ABPI) and medications are not in the data. I can answer about patients, wounds, assessments, clinics and clinicians as recorded.",
        ));
    }
    let definition = matches!(
        (first, second),
        ("define", _) | ("definition", _) | ("meaning", "of")
    ) || (matches!(first, "what" | "whats")
        && matches!(second, "is" | "are" | "s")
        && words.get(2).is_some_and(|w| matches!(*w, "a" | "an"))
        && words.len() <= 6)
        || (first == "what" && second == "does" && words.last() == Some(&"mean"));
    if definition {
        return Some((
            RefuseReason::OutOfDomain,
            "I don't give definitions here; the Glossary page lists how each term is defined.",
        ));
    }
    if how_to || free.iter().any(|w| advice.contains(w)) && !asks_count {
        return Some((
            RefuseReason::OutOfDomain,
            "I can't give clinical advice; I answer questions about the records.",
        ));
    }
    // a function call ("pg_read_file('/etc/passwd')"): code, not a question
    let call = tokens.windows(2).any(|p| {
        p[0].kind == super::tokenize::TokenKind::Word && p[1].text == "(" && p[0].span.end == p[1].span.start
    });
    let underscored = tokens.windows(3).any(|p| {
        p[0].kind == super::tokenize::TokenKind::Word && p[1].text == "_" && p[0].span.end == p[1].span.start
    });
    if call && underscored {
        return Some((RefuseReason::OutOfDomain, ""));
    }
    None
}
