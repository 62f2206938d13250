//! Stage 8 — the draft plan: a [`Reading`] plus one chosen interpretation per ambiguity
//! (from [`super::ambiguity`], settled by [`super::gate`]) becomes a typed [`QueryPlan`].
//!
//! Also the plan-level helpers the other stages share: typed plan changes, anchoring a
//! term's constraint to the entity it modifies, metrics for measures, grouping one-to-many
//! filters into one `all`. Follow-ups are merged into the previous plan by
//! [`super::context`].
//!
//! Pure. Only model names and typed literals enter the plan, never question text.

use chrono::NaiveDate;

use crate::semantic::{
    Aggregation, AttributeRole, AttributeType, Constraint, Derived, Grain, MeasureAgg, PlanChange,
    SemanticModel, SortOrder, Span, SpanUnit, Value, split_qualified, unit_symbol,
};

use super::PieceKind;
use super::link;
use super::plan::{Dimension, Intent, Metric, OrderBy, OrderKey, QueryPlan, TimeRange};

pub(crate) use super::read::*;

// =====================================================================================
// Building
// =====================================================================================

/// How one ambiguity was settled, for building.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Chosen {
    /// An option's effect.
    Effect(super::Effect),
    /// A custom constraint.
    Custom(Constraint),
}

/// Where an ambiguity's choice goes in the plan.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Slot {
    /// A filter on rows of `anchor` (term constraints, values, cohorts).
    Filter { anchor: String, negated: bool },
    /// The attribute of grouping `n`.
    Dimension(usize),
    /// The metric (attribute, aggregation or measure).
    Metric,
    /// The attribute of comparison `n`.
    Comparison(usize),
    /// The date column of the time range.
    TimeAttribute,
    /// List column `n`.
    Column(usize),
    /// The entity.
    Entity,
    /// The whole plan (intent, reference).
    Plan,
    /// A ranking.
    Rank,
    /// The time window of a trend, rate or average.
    TimeWindow,
}

/// The metric for a measure.
pub(crate) fn measure_metric(model: &SemanticModel, mx: usize) -> Metric {
    let m = &model.measures[mx];
    let label = match m.unit.as_deref() {
        Some(u) if u != "percent" => format!("{} ({})", m.label, unit_symbol(u)),
        Some(_) => format!("{} (%)", m.label),
        None => m.label.clone(),
    };
    Metric {
        agg: m.agg,
        attribute: m.attribute.clone(),
        condition: m.condition.clone().or_else(|| m.filter.clone()),
        label,
    }
}

/// A count of the entity's rows.
pub(crate) fn count_metric(model: &SemanticModel, entity: &str) -> Metric {
    let label = model.entity(entity).map_or_else(
        || "Rows".to_owned(),
        |e| format!("Number of {}", plural(&e.label)),
    );
    Metric {
        agg: MeasureAgg::Count,
        attribute: None,
        condition: None,
        label,
    }
}

/// An aggregate of an attribute.
pub(crate) fn agg_metric(model: &SemanticModel, agg: MeasureAgg, attribute: &str) -> Metric {
    let attr = model.attribute(attribute);
    let name = attr.map_or_else(|| attribute.to_owned(), |r| attribute_label(&r.attribute.name));
    let unit = attr.and_then(|r| r.attribute.unit.clone());
    let dated = attr.is_some_and(|r| r.attribute.ty == AttributeType::Date);
    let word = match agg {
        MeasureAgg::Min if dated => "Earliest",
        MeasureAgg::Max if dated => "Latest",
        MeasureAgg::Avg => "Average",
        MeasureAgg::Median => "Median",
        MeasureAgg::Sum => "Total",
        MeasureAgg::Min => "Minimum",
        MeasureAgg::Max => "Maximum",
        MeasureAgg::Count | MeasureAgg::CountDistinct => "Number of",
        MeasureAgg::Share => "Share of",
    };
    let label = match unit {
        _ if agg == MeasureAgg::CountDistinct => format!("Number of different {}", plural(&name)),
        Some(u) => format!("{word} {name} ({})", unit_symbol(&u)),
        None => format!("{word} {name}"),
    };
    Metric {
        agg,
        attribute: Some(attribute.to_owned()),
        condition: None,
        label,
    }
}

/// "latest_area" → "latest area".
pub(crate) fn attribute_label(name: &str) -> String {
    name.replace('_', " ")
}

/// "Wound" → "wounds".
pub(crate) fn plural(label: &str) -> String {
    let l = label.to_lowercase();
    if l.ends_with('y') && !l.ends_with("ay") {
        format!("{}ies", &l[..l.len() - 1])
    } else {
        format!("{l}s")
    }
}

/// The attribute a grouping by `attribute` should show: a foreign key to an entity with
/// a display attribute groups by that name when the default join path goes through it.
pub(crate) fn display_dimension(model: &SemanticModel, plan_entity: &str, attribute: &str) -> String {
    let Some(r) = model.attribute(attribute) else {
        return attribute.to_owned();
    };
    if r.attribute.role != AttributeRole::ForeignKey {
        return attribute.to_owned();
    }
    let Some(join) = model.joins.iter().find(|j| j.from == attribute) else {
        return attribute.to_owned();
    };
    let target = join.to_entity();
    let Some(display) = model.entity(target).and_then(|e| e.display_attribute.clone()) else {
        return attribute.to_owned();
    };
    // the path the renderer takes from the plan's entity must use this join
    let owner = r.entity.name.as_str();
    let path_ok = model
        .join_path(plan_entity, target)
        .is_some_and(|p| p.iter().any(|s| s.join.from == attribute))
        || (owner == plan_entity && model.join_path(plan_entity, target).is_some_and(|p| p.len() == 1));
    if path_ok {
        format!("{target}.{display}")
    } else {
        attribute.to_owned()
    }
}

/// Fills in what a constraint leaves to "the question's entity" when it modifies another
/// entity, so its meaning does not change with the plan's entity.
pub(crate) fn anchor(model: &SemanticModel, c: Constraint, anchor: &str) -> Constraint {
    let default_dim = || {
        model
            .entity(anchor)
            .and_then(|e| e.default_time_dimension.clone())
    };
    match c {
        Constraint::TimeWindow {
            dimension: None,
            last,
        } => Constraint::TimeWindow {
            dimension: default_dim(),
            last,
        },
        Constraint::OlderThan { dimension: None, age } => Constraint::OlderThan {
            dimension: default_dim(),
            age,
        },
        Constraint::RelatedCount {
            per: None,
            related,
            op,
            value,
            within,
        } => Constraint::RelatedCount {
            per: Some(anchor.to_owned()),
            related,
            op,
            value,
            within,
        },
        Constraint::All { of } => Constraint::All {
            of: of.into_iter().map(|c| self::anchor(model, c, anchor)).collect(),
        },
        Constraint::Any { of } => Constraint::Any {
            of: of.into_iter().map(|c| self::anchor(model, c, anchor)).collect(),
        },
        Constraint::Not { of } => Constraint::Not {
            of: Box::new(self::anchor(model, *of, anchor)),
        },
        other => own_value(model, other, anchor),
    }
}

/// A parent's "latest" value said of the rows it is derived from is their own value:
/// "assessments … that recorded high exudate" read with a term defined on
/// `wounds.latest_exudate` means each assessment's `assessments.exudate`.
fn own_value(model: &SemanticModel, c: Constraint, anchor: &str) -> Constraint {
    let base = |attribute: &str| -> Option<String> {
        match &model.attribute(attribute)?.attribute.derived {
            Some(Derived::Latest { attribute: base, .. })
                if split_qualified(base).is_some_and(|(e, _)| e == anchor) =>
            {
                Some(base.clone())
            }
            _ => None,
        }
    };
    match c {
        Constraint::Compare {
            attribute,
            op,
            value,
            unit,
        } => Constraint::Compare {
            attribute: base(&attribute).unwrap_or(attribute),
            op,
            value,
            unit,
        },
        Constraint::InSet { attribute, values } => Constraint::InSet {
            attribute: base(&attribute).unwrap_or(attribute),
            values,
        },
        Constraint::Between {
            attribute,
            min,
            max,
            unit,
        } => Constraint::Between {
            attribute: base(&attribute).unwrap_or(attribute),
            min,
            max,
            unit,
        },
        other => other,
    }
}

/// Applies a typed plan change (from a term option or a custom answer).
pub(crate) fn apply_change(model: &SemanticModel, plan: &mut QueryPlan, change: &PlanChange) {
    match change {
        PlanChange::ChooseAttribute { .. } => {}
        PlanChange::ChooseEntity { entity } => {
            if model.entity(entity).is_some() {
                plan.entity = entity.clone();
                for m in &mut plan.metrics {
                    if m.agg == MeasureAgg::Count && m.attribute.is_none() {
                        *m = count_metric(model, entity);
                    }
                }
            }
        }
        PlanChange::ChooseMeasure { measure } => {
            if let Some(mx) = model.measures.iter().position(|m| m.name == *measure) {
                plan.entity = model.measures[mx].entity.clone();
                let metric = measure_metric(model, mx);
                if plan.metrics.is_empty() {
                    plan.metrics.push(metric);
                } else {
                    plan.metrics[0] = metric;
                }
                if plan.intent == Intent::List {
                    plan.intent = Intent::Aggregate;
                }
            }
        }
        PlanChange::ChooseAggregation { aggregation } => {
            choose_aggregation(model, plan, *aggregation);
        }
        PlanChange::SetLimit { n } => plan.limit = Some(*n),
        PlanChange::Sort {
            attribute,
            order,
            limit,
        } => {
            if let Some((e, _)) = split_qualified(attribute)
                && plan.metrics.is_empty()
                && plan.dimensions.is_empty()
                && e != plan.entity
                && model
                    .join_path(&plan.entity, e)
                    .is_some_and(|p| p.iter().any(|s| !s.forward))
            {
                // sorting patients by a wound attribute: rank the wounds instead
                plan.entity = e.to_owned();
            }
            // rows sorted by an attribute: a list with an order and a limit (a Rank plan
            // ranks groups by a metric)
            plan.intent = Intent::List;
            plan.metrics.clear();
            plan.dimensions.clear();
            plan.order = vec![OrderBy {
                key: OrderKey::Attribute {
                    attribute: attribute.clone(),
                },
                order: *order,
            }];
            if let Some(n) = limit {
                plan.limit = Some(*n);
            }
        }
        PlanChange::Rank {
            measure,
            per,
            order,
            limit,
        } => {
            let Some(mx) = model.measures.iter().position(|m| m.name == *measure) else {
                return;
            };
            plan.intent = Intent::Rank;
            plan.entity = model.measures[mx].entity.clone();
            plan.metrics = vec![measure_metric(model, mx)];
            let dim = model
                .entity(per)
                .map(|e| {
                    format!(
                        "{}.{}",
                        e.name,
                        e.display_attribute.clone().unwrap_or_else(|| e.key.clone())
                    )
                })
                .unwrap_or_default();
            plan.dimensions = vec![Dimension::Attribute { attribute: dim }];
            plan.order = vec![OrderBy {
                key: OrderKey::Metric { index: 0 },
                order: *order,
            }];
            plan.limit = Some(*limit);
            plan.columns.clear();
        }
        PlanChange::SetGrain { grain, dimension } => {
            let attr = dimension
                .as_deref()
                .and_then(|d| model.time_dimension(d))
                .map(|d| d.attribute.clone())
                .or_else(|| plan.time_range.as_ref().map(|t| t.attribute.clone()))
                .or_else(|| {
                    model
                        .default_time_dimension(&plan.entity)
                        .map(|d| d.attribute.clone())
                });
            let Some(attribute) = attr else { return };
            plan.intent = Intent::Trend;
            plan.dimensions.retain(|d| !matches!(d, Dimension::Time { .. }));
            plan.dimensions.insert(
                0,
                Dimension::Time {
                    attribute,
                    grain: *grain,
                },
            );
            if plan.metrics.is_empty() {
                plan.metrics.push(count_metric(model, &plan.entity));
            }
            plan.order.clear();
        }
    }
}

fn choose_aggregation(model: &SemanticModel, plan: &mut QueryPlan, aggregation: Aggregation) {
    let Some(metric) = plan.metrics.first().cloned() else {
        return;
    };
    let attr = metric.attribute.clone();
    let new = match aggregation {
        Aggregation::Latest | Aggregation::First => {
            let Some(a) = attr else { return };
            let wound_level = if aggregation == Aggregation::Latest {
                latest_of(model, &a)
            } else {
                first_of(model, &a)
            };
            let Some(w) = wound_level else { return };
            plan.entity = "wounds".into();
            agg_metric(
                model,
                if metric.agg == MeasureAgg::Median {
                    MeasureAgg::Median
                } else {
                    MeasureAgg::Avg
                },
                &w,
            )
        }
        Aggregation::Mean => match attr {
            Some(a) => agg_metric(model, MeasureAgg::Avg, &a),
            None => return,
        },
        Aggregation::Median => match attr {
            Some(a) => agg_metric(model, MeasureAgg::Median, &a),
            None => return,
        },
        Aggregation::Min | Aggregation::Max | Aggregation::Sum => match attr {
            Some(a) => agg_metric(
                model,
                match aggregation {
                    Aggregation::Min => MeasureAgg::Min,
                    Aggregation::Max => MeasureAgg::Max,
                    _ => MeasureAgg::Sum,
                },
                &a,
            ),
            None => return,
        },
        Aggregation::Count => count_metric(model, &plan.entity),
    };
    plan.metrics[0] = new;
}

/// Computes `[today - span, today + 1)`.
pub(crate) fn window_range(today: NaiveDate, last: Span) -> (NaiveDate, NaiveDate) {
    use chrono::{Days, Months};
    let start = match last.unit {
        SpanUnit::Days => today.checked_sub_days(Days::new(u64::from(last.n))),
        SpanUnit::Weeks => today.checked_sub_days(Days::new(u64::from(last.n) * 7)),
        SpanUnit::Months => today.checked_sub_months(Months::new(last.n)),
        SpanUnit::Years => today.checked_sub_months(Months::new(last.n.saturating_mul(12))),
    }
    .unwrap_or_else(super::time::beginning);
    (start, today.succ_opt().unwrap_or(today))
}

/// The date attribute a time range uses by default for an entity.
pub(crate) fn default_time_attribute(model: &SemanticModel, entity: &str) -> Option<String> {
    model
        .default_time_dimension(entity)
        .map(|d| d.attribute.clone())
        .or_else(|| {
            // clinics and clinicians: their wounds' or assessments' dates
            let via = match entity {
                "clinics" => "wounds",
                "clinicians" => "assessments",
                _ => return None,
            };
            model.default_time_dimension(via).map(|d| d.attribute.clone())
        })
}

/// The constraint a comparison becomes, for a chosen attribute.
pub(crate) fn comparison_constraint(model: &SemanticModel, c: &Cmp, attribute: &str) -> Constraint {
    let attr = model.attribute(attribute);
    let attr_unit = attr.and_then(|r| r.attribute.unit.clone());
    let integer = attr.is_some_and(|r| r.attribute.ty == AttributeType::Integer);
    let conv = |v: f64| -> f64 {
        match (c.unit.as_deref(), attr_unit.as_deref()) {
            (Some(u), Some(au)) => link::convert(v, u, au).unwrap_or(v),
            _ => v,
        }
    };
    let lit = |v: f64| {
        if integer && v.fract() == 0.0 {
            Value::Integer(v as i64)
        } else {
            Value::Real(v)
        }
    };
    let constraint = match c.upper {
        Some(u) => Constraint::Between {
            attribute: attribute.to_owned(),
            min: lit(conv(c.value)),
            max: lit(conv(u)),
            unit: attr_unit,
        },
        None => Constraint::Compare {
            attribute: attribute.to_owned(),
            op: c.op,
            value: lit(conv(c.value)),
            unit: attr_unit,
        },
    };
    negate(constraint, c.negated)
}

/// Puts filters on the same one-to-many related entity into one `all`, so "patients with
/// a stage 4 pressure injury" means one wound that is both.
pub(crate) fn consolidate(model: &SemanticModel, plan: &mut QueryPlan) {
    let mut groups: Vec<(String, Vec<usize>)> = Vec::new();
    for (i, f) in plan.filters.iter().enumerate() {
        let (Constraint::Compare { attribute, .. }
        | Constraint::InSet { attribute, .. }
        | Constraint::Between { attribute, .. }) = f
        else {
            continue;
        };
        let Some((e, _)) = split_qualified(attribute) else {
            continue;
        };
        if e == plan.entity {
            continue;
        }
        let many = model
            .join_path(&plan.entity, e)
            .is_some_and(|p| p.iter().any(|s| !s.forward));
        if !many {
            continue;
        }
        match groups.iter_mut().find(|(g, _)| g == e) {
            Some((_, v)) => v.push(i),
            None => groups.push((e.to_owned(), vec![i])),
        }
    }
    let mut remove: Vec<usize> = Vec::new();
    for (_, idx) in groups.iter().filter(|(_, v)| v.len() >= 2) {
        let of: Vec<Constraint> = idx.iter().map(|&i| plan.filters[i].clone()).collect();
        plan.filters[idx[0]] = Constraint::All { of };
        remove.extend(idx.iter().skip(1));
    }
    remove.sort_unstable();
    for i in remove.into_iter().rev() {
        plan.filters.remove(i);
    }
}

/// Adds a filter, replacing filters on the same attribute when `replace` is set.
pub(crate) fn add_filter(plan: &mut QueryPlan, c: Constraint, replace: bool) {
    if plan.filters.contains(&c) {
        return;
    }
    if replace {
        let attrs: Vec<String> = c.attributes().into_iter().map(str::to_owned).collect();
        if !attrs.is_empty() {
            plan.filters
                .retain(|f| !f.attributes().iter().any(|a| attrs.iter().any(|x| x == a)));
        }
    }
    plan.filters.push(c);
}

/// The time range for an entity or an explicit dimension.
pub(crate) fn time_range(start: NaiveDate, end: NaiveDate, attribute: String) -> TimeRange {
    TimeRange {
        attribute,
        start,
        end,
    }
}

/// Sorts: the ranking order of a ranked plan.
pub(crate) fn rank_order(order: SortOrder) -> Vec<OrderBy> {
    vec![OrderBy {
        key: OrderKey::Metric { index: 0 },
        order,
    }]
}

/// The grain of a trend when none was said.
pub(crate) const DEFAULT_GRAIN: Grain = Grain::Month;

// =====================================================================================
// Building the plan from a reading and the chosen interpretations
// =====================================================================================

/// Builds the plan. `chosen[i]` is the interpretation of `det.candidates[i]`.
pub(crate) fn build(
    ctx: &Ctx<'_>,
    r: &Reading,
    det: &super::ambiguity::Detected,
    chosen: &[Chosen],
) -> QueryPlan {
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
    // "average pain at the last visit": each wound's latest value
    if r.visit_hint == Some(true)
        && let Some(a) = plan.metrics.first().and_then(|m| m.attribute.clone())
        && a.starts_with("assessments.")
        && latest_of(model, &a).is_some()
    {
        apply_change(
            model,
            &mut plan,
            &PlanChange::ChooseAggregation {
                aggregation: Aggregation::Latest,
            },
        );
    }

    // groupings
    for (i, d) in r.dims.iter().enumerate() {
        let attr = match &d.spec {
            DimSpec::Attribute(a) => Some(a.clone()),
            DimSpec::ColumnTerm { .. } => attr_for(&Slot::Dimension(i)),
        };
        if let Some(a) = attr {
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
    if r.intent == Intent::Trend || r.grain.is_some() && r.dims.is_empty() {
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
            positioned.push((c.first, comparison_constraint(model, c, &a)));
        } else if let Some(Chosen::Custom(k)) = choice(&Slot::Comparison(i)) {
            positioned.push((c.first, k.clone()));
        }
    }
    for (c, a) in &det.direct {
        positioned.push((usize::MAX / 2, anchor(model, c.clone(), a)));
    }
    let mut changes: Vec<PlanChange> = Vec::new();
    for (cand, ch) in det.candidates.iter().zip(chosen) {
        let at = cand.at.unwrap_or(usize::MAX / 2);
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
    // share: what comes after "are/that/who" is the condition
    if let (Some(split), Some(m)) = (r.share_from, plan.metrics.first_mut())
        && m.agg == MeasureAgg::Share
        && m.condition.is_none()
    {
        let (cond, rest): (Vec<_>, Vec<_>) = positioned
            .into_iter()
            .partition(|(at, _)| *at >= split && *at != usize::MAX / 2);
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
        apply_rank(model, &mut plan, r, rank);
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
        if let Some(a) = a
            && !plan.columns.contains(&a)
        {
            plan.columns.push(a);
        }
    }

    for change in &changes {
        apply_change(model, &mut plan, change);
    }
    normalise_intent(model, &mut plan);
    consolidate(model, &mut plan);
    plan
}

fn apply_rank(model: &SemanticModel, plan: &mut QueryPlan, r: &Reading, rank: &RankSpec) {
    let singular_which = r.pieces.iter().any(|p| {
        p.kind == PieceKind::Entity
            && !p.text.is_empty()
            && !p.text.to_lowercase().ends_with('s')
            && rank.subject.as_deref() == Some(p.target.as_str())
    });
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
        }
        RankKey::Attribute(a) => {
            let a = match split_qualified(a) {
                Some(("assessments", _)) if plan.entity == "wounds" => {
                    latest_of(model, a).unwrap_or_else(|| a.clone())
                }
                _ => a.clone(),
            };
            plan.metrics.clear();
            plan.dimensions.clear();
            plan.order = vec![OrderBy {
                key: OrderKey::Attribute { attribute: a },
                order: rank.order,
            }];
            plan.limit = Some(rank.n.unwrap_or(10));
            plan.intent = Intent::List;
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

/// Makes intent, metrics and groupings agree.
pub(crate) fn normalise_intent(model: &SemanticModel, plan: &mut QueryPlan) {
    let has_time_dim = plan
        .dimensions
        .iter()
        .any(|d| matches!(d, Dimension::Time { .. }));
    match plan.intent {
        Intent::List => {
            if plan.dimensions.is_empty()
                && let Some(m) = plan.metrics.first()
                && m.agg == MeasureAgg::Count
                && let Some(c) = m.condition.clone()
            {
                add_filter(plan, c, false);
            }
            if !plan.dimensions.is_empty() {
                plan.intent = if has_time_dim {
                    Intent::Trend
                } else {
                    Intent::GroupBy
                };
                if plan.metrics.is_empty() {
                    plan.metrics.push(count_metric(model, &plan.entity));
                }
            } else {
                plan.metrics.clear();
            }
        }
        Intent::Count | Intent::Aggregate => {
            if plan.metrics.is_empty() {
                plan.metrics.push(count_metric(model, &plan.entity));
            }
            if !plan.dimensions.is_empty() {
                plan.intent = if has_time_dim {
                    Intent::Trend
                } else {
                    Intent::GroupBy
                };
            } else if plan.intent == Intent::Count
                && plan.metrics.first().is_some_and(|m| m.agg != MeasureAgg::Count)
            {
                plan.intent = Intent::Aggregate;
            } else if plan.intent == Intent::Aggregate
                && plan
                    .metrics
                    .first()
                    .is_some_and(|m| m.agg == MeasureAgg::Count && m.attribute.is_none())
            {
                plan.intent = Intent::Count;
            }
        }
        Intent::GroupBy => {
            if plan.metrics.is_empty() {
                plan.metrics.push(count_metric(model, &plan.entity));
            }
            if plan.dimensions.is_empty() {
                plan.intent =
                    if plan.metrics[0].agg == MeasureAgg::Count && plan.metrics[0].attribute.is_none() {
                        Intent::Count
                    } else {
                        Intent::Aggregate
                    };
            } else if has_time_dim && plan.dimensions.len() == 1 {
                plan.intent = Intent::Trend;
            }
        }
        Intent::Trend => {
            if plan.metrics.is_empty() {
                plan.metrics.push(count_metric(model, &plan.entity));
            }
            if !has_time_dim {
                plan.intent = if plan.dimensions.is_empty() {
                    Intent::Aggregate
                } else {
                    Intent::GroupBy
                };
            }
        }
        Intent::Compare => {
            if plan.metrics.is_empty() {
                plan.metrics.push(count_metric(model, &plan.entity));
            }
            if plan.dimensions.is_empty() {
                plan.intent = Intent::Aggregate;
            }
        }
        Intent::Rank => {
            if plan
                .order
                .iter()
                .any(|o| matches!(o.key, OrderKey::Attribute { .. }))
            {
                // rows by an attribute: a sorted list
                plan.intent = Intent::List;
                plan.metrics.clear();
                plan.dimensions.clear();
            } else if plan.order.is_empty() {
                if !plan.metrics.is_empty() && !plan.dimensions.is_empty() {
                    plan.order = rank_order(SortOrder::Desc);
                } else if plan.metrics.is_empty() {
                    // nothing to rank by yet: a list (the ranking question picks a key)
                    plan.intent = Intent::List;
                } else {
                    plan.intent = Intent::Aggregate;
                }
            }
            if plan.limit.is_none() && !plan.order.is_empty() {
                plan.limit = Some(10);
            }
        }
    }
    if plan.intent != Intent::Rank {
        plan.order.retain(|o| {
            matches!(o.key, OrderKey::Metric { .. }) && !plan.metrics.is_empty()
                || matches!(o.key, OrderKey::Attribute { .. })
        });
    }
    if plan.intent == Intent::List {
        plan.order.retain(|o| matches!(o.key, OrderKey::Attribute { .. }));
    }
}
