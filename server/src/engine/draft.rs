//! Stage 8 — the draft plan: a [`Reading`] plus one chosen interpretation per ambiguity
//! (from [`super::ambiguity`], settled by [`super::gate`]) becomes a typed [`QueryPlan`].
//! The typed operations it shares with the other stages are in [`super::plan_ops`];
//! follow-ups are merged into the previous plan by [`super::context`].
//!
//! Pure. Only model names and typed literals enter the plan, never question text.

use chrono::NaiveDate;

use crate::semantic::{
    Aggregation, Constraint, Derived, MeasureAgg, PlanChange, SemanticModel, Value, split_qualified,
};

use super::PieceKind;
use super::ambiguity::Detected;
use super::plan::{Dimension, Having, Intent, Metric, OrderBy, OrderKey, QueryPlan};
use super::plan_ops::{
    Chosen, DEFAULT_GRAIN, Slot, add_filter, agg_metric, anchor, apply_change, comparison_constraint,
    consolidate, count_metric, default_time_attribute, display_dimension, first_of, fold_negations,
    latest_of, measure_metric, normalise_intent, rank_order, time_range, window_range,
};
use super::reading::{CmpSubject, ColSpec, Ctx, DimSpec, MetricSpec, RankKey, RankSpec, Reading};

/// The position of a filter read without one (a term's reading, a chosen default): after
/// every token, never inside a span said of part of the question.
const UNPOSITIONED: usize = usize::MAX / 2;

// =====================================================================================
// Building the plan from a reading and the chosen interpretations
// =====================================================================================

/// Builds the plan. `chosen[i]` is the interpretation of `det.candidates[i]`.
pub(crate) fn build(ctx: &Ctx<'_>, r: &Reading, det: &Detected, chosen: &[Chosen]) -> QueryPlan {
    let model = ctx.model;
    let choice = |slot: &Slot| -> Option<&Chosen> {
        det.candidates
            .iter()
            .zip(chosen)
            .find(|(c, _)| &c.slot == slot)
            .map(|(_, ch)| ch)
    };
    let attr_for = |slot: &Slot| -> Option<String> {
        if let Some(s) = det.settled.iter().find(|s| &s.slot == slot) {
            return Some(s.attribute.clone());
        }
        match choice(slot) {
            Some(Chosen::Effect(e)) => match &e.change {
                Some(PlanChange::ChooseAttribute { attribute }) => Some(attribute.clone()),
                _ => None,
            },
            _ => None,
        }
    };
    // a replaced plan (intent-level or reference question) wins outright
    for (c, ch) in det.candidates.iter().zip(chosen) {
        if c.slot == Slot::Plan
            && let Chosen::Effect(e) = ch
            && let Some(super::PlanPatch::ReplacePlan { plan }) = &e.patch
        {
            let mut p = (**plan).clone();
            p.today = ctx.today;
            return p;
        }
    }

    // entity
    let mut entity = r.entity.clone().unwrap_or_else(|| "wounds".into());
    if let Some(Chosen::Effect(e)) = choice(&Slot::Entity)
        && let Some(PlanChange::ChooseEntity { entity: x }) = &e.change
        && model.entity(x).is_some()
    {
        entity = x.clone();
    }
    let mut plan = QueryPlan::new(entity.clone(), ctx.today);
    plan.intent = r.intent;

    // metric
    let metric = match &r.metric {
        MetricSpec::None => None,
        MetricSpec::Count => Some(count_metric(model, &entity)),
        MetricSpec::Measure(mx) => {
            plan.entity = model.measures[*mx].entity.clone();
            Some(measure_metric(model, *mx))
        }
        MetricSpec::Agg { agg, attribute } => {
            if let Some((e, _)) = split_qualified(attribute) {
                plan.entity = e.to_owned();
            }
            Some(agg_metric(model, *agg, attribute))
        }
        MetricSpec::AggColumn { agg, term, .. } => {
            let mut agg = *agg;
            let attr = attr_for(&Slot::Metric).or_else(|| {
                // answered with an aggregation ("the latest", "at presentation")
                let Some(Chosen::Effect(e)) = choice(&Slot::Metric) else {
                    return None;
                };
                let Some(PlanChange::ChooseAggregation { aggregation }) = &e.change else {
                    return None;
                };
                let attrs: Vec<&str> = model.terms[*term]
                    .options
                    .iter()
                    .filter_map(|o| match &o.change {
                        Some(PlanChange::ChooseAttribute { attribute }) => Some(attribute.as_str()),
                        _ => None,
                    })
                    .collect();
                let derived = |want_latest: bool| {
                    attrs.iter().find(|a| {
                        model.attribute(a).is_some_and(|r| match &r.attribute.derived {
                            Some(Derived::Latest { .. }) => want_latest,
                            Some(Derived::First { .. }) => !want_latest,
                            None => !want_latest && r.attribute.name.starts_with("initial"),
                            _ => false,
                        })
                    })
                };
                match aggregation {
                    Aggregation::Latest => derived(true).map(|a| (*a).to_owned()),
                    Aggregation::First => derived(false).map(|a| (*a).to_owned()),
                    other => {
                        agg = match other {
                            Aggregation::Median => MeasureAgg::Median,
                            Aggregation::Min => MeasureAgg::Min,
                            Aggregation::Max => MeasureAgg::Max,
                            Aggregation::Sum => MeasureAgg::Sum,
                            _ => MeasureAgg::Avg,
                        };
                        attrs
                            .iter()
                            .find(|a| a.starts_with("assessments."))
                            .map(|a| (*a).to_owned())
                    }
                }
            });
            attr.map(|a| {
                if let Some((e, _)) = split_qualified(&a) {
                    plan.entity = e.to_owned();
                }
                agg_metric(model, agg, &a)
            })
        }
        MetricSpec::Share => Some(Metric {
            agg: MeasureAgg::Share,
            attribute: None,
            condition: None,
            label: "Share (%)".into(),
        }),
        MetricSpec::TermMeasure { .. } => match choice(&Slot::Metric) {
            Some(Chosen::Effect(e)) => match &e.change {
                Some(PlanChange::ChooseMeasure { measure }) => {
                    model.measures.iter().position(|m| m.name == *measure).map(|mx| {
                        plan.entity = model.measures[mx].entity.clone();
                        measure_metric(model, mx)
                    })
                }
                _ => None,
            },
            _ => None,
        },
    };
    plan.metrics.extend(metric);
    // "the number of open wounds and the number of healed wounds": one column each
    if matches!(r.metric, MetricSpec::Measure(_)) {
        for &mx in &r.extra_measures {
            plan.metrics.push(measure_metric(model, mx));
        }
    }
    // "average pain at the last visit": each wound's latest value
    if r.visit_hint == Some(true)
        && let Some(a) = plan.metrics.first().and_then(|m| m.attribute.clone())
        && a.starts_with("assessments.")
        && latest_of(model, &a).is_some()
    {
        // "average area at the first assessment": each record's first value
        let first = r.visit_first && first_of(model, &a).is_some();
        apply_change(
            model,
            &mut plan,
            &PlanChange::ChooseAggregation {
                aggregation: if first {
                    Aggregation::First
                } else {
                    Aggregation::Latest
                },
            },
        );
    }

    // "max depth ever recorded", "highest pain score of all time": every visit's value,
    // not each wound's latest one
    if r.visit_hint == Some(false)
        && plan.metrics.len() == 1
        && matches!(
            plan.metrics[0].agg,
            MeasureAgg::Max | MeasureAgg::Min | MeasureAgg::Avg | MeasureAgg::Median
        )
        && plan.metrics[0].condition.is_none()
        && let Some(a) = plan.metrics[0].attribute.clone()
        && let Some(base) = model.attribute(&a).and_then(|x| match &x.attribute.derived {
            Some(crate::semantic::Derived::Latest { attribute, .. }) => Some(attribute.clone()),
            _ => None,
        })
        && let Some((owner, _)) = split_qualified(&base)
        && model.has_one(owner, &plan.entity)
    {
        let agg = plan.metrics[0].agg;
        plan.metrics[0] = agg_metric(model, agg, &base);
        plan.entity = owner.to_owned();
    }

    // groupings
    for (i, d) in r.dims.iter().enumerate() {
        let attr = match &d.spec {
            DimSpec::Attribute(a) => Some(a.clone()),
            DimSpec::ColumnTerm { .. } => attr_for(&Slot::Dimension(i)),
        };
        if let Some(a) = attr {
            // "open wounds by exudate at the first visit": each record's value at the
            // visit said, not one group per visit's value
            let a = match r.visit_hint {
                Some(true) if a.starts_with("assessments.") && plan.entity != "assessments" => {
                    if r.visit_first {
                        first_of(model, &a)
                    } else {
                        latest_of(model, &a)
                    }
                    .unwrap_or(a)
                }
                _ => a,
            };
            let a = display_dimension(model, &plan.entity, &a);
            if split_qualified(&a).is_some_and(|(e, _)| e == plan.entity)
                && model
                    .entity(&plan.entity)
                    .is_some_and(|e| a.ends_with(&format!(".{}", e.key)))
            {
                continue;
            }
            let dim = Dimension::Attribute { attribute: a };
            if !plan.dimensions.contains(&dim) {
                plan.dimensions.push(dim);
            }
        }
    }

    // the date column
    // a chosen entity has its own default date (the detectors assumed the other one)
    let entity_chosen = matches!(choice(&Slot::Entity), Some(Chosen::Effect(e))
        if matches!(&e.change, Some(PlanChange::ChooseEntity { entity: x }) if Some(x.as_str()) != r.entity.as_deref()));
    let time_attr = r
        .time
        .as_ref()
        .and_then(|t| t.dimension.as_deref())
        .or(r.time_dimension.as_deref())
        .or_else(|| {
            if r.time.is_none() {
                r.pieces
                    .iter()
                    .find(|p| p.kind == PieceKind::TimeDimension)
                    .map(|p| p.target.as_str())
            } else {
                None
            }
        })
        .and_then(|d| model.time_dimension(d))
        .map(|d| d.attribute.clone())
        .or_else(|| {
            if entity_chosen {
                None
            } else {
                attr_for(&Slot::TimeAttribute)
            }
        })
        .or_else(|| default_time_attribute(model, &plan.entity));

    // trend
    // "assessments per month by clinic": the period is a grouping beside the others
    if r.intent == Intent::Trend || r.grain.is_some() {
        if let Some(a) = &time_attr {
            plan.dimensions.insert(
                0,
                Dimension::Time {
                    attribute: a.clone(),
                    grain: r.grain.unwrap_or(DEFAULT_GRAIN),
                },
            );
        }
        if plan.metrics.is_empty() {
            plan.metrics.push(count_metric(model, &plan.entity));
        }
        plan.intent = Intent::Trend;
    }

    // comparison between values
    if let Some(cmp) = &r.compare {
        let dim = Dimension::Attribute {
            attribute: cmp.attribute.clone(),
        };
        if !plan.dimensions.contains(&dim) {
            plan.dimensions.push(dim);
        }
        if !cmp.values.is_empty() {
            plan.filters.push(Constraint::InSet {
                attribute: cmp.attribute.clone(),
                values: cmp.values.clone(),
            });
        }
        if plan.metrics.is_empty() {
            plan.metrics.push(count_metric(model, &plan.entity));
        }
    }

    // filters, with their token positions (for the share split)
    let mut positioned: Vec<(usize, Constraint)> = Vec::new();
    for f in &r.filters {
        positioned.push((f.first, f.constraint.clone()));
    }
    for (i, c) in r.cmps.iter().enumerate() {
        let attr = match &c.subject {
            CmpSubject::Attribute(a) => Some(a.clone()),
            CmpSubject::Column { .. } | CmpSubject::Aggregation { .. } => attr_for(&Slot::Comparison(i)),
        };
        if let Some(a) = attr {
            // "bigger than 20 cm2 at presentation", "… at the first assessment": a size
            // settled by its unit is read at the visit said
            let a = match model.attribute(&a).and_then(|x| x.attribute.derived.clone()) {
                Some(Derived::Latest { attribute, .. })
                    if r.visit_hint == Some(true) && r.visit_first && r.other_visit_from.is_none() =>
                {
                    first_of(model, &attribute).unwrap_or(a)
                }
                _ => a,
            };
            positioned.push((c.first, comparison_constraint(model, c, &a)));
        } else if let Some(Chosen::Custom(k)) = choice(&Slot::Comparison(i)) {
            positioned.push((c.first, k.clone()));
        }
    }
    // (a term's reading stays unplaced for the visit and share passes; the negation of a
    // phrase reads it where it was said)
    let mut term_at: Vec<(Constraint, usize)> = Vec::new();
    for (c, a, at) in &det.direct {
        let c = anchor(model, c.clone(), a);
        term_at.push((c.clone(), *at));
        positioned.push((UNPOSITIONED, c));
    }
    let mut changes: Vec<PlanChange> = Vec::new();
    for (cand, ch) in det.candidates.iter().zip(chosen) {
        let at = cand.at.unwrap_or(UNPOSITIONED);
        match (&cand.slot, ch) {
            (Slot::Filter { anchor: a, .. }, Chosen::Effect(e)) => {
                if let Some(c) = &e.constraint {
                    positioned.push((at, anchor(model, c.clone(), a)));
                }
                if let Some(change) = &e.change {
                    changes.push(change.clone());
                }
            }
            (Slot::Filter { anchor: a, .. }, Chosen::Custom(c)) => {
                positioned.push((at, anchor(model, c.clone(), a)))
            }
            (Slot::Rank, Chosen::Effect(e)) => {
                if let Some(c) = &e.constraint {
                    positioned.push((at, c.clone()));
                }
                if let Some(change) = &e.change {
                    changes.push(change.clone());
                }
            }
            (Slot::Metric, Chosen::Effect(e)) => {
                if let Some(
                    change @ (PlanChange::ChooseAggregation { .. } | PlanChange::ChooseMeasure { .. }),
                ) = &e.change
                    && !matches!(r.metric, MetricSpec::TermMeasure { .. })
                {
                    changes.push(change.clone());
                }
                if let Some(c) = &e.constraint {
                    positioned.push((at, c.clone()));
                }
            }
            (Slot::Metric | Slot::Rank | Slot::Entity | Slot::Plan, Chosen::Custom(c)) => {
                positioned.push((at, c.clone()))
            }
            _ => {}
        }
    }
    fold_count_conditions(ctx, r, &mut positioned);
    // share: what comes after "are/that/who" is the condition
    if let (Some(split), Some(m)) = (r.share_from, plan.metrics.first_mut())
        && m.agg == MeasureAgg::Share
        && m.condition.is_none()
    {
        let (cond, rest): (Vec<_>, Vec<_>) = positioned
            .into_iter()
            .partition(|(at, _)| *at >= split && *at != UNPOSITIONED);
        positioned = rest;
        let mut cond: Vec<Constraint> = cond.into_iter().map(|(_, c)| c).collect();
        if cond.is_empty()
            && let Some(last) = positioned.pop()
        {
            cond.push(last.1);
        }
        m.condition = match cond.len() {
            0 => None,
            1 => cond.pop(),
            _ => Some(Constraint::All { of: cond }),
        };
        m.label = "Share (%)".into();
    }
    if r.same_visit {
        same_row(&mut positioned, &plan.entity);
    }
    if let Some(from) = r.other_visit_from {
        other_visit(model, &mut positioned, from, !r.visit_first);
    }
    if r.not_at_latest {
        not_at_visit(model, &mut positioned, true);
    }
    if r.not_at_first {
        not_at_visit(model, &mut positioned, false);
    }
    if r.every_visit && plan.entity != "assessments" {
        every_visit(model, &plan.entity, &mut positioned);
    }
    negated_phrase(ctx, &plan.entity, &mut positioned, &term_at);
    for (_, c) in positioned {
        add_filter(&mut plan, c, false);
    }

    // time range
    if let Some(t) = &r.time
        && !t.all_time
        && let Some(a) = &time_attr
    {
        plan.time_range = Some(time_range(t.start, t.end, a.clone()));
    }
    match choice(&Slot::TimeWindow) {
        Some(Chosen::Effect(e)) => {
            if let Some(Constraint::TimeWindow { last, .. }) = &e.constraint
                && let Some(a) = &time_attr
            {
                let (s, en) = window_range(ctx.today, *last);
                plan.time_range = Some(time_range(s, en, a.clone()));
            }
            if let Some(change) = &e.change {
                changes.push(change.clone());
            }
        }
        Some(Chosen::Custom(c)) => match c {
            Constraint::Between {
                attribute,
                min: Value::Text(a),
                max: Value::Text(b),
                ..
            } => {
                if let (Ok(s), Ok(e)) = (
                    NaiveDate::parse_from_str(a, "%Y-%m-%d"),
                    NaiveDate::parse_from_str(b, "%Y-%m-%d"),
                ) {
                    plan.time_range = Some(time_range(s, e.succ_opt().unwrap_or(e), attribute.clone()));
                }
            }
            Constraint::TimeWindow { last, .. } => {
                if let Some(a) = &time_attr {
                    let (s, en) = window_range(ctx.today, *last);
                    plan.time_range = Some(time_range(s, en, a.clone()));
                }
            }
            other => add_filter(&mut plan, other.clone(), false),
        },
        None => {}
    }

    // ranking
    if let Some(rank) = &r.rank {
        apply_rank(ctx, &mut plan, r, rank);
        if rank.every && plan.intent == Intent::Rank {
            // every row in rank order: a grouped figure sorted, or a sorted list
            plan.limit = None;
            plan.intent = if !plan.metrics.is_empty() && !plan.dimensions.is_empty() {
                Intent::Aggregate
            } else {
                Intent::List
            };
        }
    }

    // list columns
    for (i, c) in r.columns.iter().enumerate() {
        let a = match c {
            ColSpec::Attribute(a) => Some(a.clone()),
            ColSpec::ColumnTerm { .. } => attr_for(&Slot::Column(i)),
        };
        let a = a.and_then(|a| match split_qualified(&a) {
            Some(("assessments", _)) if matches!(plan.entity.as_str(), "wounds" | "patients") => {
                latest_of(model, &a)
            }
            _ => Some(a),
        });
        // "registered clinic name for pt 42": a reference to another record shows that
        // record's name, not its key
        let a = a.map(|a| crate::engine::plan_ops::display_dimension(model, &plan.entity, &a));
        if let Some(a) = a
            && !plan.columns.contains(&a)
        {
            plan.columns.push(a);
        }
    }

    for change in &changes {
        apply_change(model, &mut plan, change);
    }
    // "the number of smokers and the number of non-smokers": one count column each
    if r.count_conditions.len() >= 2
        && plan
            .metrics
            .iter()
            .all(|m| m.agg == MeasureAgg::Count && m.attribute.is_none())
    {
        plan.metrics = r
            .count_conditions
            .iter()
            .map(|(c, label)| crate::engine::plan::Metric {
                agg: MeasureAgg::Count,
                attribute: None,
                condition: Some(c.clone()),
                label: label.clone(),
            })
            .collect();
        if matches!(plan.intent, Intent::List | Intent::Count) {
            plan.intent = if plan.dimensions.is_empty() {
                Intent::Aggregate
            } else {
                Intent::GroupBy
            };
        }
    }
    normalise_intent(model, &mut plan);
    window_under_negation(model, &mut plan);
    fold_negations(model, &mut plan);
    consolidate(model, &mut plan);
    crate::engine::plan_ops::count_through_visits(model, &mut plan);
    // a list shows one value per row: a column of records on the many side (a patient's
    // wounds' latest pain) cannot be one of its columns
    let entity = plan.entity.clone();
    plan.columns
        .retain(|c| split_qualified(c).is_some_and(|(e, _)| model.has_one(&entity, e)));
    plan.round = r.round;
    // "listed from most to fewest": order a grouped answer by its figure, every row kept
    if let Some(order) = r.sort
        && !plan.metrics.is_empty()
        && !plan.dimensions.is_empty()
        && plan.limit.is_none()
    {
        plan.order = rank_order(order);
    }
    // "etiologies with more than 20 open wounds": one row per group, kept by its count
    if let Some((op, value)) = r.having
        && !plan.dimensions.is_empty()
    {
        if plan.metrics.is_empty() && plan.intent == Intent::List {
            plan.intent = Intent::Count;
        }
        plan.having = Some(Having { op, value });
    }
    // "sorted by onset date, oldest first": a list (or the grouping it names) in that order
    if let Some((attr, order)) = &r.sort_by
        && plan.limit.is_none()
    {
        // a series by period ("newest first", "sorted by year descending"): the periods'
        // own date
        let period = plan.dimensions.iter().find_map(|d| match d {
            Dimension::Time { attribute, .. } => Some(attribute.clone()),
            _ => None,
        });
        let attr = attr.clone().or(period).or_else(|| {
            model
                .default_time_dimension(&plan.entity)
                .map(|d| d.attribute.clone())
        });
        let fits = |a: &str| match plan.intent {
            Intent::List => true,
            _ => plan.dimensions.iter().any(|d| match d {
                Dimension::Attribute { attribute } | Dimension::Time { attribute, .. } => attribute == a,
            }),
        };
        if let Some(a) = attr.filter(|a| fits(a)) {
            plan.order = vec![OrderBy {
                key: OrderKey::Attribute { attribute: a },
                order: *order,
            }];
            // "…, then by wound id": the further keys of a list, after the first
            if plan.intent == Intent::List {
                for (b, o) in &r.then_by {
                    if !plan
                        .order
                        .iter()
                        .any(|x| matches!(&x.key, OrderKey::Attribute { attribute } if attribute == b))
                    {
                        plan.order.push(OrderBy {
                            key: OrderKey::Attribute { attribute: b.clone() },
                            order: *o,
                        });
                    }
                }
            }
        }
    }
    // "limit 15", "only 20 patients": the list's length, in the list's own order
    if let Some(n) = r.row_limit
        && plan.intent == Intent::List
        && plan.limit.is_none()
    {
        plan.limit = Some(n);
    }
    // "top 5, ties included": only where rows are cut
    plan.limit_ties = r.limit_ties && plan.limit.is_some();
    plan
}

/// The groupings said besides the attribute a ranking ranks ("for each care setting" in
/// "for each care setting, the 2 most common etiologies").
fn other_groups(plan: &QueryPlan, ranked: &str) -> Vec<Dimension> {
    plan.dimensions
        .iter()
        .filter(|d| !matches!(d, Dimension::Attribute { attribute } if attribute == ranked))
        .cloned()
        .collect()
}

/// A ranking of an attribute's values said per group: the ranked attribute first, then
/// the groups, and the top N kept within each group (one when no number was said: "the
/// most common tissue type in each clinic") — never the top N overall with the grouping
/// dropped.
fn per_group(plan: &mut QueryPlan, rank: &RankSpec, groups: Vec<Dimension>) {
    if groups.is_empty() {
        return;
    }
    plan.dimensions.extend(groups);
    plan.limit_per_group = Some(rank.n.unwrap_or(1));
    plan.limit = None;
    plan.offset = None;
}

fn apply_rank(ctx: &Ctx<'_>, plan: &mut QueryPlan, r: &Reading, rank: &RankSpec) {
    let model = ctx.model;
    let subject = rank.subject.as_deref().or(r.entity.as_deref());
    // "which clinic has the most wounds", "the largest open wound": one record
    let singular_entity = r.pieces.iter().any(|p| {
        p.kind == PieceKind::Entity
            && !p.text.is_empty()
            && !p.text.to_lowercase().ends_with('s')
            && subject == Some(p.target.as_str())
    });
    // "which open arterial ulcer at Oak Ridge has been open the longest", "what is the
    // oldest open pressure injury": the records said by values, none plural, with a
    // singular verb
    let of_subject = |p: &&crate::engine::LinkedPiece| {
        matches!(p.kind, PieceKind::Entity | PieceKind::Value)
            && !p.text.is_empty()
            && split_qualified(&p.target).map_or(p.target.as_str(), |(e, _)| e) == subject.unwrap_or("")
    };
    let plural = |text: &str| {
        text.split_whitespace()
            .last()
            .is_some_and(|w| crate::engine::tokenize::singular(&w.to_lowercase()).is_some())
    };
    let singular_values = r.pieces.iter().filter(of_subject).count() > 0
        && !r.pieces.iter().filter(of_subject).any(|p| plural(&p.text))
        && ctx
            .tokens
            .iter()
            .any(|t| matches!(t.text.as_str(), "has" | "is" | "was" | "does"))
        && !ctx
            .tokens
            .iter()
            .any(|t| matches!(t.text.as_str(), "have" | "are" | "were" | "do"));
    let singular_which = singular_entity || singular_values;
    if rank.skip > 0 {
        plan.offset = Some(rank.skip);
    }
    match &rank.key {
        RankKey::None => {}
        RankKey::Measure(mx) => {
            let m = &model.measures[*mx];
            let subject = rank
                .subject
                .clone()
                .or_else(|| r.entity.clone())
                .filter(|s| *s != m.entity);
            plan.entity = m.entity.clone();
            plan.metrics = vec![measure_metric(model, *mx)];
            if let Some(s) = subject
                && let Some(e) = model.entity(&s)
            {
                let attr = format!(
                    "{}.{}",
                    e.name,
                    e.display_attribute.clone().unwrap_or_else(|| e.key.clone())
                );
                plan.dimensions
                    .retain(|d| !matches!(d, Dimension::Attribute { attribute } if *attribute == attr));
                plan.dimensions
                    .insert(0, Dimension::Attribute { attribute: attr });
            }
            plan.order = rank_order(rank.order);
            plan.limit = Some(rank.n.unwrap_or(if singular_which { 1 } else { 10 }));
            plan.intent = Intent::Rank;
            // "top 2 clinicians by healing rate in each region": ranked within the groups
            let groups = plan.dimensions.split_off(1.min(plan.dimensions.len()));
            per_group(plan, rank, groups);
        }
        // "which wound had the largest area ever recorded", "which patient had the highest
        // pain score ever": records ranked by the extreme of their visits' values, one row
        // per record (never the latest value, never a visit's row)
        RankKey::Attribute(a)
            if r.visit_hint == Some(false)
                && plan.dimensions.is_empty()
                && plan.entity != "assessments"
                && split_qualified(a).is_some_and(|(owner, _)| owner == "assessments")
                && model.has_many(&plan.entity, "assessments") =>
        {
            let subject = plan.entity.clone();
            let Some(e) = model.entity(&subject) else { return };
            let attr = format!(
                "{}.{}",
                e.name,
                e.display_attribute.clone().unwrap_or_else(|| e.key.clone())
            );
            let agg = if rank.order == crate::semantic::SortOrder::Asc {
                MeasureAgg::Min
            } else {
                MeasureAgg::Max
            };
            plan.entity = "assessments".into();
            plan.metrics = vec![crate::engine::plan_ops::agg_metric(model, agg, a)];
            plan.dimensions = vec![Dimension::Attribute { attribute: attr }];
            plan.columns.clear();
            plan.order = rank_order(rank.order);
            plan.limit = Some(rank.n.unwrap_or(if singular_which { 1 } else { 10 }));
            plan.intent = Intent::Rank;
        }
        RankKey::Attribute(a) => {
            // "the 3 oldest patients per clinic": records ranked within each group cannot
            // be listed; said so (the renderer refuses it with the reason), never the top
            // records overall with the grouping dropped
            let grouped = !plan.dimensions.is_empty();
            // "the second-highest bmi on record": with no records named, the ranked rows
            // are the ones the attribute belongs to (patients), not the default entity
            if matches!(
                r.entity_source,
                crate::engine::reading::EntitySource::Missing | crate::engine::reading::EntitySource::Implied
            ) && rank.subject.is_none()
                && let Some((owner, _)) = split_qualified(a)
                && owner != plan.entity
                && owner != "assessments"
                && model.entity(owner).is_some()
            {
                plan.entity = owner.to_owned();
                plan.columns.clear();
            }
            let a = match split_qualified(a) {
                Some(("assessments", _)) if plan.entity == "wounds" => {
                    latest_of(model, a).unwrap_or_else(|| a.clone())
                }
                // "the deepest measurement ever recorded": the visits are ranked by their
                // own depth, not by their wound's latest one
                Some((owner, _)) if owner != plan.entity => model
                    .attribute(a)
                    .and_then(|x| match &x.attribute.derived {
                        Some(crate::semantic::Derived::Latest { attribute, .. })
                            if split_qualified(attribute).is_some_and(|(e, _)| e == plan.entity) =>
                        {
                            Some(attribute.clone())
                        }
                        _ => None,
                    })
                    .unwrap_or_else(|| a.clone()),
                _ => a.clone(),
            };
            // "deepest measurement ever recorded, per etiology": the extreme value of the
            // visits in each group (one figure per group), not visits listed per group
            if grouped
                && rank.n.is_none()
                && plan.entity == "assessments"
                && split_qualified(&a).is_some_and(|(owner, _)| owner == "assessments")
                && model.attribute(&a).is_some_and(|x| x.attribute.ty.is_numeric())
            {
                let agg = match rank.order {
                    crate::semantic::SortOrder::Desc => crate::semantic::MeasureAgg::Max,
                    crate::semantic::SortOrder::Asc => crate::semantic::MeasureAgg::Min,
                };
                plan.metrics = vec![agg_metric(model, agg, &a)];
                plan.columns.clear();
                plan.order.clear();
                plan.limit = None;
                plan.offset = None;
                plan.intent = Intent::GroupBy;
                return;
            }
            plan.metrics.clear();
            plan.dimensions.clear();
            plan.order = vec![OrderBy {
                key: OrderKey::Attribute { attribute: a },
                order: rank.order,
            }];
            plan.limit = Some(rank.n.unwrap_or(if singular_which { 1 } else { 10 }));
            plan.intent = Intent::List;
            if grouped {
                plan.limit_per_group = plan.limit;
            }
        }
        RankKey::CountBy { attribute, counted } => {
            let groups = other_groups(plan, attribute);
            plan.entity = counted.clone();
            plan.metrics = vec![count_metric(model, counted)];
            plan.dimensions = vec![Dimension::Attribute {
                attribute: attribute.clone(),
            }];
            plan.columns.clear();
            plan.order = rank_order(rank.order);
            let one = rank.n.is_none()
                && !r
                    .pieces
                    .iter()
                    .any(|p| p.target == *attribute && p.text.ends_with('s'));
            plan.limit = Some(rank.n.unwrap_or(if one { 1 } else { 10 }));
            plan.intent = Intent::Rank;
            per_group(plan, rank, groups);
        }
        RankKey::AggBy {
            attribute,
            agg,
            measured,
        } => {
            let groups = other_groups(plan, attribute);
            if let Some((owner, _)) = split_qualified(measured) {
                plan.entity = owner.to_owned();
            }
            plan.metrics = vec![agg_metric(model, *agg, measured)];
            plan.dimensions = vec![Dimension::Attribute {
                attribute: attribute.clone(),
            }];
            plan.columns.clear();
            plan.order = rank_order(rank.order);
            // "the region with the highest average …": one value; "regions by …": ten
            let one = !r
                .pieces
                .iter()
                .any(|p| p.target == *attribute && p.text.ends_with('s'));
            plan.limit = Some(rank.n.unwrap_or(if one { 1 } else { 10 }));
            plan.intent = Intent::Rank;
            per_group(plan, rank, groups);
        }
        RankKey::CountPerGroup(counted) => {
            plan.entity = counted.clone();
            plan.metrics = vec![count_metric(model, counted)];
            plan.columns.clear();
            plan.order = rank_order(rank.order);
            plan.limit = Some(rank.n.unwrap_or(10));
            plan.intent = Intent::Rank;
            // "top 3 locations per clinic": the first grouping is ranked within the others
            let groups = plan.dimensions.split_off(1.min(plan.dimensions.len()));
            per_group(plan, rank, groups);
        }
        RankKey::CountOf(e2) => {
            let subject = rank
                .subject
                .clone()
                .or_else(|| r.entity.clone())
                .unwrap_or_else(|| "clinics".into());
            if subject == *e2 {
                return;
            }
            let Some(s) = model.entity(&subject) else { return };
            let attr = format!(
                "{}.{}",
                s.name,
                s.display_attribute.clone().unwrap_or_else(|| s.key.clone())
            );
            plan.entity = e2.clone();
            plan.metrics = vec![count_metric(model, e2)];
            plan.dimensions = vec![Dimension::Attribute { attribute: attr }];
            plan.order = rank_order(rank.order);
            plan.limit = Some(rank.n.unwrap_or(if singular_which { 1 } else { 10 }));
            plan.intent = Intent::Rank;
        }
    }
}

/// "wounds with 2 or more visits in September where the pain score was 5 or above",
/// "3 or more assessments in October with high exudate": a value said of the visits a
/// count counts is a condition on those visits (each counted visit has it), not a second
/// filter on some other visit or on the latest one.
fn fold_count_conditions(ctx: &Ctx<'_>, r: &Reading, positioned: &mut Vec<(usize, Constraint)>) {
    let model = ctx.model;
    let is_count = |c: &Constraint| {
        matches!(c, Constraint::RelatedCount { related, op, value, .. }
            if related == "assessments"
                && matches!(op, crate::semantic::CompareOp::Gte | crate::semantic::CompareOp::Gt | crate::semantic::CompareOp::Eq)
                && *value >= 1)
    };
    let Some(count) = r.filters.iter().find(|f| is_count(&f.constraint)) else {
        return;
    };
    let count_end = ctx
        .tokens
        .iter()
        .position(|t| t.span.start >= count.span.end)
        .unwrap_or(ctx.tokens.len());
    // a per-visit value (or the latest value a comparison defaulted to) said after the
    // count and joined to it by "with", "where", "that" …
    let per_visit = |c: &Constraint| -> Option<Constraint> {
        let (Constraint::Compare { attribute, .. } | Constraint::InSet { attribute, .. }) = c else {
            return None;
        };
        let base = if attribute.starts_with("assessments.") {
            attribute.clone()
        } else {
            match &model.attribute(attribute)?.attribute.derived {
                Some(crate::semantic::Derived::Latest { attribute: a, .. })
                    if a.starts_with("assessments.") =>
                {
                    a.clone()
                }
                _ => return None,
            }
        };
        let mut c = c.clone();
        if let Constraint::Compare { attribute, .. } | Constraint::InSet { attribute, .. } = &mut c {
            *attribute = base;
        }
        Some(c)
    };
    let joined = |at: usize| {
        at >= count_end
            && at != UNPOSITIONED
            && (count_end..at).any(|k| {
                matches!(
                    ctx.w(k),
                    "with" | "where" | "when" | "that" | "which" | "showing" | "recording" | "having"
                )
            })
            && !ctx
                .mentions
                .iter()
                .any(|m| m.first >= count_end && m.first < at && m.entity().is_some())
    };
    let mut conditions = Vec::new();
    positioned.retain(|(at, c)| {
        if is_count(c) || !joined(*at) {
            return true;
        }
        match per_visit(c) {
            Some(pc) => {
                conditions.push(pc);
                false
            }
            None => true,
        }
    });
    if conditions.is_empty() {
        return;
    }
    if let Some((_, Constraint::RelatedCount { condition, .. })) =
        positioned.iter_mut().find(|(_, c)| is_count(c))
    {
        let mut of: Vec<Constraint> = condition.take().map(|c| *c).into_iter().collect();
        of.extend(conditions);
        *condition = Some(Box::new(if of.len() == 1 {
            of.remove(0)
        } else {
            Constraint::All { of }
        }));
    }
}

/// "wounds with an assessment that found both slough and signs of infection at the same
/// visit": the conditions on one related entity's values, held together by one `all` so
/// they match on the same related row (each alone would match on a row of its own).
fn same_row(positioned: &mut Vec<(usize, Constraint)>, entity: &str) {
    let related = |c: &Constraint| -> Option<String> {
        if !matches!(
            c,
            Constraint::Compare { .. } | Constraint::InSet { .. } | Constraint::Between { .. }
        ) {
            return None;
        }
        let attrs = c.attributes();
        let (e, _) = crate::semantic::split_qualified(attrs.first()?)?;
        (e != entity && attrs.iter().all(|a| a.starts_with(&format!("{e}.")))).then(|| e.to_owned())
    };
    let Some(target) = positioned.iter().find_map(|(_, c)| related(c)) else {
        return;
    };
    let members: Vec<usize> = (0..positioned.len())
        .filter(|&i| related(&positioned[i].1).as_deref() == Some(target.as_str()))
        .collect();
    if members.len() < 2 {
        return;
    }
    let at = positioned[members[0]].0;
    let mut of = Vec::new();
    for &i in members.iter().rev() {
        of.push(positioned.remove(i).1);
    }
    of.reverse();
    positioned.push((at, Constraint::All { of }));
}

/// "clinicians who haven't assessed a VLU in the last 2 weeks": a period on the visits
/// through which a negated condition is reached belongs to that condition — no such visit
/// in the period (`NOT EXISTS (… AND date in the period)`), not "no such visit ever, and
/// some visit in the period".
fn window_under_negation(model: &SemanticModel, plan: &mut QueryPlan) {
    let Some(range) = plan.time_range.clone() else {
        return;
    };
    let Some((via, _)) = split_qualified(&range.attribute) else {
        return;
    };
    let from = plan.entity.clone();
    let steps = |a: &str, b: &str| model.join_path(a, b).map(|p| p.len());
    let through = |attribute: &str| {
        let Some((e, _)) = split_qualified(attribute) else {
            return false;
        };
        e != via
            && match (steps(&from, via), steps(via, e), steps(&from, e)) {
                (Some(a), Some(b), Some(c)) => a > 0 && b > 0 && a + b == c,
                _ => false,
            }
    };
    let negated: Vec<usize> = (0..plan.filters.len())
        .filter(|&i| match &plan.filters[i] {
            Constraint::Not { of } => {
                let attrs = of.attributes();
                !attrs.is_empty() && attrs.iter().all(|a| through(a))
            }
            _ => false,
        })
        .collect();
    let [i] = negated.as_slice() else {
        return;
    };
    let Constraint::Not { of } = plan.filters[*i].clone() else {
        return;
    };
    let day = |d: NaiveDate| Value::Text(d.format("%Y-%m-%d").to_string());
    let last_day = range.end.pred_opt().unwrap_or(range.end);
    plan.filters[*i] = Constraint::Not {
        of: Box::new(Constraint::All {
            of: vec![
                *of,
                Constraint::Between {
                    attribute: range.attribute.clone(),
                    min: day(range.start),
                    max: day(last_day),
                    unit: None,
                },
            ],
        }),
    };
    plan.time_range = None;
}

/// "clinics with no open burns", "patients who have never had an infected DFU": a
/// negation before a phrase that says several things of one kind of related record
/// negates them together — no related record is all of them (`NOT EXISTS (… AND …)`), not
/// "none is open, and one is a burn". The phrase ends at the next clause word or negation.
fn negated_phrase(
    ctx: &Ctx<'_>,
    entity: &str,
    positioned: &mut Vec<(usize, Constraint)>,
    term_at: &[(Constraint, usize)],
) {
    let model = ctx.model;
    let related = |c: &Constraint| -> Option<String> {
        let inner = match c {
            Constraint::Not { of } => of.as_ref(),
            other => other,
        };
        if !matches!(
            inner,
            Constraint::Compare { .. } | Constraint::InSet { .. } | Constraint::Between { .. }
        ) {
            return None;
        }
        let attrs = inner.attributes();
        let (e, _) = split_qualified(attrs.first()?)?;
        (attrs.iter().all(|a| a.starts_with(&format!("{e}.")))
            && crate::engine::plan_ops::across_many(model, Some(entity), attrs.first()?))
        .then(|| e.to_owned())
    };
    for &n in &ctx.cues.negations {
        let end = (n + 1..ctx.tokens.len())
            .find(|&k| {
                ctx.cues.negations.contains(&k)
                    || matches!(
                        ctx.w(k),
                        "and"
                            | "or"
                            | ","
                            | "but"
                            | "who"
                            | "that"
                            | "which"
                            | "whose"
                            | "where"
                            | "while"
                            | "."
                    )
            })
            .unwrap_or(ctx.tokens.len());
        let inside: Vec<usize> = (0..positioned.len())
            .filter(|&i| {
                let (at, c) = &positioned[i];
                let at = match *at {
                    UNPOSITIONED => term_at.iter().find(|(t, _)| t == c).map_or(*at, |(_, k)| *k),
                    k => k,
                };
                at > n && at < end
            })
            .collect();
        let Some(target) = inside.iter().find_map(|&i| related(&positioned[i].1)) else {
            continue;
        };
        let members: Vec<usize> = inside
            .into_iter()
            .filter(|&i| related(&positioned[i].1).as_deref() == Some(target.as_str()))
            .collect();
        if members.len() < 2
            || !members
                .iter()
                .any(|&i| matches!(positioned[i].1, Constraint::Not { .. }))
        {
            continue;
        }
        let at = positioned[members[0]].0;
        let mut of = Vec::new();
        for &i in members.iter().rev() {
            of.push(match positioned.remove(i).1 {
                Constraint::Not { of } => *of,
                other => other,
            });
        }
        of.reverse();
        positioned.push((
            at,
            Constraint::Not {
                of: Box::new(Constraint::All { of }),
            },
        ));
    }
}

/// "… high exudate at every visit": each condition on the visits' own values holds at
/// every visit of the record — no visit where it does not (`NOT EXISTS`).
fn every_visit(model: &SemanticModel, entity: &str, positioned: &mut [(usize, Constraint)]) {
    // a visit's own values, or those of who made it ("only ever assessed by wound nurses":
    // the clinician of every visit), never the record's own
    let of_visit = |a: &str| {
        a.starts_with("assessments.")
            || split_qualified(a).is_some_and(|(e, _)| {
                e != entity && model.has_one("assessments", e) && !model.has_one(entity, e)
            })
    };
    for (_, c) in positioned.iter_mut() {
        let attrs = c.attributes();
        if attrs.is_empty() || !attrs.iter().all(|a| of_visit(a)) {
            continue;
        }
        // who made the visit: no visit made by anyone else (`NOT EXISTS` a visit whose
        // clinician is not one of them)
        if !attrs.iter().all(|a| a.starts_with("assessments.")) {
            if let Constraint::Compare { op, .. } = c {
                *op = op.negated();
                let other = std::mem::replace(c, Constraint::All { of: Vec::new() });
                *c = Constraint::Not { of: Box::new(other) };
            }
            continue;
        }
        let inner = std::mem::replace(c, Constraint::All { of: Vec::new() });
        *c = Constraint::RelatedCount {
            per: None,
            related: "assessments".into(),
            op: crate::semantic::CompareOp::Eq,
            value: 0,
            within: None,
            condition: Some(Box::new(Constraint::Not { of: Box::new(inner) })),
        };
    }
}

/// "… at some visit in the past 2 weeks but not at their last assessment", "… necrotic at
/// their first assessment but not at their last" (`latest`), "… infection signs at their
/// latest visit but none at their first" (`!latest`): each condition on a visit's value
/// that the model also keeps at the other visit holds there negated
/// (`latest_infection_signs` not yes), beside the condition as said.
/// The values said from token `from` on are of the record's other visit: its first
/// (`to_first`) or its latest ("slough at the first assessment but granulation at the
/// latest one").
fn other_visit(model: &SemanticModel, positioned: &mut [(usize, Constraint)], from: usize, to_first: bool) {
    let to = |a: &str| {
        let base = crate::engine::plan_ops::per_visit_base(model, a);
        if to_first {
            crate::engine::plan_ops::first_of(model, &base)
        } else {
            crate::engine::plan_ops::latest_of(model, &base)
        }
    };
    // (readings placed without a position, a term's, were read at their own visit)
    for (at, c) in positioned.iter_mut() {
        if *at >= from
            && *at != UNPOSITIONED
            && let Some(moved) = c.on_attribute(&to)
        {
            *c = moved;
        }
    }
}

fn not_at_visit(model: &SemanticModel, positioned: &mut Vec<(usize, Constraint)>, latest: bool) {
    let other = |a: &str| {
        if latest {
            // a visit's value, or its value at the record's first visit
            let base = match model.attribute(a).and_then(|x| x.attribute.derived.clone()) {
                Some(crate::semantic::Derived::First { attribute, .. }) => attribute,
                _ => a.to_owned(),
            };
            crate::engine::plan_ops::latest_of(model, &base)
        } else {
            crate::engine::plan_ops::first_for_latest(model, a)
                .or_else(|| crate::engine::plan_ops::first_of(model, a))
        }
    };
    let extra: Vec<(usize, Constraint)> = positioned
        .iter()
        .filter(|(_, c)| matches!(c, Constraint::Compare { .. } | Constraint::InSet { .. }))
        .filter_map(|(at, c)| {
            c.on_attribute(&other)
                .map(|o| (*at, Constraint::Not { of: Box::new(o) }))
        })
        .collect();
    positioned.extend(extra);
}
