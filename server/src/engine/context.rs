//! Stage 5 — follow-up context: refinements of the previous question in the thread.
//!
//! A question is a follow-up when the thread has a previous plan and the question reads
//! like a refinement: it opens with "only", "what about", "and for", "by … instead",
//! "same for", points back ("those", "ones", "them"), or names no entity of its own and
//! no new intent ("last year?", "venous ulcers?"). A follow-up [`merge`]s into the
//! previous plan instead of starting over: filters on the same attribute are replaced
//! ("and for venous ulcers?"), other filters are added ("only diabetic ones"), a new
//! time range replaces the old ("what about last year"), "by X instead" replaces the
//! grouping, a new intent or metric replaces the old one. Pure.

use crate::semantic::{CompareOp, Constraint, SemanticModel, Value};

use super::plan::{Dimension, Intent, QueryPlan};
use super::plan_ops;
use super::reading::{Ctx, EntitySource, MetricSpec, RankKey, Reading};

/// Merges the plan built from the follow-up (`fragment`) into the previous plan.
pub(crate) fn merge(
    model: &SemanticModel,
    previous: &QueryPlan,
    fragment: QueryPlan,
    ctx: &Ctx<'_>,
    r: &Reading,
) -> QueryPlan {
    let c = ctx.cues;
    let mut plan = previous.clone();
    plan.today = ctx.today;
    let replace_all = c.instead
        || ctx
            .tokens
            .iter()
            .take(3)
            .any(|t| matches!(t.text.as_str(), "about" | "for"))
            && ctx
                .tokens
                .first()
                .is_some_and(|t| matches!(t.text.as_str(), "what" | "how" | "and" | "same" | "now"));

    // a new entity named ("show their open wounds"): switch, keep the filters
    let drill = c.list.is_some()
        || c.more_about
        || c.pronouns.iter().any(|&p| {
            ctx.tokens.get(p).map(|t| t.text.as_str()).is_some_and(|w| {
                matches!(w, "their" | "them" | "those" | "these" | "its")
                    || crate::engine::intent::is_personal_pronoun(w)
            })
        });
    if r.entity_source == EntitySource::Named
        && fragment.entity != plan.entity
        && drill
        && matches!(r.metric, MetricSpec::None | MetricSpec::Count)
    {
        // "how many open wounds" → "how many patients have them": the rows the previous
        // count counted are what the new records must have
        keep_counted_rows(&mut plan, previous);
        plan.entity = fragment.entity.clone();
        plan.columns.clear();
        if matches!(plan.intent, Intent::Rank) {
            plan.order.clear();
            plan.limit = None;
        }
        for m in &mut plan.metrics {
            if m.agg == crate::semantic::MeasureAgg::Count && m.attribute.is_none() {
                *m = plan_ops::count_metric(model, &plan.entity);
            }
        }
        if c.list.is_some() || c.more_about || matches!(plan.intent, Intent::List) {
            plan.intent = Intent::List;
            plan.metrics.clear();
            plan.dimensions.clear();
        }
    }

    // a new metric or intent
    let new_metric = !matches!(r.metric, MetricSpec::None | MetricSpec::Count)
        || c.count.is_some()
        || c.agg.is_some()
        || c.share.is_some();
    if new_metric && !fragment.metrics.is_empty() {
        // "how many open wounds" → "how many of those are in smokers": the previous
        // count's condition said which rows it counted; a plain count of the same rows
        // keeps them
        let plain_count = |m: &super::plan::Metric| {
            m.agg == crate::semantic::MeasureAgg::Count && m.attribute.is_none() && m.condition.is_none()
        };
        if fragment.metrics.iter().all(plain_count) && (fragment.entity == previous.entity || drill) {
            keep_counted_rows(&mut plan, previous);
        }
        plan.metrics = fragment.metrics.clone();
        plan.entity = fragment.entity.clone();
        if !matches!(
            plan.intent,
            Intent::GroupBy | Intent::Trend | Intent::Rank | Intent::Compare
        ) || plan.dimensions.is_empty()
        {
            plan.intent = fragment.intent;
        }
    }
    if c.more_about || (c.list.is_some() && !new_metric && fragment.dimensions.is_empty()) {
        plan.intent = Intent::List;
        plan.metrics.clear();
        plan.dimensions.clear();
        plan.order.clear();
        plan.limit = None;
    }
    let reversal = r.rank.as_ref().is_some_and(|k| k.key == RankKey::None) && !previous.order.is_empty();
    if !reversal
        && (fragment.intent == Intent::Rank || !fragment.order.is_empty())
        && !fragment.order.is_empty()
    {
        plan.intent = Intent::Rank;
        plan.entity = fragment.entity.clone();
        plan.metrics = fragment.metrics.clone();
        plan.dimensions = fragment.dimensions.clone();
        plan.order = fragment.order.clone();
        plan.limit = fragment.limit;
    }

    // "and the bottom 3?": the previous ranking, the other way round
    if let Some(rank) = &r.rank
        && rank.key == RankKey::None
        && !previous.order.is_empty()
    {
        for o in &mut plan.order {
            o.order = rank.order;
        }
        if let Some(n) = rank.n {
            plan.limit = Some(n);
        }
    }

    // groupings
    let new_dims: Vec<Dimension> = fragment
        .dimensions
        .iter()
        .filter(|d| !plan.dimensions.contains(d))
        .cloned()
        .collect();
    let time_dims: Vec<&Dimension> = new_dims
        .iter()
        .filter(|d| matches!(d, Dimension::Time { .. }))
        .collect();
    if !time_dims.is_empty() {
        plan.dimensions.retain(|d| !matches!(d, Dimension::Time { .. }));
        for d in time_dims.into_iter().rev() {
            plan.dimensions.insert(0, d.clone());
        }
        plan.intent = Intent::Trend;
    }
    let attr_dims: Vec<Dimension> = new_dims
        .into_iter()
        .filter(|d| matches!(d, Dimension::Attribute { .. }))
        .collect();
    if !attr_dims.is_empty() && fragment.intent != Intent::Rank {
        if c.instead || !c.also && plan.intent != Intent::Trend {
            plan.dimensions.retain(|d| matches!(d, Dimension::Time { .. }));
        }
        plan.dimensions.extend(attr_dims);
        if plan.intent == Intent::Compare && fragment.intent != Intent::Compare {
            plan.intent = Intent::GroupBy;
        }
        if matches!(
            plan.intent,
            Intent::Count | Intent::Aggregate | Intent::List | Intent::Rank
        ) {
            plan.intent = if fragment.intent == Intent::Compare {
                Intent::Compare
            } else {
                Intent::GroupBy
            };
            plan.order.clear();
            plan.limit = None;
        }
        if fragment.intent == Intent::Compare {
            plan.intent = Intent::Compare;
        }
    }

    // "without the etiology filter"
    if !r.remove.is_empty() {
        plan.filters
            .retain(|f| !f.attributes().iter().any(|a| r.remove.iter().any(|x| x == a)));
    }

    // "compare it with Lakeview": the previous value and the new one side by side
    let compared = if c.compare.is_some() && r.compare.is_none() {
        compare_with_previous(model, &mut plan, &fragment.filters)
    } else {
        None
    };

    // "widen that to the whole Coastal region": a place said more broadly replaces what
    // narrowed the same records before (the clinic), rather than narrowing further
    if c.widen {
        let entity_of = |c: &Constraint| -> Vec<String> {
            c.attributes()
                .iter()
                .filter_map(|a| a.split('.').next().map(str::to_owned))
                .collect()
        };
        for f in fragment.filters.iter().filter(|f| is_equality(f)) {
            let es = entity_of(f);
            plan.filters
                .retain(|g| !(is_equality(g) && entity_of(g).iter().any(|e| es.contains(e))));
        }
        // "expand it to all clinics": no place named, every one of those records
        // "what about everywhere": every clinic
        let every = if !fragment.filters.iter().any(is_equality)
            && r.entity_source == EntitySource::Named
            && fragment.entity != previous.entity
        {
            Some(fragment.entity.clone())
        } else if c.everywhere && !fragment.filters.iter().any(is_equality) {
            model.find_entity("clinic").map(|e| e.name.clone())
        } else {
            None
        };
        if let Some(e) = every {
            plan.filters
                .retain(|g| !(is_equality(g) && entity_of(g).contains(&e)));
        }
    }
    // filters: the same attribute is replaced ("and for venous ulcers?"), others added
    for (i, f) in fragment.filters.iter().enumerate() {
        if compared == Some(i) {
            continue;
        }
        let same_attr_equality = plan.filters.iter().any(|g| {
            is_equality(g) && is_equality(f) && g.attributes().iter().any(|a| f.attributes().contains(a))
        });
        plan_ops::add_filter(&mut plan, f.clone(), replace_all || same_attr_equality);
    }

    // time
    if r.time.as_ref().is_some_and(|t| t.all_time) {
        plan.time_range = None;
    } else if let Some(t) = &fragment.time_range {
        let attr = plan
            .time_range
            .as_ref()
            .filter(|_| r.time.as_ref().is_some_and(|t| t.dimension.is_none()))
            .map(|p| p.attribute.clone());
        let mut t = t.clone();
        if let Some(a) = attr {
            t.attribute = a;
        }
        plan.time_range = Some(t);
    }
    if !fragment.columns.is_empty() && plan.intent == Intent::List {
        for col in fragment.columns {
            if !plan.columns.contains(&col) {
                plan.columns.push(col);
            }
        }
    }
    plan_ops::normalise_intent(model, &mut plan);
    plan_ops::fold_negations(model, &mut plan);
    plan_ops::consolidate(model, &mut plan);
    plan
}

/// The condition of the previous plan's row count (the rows it counted: "open wounds")
/// kept as a filter of the plan.
fn keep_counted_rows(plan: &mut QueryPlan, previous: &QueryPlan) {
    for m in &previous.metrics {
        if m.agg == crate::semantic::MeasureAgg::Count
            && m.attribute.is_none()
            && let Some(c) = &m.condition
            && !plan.filters.contains(c)
        {
            plan.filters.push(c.clone());
        }
    }
}

/// "compare with Lakeview" after a question about Riverside: the first equality filter
/// of the fragment whose attribute the previous plan filtered on another value becomes
/// an `in_set` of both, grouped by that attribute (a `Compare` plan). Returns the index
/// of the fragment filter used.
fn compare_with_previous(
    model: &SemanticModel,
    plan: &mut QueryPlan,
    filters: &[Constraint],
) -> Option<usize> {
    filters.iter().enumerate().find_map(|(i, f)| {
        let Constraint::Compare {
            attribute,
            op: CompareOp::Eq,
            value,
            ..
        } = f
        else {
            return None;
        };
        let mut values: Vec<Value> = plan
            .filters
            .iter()
            .filter_map(|g| match g {
                Constraint::Compare {
                    attribute: a,
                    op: CompareOp::Eq,
                    value: v,
                    ..
                } if a == attribute => Some(vec![v.clone()]),
                Constraint::InSet { attribute: a, values } if a == attribute => Some(values.clone()),
                _ => None,
            })
            .flatten()
            .collect();
        if values.is_empty() || values.contains(value) {
            return None;
        }
        values.push(value.clone());
        plan.filters
            .retain(|g| !g.attributes().iter().any(|a| a == attribute));
        plan.filters.push(Constraint::InSet {
            attribute: attribute.clone(),
            values,
        });
        plan.dimensions.retain(|d| matches!(d, Dimension::Time { .. }));
        plan.dimensions.push(Dimension::Attribute {
            attribute: attribute.clone(),
        });
        if plan.metrics.is_empty() {
            plan.metrics.push(plan_ops::count_metric(model, &plan.entity));
        }
        plan.columns.clear();
        plan.order.clear();
        plan.limit = None;
        plan.intent = Intent::Compare;
        Some(i)
    })
}

fn is_equality(c: &Constraint) -> bool {
    matches!(
        c,
        Constraint::Compare {
            op: CompareOp::Eq,
            ..
        } | Constraint::InSet { .. }
    )
}
