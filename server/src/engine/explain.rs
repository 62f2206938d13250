//! Stage 10 — explain: the one-sentence restatement of a plan in plain English
//! ("Counting wounds with latest area > 25 cm², assessed in the last 30 days, by
//! clinic.") and readable forms of constraints for assumption badges.
//!
//! Works from the typed plan only (and the model's labels), so what is shown is what
//! will be computed. Pure.

use chrono::{Datelike, Duration, NaiveDate};

use crate::semantic::{
    CompareOp, Constraint, MeasureAgg, SemanticModel, Span, SpanUnit, Value, split_qualified, unit_symbol,
};

use super::plan::{Dimension, Intent, Metric, OrderBy, OrderKey, QueryPlan};
use super::plan_ops::{attribute_label, plural};
use crate::semantic::{AttributeType, SortOrder};

fn entity_plural(model: &SemanticModel, entity: &str) -> String {
    model
        .entity(entity)
        .map_or_else(|| entity.to_owned(), |e| plural(&e.label))
}

/// A readable name for an attribute, seen from the plan's entity.
fn attr_name(model: &SemanticModel, plan_entity: &str, attribute: &str) -> String {
    let Some((e, a)) = split_qualified(attribute) else {
        return attribute.to_owned();
    };
    let base = match model.attribute(attribute).map(|r| r.attribute.role) {
        // a reference names the record it points to: a patient's clinic
        Some(crate::semantic::AttributeRole::ForeignKey) => model
            .joins
            .iter()
            .find(|j| j.from == attribute)
            .and_then(|j| model.entity(j.to_entity()))
            .or_else(|| model.entity(e))
            .map_or_else(|| e.to_owned(), |x| x.label.to_lowercase()),
        Some(crate::semantic::AttributeRole::Label) => model
            .entity(e)
            .map_or_else(|| e.to_owned(), |x| x.label.to_lowercase()),
        _ => attribute_label(a),
    };
    if e == plan_entity
        || matches!(
            model.attribute(attribute).map(|r| r.attribute.role),
            Some(crate::semantic::AttributeRole::Label)
        )
    {
        base
    } else {
        let owner = model
            .entity(e)
            .map_or_else(|| e.to_owned(), |x| x.label.to_lowercase());
        format!("{owner} {base}")
    }
}

fn value_text(model: &SemanticModel, attribute: &str, v: &Value) -> String {
    if let Some(label) = model.value_label(attribute, v) {
        return label.to_owned();
    }
    match v {
        Value::Text(s) => s.replace('_', " "),
        Value::Real(r) => trim_number(*r),
        other => other.to_string(),
    }
}

fn trim_number(r: f64) -> String {
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r}")
    }
}

fn span_text(s: Span) -> String {
    let unit = match s.unit {
        SpanUnit::Days => "day",
        SpanUnit::Weeks => "week",
        SpanUnit::Months => "month",
        SpanUnit::Years => "year",
    };
    if s.n == 1 {
        unit.to_owned()
    } else {
        format!("{} {unit}s", s.n)
    }
}

fn unit_suffix(unit: Option<&str>) -> String {
    match unit {
        Some("percent") => "%".into(),
        Some("points") => String::new(),
        Some(u) => format!(" {}", unit_symbol(u)),
        None => String::new(),
    }
}

fn time_dim_label(model: &SemanticModel, dimension: Option<&str>) -> String {
    dimension
        .and_then(|d| model.time_dimension(d))
        .map_or_else(|| "date".into(), |d| d.label.to_lowercase())
}

/// A readable form of a constraint ("latest area > 25 cm²").
pub fn describe(model: &SemanticModel, plan_entity: &str, c: &Constraint) -> String {
    match c {
        Constraint::Compare {
            attribute,
            op,
            value,
            unit,
        } => {
            let name = attr_name(model, plan_entity, attribute);
            match (op, value) {
                (CompareOp::Eq, Value::Bool(true)) if yes_no(&name) => format!("{name}: yes"),
                (CompareOp::Eq, Value::Bool(false)) | (CompareOp::Ne, Value::Bool(true)) if yes_no(&name) => {
                    format!("{name}: no")
                }
                (CompareOp::Eq, Value::Bool(true)) => format!("with {name}"),
                (CompareOp::Eq, Value::Bool(false)) | (CompareOp::Ne, Value::Bool(true)) => {
                    format!("without {name}")
                }
                (CompareOp::Eq, v @ Value::Text(_)) => format!("{name} {}", value_text(model, attribute, v)),
                (CompareOp::Ne, v @ Value::Text(_)) => {
                    format!("{name} not {}", value_text(model, attribute, v))
                }
                (op, v) => format!(
                    "{name} {} {}{}",
                    op.symbol(),
                    value_text(model, attribute, v),
                    unit_suffix(unit.as_deref())
                ),
            }
        }
        Constraint::Between {
            attribute,
            min,
            max,
            unit,
        } => format!(
            "{} between {} and {}{}",
            attr_name(model, plan_entity, attribute),
            value_text(model, attribute, min),
            value_text(model, attribute, max),
            unit_suffix(unit.as_deref())
        ),
        Constraint::InSet { attribute, values } => {
            // A single yes/no value reads as the comparison does ("infected: yes").
            if let [v @ Value::Bool(_)] = values.as_slice() {
                let c = Constraint::Compare {
                    attribute: attribute.clone(),
                    op: CompareOp::Eq,
                    value: v.clone(),
                    unit: None,
                };
                return describe(model, plan_entity, &c);
            }
            let vs: Vec<String> = values.iter().map(|v| value_text(model, attribute, v)).collect();
            format!("{} {}", attr_name(model, plan_entity, attribute), join_or(&vs))
        }
        Constraint::IsNull { attribute } => format!("no {}", attr_name(model, plan_entity, attribute)),
        Constraint::NotNull { attribute } => format!("with a {}", attr_name(model, plan_entity, attribute)),
        Constraint::TimeWindow { dimension, last } => {
            format!(
                "{} in the last {}",
                time_dim_label(model, dimension.as_deref()),
                span_text(*last)
            )
        }
        Constraint::OlderThan { dimension, age } => {
            format!(
                "{} more than {} ago",
                time_dim_label(model, dimension.as_deref()),
                span_text(*age)
            )
        }
        Constraint::Change {
            attribute,
            over,
            op,
            pct,
            ..
        } => {
            let name = attr_name(model, plan_entity, attribute);
            if *pct == 0.0 {
                let word = match op {
                    CompareOp::Gt | CompareOp::Gte => "grew",
                    CompareOp::Lt | CompareOp::Lte => "shrank",
                    _ => "changed",
                };
                format!("{name} {word} over {}", span_text(*over))
            } else {
                format!(
                    "{name} change {} {}% over {}",
                    op.symbol(),
                    trim_number(*pct),
                    span_text(*over)
                )
            }
        }
        // "no assessment where (not high exudate)": high exudate at every assessment
        Constraint::RelatedCount {
            related,
            op: CompareOp::Eq,
            value: 0,
            within: None,
            condition: Some(c),
            ..
        } if matches!(&**c, Constraint::Not { .. }) => {
            let Constraint::Not { of } = &**c else {
                unreachable!("matched above")
            };
            format!(
                "{} at every {}",
                describe(model, related, of),
                model
                    .entity(related)
                    .map_or_else(|| related.clone(), |e| e.label.to_lowercase())
            )
        }
        Constraint::RelatedCount {
            related,
            op,
            value,
            within,
            condition,
            ..
        } => {
            let rel = match condition {
                Some(c) => format!(
                    "{} ({})",
                    entity_plural(model, related),
                    describe(model, related, c)
                ),
                None => entity_plural(model, related),
            };
            let base = match (op, value) {
                (CompareOp::Eq, 0) => format!("no {rel}"),
                (op, v) => format!("{} {v} {rel}", op.symbol()),
            };
            match within {
                Some(w) => format!("{base} in the last {}", span_text(*w)),
                None => base,
            }
        }
        Constraint::All { of } => {
            // "an assessment between 2026-07-01 and 2026-09-30 with wound etiology Burn":
            // a period of related rows' own date said once, as the rows it dates
            let dated = of.iter().position(|c| match c {
                Constraint::Between { attribute, .. } => split_qualified(attribute).is_some_and(|(e, _)| {
                    e != plan_entity
                        && model
                            .default_time_dimension(e)
                            .is_some_and(|d| d.attribute == *attribute)
                }),
                _ => false,
            });
            if let Some(i) = dated
                && let Constraint::Between {
                    attribute, min, max, ..
                } = &of[i]
                && let Some((e, _)) = split_qualified(attribute)
            {
                let one = model
                    .entity(e)
                    .map_or_else(|| e.to_owned(), |x| x.label.to_lowercase());
                let rest: Vec<String> = of
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, c)| describe(model, plan_entity, c))
                    .collect();
                let period = format!(
                    "an {one} between {} and {}",
                    value_text(model, attribute, min),
                    value_text(model, attribute, max)
                );
                return if rest.is_empty() {
                    period
                } else {
                    format!("{period} with {}", join_and(&rest))
                };
            }
            let parts: Vec<String> = of.iter().map(|c| describe(model, plan_entity, c)).collect();
            join_and(&parts)
        }
        // a single member holds on related rows of its own: "a wound with etiology …"
        Constraint::Any { of } if of.len() == 1 => describe(model, plan_entity, &of[0]),
        Constraint::Any { of } => {
            let parts: Vec<String> = of.iter().map(|c| describe(model, plan_entity, c)).collect();
            format!("({})", join_or(&parts))
        }
        Constraint::Not { of } => match &**of {
            // "only ever assessed by wound nurses": no related row other than one value,
            // said as the value ("clinician discipline only Wound nurse")
            Constraint::Compare {
                attribute,
                op: CompareOp::Ne,
                value: v @ Value::Text(_),
                ..
            } if split_qualified(attribute)
                .and_then(|(e, _)| model.join_path(plan_entity, e))
                .is_some_and(|p| p.iter().any(|s| !s.forward)) =>
            {
                format!(
                    "{} only {}",
                    attr_name(model, plan_entity, attribute),
                    value_text(model, attribute, v)
                )
            }
            // "not (etiology Pressure injury)" reads as "etiology not Pressure injury"; of
            // related rows, "no wound with status Open"
            Constraint::Compare {
                attribute,
                op: CompareOp::Eq,
                value: v @ Value::Text(_),
                ..
            } => {
                let related = split_qualified(attribute)
                    .and_then(|(e, _)| model.join_path(plan_entity, e))
                    .is_some_and(|p| p.iter().any(|s| !s.forward));
                let name = attr_name(model, plan_entity, attribute);
                if related {
                    format!("no {name} {}", value_text(model, attribute, v))
                } else {
                    format!("{name} not {}", value_text(model, attribute, v))
                }
            }
            // of related rows: "no wound with infected: yes"
            other => match other
                .attributes()
                .first()
                .and_then(|a| split_qualified(a))
                .map(|(e, _)| e)
                .filter(|e| {
                    model
                        .join_path(plan_entity, e)
                        .is_some_and(|p| p.iter().any(|s| !s.forward))
                })
                .and_then(|e| model.entity(e))
            {
                Some(rel) => format!(
                    "no {} with {}",
                    rel.label.to_lowercase(),
                    describe(model, &rel.name, other)
                ),
                None => format!("not ({})", describe(model, plan_entity, other)),
            },
        },
    }
}

/// Yes/no columns named like adjectives or roles read better as "smoker: yes".
fn yes_no(name: &str) -> bool {
    name.ends_with("ed") || name.ends_with("er") || name.ends_with("signs")
}

fn join_with(parts: &[String], word: &str) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} {word} {last}", rest.join(", ")),
    }
}

fn join_and(parts: &[String]) -> String {
    join_with(parts, "and")
}

fn join_or(parts: &[String]) -> String {
    join_with(parts, "or")
}

/// "in 2025", "in March 2025", "in Q3 2025", "in the last 30 days", "on 3 June 2025",
/// "from … to …".
pub fn describe_range(start: NaiveDate, end: NaiveDate, today: NaiveDate) -> String {
    let last_day = end.pred_opt().unwrap_or(end);
    let tomorrow = today.succ_opt().unwrap_or(today);
    if start.ordinal() == 1 && end.ordinal() == 1 && end.year() == start.year() + 1 {
        return format!("in {}", start.year());
    }
    if start.ordinal() == 1 && end.ordinal() == 1 && end.year() == start.year() + 10 && start.year() % 10 == 0
    {
        return format!("in the {}s", start.year());
    }
    if start.day() == 1 && end.day() == 1 {
        let months = (end.year() - start.year()) * 12 + end.month() as i32 - start.month() as i32;
        if months == 1 {
            return format!("in {}", start.format("%B %Y"));
        }
        if months == 3 && (start.month() - 1).is_multiple_of(3) {
            return format!("in Q{} {}", (start.month() - 1) / 3 + 1, start.year());
        }
    }
    if end == tomorrow {
        let days = (today - start).num_days();
        if start.year() <= 1900 {
            return "at any time".into();
        }
        if start.day() == 1 && (today.day() != 1 || days > 366) {
            return format!("since {}", start.format("%-d %B %Y"));
        }
        if days % 7 == 0 && days / 7 <= 12 && days >= 7 {
            let w = days / 7;
            return if w == 1 {
                "in the last week".into()
            } else {
                format!("in the last {w} weeks")
            };
        }
        if start.day() == today.day() && days > 27 {
            let months = (today.year() - start.year()) * 12 + today.month() as i32 - start.month() as i32;
            if months % 12 == 0 {
                let y = months / 12;
                return if y == 1 {
                    "in the last year".into()
                } else {
                    format!("in the last {y} years")
                };
            }
            return if months == 1 {
                "in the last month".into()
            } else {
                format!("in the last {months} months")
            };
        }
        return format!("in the last {days} days");
    }
    if end - start == Duration::days(1) {
        return format!("on {}", start.format("%-d %B %Y"));
    }
    if start.year() <= 1900 {
        return format!("before {}", end.format("%-d %B %Y"));
    }
    format!(
        "from {} to {}",
        start.format("%-d %B %Y"),
        last_day.format("%-d %B %Y")
    )
}

fn time_phrase(model: &SemanticModel, attribute: &str) -> String {
    let dim = model
        .time_dimensions
        .iter()
        .find(|d| d.attribute == attribute)
        .map(|d| d.name.as_str());
    match dim {
        Some("onset") => "with onset".into(),
        Some("assessed") => "assessed".into(),
        Some("healed") => "healed".into(),
        Some("first_assessed") => "first assessed".into(),
        Some("first_visit") => "first seen".into(),
        Some("last_visit") => "last seen".into(),
        Some("birth") => "born".into(),
        _ => model
            .time_dimensions
            .iter()
            .find(|d| d.attribute == attribute)
            .map_or_else(
                || attribute_label(attribute.split('.').nth(1).unwrap_or(attribute)),
                |d| d.label.to_lowercase(),
            ),
    }
}

fn dim_name(model: &SemanticModel, plan: &QueryPlan, d: &Dimension) -> String {
    match d {
        Dimension::Attribute { attribute } => attr_name(model, &plan.entity, attribute),
        Dimension::Time { grain, .. } => grain.as_str().to_owned(),
    }
}

fn metric_phrase(m: &super::plan::Metric) -> String {
    let mut label = m.label.clone();
    if let Some(i) = label.find(" (") {
        label.truncate(i);
    }
    // an abbreviation keeps its capitals ("DFUs", "VLUs")
    let mut c = label.chars();
    let abbreviation = label.chars().nth(1).is_some_and(char::is_uppercase);
    match c.next() {
        Some(f) if !abbreviation => f.to_lowercase().collect::<String>() + c.as_str(),
        _ => label,
    }
}

/// The restatement of a plan: one sentence saying what will be computed.
pub fn restate(model: &SemanticModel, plan: &QueryPlan) -> String {
    // "the number of open wounds and the number of healed wounds": counts side by side,
    // each said by its own label
    let side_by_side = plan.metrics.len() > 1
        && plan
            .metrics
            .iter()
            .all(|m| m.agg == MeasureAgg::Count && m.attribute.is_none() && m.condition.is_some());
    let subject = if side_by_side {
        join_and(&plan.metrics.iter().map(metric_phrase).collect::<Vec<_>>())
    } else {
        entity_plural(model, &plan.entity)
    };
    let metric = plan.metrics.first();
    let is_count = metric.is_none_or(|m| m.agg == MeasureAgg::Count && m.attribute.is_none());
    let mut plan_filters = plan.filters.clone();
    if let Some(m) = metric
        && is_count
        && !side_by_side
        && let Some(c) = &m.condition
        && plan.intent != Intent::Rank
    {
        // "number of open wounds" reads as counting wounds that are open
        plan_filters.insert(0, c.clone());
    }
    let head = match plan.intent {
        Intent::Count => format!("Counting {subject}"),
        Intent::List | Intent::Rank
            if plan.limit.is_some()
                && plan
                    .order
                    .iter()
                    .any(|o| matches!(o.key, OrderKey::Attribute { .. })) =>
        {
            let (attr, order) = plan
                .order
                .iter()
                .find_map(|o| match &o.key {
                    OrderKey::Attribute { attribute } => Some((attribute.clone(), o.order)),
                    OrderKey::Metric { .. } => None,
                })
                .unwrap_or((String::new(), SortOrder::Desc));
            let dated = model.attribute_type(&attr) == Some(AttributeType::Date);
            let word = match (dated, order) {
                (true, SortOrder::Desc) => "latest",
                (true, SortOrder::Asc) => "earliest",
                (false, SortOrder::Desc) => "highest",
                (false, SortOrder::Asc) => "lowest",
            };
            let n = plan.limit.map_or_else(String::new, |n| format!("{n} "));
            // the records' own date ("the 5 most recent assessments"), not another date of
            // theirs ("the patients with the latest birth date" are not recent patients)
            let own_date = dated
                && model
                    .default_time_dimension(&plan.entity)
                    .is_some_and(|d| d.attribute == attr);
            match plan.offset.filter(|&o| o > 0 && plan.limit == Some(1)) {
                // "the 5 most recent assessments": the records' own date
                None if own_date && plan.limit != Some(1) => format!(
                    "Listing the {n}{} {subject}",
                    if order == SortOrder::Desc {
                        "most recent"
                    } else {
                        "earliest"
                    }
                ),
                Some(o) => format!(
                    "Listing the {} with the {}-{word} {}",
                    subject.trim_end_matches('s'),
                    ordinal(o + 1),
                    attr_name(model, &plan.entity, &attr)
                ),
                None if plan.limit == Some(1) => format!(
                    "Listing the {} with the {word} {}",
                    subject.trim_end_matches('s'),
                    attr_name(model, &plan.entity, &attr)
                ),
                None => format!(
                    "Listing the {n}{subject} with the {word} {}",
                    attr_name(model, &plan.entity, &attr)
                ),
            }
        }
        // "limit 15": the first rows of the list, in its own order
        Intent::List if plan.limit.is_some() && plan.order.is_empty() => {
            format!("Listing the first {} {subject}", plan.limit.unwrap_or_default())
        }
        Intent::List => format!("Listing {subject}"),
        Intent::Rank => {
            let per = plan
                .dimensions
                .first()
                .map(|d| dim_name(model, plan, d))
                .unwrap_or_else(|| subject.clone());
            let word = if plan.order.first().is_some_and(|o| o.order == SortOrder::Asc) {
                "Bottom"
            } else {
                "Top"
            };
            let n = plan
                .limit_per_group
                .or(plan.limit)
                .map_or_else(String::new, |n| format!(" {n}"));
            let mut by = metric.map_or_else(|| "count".to_owned(), metric_phrase);
            let mut dated_one: Option<String> = None;
            // "which clinician has the most recent assessment": the latest or earliest of
            // dated records is said as a date, not as "the highest assessed on"
            if let Some(m) = metric
                && let Some(a) = m.attribute.as_deref()
                && model.attribute_type(a) == Some(AttributeType::Date)
                && matches!(m.agg, MeasureAgg::Max | MeasureAgg::Min)
            {
                let owner = split_qualified(a).and_then(|(e, _)| model.entity(e));
                let dated_records = owner.filter(|e| {
                    e.default_time_dimension
                        .as_deref()
                        .and_then(|d| model.time_dimension(d))
                        .is_some_and(|d| d.attribute == a)
                });
                let what = dated_records
                    .map_or_else(|| attr_name(model, &plan.entity, a), |e| e.label.to_lowercase());
                let when = if m.agg == MeasureAgg::Max {
                    "most recent"
                } else {
                    "earliest"
                };
                if plan.limit_per_group.or(plan.limit) == Some(1) && plan.offset.is_none_or(|o| o == 0) {
                    let one = per.trim_end_matches('s');
                    dated_one = Some(format!("The {one} with the {when} {what}"));
                }
                by = format!("{when} {what}");
            }
            if let Some(head) = dated_one {
                head
            } else if plan.limit_per_group.or(plan.limit) == Some(1) {
                let most = if word == "Top" { "highest" } else { "lowest" };
                let one = per.trim_end_matches('s');
                match plan.offset.filter(|&o| o > 0) {
                    Some(o) => format!("The {one} with the {}-{most} {by}", ordinal(o + 1)),
                    None => format!("The {one} with the {most} {by}"),
                }
            } else {
                let per = if per.ends_with('s') { per } else { plural(&per) };
                format!("{word}{n} {per} by {by}")
            }
        }
        Intent::Compare => match metric {
            Some(m) if !is_count => format!("Comparing the {} of {subject}", metric_phrase(m)),
            _ => format!("Comparing the number of {subject}"),
        },
        _ => match metric {
            Some(m)
                if m.agg == MeasureAgg::Share
                    && m.condition.is_some()
                    && m.attribute.is_none()
                    && m.label.starts_with("Share") =>
            {
                format!("Share of {subject}")
            }
            // "how many distinct patients did each discipline see": the patients counted
            // once each across the visits that link them to the groups
            Some(Metric {
                agg: MeasureAgg::CountDistinct,
                attribute: Some(a),
                ..
            }) if split_qualified(a)
                .is_some_and(|(e, k)| e != plan.entity && model.entity(e).is_some_and(|x| x.key == k)) =>
            {
                let counted = split_qualified(a).map_or("", |(e, _)| e);
                format!(
                    "Counting different {} across {subject}",
                    entity_plural(model, counted)
                )
            }
            Some(m) if !is_count => format!("{} of {subject}", capitalise(&metric_phrase(m))),
            _ => format!("Counting {subject}"),
        },
    };
    let mut parts: Vec<String> = Vec::new();
    if !plan_filters.is_empty() {
        let fs: Vec<String> = plan_filters
            .iter()
            .map(|f| describe(model, &plan.entity, f))
            .collect();
        let joined = join_and(&fs);
        if joined.starts_with("with ") || joined.starts_with("without ") {
            parts.push(joined);
        } else {
            parts.push(format!("with {joined}"));
        }
    }
    if let Some(t) = &plan.time_range {
        parts.push(format!(
            "{} {}",
            time_phrase(model, &t.attribute),
            describe_range(t.start, t.end, plan.today)
        ));
    }
    let dims: Vec<String> = plan
        .dimensions
        .iter()
        .filter(|d| {
            !(plan.intent == Intent::Rank
                && matches!(d, Dimension::Attribute { .. })
                && plan.dimensions.first() == Some(*d))
        })
        .map(|d| dim_name(model, plan, d))
        .collect();
    if !dims.is_empty() && plan.limit_per_group.is_some() {
        // "for each care setting, the 2 most common etiologies": the ranking within each
        parts.push(format!("in each {}", join_and(&dims)));
    } else if !dims.is_empty() {
        parts.push(format!("by {}", join_and(&dims)));
    }
    if let Some(h) = plan.having {
        match plan.metrics.first() {
            Some(m) if m.agg != MeasureAgg::Count => {
                let op = match h.op {
                    CompareOp::Gt => "above",
                    CompareOp::Gte => "at least",
                    CompareOp::Lt => "below",
                    CompareOp::Lte => "at most",
                    CompareOp::Eq => "exactly",
                    CompareOp::Ne => "other than",
                };
                parts.push(format!(
                    "only groups whose {} is {op} {}",
                    metric_phrase(m),
                    trim_number(h.value)
                ));
            }
            _ => {
                let op = match h.op {
                    CompareOp::Gt => "more than",
                    CompareOp::Gte => "at least",
                    CompareOp::Lt => "fewer than",
                    CompareOp::Lte => "at most",
                    CompareOp::Eq => "exactly",
                    CompareOp::Ne => "other than",
                };
                parts.push(format!(
                    "only groups with {op} {} {subject}",
                    trim_number(h.value)
                ));
            }
        }
    }
    // an ordering of every row ("sorted by onset date, oldest first")
    if plan.limit.is_none()
        && plan.intent != Intent::Rank
        && let Some(o) = plan.order.first()
    {
        let ty = |a: &str| model.attribute_type(a);
        // a record's label ("patients.full_name") is its name, in the order of the alphabet
        let label = |a: &str| {
            a.split_once('.')
                .is_some_and(|(e, n)| model.entity(e).and_then(|e| e.display_attribute.as_deref()) == Some(n))
        };
        let own = |a: &str| a.split_once('.').is_some_and(|(e, _)| e == plan.entity);
        let key = |o: &OrderBy| match &o.key {
            OrderKey::Attribute { attribute } => format!(
                "{}, {}",
                if label(attribute) && own(attribute) {
                    "name".to_owned()
                } else {
                    attr_name(model, &plan.entity, attribute)
                },
                match (ty(attribute), o.order) {
                    (Some(AttributeType::Date), SortOrder::Asc) => "oldest first",
                    (Some(AttributeType::Date), SortOrder::Desc) => "newest first",
                    (Some(AttributeType::Text), SortOrder::Asc) => "A to Z",
                    (Some(AttributeType::Text), SortOrder::Desc) => "Z to A",
                    (_, SortOrder::Asc) => "lowest first",
                    (_, SortOrder::Desc) => "highest first",
                }
            ),
            OrderKey::Metric { .. } => String::new(),
        };
        parts.push(match &o.key {
            OrderKey::Attribute { .. } => format!("sorted by {}", key(o)),
            OrderKey::Metric { .. } => match o.order {
                SortOrder::Asc => "lowest first".to_owned(),
                SortOrder::Desc => "highest first".to_owned(),
            },
        });
        // "…, then by wound id": the further keys, each said
        for o in plan.order.iter().skip(1) {
            if matches!(o.key, OrderKey::Attribute { .. }) {
                parts.push(format!("then by {}", key(o)));
            }
        }
    }
    if plan.limit_ties {
        parts.push("and any tied with the last one".to_owned());
    }
    if let Some(places) = plan.round {
        parts.push(match places {
            0 => "rounded to whole numbers".to_owned(),
            1 => "rounded to 1 decimal".to_owned(),
            n => format!("rounded to {n} decimals"),
        });
    }
    if plan.intent == Intent::List && !plan.columns.is_empty() {
        let cols: Vec<String> = plan
            .columns
            .iter()
            .map(|c| attr_name(model, &plan.entity, c))
            .collect();
        parts.push(format!("showing {}", join_and(&cols)));
    }
    if let Some(m) = metric
        && m.agg == MeasureAgg::Share
        && m.label.starts_with("Share")
        && let Some(c) = &m.condition
    {
        parts.push(format!("that have {}", describe(model, &plan.entity, c)));
    }
    let mut out = head;
    if !parts.is_empty() {
        out.push(' ');
        out.push_str(&parts.join(", "));
    }
    out.push('.');
    out
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

/// "second", "third" … "10th".
fn ordinal(n: u32) -> String {
    match n {
        1 => "first".into(),
        2 => "second".into(),
        3 => "third".into(),
        4 => "fourth".into(),
        5 => "fifth".into(),
        n => format!("{n}th"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::plan_ops::count_metric;
    use super::*;

    fn d(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn the_restatement_reads_like_the_issue_example() {
        let m = SemanticModel::wound_care();
        let today = d("2025-11-20");
        let mut p = QueryPlan::new("wounds", today);
        p.intent = Intent::GroupBy;
        p.metrics = vec![count_metric(&m, "wounds")];
        p.filters = vec![Constraint::Compare {
            attribute: "wounds.latest_area".into(),
            op: CompareOp::Gt,
            value: Value::Integer(25),
            unit: Some("cm2".into()),
        }];
        p.time_range = Some(super::super::TimeRange {
            attribute: "assessments.assessed_on".into(),
            start: d("2025-10-21"),
            end: d("2025-11-21"),
        });
        p.dimensions = vec![Dimension::Attribute {
            attribute: "clinics.name".into(),
        }];
        assert_eq!(
            restate(&m, &p),
            "Counting wounds with latest area > 25 cm², assessed in the last 30 days, by clinic."
        );
    }

    #[test]
    fn ranges_are_described_by_their_calendar_shape() {
        let today = d("2025-11-20");
        let table = [
            ("2025-01-01", "2026-01-01", "in 2025"),
            ("2025-03-01", "2025-04-01", "in March 2025"),
            ("2025-07-01", "2025-10-01", "in Q3 2025"),
            ("2025-10-21", "2025-11-21", "in the last 30 days"),
            ("2025-11-06", "2025-11-21", "in the last 2 weeks"),
            ("2025-05-20", "2025-11-21", "in the last 6 months"),
            ("2025-06-03", "2025-06-04", "on 3 June 2025"),
        ];
        for (s, e, want) in table {
            assert_eq!(describe_range(d(s), d(e), today), want);
        }
    }
}
