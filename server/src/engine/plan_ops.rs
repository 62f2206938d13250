//! Typed plan operations the stages share: where a choice goes (`Slot`) and what was
//! chosen (`Chosen`), metrics for measures and aggregates, labels, anchoring a term's
//! constraint to the entity it modifies, plan changes, time windows, comparison
//! constraints, negation, the wound-level "latest"/"first" attributes of a per-visit one,
//! grouping one-to-many filters into one `all`, and making intent, metrics and groupings
//! agree.
//!
//! Pure. Only model names and typed literals enter a plan, never question text.

use chrono::NaiveDate;

use crate::semantic::{
    Aggregation, AttributeRole, AttributeType, CompareOp, Constraint, Derived, Grain, MeasureAgg, PlanChange,
    SemanticModel, SortOrder, Span, SpanUnit, Value, split_qualified, unit_symbol,
};

use super::link;
use super::plan::{Dimension, Intent, Metric, OrderBy, OrderKey, QueryPlan, TimeRange};
use super::reading::Cmp;

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
            condition,
        } => Constraint::RelatedCount {
            per: Some(anchor.to_owned()),
            related,
            op,
            value,
            within,
            condition,
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
    // a comparison, set or range only (a negation was anchored member by member)
    if matches!(c, Constraint::Not { .. }) {
        return c;
    }
    c.on_attribute(&|a| Some(base(a).unwrap_or_else(|| a.to_owned())))
        .unwrap_or(c)
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
    // "average" read as the mean it already is: nothing to change (the metric's attribute
    // may still be a column word's, settled by its own choice)
    if matches!(
        (aggregation, metric.agg),
        (Aggregation::Mean, MeasureAgg::Avg) | (Aggregation::Median, MeasureAgg::Median)
    ) {
        return;
    }
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
                // the largest latest value stays the largest ("max pain level of DFUs")
                match metric.agg {
                    MeasureAgg::Median | MeasureAgg::Min | MeasureAgg::Max => metric.agg,
                    _ => MeasureAgg::Avg,
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
    // "wounds healed in 2025 vs wounds healed in 2026": the same figure said twice is one
    // column (the periods are its rows)
    let mut seen: Vec<(MeasureAgg, Option<String>, Option<Constraint>)> = Vec::new();
    let before = plan.metrics.len();
    plan.metrics.retain(|m| {
        let key = (m.agg, m.attribute.clone(), m.condition.clone());
        let fresh = !seen.contains(&key);
        seen.push(key);
        fresh
    });
    if plan.metrics.len() < before {
        // sort keys naming a metric by its place keep only the first ones
        let n = plan.metrics.len() as u32;
        plan.order
            .retain(|o| !matches!(o.key, OrderKey::Metric { index } if index >= n));
    }
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

/// The wound-level "latest" attribute reading a per-visit attribute.
pub(crate) fn latest_of(model: &SemanticModel, per_visit: &str) -> Option<String> {
    derived_of(model, per_visit, true)
}

/// The per-visit attribute a record's first or latest value reads (`wounds.first_tissue`
/// → `assessments.tissue_type`); any other attribute as it is.
pub(crate) fn per_visit_base(model: &SemanticModel, attribute: &str) -> String {
    match model
        .attribute(attribute)
        .and_then(|x| x.attribute.derived.clone())
    {
        Some(Derived::First { attribute, .. } | Derived::Latest { attribute, .. }) => attribute,
        _ => attribute.to_owned(),
    }
}

/// The wound-level "first" attribute reading a per-visit attribute.
pub(crate) fn first_of(model: &SemanticModel, per_visit: &str) -> Option<String> {
    derived_of(model, per_visit, false)
}

/// The record-level first value of the measurement a column term names ("size" → the
/// initial area), from its default option first.
pub(crate) fn term_first_of(model: &SemanticModel, term: usize) -> Option<String> {
    let t = model.terms.get(term)?;
    let mut options: Vec<&crate::semantic::TermOption> = t.options.iter().collect();
    options.sort_by_key(|o| !o.default);
    options.into_iter().find_map(|o| match &o.change {
        Some(PlanChange::ChooseAttribute { attribute }) => {
            let base = match model
                .attribute(attribute)
                .and_then(|r| r.attribute.derived.clone())
            {
                Some(Derived::Latest { attribute, .. }) => attribute,
                _ => attribute.clone(),
            };
            first_of(model, &base)
        }
        _ => None,
    })
}

/// A record's latest value read at its first visit instead (`wounds.latest_tissue` →
/// `wounds.first_tissue`), when the model keeps both.
pub(crate) fn first_for_latest(model: &SemanticModel, attribute: &str) -> Option<String> {
    match model.attribute(attribute)?.attribute.derived.as_ref()? {
        Derived::Latest { attribute, .. } => first_of(model, attribute),
        _ => None,
    }
}

/// What a dictionary term says of a record's first visit ("necrotic at their first
/// assessment" → `first_tissue = necrotic`): its default reading, else its first reading,
/// whose condition is on latest values the model also keeps at the first visit. Readings
/// of a window or of the record's whole history have no first-visit counterpart.
pub(crate) fn term_at_first_visit(model: &SemanticModel, term: usize) -> Option<Constraint> {
    let t = model.terms.get(term)?;
    let mut options: Vec<&crate::semantic::TermOption> = t.options.iter().collect();
    options.sort_by_key(|o| !o.default);
    options.into_iter().find_map(|o| {
        o.constraint
            .as_ref()?
            .on_attribute(&|a| first_for_latest(model, a))
    })
}

fn derived_of(model: &SemanticModel, per_visit: &str, latest: bool) -> Option<String> {
    let wounds = model.entity("wounds")?;
    wounds
        .attributes
        .iter()
        .find(|a| match &a.derived {
            Some(Derived::Latest { attribute, .. }) if latest => attribute == per_visit,
            Some(Derived::First { attribute, .. }) if !latest => attribute == per_visit,
            _ => false,
        })
        .map(|a| format!("wounds.{}", a.name))
        .or_else(|| {
            if latest || per_visit != "assessments.area" {
                None
            } else {
                Some("wounds.initial_area".into())
            }
        })
}

pub(crate) fn intent_name(i: Intent) -> &'static str {
    match i {
        Intent::List => "list",
        Intent::Count => "count",
        Intent::Aggregate => "aggregate",
        Intent::GroupBy => "group_by",
        Intent::Rank => "rank",
        Intent::Trend => "trend",
        Intent::Compare => "compare",
    }
}

/// Negates a constraint: wrapped in `not`, which across a one-to-many step means "no
/// related row matches" ("patients who never had a pressure injury", "none of their wounds
/// was infected"). A negated boolean of the plan's own rows (or of a row they belong to)
/// becomes the other value once the plan's entity is known ([`fold_negations`]).
pub(crate) fn negate(c: Constraint, negated: bool) -> Constraint {
    if !negated {
        return c;
    }
    match c {
        Constraint::Not { of } => *of,
        other => Constraint::Not { of: Box::new(other) },
    }
}

/// True when `attribute` lies across a one-to-many step from `from` ("patients" →
/// `wounds.etiology`): said with "never"/"no"/"none of", it means no related row matches.
pub(crate) fn across_many(model: &SemanticModel, from: Option<&str>, attribute: &str) -> bool {
    let (Some(from), Some((e, _))) = (from, split_qualified(attribute)) else {
        return false;
    };
    e != from
        && model
            .join_path(from, e)
            .is_some_and(|p| p.iter().any(|s| !s.forward))
}

/// `not (flag = yes)` on the plan's own rows, or on a row each belongs to, is `flag = no`;
/// across a one-to-many step it stays a `not` ("none of their wounds was infected": no
/// related row is flagged), never "at least one related row that is not" — unless
/// something else is said of the same related rows ("patients with a DFU that is not
/// infected": one wound, both).
pub(crate) fn fold_negations(model: &SemanticModel, plan: &mut QueryPlan) {
    let from = plan.entity.clone();
    let positive: Vec<String> = plan
        .filters
        .iter()
        .filter(|f| !matches!(f, Constraint::Not { .. }))
        .flat_map(|f| f.attributes())
        .filter(|a| across_many(model, Some(&from), a))
        .filter_map(|a| split_qualified(a).map(|(e, _)| e.to_owned()))
        .collect();
    let mut folded = false;
    for f in &mut plan.filters {
        folded |= fold_negation(model, &from, &positive, f);
    }
    for m in &mut plan.metrics {
        if let Some(c) = &mut m.condition {
            fold_negation(model, &from, &positive, c);
        }
    }
    if folded {
        consolidate(model, plan);
    }
}

fn fold_negation(model: &SemanticModel, from: &str, positive: &[String], c: &mut Constraint) -> bool {
    match c {
        Constraint::Not { of } => {
            if let Constraint::Compare {
                attribute,
                op: CompareOp::Eq,
                value: Value::Bool(b),
                unit,
            } = of.as_ref()
            {
                let same_rows =
                    split_qualified(attribute).is_some_and(|(e, _)| positive.iter().any(|p| p == e));
                if !across_many(model, Some(from), attribute) || same_rows {
                    *c = Constraint::Compare {
                        attribute: attribute.clone(),
                        op: CompareOp::Eq,
                        value: Value::Bool(!b),
                        unit: unit.clone(),
                    };
                    return same_rows;
                }
            }
            false
        }
        Constraint::All { of } | Constraint::Any { of } => {
            let mut any = false;
            for m in of.iter_mut() {
                any |= fold_negation(model, from, positive, m);
            }
            any
        }
        _ => false,
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
            if plan.limit.is_none() && plan.limit_per_group.is_none() && !plan.order.is_empty() {
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

/// "clinics with more than 200 patients registered", "clinicians with fewer than 1000
/// assessments": a list kept by a count of each record's related rows shows that count
/// beside each record, so the figure the rows were chosen by is visible.
pub(crate) fn show_counted(model: &SemanticModel, plan: &mut QueryPlan) {
    if plan.intent != Intent::List {
        return;
    }
    let mut counted = Vec::new();
    for f in &plan.filters {
        f.visit(&mut |c| match c {
            Constraint::Compare { attribute, .. } | Constraint::Between { attribute, .. }
                if split_qualified(attribute).is_some_and(|(e, _)| e == plan.entity)
                    && crate::engine::link::counts_related(model, attribute).is_some() =>
            {
                counted.push(attribute.clone());
            }
            _ => {}
        });
    }
    for a in counted {
        if !plan.columns.contains(&a) {
            plan.columns.push(a);
        }
    }
}

/// "clinics with over 150 open wounds", "clinicians with more than 200 assessments in
/// 2025": records kept by a count of their related rows that match a condition (which no
/// attribute of theirs holds) are the related rows counted by record, the groups kept by
/// that count — so the answer shows each record's count. Only when the count is at least
/// one (a record without such rows is no group), the other filters are the records' own,
/// and the related rows reach the record by the path the count was taken along.
pub(crate) fn related_count_as_groups(model: &SemanticModel, plan: &mut QueryPlan, listed: bool) {
    // "list clinics with …" asked for the records themselves
    if listed
        || plan.intent != Intent::List
        || !plan.dimensions.is_empty()
        || !plan.metrics.is_empty()
        || !plan.order.is_empty()
        || !plan.columns.is_empty()
        || plan.limit.is_some()
        || plan.time_range.is_some()
        || plan.having.is_some()
    {
        return;
    }
    let entity = plan.entity.clone();
    let counted: Vec<usize> = plan
        .filters
        .iter()
        .enumerate()
        .filter(|(_, f)| matches!(f, Constraint::RelatedCount { .. }))
        .map(|(i, _)| i)
        .collect();
    let [i] = counted.as_slice() else {
        return;
    };
    let Constraint::RelatedCount {
        per,
        related,
        op,
        value,
        within: None,
        condition,
    } = &plan.filters[*i]
    else {
        return;
    };
    // a number of rows that match a condition ("over 150 open wounds"); a bare "with
    // wounds" is whether any exist
    let at_least_one = matches!((op, *value), (CompareOp::Gt, v) if v >= 1)
        || matches!((op, *value), (CompareOp::Gte, v) if v >= 2);
    if !at_least_one || condition.is_none() || per.as_deref().is_some_and(|p| p != entity) {
        return;
    }
    let own = plan.filters.iter().enumerate().all(|(j, f)| {
        j == *i
            || f.attributes()
                .iter()
                .all(|a| split_qualified(a).is_some_and(|(e, _)| e == entity))
    });
    let Some(e) = model.entity(&entity) else {
        return;
    };
    let same_path = match (
        model.join_path(related, &entity),
        model.join_path(&entity, related),
    ) {
        (Some(up), Some(down)) => {
            up.iter().all(|s| s.forward)
                && up.len() == down.len()
                && up
                    .iter()
                    .zip(down.iter().rev())
                    .all(|(a, b)| std::ptr::eq(a.join, b.join))
        }
        _ => false,
    };
    if !own || !same_path {
        return;
    }
    let label = format!("{}.{}", e.name, e.display_attribute.as_deref().unwrap_or(&e.key));
    let (op, value, related, condition) = (*op, *value, related.clone(), condition.clone());
    plan.filters.remove(*i);
    if let Some(c) = condition {
        plan.filters.insert(0, *c);
    }
    plan.entity = related.clone();
    plan.intent = Intent::GroupBy;
    plan.dimensions = vec![Dimension::Attribute { attribute: label }];
    plan.metrics = vec![count_metric(model, &related)];
    plan.having = Some(super::plan::Having {
        op,
        value: value as f64,
    });
}

/// Moves an ambiguity's best guess off an option whose condition contradicts one of the
/// previous plan's (`attribute = v` where it kept `attribute = w`) onto the first option
/// that does not, when there is one.
pub(crate) fn prefer_consistent_default(options: &mut [super::AmbiguityOption], previous: &QueryPlan) {
    let kept = |attribute: &str| -> Option<Vec<Value>> {
        previous.filters.iter().find_map(|f| match f {
            Constraint::Compare {
                attribute: a,
                op: CompareOp::Eq,
                value,
                ..
            } if a == attribute => Some(vec![value.clone()]),
            Constraint::InSet { attribute: a, values } if a == attribute => Some(values.clone()),
            _ => None,
        })
    };
    let contradicts = |o: &super::AmbiguityOption| match &o.effect.constraint {
        Some(Constraint::Compare {
            attribute,
            op: CompareOp::Eq,
            value,
            ..
        }) => kept(attribute).is_some_and(|vs| !vs.contains(value)),
        _ => false,
    };
    let Some(d) = options.iter().position(|o| o.default) else {
        return;
    };
    if !contradicts(&options[d]) {
        return;
    }
    if let Some(n) = options
        .iter()
        .position(|o| !contradicts(o) && o.effect.constraint.is_some())
    {
        options[d].default = false;
        options[n].default = true;
    }
}

/// "for each discipline, how many distinct patients did they see", "how many different
/// patients has each wound nurse assessed": records counted by a grouping that reaches them
/// only through their visits (a patient has many assessments, each by one clinician) are
/// counted once each among those visits — `COUNT(DISTINCT patient)` over the assessments —
/// never multiplied and never refused as a fan-out. A period said of the counted records'
/// visit dates ("seen in 2026") is then the visits' own date.
pub(crate) fn count_through_visits(model: &SemanticModel, plan: &mut QueryPlan) {
    let counted = plan.entity.clone();
    let plain_count = matches!(plan.metrics.as_slice(), [m] if m.agg == MeasureAgg::Count && m.attribute.is_none() && m.condition.is_none());
    if !plain_count || plan.dimensions.is_empty() {
        return;
    }
    let owner = |a: &str| crate::semantic::split_qualified(a).map(|(o, _)| o.to_owned());
    let owners: Vec<String> = plan
        .dimensions
        .iter()
        .filter_map(|d| match d {
            Dimension::Attribute { attribute } | Dimension::Time { attribute, .. } => owner(attribute),
        })
        .collect();
    if owners.iter().all(|o| model.has_one(&counted, o)) {
        return;
    }
    let Some(key) = model.entity(&counted).map(|e| format!("{counted}.{}", e.key)) else {
        return;
    };
    // the visits: one row each, reaching the counted record and every grouping
    let Some(child) = model.entities.iter().map(|c| c.name.clone()).find(|c| {
        *c != counted
                && model.has_many(&counted, c)
                && owners.iter().all(|o| model.has_one(c, o))
                // the records of events themselves, with nothing below them
                && !model.entities.iter().any(|x| model.has_many(c, &x.name))
    }) else {
        return;
    };
    if let Some(t) = &mut plan.time_range {
        let visit_date = model.attribute(&t.attribute).is_some_and(|r| {
            matches!(
                &r.attribute.derived,
                Some(Derived::Latest { attribute, .. } | Derived::First { attribute, .. })
                    if owner(attribute).as_deref() == Some(child.as_str())
            )
        });
        if visit_date {
            let Some(d) = model.default_time_dimension(&child) else {
                return;
            };
            t.attribute = d.attribute.clone();
        } else if !owner(&t.attribute).is_some_and(|o| model.has_one(&child, &o)) {
            return;
        }
    }
    let label = plan.metrics[0].label.clone();
    plan.entity = child;
    plan.metrics = vec![Metric {
        agg: MeasureAgg::CountDistinct,
        attribute: Some(key),
        condition: None,
        label,
    }];
}
