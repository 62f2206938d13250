//! Shared helpers for the `sql_*` tests: the wound-care model, random valid plans
//! over it (proptest strategies), and running rendered SQL on a test database with
//! results normalised for comparison across backends.
#![allow(dead_code)]

use chrono::NaiveDate;
use proptest::collection::vec;
use proptest::option;
use proptest::prelude::*;
use proptest::sample::select;
use proptest::strategy::{BoxedStrategy, Union};
use server::db::Database;
use server::engine::plan::{Dimension, Intent, Metric, OrderBy, OrderKey, QueryPlan, TimeRange};
use server::semantic::{
    AllowedValues, AttributeRole, AttributeType, CompareOp, Constraint, Grain, MeasureAgg, SemanticModel,
    SortOrder, Span, SpanUnit, Value,
};
use server::sql::{Rendered, bind};
use sqlx::Row;
use std::sync::LazyLock;

/// The shipped wound-care model.
pub static MODEL: LazyLock<SemanticModel> = LazyLock::new(SemanticModel::wound_care);

/// The dataset's anchor date: "today" in every test plan.
pub fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 1).expect("valid date")
}

/// A date from ISO text.
pub fn date(iso: &str) -> NaiveDate {
    NaiveDate::parse_from_str(iso, "%Y-%m-%d").expect("ISO date")
}

/// Text that must never appear in SQL text (it is only ever bound).
pub const HOSTILE_TEXT: &str = "zz'); DROP TABLE wounds; --";

const ENTITIES: [&str; 5] = ["clinics", "clinicians", "patients", "wounds", "assessments"];

/// An attribute and what values make sense for it.
#[derive(Clone, Debug)]
pub struct AttrInfo {
    pub qualified: String,
    pub ty: AttributeType,
    unit: Option<String>,
    samples: Vec<Value>,
    role: AttributeRole,
}

fn infos(filter: impl Fn(&str) -> bool) -> Vec<AttrInfo> {
    let mut out = Vec::new();
    for e in MODEL.entities.iter().filter(|e| filter(&e.name)) {
        for a in &e.attributes {
            let samples = match &a.allowed {
                Some(AllowedValues::Static { values }) => values.iter().map(|v| v.value.clone()).collect(),
                Some(AllowedValues::Database { known }) if !known.is_empty() => {
                    known.iter().map(|v| v.value.clone()).collect()
                }
                _ => vec![Value::Text(HOSTILE_TEXT.into()), Value::Text("O'Brien".into())],
            };
            out.push(AttrInfo {
                qualified: format!("{}.{}", e.name, a.name),
                ty: a.ty,
                unit: a.unit.clone(),
                samples,
                role: a.role,
            });
        }
    }
    out
}

/// Every attribute of every entity.
pub fn all_attributes() -> Vec<AttrInfo> {
    infos(|_| true)
}

/// Attributes reachable from `base` without crossing a one-to-many join.
pub fn forward_attributes(base: &str) -> Vec<AttrInfo> {
    let reachable: Vec<String> = ENTITIES
        .iter()
        .filter(|e| {
            MODEL
                .join_path(base, e)
                .is_some_and(|p| p.iter().all(|s| s.forward))
        })
        .map(|e| e.to_string())
        .collect();
    infos(|e| reachable.iter().any(|r| r == e))
}

fn value_for(a: &AttrInfo) -> BoxedStrategy<Value> {
    match a.ty {
        AttributeType::Text => select(a.samples.clone()).boxed(),
        AttributeType::Boolean => any::<bool>().prop_map(Value::Bool).boxed(),
        AttributeType::Integer => {
            let (lo, hi): (i64, i64) = match a.unit.as_deref() {
                Some("points") => (0, 11),
                Some("days") => (0, 500),
                Some("years") => (20, 100),
                _ if a.role == AttributeRole::Key || a.role == AttributeRole::ForeignKey => (1, 60),
                _ => (0, 25),
            };
            (lo..hi).prop_map(|i: i64| Value::Integer(i)).boxed()
        }
        AttributeType::Real => {
            let (lo, hi) = match a.unit.as_deref() {
                Some("cm2") => (0.0, 60.0),
                Some("cm") => (0.0, 12.0),
                Some("kg/m2") => (15.0, 45.0),
                Some("percent") => (-100.0, 100.0),
                _ => (0.0, 100.0),
            };
            (lo..hi)
                .prop_map(|x: f64| Value::Real((x * 10.0).round() / 10.0))
                .boxed()
        }
        AttributeType::Date => (0i64..1400)
            .prop_map(|d| {
                Value::Text(
                    (date("2023-01-01") + chrono::Days::new(d as u64))
                        .format("%Y-%m-%d")
                        .to_string(),
                )
            })
            .boxed(),
    }
}

fn op_for(ty: AttributeType) -> BoxedStrategy<CompareOp> {
    if ty.is_ordered() {
        select(vec![
            CompareOp::Gt,
            CompareOp::Gte,
            CompareOp::Lt,
            CompareOp::Lte,
            CompareOp::Eq,
            CompareOp::Ne,
        ])
        .boxed()
    } else {
        select(vec![CompareOp::Eq, CompareOp::Ne]).boxed()
    }
}

fn span() -> impl Strategy<Value = Span> {
    (
        1u32..13,
        select(vec![
            SpanUnit::Days,
            SpanUnit::Weeks,
            SpanUnit::Months,
            SpanUnit::Years,
        ]),
    )
        .prop_map(|(n, unit)| Span {
            n: if unit == SpanUnit::Days { n * 7 } else { n },
            unit,
        })
}

fn time_dimension_names() -> Vec<String> {
    MODEL.time_dimensions.iter().map(|d| d.name.clone()).collect()
}

/// One leaf constraint over the model, valid for a query over `base`.
pub fn leaf_constraint(base: &'static str) -> BoxedStrategy<Constraint> {
    let attrs = all_attributes();
    let ordered: Vec<AttrInfo> = attrs.iter().filter(|a| a.ty.is_ordered()).cloned().collect();
    let texts: Vec<AttrInfo> = attrs
        .iter()
        .filter(|a| a.ty == AttributeType::Text)
        .cloned()
        .collect();
    let has_default = MODEL.default_time_dimension(base).is_some();
    let dims = time_dimension_names();
    let dimension = move || -> BoxedStrategy<Option<String>> {
        if has_default {
            option::of(select(dims.clone())).boxed()
        } else {
            select(dims.clone()).prop_map(Some).boxed()
        }
    };
    let compare = select(attrs.clone())
        .prop_flat_map(|a| (op_for(a.ty), value_for(&a), Just(a)))
        .prop_map(|(op, value, a)| Constraint::Compare {
            attribute: a.qualified,
            op,
            value,
            unit: a.unit,
        });
    let between = select(ordered)
        .prop_flat_map(|a| (value_for(&a), value_for(&a), Just(a)))
        .prop_map(|(x, y, a)| {
            let (min, max) = if order_key(&x) <= order_key(&y) {
                (x, y)
            } else {
                (y, x)
            };
            Constraint::Between {
                attribute: a.qualified,
                min,
                max,
                unit: None,
            }
        });
    let in_set = select(texts)
        .prop_flat_map(|a| {
            (
                proptest::sample::subsequence(a.samples.clone(), 1..=a.samples.len().min(3)),
                Just(a),
            )
        })
        .prop_map(|(values, a)| Constraint::InSet {
            attribute: a.qualified,
            values,
        });
    let nulls = (select(attrs), any::<bool>()).prop_map(|(a, not)| {
        if not {
            Constraint::NotNull {
                attribute: a.qualified,
            }
        } else {
            Constraint::IsNull {
                attribute: a.qualified,
            }
        }
    });
    let window =
        (dimension(), span()).prop_map(|(dimension, last)| Constraint::TimeWindow { dimension, last });
    let older = (dimension(), span()).prop_map(|(dimension, age)| Constraint::OlderThan { dimension, age });
    let change = (
        select(vec![
            "assessments.area",
            "assessments.pain_score",
            "assessments.length",
        ]),
        select(vec!["wounds", "patients", "clinics", "clinicians"]),
        1u32..9,
        op_for(AttributeType::Real),
        -80i32..80,
    )
        .prop_map(|(attribute, per, weeks, op, pct)| Constraint::Change {
            attribute: attribute.into(),
            per: per.into(),
            over: Span {
                n: weeks,
                unit: SpanUnit::Weeks,
            },
            op,
            pct: f64::from(pct),
        });
    let related = select(ENTITIES.to_vec())
        .prop_flat_map(move |per| {
            let others: Vec<&'static str> = ENTITIES.iter().copied().filter(|e| *e != per).collect();
            (
                Just(per),
                select(others),
                op_for(AttributeType::Integer),
                0u32..8,
                option::of(span()),
                any::<bool>(),
            )
        })
        .prop_filter(
            "the counted entity needs a time dimension for a window",
            |(_, related, _, _, within, _)| {
                within.is_none() || MODEL.default_time_dimension(related).is_some()
            },
        )
        .prop_map(
            move |(per, related, op, value, within, implicit)| Constraint::RelatedCount {
                per: if implicit && per == base {
                    None
                } else {
                    Some(per.into())
                },
                related: related.into(),
                op,
                value,
                within,
                condition: None,
            },
        );
    Union::new(vec![
        compare.boxed(),
        own_compare(base),
        between.boxed(),
        in_set.boxed(),
        nulls.boxed(),
        window.boxed(),
        older.boxed(),
        change.boxed(),
        related.boxed(),
    ])
    .boxed()
}

/// Comparisons on the query entity's own attributes, so most plans filter something local.
fn own_compare(base: &'static str) -> BoxedStrategy<Constraint> {
    let own: Vec<AttrInfo> = infos(|e| e == base);
    select(own)
        .prop_flat_map(|a| (op_for(a.ty), value_for(&a), Just(a)))
        .prop_map(|(op, value, a)| Constraint::Compare {
            attribute: a.qualified,
            op,
            value,
            unit: None,
        })
        .boxed()
}

fn order_key(v: &Value) -> (f64, String) {
    (
        v.as_f64().unwrap_or(0.0),
        v.as_str().unwrap_or_default().to_owned(),
    )
}

/// Leaves combined with `all`, `any` and `not`, two levels deep at most.
pub fn constraint(base: &'static str) -> BoxedStrategy<Constraint> {
    leaf_constraint(base)
        .prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                vec(inner.clone(), 1..3).prop_map(|of| Constraint::All { of }),
                vec(inner.clone(), 1..3).prop_map(|of| Constraint::Any { of }),
                inner.prop_map(|c| Constraint::Not { of: Box::new(c) }),
            ]
        })
        .boxed()
}

/// What the plan computes.
#[derive(Clone, Debug)]
enum Shape {
    List {
        columns: Vec<String>,
        order: Vec<(String, SortOrder)>,
    },
    Groups {
        intent: Intent,
        dimensions: Vec<Dimension>,
        metrics: Vec<Metric>,
        order: Vec<OrderBy>,
    },
}

fn dir() -> impl Strategy<Value = SortOrder> {
    select(vec![SortOrder::Asc, SortOrder::Desc])
}

fn metric(base: &'static str, fwd: &[AttrInfo]) -> BoxedStrategy<Metric> {
    let numeric: Vec<AttrInfo> = fwd
        .iter()
        .filter(|a| a.ty.is_numeric() && a.role == AttributeRole::Attribute)
        .cloned()
        .collect();
    let ordered: Vec<AttrInfo> = fwd.iter().filter(|a| a.ty.is_ordered()).cloned().collect();
    let any_attr: Vec<AttrInfo> = fwd.to_vec();
    let label = |agg: MeasureAgg| format!("{} metric", agg.as_str());
    let mut arms: Vec<BoxedStrategy<Metric>> = vec![
        Just(Metric {
            agg: MeasureAgg::Count,
            attribute: None,
            condition: None,
            label: "Count".into(),
        })
        .boxed(),
        (select(any_attr), any::<bool>())
            .prop_map(move |(a, distinct)| {
                let agg = if distinct {
                    MeasureAgg::CountDistinct
                } else {
                    MeasureAgg::Count
                };
                Metric {
                    agg,
                    attribute: Some(a.qualified),
                    condition: None,
                    label: label(agg),
                }
            })
            .boxed(),
        leaf_constraint(base)
            .prop_map(|c| Metric {
                agg: MeasureAgg::Share,
                attribute: None,
                condition: Some(c),
                label: "Share".into(),
            })
            .boxed(),
        (select(ordered), any::<bool>())
            .prop_map(move |(a, min)| {
                let agg = if min { MeasureAgg::Min } else { MeasureAgg::Max };
                Metric {
                    agg,
                    attribute: Some(a.qualified),
                    condition: None,
                    label: label(agg),
                }
            })
            .boxed(),
    ];
    if !numeric.is_empty() {
        arms.push(
            (
                select(numeric),
                select(vec![MeasureAgg::Sum, MeasureAgg::Avg, MeasureAgg::Median]),
                option::weighted(0.25, leaf_constraint(base)),
            )
                .prop_map(move |(a, agg, condition)| Metric {
                    agg,
                    attribute: Some(a.qualified),
                    condition,
                    label: label(agg),
                })
                .boxed(),
        );
    }
    Union::new(arms).boxed()
}

fn dimension(fwd: &[AttrInfo]) -> BoxedStrategy<Dimension> {
    let groupable: Vec<AttrInfo> = fwd
        .iter()
        .filter(|a| a.ty != AttributeType::Real && a.role != AttributeRole::Key)
        .cloned()
        .collect();
    let dates: Vec<AttrInfo> = fwd
        .iter()
        .filter(|a| a.ty == AttributeType::Date)
        .cloned()
        .collect();
    let mut arms = vec![
        select(groupable)
            .prop_map(|a| Dimension::Attribute {
                attribute: a.qualified,
            })
            .boxed(),
    ];
    if !dates.is_empty() {
        arms.push(
            (
                select(dates),
                select(vec![
                    Grain::Day,
                    Grain::Week,
                    Grain::Month,
                    Grain::Quarter,
                    Grain::Year,
                ]),
            )
                .prop_map(|(a, grain)| Dimension::Time {
                    attribute: a.qualified,
                    grain,
                })
                .boxed(),
        );
    }
    Union::new(arms).boxed()
}

fn shape(base: &'static str) -> BoxedStrategy<Shape> {
    let fwd = forward_attributes(base);
    let names: Vec<String> = fwd.iter().map(|a| a.qualified.clone()).collect();
    let list = (
        vec(select(names.clone()), 0..4),
        vec((select(names), dir()), 0..3),
    )
        .prop_map(|(columns, order)| Shape::List { columns, order });
    let intents = select(vec![
        Intent::Count,
        Intent::Aggregate,
        Intent::GroupBy,
        Intent::Rank,
        Intent::Trend,
        Intent::Compare,
    ]);
    let groups = (
        intents,
        vec(dimension(&fwd), 0..3),
        vec(metric(base, &fwd), 0..3),
        dir(),
        0u8..3,
    )
        .prop_map(|(intent, dimensions, metrics, d, how)| {
            let order = match how {
                0 if !metrics.is_empty() => vec![OrderBy {
                    key: OrderKey::Metric { index: 0 },
                    order: d,
                }],
                1 => dimensions
                    .iter()
                    .rev()
                    .map(|dim| {
                        let attribute = match dim {
                            Dimension::Attribute { attribute } | Dimension::Time { attribute, .. } => {
                                attribute.clone()
                            }
                        };
                        OrderBy {
                            key: OrderKey::Attribute { attribute },
                            order: d,
                        }
                    })
                    .take(1)
                    .collect(),
                _ => Vec::new(),
            };
            Shape::Groups {
                intent,
                dimensions: dedup_dims(dimensions),
                metrics,
                order,
            }
        });
    prop_oneof![list, groups].boxed()
}

fn dedup_dims(dims: Vec<Dimension>) -> Vec<Dimension> {
    let mut out: Vec<Dimension> = Vec::new();
    for d in dims {
        if !out.contains(&d) {
            out.push(d);
        }
    }
    out
}

/// A random valid plan over the wound-care model.
pub fn plan() -> BoxedStrategy<QueryPlan> {
    select(ENTITIES.to_vec())
        .prop_flat_map(|base| {
            let dates: Vec<String> = all_attributes()
                .into_iter()
                .filter(|a| a.ty == AttributeType::Date)
                .map(|a| a.qualified)
                .collect();
            let range = option::weighted(0.3, (select(dates), 0u64..1300, 1u64..400));
            (
                Just(base),
                vec(constraint(base), 0..3),
                range,
                shape(base),
                option::of(1u32..40),
            )
        })
        .prop_map(|(base, filters, range, shape, limit)| {
            let mut plan = QueryPlan::new(base, today());
            plan.filters = filters;
            plan.time_range = range.map(|(attribute, offset, len)| {
                let start = date("2023-06-01") + chrono::Days::new(offset);
                TimeRange {
                    attribute,
                    start,
                    end: start + chrono::Days::new(len),
                }
            });
            plan.limit = limit;
            match shape {
                Shape::List { columns, order } => {
                    plan.intent = Intent::List;
                    plan.columns = columns;
                    plan.order = order
                        .into_iter()
                        .map(|(attribute, order)| OrderBy {
                            key: OrderKey::Attribute { attribute },
                            order,
                        })
                        .collect();
                }
                Shape::Groups {
                    intent,
                    dimensions,
                    metrics,
                    order,
                } => {
                    plan.intent = intent;
                    plan.dimensions = dimensions;
                    plan.metrics = metrics;
                    plan.order = order;
                }
            }
            plan
        })
        .boxed()
}

/// One normalised result cell.
#[derive(Clone, Debug)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
    Bool(bool),
}

impl PartialEq for Cell {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Cell::Null, Cell::Null) => true,
            (Cell::Int(a), Cell::Int(b)) => a == b,
            (Cell::Real(a), Cell::Real(b)) => {
                round6(*a) == round6(*b) || (a - b).abs() <= 1e-9 * a.abs().max(1.0)
            }
            (Cell::Text(a), Cell::Text(b)) => a == b,
            (Cell::Bool(a), Cell::Bool(b)) => a == b,
            _ => false,
        }
    }
}

/// Rounded to 6 decimals, with -0 as 0.
pub fn round6(x: f64) -> f64 {
    let r = (x * 1e6).round() / 1e6;
    if r == 0.0 { 0.0 } else { r }
}

macro_rules! decode_rows {
    ($rows:expr, $rendered:expr) => {{
        let mut out = Vec::new();
        for row in $rows {
            let mut cells = Vec::new();
            for (i, col) in $rendered.columns.iter().enumerate() {
                let cell = match col.ty {
                    AttributeType::Integer => row.try_get::<Option<i64>, _>(i)?.map(Cell::Int),
                    AttributeType::Real => row.try_get::<Option<f64>, _>(i)?.map(Cell::Real),
                    AttributeType::Boolean => row.try_get::<Option<bool>, _>(i)?.map(Cell::Bool),
                    AttributeType::Text | AttributeType::Date => {
                        row.try_get::<Option<String>, _>(i)?.map(Cell::Text)
                    }
                };
                cells.push(cell.unwrap_or(Cell::Null));
            }
            out.push(cells);
        }
        out
    }};
}

/// Runs a rendered statement and decodes every row by the rendered column types.
pub async fn run(db: &Database, rendered: &Rendered) -> Result<Vec<Vec<Cell>>, sqlx::Error> {
    Ok(match db {
        Database::Sqlite(pool) => {
            let rows = rendered.sqlite_query().fetch_all(pool).await?;
            decode_rows!(rows, rendered)
        }
        Database::Postgres(pool) => {
            let args = bind::postgres_arguments(&rendered.values).map_err(sqlx::Error::Encode)?;
            let rows = sqlx::query_with(&rendered.sql, args).fetch_all(pool).await?;
            decode_rows!(rows, rendered)
        }
    })
}
