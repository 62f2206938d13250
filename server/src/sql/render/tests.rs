//! Unit tests of the renderer: refusals, binding and ordering rules.

use super::*;
use crate::engine::plan::{Dimension, Intent, Metric, OrderBy, OrderKey, QueryPlan};
use crate::semantic::{CompareOp, Constraint, MeasureAgg, SemanticModel, SortOrder, Span, Value};
use chrono::NaiveDate;

fn model() -> SemanticModel {
    SemanticModel::wound_care()
}

fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 1).unwrap()
}

fn plan(entity: &str, intent: Intent) -> QueryPlan {
    let mut p = QueryPlan::new(entity, today());
    p.intent = intent;
    p
}

fn cmp(attribute: &str, op: CompareOp, value: Value) -> Constraint {
    Constraint::Compare {
        attribute: attribute.into(),
        op,
        value,
        unit: None,
    }
}

fn err(p: &QueryPlan) -> RenderError {
    render(p, &model(), Dialect::Sqlite).expect_err("should be refused")
}

#[test]
fn text_values_are_bound_never_written_into_the_sql() {
    let hostile = "x'); DROP TABLE wounds; --";
    let mut p = plan("patients", Intent::List);
    p.filters = vec![cmp(
        "patients.full_name",
        CompareOp::Eq,
        Value::Text(hostile.into()),
    )];
    for d in Dialect::ALL {
        let r = render(&p, &model(), d).unwrap();
        assert!(!r.sql.contains("DROP"), "{}", r.sql);
        assert!(r.values.contains(&BoundValue::Text(hostile.into())));
    }
}

#[test]
fn today_is_bound_and_the_database_clock_is_never_read() {
    let mut p = plan("wounds", Intent::List);
    p.columns = vec!["wounds.days_open".into(), "wounds.latest_area".into()];
    p.filters = vec![Constraint::TimeWindow {
        dimension: None,
        last: Span::days(30),
    }];
    for d in Dialect::ALL {
        let r = render(&p, &model(), d).unwrap();
        let upper = r.sql.to_uppercase();
        for clock in ["CURRENT_DATE", "NOW(", "'NOW'", "CURRENT_TIMESTAMP", "LOCALTIME"] {
            assert!(!upper.contains(clock), "{clock} in {}", r.sql);
        }
        assert!(r.values.contains(&BoundValue::Date(today())));
        assert!(
            r.values
                .contains(&BoundValue::Date(NaiveDate::from_ymd_opt(2026, 10, 2).unwrap()))
        );
    }
}

#[test]
fn postgres_binds_a_repeated_value_once() {
    let mut p = plan("patients", Intent::GroupBy);
    p.dimensions = vec![Dimension::Attribute {
        attribute: "patients.age".into(),
    }];
    let r = render(&p, &model(), Dialect::Postgres).unwrap();
    assert_eq!(r.values, vec![BoundValue::Date(today())], "{}", r.sql);
    let s = render(&p, &model(), Dialect::Sqlite).unwrap();
    assert!(s.values.len() > 1, "SQLite placeholders are positional");
}

#[test]
fn lists_end_with_the_key_so_the_order_is_total() {
    let mut p = plan("wounds", Intent::List);
    p.order = vec![OrderBy {
        key: OrderKey::Attribute {
            attribute: "wounds.etiology".into(),
        },
        order: SortOrder::Desc,
    }];
    let r = render(&p, &model(), Dialect::Postgres).unwrap();
    assert!(
        r.sql.ends_with(
            "ORDER BY \"wounds\".\"etiology\" COLLATE \"C\" DESC NULLS LAST, \"wounds.id\" ASC NULLS LAST"
        ),
        "{}",
        r.sql
    );
}

#[test]
fn a_ranking_without_an_explicit_order_sorts_by_its_first_metric_descending() {
    let mut p = plan("wounds", Intent::Rank);
    p.dimensions = vec![Dimension::Attribute {
        attribute: "clinics.name".into(),
    }];
    p.metrics = vec![Metric {
        agg: MeasureAgg::Count,
        attribute: None,
        condition: None,
        label: "Wounds".into(),
    }];
    p.limit = Some(3);
    let r = render(&p, &model(), Dialect::Sqlite).unwrap();
    assert!(
        r.sql
            .contains("ORDER BY \"metric_0\" DESC NULLS LAST, \"clinics.name\" ASC NULLS LAST"),
        "{}",
        r.sql
    );
    assert_eq!(r.values.last(), Some(&BoundValue::Int(3)));
}

#[test]
fn median_is_an_aggregate_on_postgres_and_a_window_cte_on_sqlite() {
    let mut p = plan("wounds", Intent::Aggregate);
    p.metrics = vec![Metric {
        agg: MeasureAgg::Median,
        attribute: Some("wounds.healing_days".into()),
        condition: None,
        label: "m".into(),
    }];
    assert!(
        render(&p, &model(), Dialect::Postgres)
            .unwrap()
            .sql
            .contains("percentile_cont(0.5) WITHIN GROUP")
    );
    let s = render(&p, &model(), Dialect::Sqlite).unwrap().sql;
    assert!(
        s.starts_with("WITH \"median_0\" AS (") && s.contains("ROW_NUMBER() OVER ("),
        "{s}"
    );
}

#[test]
fn showing_a_many_side_attribute_per_row_is_refused() {
    let mut p = plan("wounds", Intent::List);
    p.columns = vec!["assessments.area".into()];
    assert_eq!(err(&p).code(), "fan_out");
    let mut g = plan("clinics", Intent::GroupBy);
    g.metrics = vec![Metric {
        agg: MeasureAgg::Avg,
        attribute: Some("wounds.initial_area".into()),
        condition: None,
        label: "a".into(),
    }];
    assert_eq!(err(&g).code(), "fan_out");
}

#[test]
fn literals_must_have_the_attributes_type_and_unit() {
    let cases: Vec<(Constraint, &str)> = vec![
        (
            cmp("wounds.etiology", CompareOp::Eq, Value::Integer(3)),
            "type_mismatch",
        ),
        (
            cmp("wounds.etiology", CompareOp::Gt, Value::Text("burn".into())),
            "not_ordered",
        ),
        (
            cmp("wounds.infected", CompareOp::Eq, Value::Text("yes".into())),
            "type_mismatch",
        ),
        (
            cmp(
                "wounds.onset_date",
                CompareOp::Lt,
                Value::Text("2026-13-01".into()),
            ),
            "bad_date",
        ),
        (
            cmp("wounds.latest_area", CompareOp::Gt, Value::Real(f64::NAN)),
            "bad_number",
        ),
        (
            Constraint::Compare {
                attribute: "wounds.latest_area".into(),
                op: CompareOp::Gt,
                value: Value::Real(2.0),
                unit: Some("cm".into()),
            },
            "unit_mismatch",
        ),
        (
            Constraint::InSet {
                attribute: "wounds.etiology".into(),
                values: vec![],
            },
            "empty_set",
        ),
        (
            cmp("wounds.colour", CompareOp::Eq, Value::Text("red".into())),
            "unknown_attribute",
        ),
        (
            Constraint::TimeWindow {
                dimension: Some("someday".into()),
                last: Span::days(3),
            },
            "unknown_time_dimension",
        ),
    ];
    for (c, code) in cases {
        let mut p = plan("wounds", Intent::Count);
        p.filters = vec![c.clone()];
        assert_eq!(err(&p).code(), code, "{c:?}");
    }
}

#[test]
fn a_clinic_question_without_a_date_needs_a_named_time_dimension() {
    let mut p = plan("clinics", Intent::Count);
    p.filters = vec![Constraint::TimeWindow {
        dimension: None,
        last: Span::days(30),
    }];
    assert_eq!(err(&p).code(), "no_time_dimension");
}

#[test]
fn inconsistent_plans_are_refused() {
    let mut list = plan("wounds", Intent::List);
    list.metrics = vec![Metric {
        agg: MeasureAgg::Count,
        attribute: None,
        condition: None,
        label: "n".into(),
    }];
    assert_eq!(err(&list).code(), "invalid_plan");
    let mut share = plan("wounds", Intent::Aggregate);
    share.metrics = vec![Metric {
        agg: MeasureAgg::Share,
        attribute: None,
        condition: None,
        label: "s".into(),
    }];
    assert_eq!(err(&share).code(), "invalid_plan");
    let mut order = plan("wounds", Intent::GroupBy);
    order.dimensions = vec![Dimension::Attribute {
        attribute: "wounds.etiology".into(),
    }];
    order.order = vec![OrderBy {
        key: OrderKey::Attribute {
            attribute: "wounds.status".into(),
        },
        order: SortOrder::Asc,
    }];
    assert_eq!(err(&order).code(), "invalid_plan");
    let mut twice = plan("wounds", Intent::GroupBy);
    twice.dimensions = vec![
        Dimension::Attribute {
            attribute: "wounds.etiology".into()
        };
        2
    ];
    assert_eq!(err(&twice).code(), "invalid_plan");
    assert_eq!(err(&plan("ulcers", Intent::Count)).code(), "unknown_entity");
}

#[test]
fn identifiers_outside_plain_words_are_refused_even_from_the_model() {
    let mut m = model();
    let wounds = m.entities.iter_mut().find(|e| e.name == "wounds").unwrap();
    wounds.table = "wounds\"; DROP TABLE patients; --".into();
    m.reindex();
    let err = render(&plan("wounds", Intent::Count), &m, Dialect::Postgres).unwrap_err();
    assert_eq!(err.code(), "bad_identifier");
}

#[test]
fn an_offset_skips_the_rows_ranked_before_in_both_dialects() {
    let mut p = plan("patients", Intent::List);
    p.order = vec![OrderBy {
        key: OrderKey::Attribute {
            attribute: "patients.age".into(),
        },
        order: SortOrder::Desc,
    }];
    p.limit = Some(1);
    p.offset = Some(2);
    for d in Dialect::ALL {
        let r = render(&p, &model(), d).unwrap();
        assert!(r.sql.contains("LIMIT") && r.sql.contains("OFFSET"), "{}", r.sql);
        assert!(r.values.contains(&BoundValue::Int(2)), "{:?}", r.values);
    }
    // no offset on a one-row aggregate
    let mut c = plan("patients", Intent::Count);
    c.metrics = vec![Metric {
        agg: MeasureAgg::Count,
        attribute: None,
        condition: None,
        label: "n".into(),
    }];
    c.offset = Some(1);
    let r = render(&c, &model(), Dialect::Sqlite).unwrap();
    assert!(!r.sql.contains("OFFSET"), "{}", r.sql);
}

#[test]
fn a_single_member_any_holds_on_related_rows_of_its_own() {
    let eq = |v: &str| cmp("wounds.etiology", CompareOp::Eq, Value::Text(v.into()));
    let mut p = plan("patients", Intent::List);
    // one wound that is both: a single EXISTS with both conditions
    p.filters = vec![eq("pressure_injury"), eq("venous_leg_ulcer")];
    let r = render(&p, &model(), Dialect::Sqlite).unwrap();
    assert_eq!(r.sql.matches("EXISTS").count(), 1, "{}", r.sql);
    // "both a PI and a VLU": two wounds, two EXISTS
    p.filters = vec![
        Constraint::Any {
            of: vec![eq("pressure_injury")],
        },
        Constraint::Any {
            of: vec![eq("venous_leg_ulcer")],
        },
    ];
    for d in Dialect::ALL {
        let r = render(&p, &model(), d).unwrap();
        assert_eq!(r.sql.matches("EXISTS").count(), 2, "{}", r.sql);
    }
}

#[test]
fn a_related_count_counts_only_rows_matching_its_condition() {
    let mut p = plan("clinics", Intent::List);
    p.filters = vec![Constraint::RelatedCount {
        per: None,
        related: "wounds".into(),
        op: CompareOp::Gt,
        value: 150,
        within: None,
        condition: Some(Box::new(cmp(
            "wounds.status",
            CompareOp::Eq,
            Value::Text("open".into()),
        ))),
    }];
    for d in Dialect::ALL {
        let r = render(&p, &model(), d).unwrap();
        assert!(
            r.sql.contains("COUNT(*)") && r.sql.contains("status"),
            "{}",
            r.sql
        );
        assert!(
            r.values.contains(&BoundValue::Text("open".into())),
            "{:?}",
            r.values
        );
    }
    // a condition on another entity's attributes is refused, not rendered wrongly
    p.filters = vec![Constraint::RelatedCount {
        per: None,
        related: "wounds".into(),
        op: CompareOp::Gt,
        value: 1,
        within: None,
        condition: Some(Box::new(cmp("patients.smoker", CompareOp::Eq, Value::Bool(true)))),
    }];
    assert!(matches!(err(&p), RenderError::InvalidPlan { .. }));
}

#[test]
fn a_ranking_within_groups_numbers_each_groups_rows_in_both_dialects() {
    let mut p = plan("wounds", Intent::Rank);
    p.metrics = vec![Metric {
        agg: MeasureAgg::Count,
        attribute: None,
        condition: None,
        label: "Number of wounds".into(),
    }];
    p.dimensions = vec![
        Dimension::Attribute {
            attribute: "wounds.etiology".into(),
        },
        Dimension::Attribute {
            attribute: "clinics.care_setting".into(),
        },
    ];
    p.order = vec![OrderBy {
        key: OrderKey::Metric { index: 0 },
        order: SortOrder::Desc,
    }];
    p.limit_per_group = Some(2);
    for d in Dialect::ALL {
        let r = render(&p, &model(), d).unwrap();
        assert!(r.sql.contains("ROW_NUMBER() OVER (PARTITION BY"), "{}", r.sql);
        assert!(r.values.contains(&BoundValue::Int(2)), "{:?}", r.values);
        // the rank column is not shown
        assert_eq!(r.columns.len(), 3, "{:?}", r.columns);
        sqlparser::parser::Parser::parse_sql(&*d.parser_dialect(), &r.sql)
            .unwrap_or_else(|e| panic!("{d:?}: {e}: {}", r.sql));
    }
    // without a grouping besides the ranked value there is nothing to rank within
    p.dimensions.truncate(1);
    assert!(matches!(err(&p), RenderError::InvalidPlan { .. }));
}

#[test]
fn a_join_the_where_needs_a_matched_row_of_is_inner_and_the_others_stay_left() {
    let setting = || {
        cmp(
            "clinics.care_setting",
            CompareOp::Eq,
            Value::Text("community".into()),
        )
    };
    let mut p = plan("assessments", Intent::GroupBy);
    p.dimensions = vec![Dimension::Attribute {
        attribute: "clinicians.discipline".into(),
    }];
    // a condition on the clinic's column: the clinic and the wound on its way are joined
    // inner; the clinician, only grouped by, keeps its null group (left join)
    p.filters = vec![setting()];
    for d in Dialect::ALL {
        let sql = render(&p, &model(), d).unwrap().sql;
        assert!(
            sql.contains(" JOIN \"wounds\" AS \"wounds\"") && !sql.contains("LEFT JOIN \"wounds\""),
            "{sql}"
        );
        assert!(
            sql.contains(" JOIN \"clinics\" AS \"clinics\"") && !sql.contains("LEFT JOIN \"clinics\""),
            "{sql}"
        );
        assert!(sql.contains("LEFT JOIN \"clinicians\""), "{sql}");
    }
    // a null-extended row can satisfy these: every join stays left
    for filters in [
        vec![Constraint::IsNull {
            attribute: "clinics.care_setting".into(),
        }],
        vec![Constraint::Any {
            of: vec![
                setting(),
                cmp("assessments.pain_score", CompareOp::Gte, Value::Integer(8)),
            ],
        }],
        vec![cmp("wounds.latest_area", CompareOp::Gt, Value::Real(10.0))],
    ] {
        p.filters = filters;
        let sql = render(&p, &model(), Dialect::Sqlite).unwrap().sql;
        let inner = sql.replace("LEFT JOIN", "");
        assert!(
            !inner.contains(" JOIN \"wounds\"") && !inner.contains(" JOIN \"clinics\""),
            "{sql}"
        );
    }
}

#[test]
fn row_counts_by_a_period_of_the_entitys_date_are_counted_per_day_first() {
    let mut p = plan("assessments", Intent::GroupBy);
    p.dimensions = vec![Dimension::Time {
        attribute: "assessments.assessed_on".into(),
        grain: crate::semantic::Grain::Month,
    }];
    for d in Dialect::ALL {
        let sql = render(&p, &model(), d).unwrap().sql;
        assert!(
            sql.starts_with(
                "WITH \"per_day\" AS (SELECT \"assessments\".\"assessed_on\" AS \"day\", COUNT(*)"
            ),
            "{sql}"
        );
        assert!(sql.contains("GROUP BY \"assessments\".\"assessed_on\")"), "{sql}");
    }
    // another condition, an average, or a period of a related entity's date: the plain shape
    let mut with_filter = p.clone();
    with_filter.filters = vec![cmp("assessments.pain_score", CompareOp::Gte, Value::Integer(8))];
    let mut average = p.clone();
    average.metrics = vec![Metric {
        agg: MeasureAgg::Avg,
        attribute: Some("assessments.pain_score".into()),
        condition: None,
        label: "Average pain".into(),
    }];
    let mut related = plan("assessments", Intent::GroupBy);
    related.dimensions = vec![Dimension::Time {
        attribute: "wounds.onset_date".into(),
        grain: crate::semantic::Grain::Month,
    }];
    for q in [with_filter, average, related] {
        let sql = render(&q, &model(), Dialect::Sqlite).unwrap().sql;
        assert!(!sql.contains("per_day"), "{sql}");
    }
}

#[test]
fn a_list_by_age_breaks_ties_of_whole_years_by_the_birth_date() {
    for (order, tie) in [(SortOrder::Desc, "ASC"), (SortOrder::Asc, "DESC")] {
        let mut p = plan("patients", Intent::List);
        p.order = vec![OrderBy {
            key: OrderKey::Attribute {
                attribute: "patients.age".into(),
            },
            order,
        }];
        p.limit = Some(10);
        for dialect in [Dialect::Sqlite, Dialect::Postgres] {
            let r = render(&p, &model(), dialect).unwrap();
            let by = &r.sql[r.sql.find("ORDER BY").expect("ordered")..];
            let age = by.find("\"patients.age\"").expect("by age first");
            let birth = by
                .find(&format!("\"birth_date\" {tie} NULLS LAST"))
                .unwrap_or_else(|| panic!("birth date {tie} after age: {}", r.sql));
            let key = by.find("\"patients.id\"").expect("key last");
            assert!(age < birth && birth < key, "{}", r.sql);
        }
    }
}
