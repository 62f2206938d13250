//! Snapshots of rendered SQL and bound values, SQLite and PostgreSQL side by side,
//! for a representative set of plans: lists, counts, groups, trends, top-N, every
//! constraint kind and the derived attributes. Review changes with `cargo insta review`.

mod sql_support;

use server::engine::plan::{Dimension, Intent, Metric, OrderBy, OrderKey, QueryPlan, TimeRange};
use server::semantic::{CompareOp, Constraint, Grain, MeasureAgg, SortOrder, Span, SpanUnit, Value};
use server::sql::{Dialect, Rendered, render, render_count, render_with_cap};
use sql_support::{MODEL, date, today};
use std::fmt::Write;

fn show_rendered(out: &mut String, r: &Rendered) {
    writeln!(out, "-- {}", r.dialect.name()).unwrap();
    writeln!(out, "{}", r.sql).unwrap();
    let values: Vec<String> = r
        .values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{}: {v}", i + 1))
        .collect();
    writeln!(out, "-- values: {}", values.join(" | ")).unwrap();
    let columns: Vec<String> = r.columns.iter().map(|c| format!("{} {}", c.name, c.ty)).collect();
    writeln!(out, "-- columns: {}", columns.join(", ")).unwrap();
}

/// Both dialects' SQL, values and columns.
fn show(plan: &QueryPlan) -> String {
    let mut out = String::new();
    for d in Dialect::ALL {
        let r = render(plan, &MODEL, d).unwrap_or_else(|e| panic!("{d:?}: {e}"));
        show_rendered(&mut out, &r);
    }
    out
}

fn plan(entity: &str, intent: Intent) -> QueryPlan {
    let mut p = QueryPlan::new(entity, today());
    p.intent = intent;
    p
}

fn cmp(attribute: &str, op: CompareOp, value: impl Into<Value>) -> Constraint {
    Constraint::Compare {
        attribute: attribute.into(),
        op,
        value: value.into(),
        unit: None,
    }
}

fn text(s: &str) -> Value {
    Value::Text(s.into())
}

fn metric(agg: MeasureAgg, attribute: Option<&str>, label: &str) -> Metric {
    Metric {
        agg,
        attribute: attribute.map(Into::into),
        condition: None,
        label: label.into(),
    }
}

fn healing_rate() -> Metric {
    Metric {
        agg: MeasureAgg::Share,
        attribute: None,
        condition: Some(cmp("wounds.status", CompareOp::Eq, text("healed"))),
        label: "Healing rate".into(),
    }
}

fn by(attribute: &str) -> Dimension {
    Dimension::Attribute {
        attribute: attribute.into(),
    }
}

fn count_wounds_where(c: Constraint) -> QueryPlan {
    let mut p = plan("wounds", Intent::Count);
    p.filters = vec![c];
    p
}

#[test]
fn list_of_large_open_diabetic_foot_ulcers() {
    let mut p = plan("wounds", Intent::List);
    p.columns = vec![
        "wounds.etiology".into(),
        "clinics.name".into(),
        "patients.age".into(),
    ];
    p.filters = vec![
        cmp("wounds.etiology", CompareOp::Eq, text("diabetic_foot_ulcer")),
        cmp("wounds.status", CompareOp::Eq, text("open")),
        Constraint::Compare {
            attribute: "wounds.latest_area".into(),
            op: CompareOp::Gt,
            value: Value::Real(25.0),
            unit: Some("cm2".into()),
        },
    ];
    p.order = vec![OrderBy {
        key: OrderKey::Attribute {
            attribute: "wounds.latest_area".into(),
        },
        order: SortOrder::Desc,
    }];
    p.limit = Some(20);
    insta::assert_snapshot!(show(&p));
}

#[test]
fn list_of_patients_sorted_by_name() {
    let mut p = plan("patients", Intent::List);
    p.columns = vec!["patients.diabetes".into(), "clinics.region".into()];
    p.filters = vec![cmp("patients.smoker", CompareOp::Eq, true)];
    p.order = vec![OrderBy {
        key: OrderKey::Attribute {
            attribute: "patients.full_name".into(),
        },
        order: SortOrder::Asc,
    }];
    insta::assert_snapshot!(show(&p));
}

#[test]
fn count_of_wounds_with_onset_in_the_last_30_days() {
    let p = count_wounds_where(Constraint::TimeWindow {
        dimension: None,
        last: Span::days(30),
    });
    insta::assert_snapshot!(show(&p));
}

#[test]
fn wounds_healing_rate_and_mean_duration_by_clinic() {
    let mut p = plan("wounds", Intent::GroupBy);
    p.dimensions = vec![by("clinics.name")];
    p.metrics = vec![
        metric(MeasureAgg::Count, None, "Wounds"),
        metric(MeasureAgg::Avg, Some("wounds.days_open"), "Average days open"),
        healing_rate(),
    ];
    insta::assert_snapshot!(show(&p));
}

#[test]
fn monthly_trend_of_average_assessed_area_in_2026() {
    let mut p = plan("assessments", Intent::Trend);
    p.dimensions = vec![Dimension::Time {
        attribute: "assessments.assessed_on".into(),
        grain: Grain::Month,
    }];
    p.metrics = vec![metric(MeasureAgg::Avg, Some("assessments.area"), "Average area")];
    p.time_range = Some(TimeRange {
        attribute: "assessments.assessed_on".into(),
        start: date("2026-01-01"),
        end: date("2026-11-01"),
    });
    insta::assert_snapshot!(show(&p));
}

#[test]
fn weekly_quarterly_and_yearly_buckets() {
    let mut out = String::new();
    for grain in [Grain::Day, Grain::Week, Grain::Quarter, Grain::Year] {
        let mut p = plan("wounds", Intent::Trend);
        p.dimensions = vec![Dimension::Time {
            attribute: "wounds.onset_date".into(),
            grain,
        }];
        writeln!(out, "== {}", grain.as_str()).unwrap();
        out.push_str(&show(&p));
    }
    insta::assert_snapshot!(out);
}

#[test]
fn top_5_clinics_by_healing_rate() {
    let mut p = plan("wounds", Intent::Rank);
    p.dimensions = vec![by("clinics.name")];
    p.metrics = vec![healing_rate()];
    p.limit = Some(5);
    insta::assert_snapshot!(show(&p));
}

#[test]
fn median_healing_days_by_etiology() {
    let mut p = plan("wounds", Intent::GroupBy);
    p.dimensions = vec![by("wounds.etiology")];
    p.metrics = vec![metric(
        MeasureAgg::Median,
        Some("wounds.healing_days"),
        "Median healing time",
    )];
    p.filters = vec![cmp("wounds.status", CompareOp::Eq, text("healed"))];
    insta::assert_snapshot!(show(&p));
}

#[test]
fn overall_median_without_dimensions() {
    let mut p = plan("assessments", Intent::Aggregate);
    p.metrics = vec![
        metric(MeasureAgg::Median, Some("assessments.pain_score"), "Median pain"),
        metric(
            MeasureAgg::Max,
            Some("assessments.assessed_on"),
            "Last assessment",
        ),
    ];
    insta::assert_snapshot!(show(&p));
}

#[test]
fn every_constraint_kind() {
    let span = |n, unit| Span { n, unit };
    let cases: Vec<(&str, Constraint)> = vec![
        ("compare", cmp("wounds.latest_pain", CompareOp::Gte, 7)),
        (
            "between",
            Constraint::Between {
                attribute: "wounds.onset_date".into(),
                min: text("2026-01-01"),
                max: text("2026-03-31"),
                unit: None,
            },
        ),
        (
            "in_set",
            Constraint::InSet {
                attribute: "wounds.etiology".into(),
                values: vec![text("venous_leg_ulcer"), text("arterial_leg_ulcer")],
            },
        ),
        (
            "is_null",
            Constraint::IsNull {
                attribute: "wounds.healed_date".into(),
            },
        ),
        (
            "not_null",
            Constraint::NotNull {
                attribute: "wounds.stage".into(),
            },
        ),
        (
            "time_window",
            Constraint::TimeWindow {
                dimension: Some("assessed".into()),
                last: span(3, SpanUnit::Months),
            },
        ),
        (
            "older_than",
            Constraint::OlderThan {
                dimension: None,
                age: Span::days(90),
            },
        ),
        (
            "change",
            Constraint::Change {
                attribute: "assessments.area".into(),
                per: "wounds".into(),
                over: span(4, SpanUnit::Weeks),
                op: CompareOp::Lte,
                pct: -40.0,
            },
        ),
        (
            "related_count",
            Constraint::RelatedCount {
                per: None,
                related: "assessments".into(),
                op: CompareOp::Gte,
                value: 4,
                within: Some(Span::days(30)),
                condition: None,
            },
        ),
        (
            "all_on_one_assessment",
            Constraint::All {
                of: vec![
                    cmp("assessments.tissue_type", CompareOp::Eq, text("necrotic")),
                    cmp("assessments.pain_score", CompareOp::Gte, 7),
                ],
            },
        ),
        (
            "any",
            Constraint::Any {
                of: vec![
                    cmp("patients.diabetes", CompareOp::Eq, true),
                    cmp("patients.bmi", CompareOp::Gt, 35.0),
                ],
            },
        ),
        (
            "not",
            Constraint::Not {
                of: Box::new(cmp("assessments.infection_signs", CompareOp::Eq, true)),
            },
        ),
    ];
    let mut out = String::new();
    for (name, c) in cases {
        writeln!(out, "== {name}").unwrap();
        out.push_str(&show(&count_wounds_where(c)));
    }
    insta::assert_snapshot!(out);
}

#[test]
fn filters_on_related_entities_from_a_clinic_question() {
    let mut p = plan("clinics", Intent::List);
    p.filters = vec![
        cmp("wounds.etiology", CompareOp::Eq, text("pressure_injury")),
        cmp("assessments.exudate", CompareOp::Eq, text("high")),
        cmp("clinicians.discipline", CompareOp::Eq, text("podiatrist")),
    ];
    p.columns = vec!["clinics.care_setting".into(), "clinics.patient_count".into()];
    insta::assert_snapshot!(show(&p));
}

#[test]
fn derived_attributes_of_patients_and_wounds() {
    let mut p = plan("patients", Intent::List);
    p.columns = vec![
        "patients.age".into(),
        "patients.wound_count".into(),
        "patients.first_visit_on".into(),
        "patients.last_visit_on".into(),
    ];
    let mut w = plan("wounds", Intent::List);
    w.columns = vec![
        "wounds.days_open".into(),
        "wounds.healing_days".into(),
        "wounds.area_change_pct".into(),
        "wounds.latest_tissue".into(),
        "wounds.latest_infection_signs".into(),
    ];
    insta::assert_snapshot!(format!("{}{}", show(&p), show(&w)));
}

#[test]
fn count_preview_ignores_shape_and_keeps_filters() {
    let mut p = plan("wounds", Intent::Rank);
    p.dimensions = vec![by("clinics.name")];
    p.metrics = vec![healing_rate()];
    p.filters = vec![cmp("wounds.latest_area", CompareOp::Gt, 25.0)];
    p.limit = Some(5);
    let mut out = String::new();
    for d in Dialect::ALL {
        show_rendered(&mut out, &render_count(&p, &MODEL, d).unwrap());
    }
    insta::assert_snapshot!(out);
}

#[test]
fn row_cap_fetches_one_extra_row_unless_the_plan_limit_is_smaller() {
    let mut p = plan("assessments", Intent::List);
    let capped = render_with_cap(&p, &MODEL, Dialect::Postgres, 1000).unwrap();
    assert_eq!(capped.values.last(), Some(&server::sql::BoundValue::Int(1001)));
    assert!(capped.is_truncated(1001));
    assert!(!capped.is_truncated(1000));
    p.limit = Some(10);
    let small = render_with_cap(&p, &MODEL, Dialect::Sqlite, 1000).unwrap();
    assert_eq!(small.values.last(), Some(&server::sql::BoundValue::Int(10)));
    p.limit = Some(5000);
    let large = render_with_cap(&p, &MODEL, Dialect::Sqlite, 1000).unwrap();
    assert_eq!(large.values.last(), Some(&server::sql::BoundValue::Int(1001)));
    insta::assert_snapshot!(capped.sql);
}

#[test]
fn two_most_common_etiologies_of_open_wounds_in_each_care_setting() {
    let mut p = plan("wounds", Intent::Rank);
    p.metrics = vec![metric(MeasureAgg::Count, None, "Number of wounds")];
    p.dimensions = vec![by("wounds.etiology"), by("clinics.care_setting")];
    p.filters = vec![cmp("wounds.status", CompareOp::Eq, text("open"))];
    p.order = vec![OrderBy {
        key: OrderKey::Metric { index: 0 },
        order: SortOrder::Desc,
    }];
    p.limit_per_group = Some(2);
    insta::assert_snapshot!(show(&p));
}
