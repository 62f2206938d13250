//! Rendered SQL on real databases: random valid plans return the same rows on SQLite
//! and PostgreSQL (fresh databases seeded with the same small synthetic dataset), and
//! hand-picked plans return exactly what is computed independently, in Rust, from the
//! generated rows.

mod common;
mod sql_support;

use chrono::NaiveDate;
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::TestRunner;
use server::dataset::model::Dataset;
use server::dataset::{GenConfig, OnExisting, generate, seed};
use server::engine::plan::{Dimension, Intent, Metric, OrderBy, OrderKey, QueryPlan};
use server::semantic::{CompareOp, Constraint, Grain, MeasureAgg, SortOrder, Span, SpanUnit, Value};
use server::sql::{Dialect, render, render_count, render_with_cap};
use sql_support::{Cell, MODEL, run, today};
use std::collections::{BTreeMap, HashMap};

/// Small but not trivial: 40 patients, ~100 wounds, ~2,000 assessments.
fn config() -> GenConfig {
    GenConfig::new(2, 11)
}

async fn seeded_backends() -> Vec<common::TestDb> {
    let dbs = common::all_backends().await;
    for db in &dbs {
        seed(&db.db, &config(), OnExisting::Refuse).await.expect("seed");
    }
    dbs
}

async fn rows(db: &common::TestDb, plan: &QueryPlan) -> Vec<Vec<Cell>> {
    let dialect = Dialect::from(db.db.backend());
    let r = render(plan, &MODEL, dialect).unwrap_or_else(|e| panic!("{dialect:?}: {e}"));
    run(&db.db, &r)
        .await
        .unwrap_or_else(|e| panic!("{dialect:?}: {e}\n{}\n{:?}", r.sql, r.values))
}

fn plan(entity: &str, intent: Intent) -> QueryPlan {
    let mut p = QueryPlan::new(entity, today());
    p.intent = intent;
    p
}

/// A count of `entity` under `filters`.
fn count_of(entity: &str, filters: Vec<Constraint>) -> QueryPlan {
    let mut p = plan(entity, Intent::Count);
    p.filters = filters;
    p
}

/// The one number a count plan returns.
async fn counted(db: &common::TestDb, plan: &QueryPlan) -> i64 {
    int(&rows(db, plan).await[0][0])
}

fn cmp(attribute: &str, op: CompareOp, value: impl Into<Value>) -> Constraint {
    Constraint::Compare {
        attribute: attribute.into(),
        op,
        value: value.into(),
        unit: None,
    }
}

fn int(c: &Cell) -> i64 {
    match c {
        Cell::Int(i) => *i,
        other => panic!("expected an integer, got {other:?}"),
    }
}

#[tokio::test]
async fn random_plans_give_the_same_rows_on_sqlite_and_postgres() {
    let dbs = seeded_backends().await;
    if dbs.len() < 2 {
        eprintln!("PostgreSQL unavailable: nothing to compare");
    }
    let strategy = sql_support::plan();
    let mut runner = TestRunner::deterministic();
    let (mut compared, mut non_empty) = (0, 0);
    for case in 0..300 {
        let plan = strategy.new_tree(&mut runner).expect("a plan").current();
        let mut results = Vec::new();
        for db in &dbs {
            results.push(rows(db, &plan).await);
        }
        if let [sqlite, postgres] = results.as_slice() {
            assert!(
                sqlite == postgres,
                "case {case}: backends disagree\nplan: {plan:#?}\nsqlite: {sqlite:?}\npostgres: {postgres:?}\n{}",
                render(&plan, &MODEL, Dialect::Postgres).unwrap().sql
            );
            compared += 1;
        }
        let first = &results[0];
        let counted_nothing =
            first.len() == 1 && first[0].iter().all(|c| matches!(c, Cell::Int(0) | Cell::Null));
        if !first.is_empty() && !counted_nothing {
            non_empty += 1;
        }
    }
    // The comparison only means something if most plans find rows.
    assert!(
        non_empty >= 80,
        "only {non_empty} of 300 random plans returned data"
    );
    eprintln!("compared {compared} plans on both backends; {non_empty} returned data");
    for db in dbs {
        db.cleanup().await;
    }
}

/// Independent computations over the generated rows.
struct Truth {
    data: Dataset,
}

impl Truth {
    fn new() -> Truth {
        Truth {
            data: generate(&config()),
        }
    }

    /// Assessments of a wound, oldest first (ties by id).
    fn visits(&self, wound: i64) -> Vec<&server::dataset::model::Assessment> {
        let mut v: Vec<_> = self
            .data
            .assessments
            .iter()
            .filter(|a| a.wound_id == wound)
            .collect();
        v.sort_by_key(|a| (a.assessed_on, a.id));
        v
    }

    /// How many generated wounds `keep` holds for.
    fn wounds_where(&self, keep: impl Fn(&server::dataset::model::Wound) -> bool) -> i64 {
        self.data.wounds.iter().filter(|w| keep(w)).count() as i64
    }

    fn latest_area_on_or_before(&self, wound: i64, day: NaiveDate) -> Option<f64> {
        self.visits(wound)
            .into_iter()
            .rfind(|a| a.assessed_on <= day)
            .map(|a| a.area_cm2)
    }
}

#[tokio::test]
async fn hand_picked_plans_match_values_computed_from_the_dataset() {
    let dbs = seeded_backends().await;
    let t = Truth::new();
    let today = today();
    let days = |n: u64| today - chrono::Days::new(n);

    for db in &dbs {
        let dialect = Dialect::from(db.db.backend());

        // Count with a simple filter.
        let p = count_of(
            "wounds",
            vec![cmp("wounds.status", CompareOp::Eq, Value::Text("open".into()))],
        );
        let open = t.wounds_where(|w| w.status.as_str() == "open");
        assert_eq!(counted(db, &p).await, open, "{dialect:?} open wounds");
        let count = render_count(&p, &MODEL, dialect).unwrap();
        assert_eq!(
            int(&run(&db.db, &count).await.unwrap()[0][0]),
            open,
            "{dialect:?} count preview"
        );

        // A difference between two values of one record: pain at the latest visit above
        // pain at the first (wounds.pain_change > 0), wounds whose first pain was 0 included.
        let p = count_of(
            "wounds",
            vec![cmp("wounds.pain_change", CompareOp::Gt, Value::Integer(0))],
        );
        let more_pain = t.wounds_where(|w| {
            let v = t.visits(w.id);
            matches!((v.first(), v.last()), (Some(f), Some(l)) if l.pain_score > f.pain_score)
        });
        assert!(more_pain > 0, "the dataset has wounds with more pain now");
        assert_eq!(
            counted(db, &p).await,
            more_pain,
            "{dialect:?} pain now above the first visit"
        );

        // A value at every visit ("pain 3 or more at every assessment"): no visit where it
        // does not hold, as the engine writes it (wounds without visits included).
        let p = count_of(
            "wounds",
            vec![Constraint::RelatedCount {
                per: None,
                related: "assessments".into(),
                op: CompareOp::Eq,
                value: 0,
                within: None,
                condition: Some(Box::new(Constraint::Not {
                    of: Box::new(cmp("assessments.pain_score", CompareOp::Gte, Value::Integer(3))),
                })),
            }],
        );
        let every = t.wounds_where(|w| t.visits(w.id).iter().all(|v| v.pain_score >= 3));
        assert!(
            every > 0 && every < t.data.wounds.len() as i64,
            "the dataset has wounds in pain at every visit, and others"
        );
        assert_eq!(counted(db, &p).await, every, "{dialect:?} pain 3+ at every visit");

        // The extreme of a per-visit value over every visit, as filters on the visits:
        // highest pain < 4 (no visit at 4 or more, some visit measured); lowest pain >= 3
        // (no visit below 3); highest pain = 6 (a visit at 6, none above).
        let pains = |w: i64| -> Vec<i32> {
            t.data
                .assessments
                .iter()
                .filter(|a| a.wound_id == w)
                .map(|a| a.pain_score)
                .collect()
        };
        let not = |c: Constraint| Constraint::Not { of: Box::new(c) };
        let measured = Constraint::NotNull {
            attribute: "assessments.pain_score".into(),
        };
        let pain = |op, v: i64| cmp("assessments.pain_score", op, Value::Integer(v));
        for (label, filters, keep) in [
            (
                "highest pain below 4",
                vec![not(pain(CompareOp::Gte, 4)), measured.clone()],
                Box::new(|ps: &[i32]| ps.iter().max().is_some_and(|&m| m < 4)) as Box<dyn Fn(&[i32]) -> bool>,
            ),
            (
                "lowest pain at least 3",
                vec![not(pain(CompareOp::Lt, 3)), measured.clone()],
                Box::new(|ps: &[i32]| ps.iter().min().is_some_and(|&m| m >= 3)),
            ),
            (
                "highest pain exactly 6",
                vec![pain(CompareOp::Eq, 6), not(pain(CompareOp::Gt, 6))],
                Box::new(|ps: &[i32]| ps.iter().max() == Some(&6)),
            ),
        ] {
            let want = t.data.wounds.iter().filter(|w| keep(&pains(w.id))).count() as i64;
            assert!(want > 0, "{label}: the dataset has such wounds");
            assert_eq!(
                counted(db, &count_of("wounds", filters)).await,
                want,
                "{dialect:?} {label}"
            );
        }

        // Group by a column: counts per etiology, in byte order of the etiology.
        let mut p = plan("wounds", Intent::GroupBy);
        p.dimensions = vec![Dimension::Attribute {
            attribute: "wounds.etiology".into(),
        }];
        let mut expected: BTreeMap<&str, i64> = BTreeMap::new();
        for w in &t.data.wounds {
            *expected.entry(w.etiology.as_str()).or_default() += 1;
        }
        let got: Vec<(String, i64)> = rows(db, &p)
            .await
            .iter()
            .map(|r| match &r[0] {
                Cell::Text(s) => (s.clone(), int(&r[1])),
                other => panic!("{other:?}"),
            })
            .collect();
        let want: Vec<(String, i64)> = expected.iter().map(|(k, v)| (k.to_string(), *v)).collect();
        assert_eq!(got, want, "{dialect:?} wounds by etiology");

        // Derived attributes on every wound: days open (today when not healed), latest area.
        let mut p = plan("wounds", Intent::List);
        p.columns = vec![
            "wounds.days_open".into(),
            "wounds.latest_area".into(),
            "wounds.assessment_count".into(),
        ];
        let got = rows(db, &p).await;
        assert_eq!(got.len(), t.data.wounds.len());
        // A list also shows the entity's list attributes: find the columns by name.
        let names: Vec<String> = render(&p, &MODEL, dialect)
            .unwrap()
            .columns
            .into_iter()
            .map(|c| c.name)
            .collect();
        let at = |n: &str| {
            names
                .iter()
                .position(|c| c == n)
                .unwrap_or_else(|| panic!("{n} in {names:?}"))
        };
        let (id_col, days_col, area_col, visits_col) = (
            at("wounds.id"),
            at("wounds.days_open"),
            at("wounds.latest_area"),
            at("wounds.assessment_count"),
        );
        for (row, w) in got.iter().zip(&t.data.wounds) {
            assert_eq!(int(&row[id_col]), w.id);
            let open_days = (w.healed_date.unwrap_or(today) - w.onset_date).num_days();
            assert_eq!(
                int(&row[days_col]),
                open_days,
                "{dialect:?} days_open of wound {}",
                w.id
            );
            let latest = t
                .latest_area_on_or_before(w.id, NaiveDate::MAX)
                .map_or(Cell::Null, Cell::Real);
            assert_eq!(row[area_col], latest, "{dialect:?} latest_area of wound {}", w.id);
            assert_eq!(int(&row[visits_col]), t.visits(w.id).len() as i64);
        }

        // Age in whole years on `today`.
        let mut p = plan("patients", Intent::List);
        p.columns = vec!["patients.age".into()];
        let got = rows(db, &p).await;
        for (row, patient) in got.iter().zip(&t.data.patients) {
            let age = today
                .years_since(patient.birth_date)
                .map(i64::from)
                .expect("born before today");
            assert_eq!(int(&row[2]), age, "{dialect:?} age of patient {}", patient.id);
        }

        // Median healing time of healed wounds (SQLite: window functions; PostgreSQL: percentile_cont).
        let mut p = plan("wounds", Intent::Aggregate);
        p.filters = vec![cmp("wounds.status", CompareOp::Eq, Value::Text("healed".into()))];
        p.metrics = vec![Metric {
            agg: MeasureAgg::Median,
            attribute: Some("wounds.healing_days".into()),
            condition: None,
            label: "Median".into(),
        }];
        let mut healing: Vec<i64> = t
            .data
            .wounds
            .iter()
            .filter_map(|w| w.healed_date.map(|h| (h - w.onset_date).num_days()))
            .collect();
        healing.sort_unstable();
        let n = healing.len();
        let median = (healing[(n - 1) / 2] + healing[n / 2]) as f64 / 2.0;
        assert_eq!(
            rows(db, &p).await[0][0],
            Cell::Real(median),
            "{dialect:?} median healing days"
        );

        // Monthly trend of assessments in 2026.
        let mut p = plan("assessments", Intent::Trend);
        p.dimensions = vec![Dimension::Time {
            attribute: "assessments.assessed_on".into(),
            grain: Grain::Month,
        }];
        p.filters = vec![Constraint::Between {
            attribute: "assessments.assessed_on".into(),
            min: Value::Text("2026-01-01".into()),
            max: Value::Text("2026-12-31".into()),
            unit: None,
        }];
        let mut per_month: BTreeMap<String, i64> = BTreeMap::new();
        for a in t
            .data
            .assessments
            .iter()
            .filter(|a| a.assessed_on.format("%Y").to_string() == "2026")
        {
            *per_month
                .entry(a.assessed_on.format("%Y-%m-01").to_string())
                .or_default() += 1;
        }
        let got: Vec<(Cell, i64)> = rows(db, &p)
            .await
            .iter()
            .map(|r| (r[0].clone(), int(&r[1])))
            .collect();
        let want: Vec<(Cell, i64)> = per_month.into_iter().map(|(k, v)| (Cell::Text(k), v)).collect();
        assert_eq!(got, want, "{dialect:?} monthly trend");

        // Time window: assessments in the last 30 days (cut-off included, today included).
        let p = count_of(
            "assessments",
            vec![Constraint::TimeWindow {
                dimension: None,
                last: Span::days(30),
            }],
        );
        let recent = t
            .data
            .assessments
            .iter()
            .filter(|a| a.assessed_on >= days(30) && a.assessed_on <= today)
            .count() as i64;
        assert_eq!(counted(db, &p).await, recent, "{dialect:?} last 30 days");

        // Change: area down by at least 40 % over 4 weeks (latest vs. latest on or before the start).
        let p = count_of(
            "wounds",
            vec![Constraint::Change {
                attribute: "assessments.area".into(),
                per: "wounds".into(),
                over: Span {
                    n: 4,
                    unit: SpanUnit::Weeks,
                },
                op: CompareOp::Lte,
                pct: -40.0,
            }],
        );
        let shrunk = t.wounds_where(|w| {
            let now = t.latest_area_on_or_before(w.id, today);
            let then = t.latest_area_on_or_before(w.id, days(28));
            matches!((now, then), (Some(n), Some(b)) if b != 0.0 && (n - b) * 100.0 / b <= -40.0)
        });
        assert_eq!(counted(db, &p).await, shrunk, "{dialect:?} 40 % reduction");

        // Related count within a window: at least 2 assessments in the last 30 days.
        let p = count_of(
            "wounds",
            vec![Constraint::RelatedCount {
                per: None,
                related: "assessments".into(),
                op: CompareOp::Gte,
                value: 2,
                within: Some(Span::days(30)),
                condition: None,
            }],
        );
        let busy = t.wounds_where(|w| {
            t.visits(w.id)
                .iter()
                .filter(|a| a.assessed_on >= days(30) && a.assessed_on <= today)
                .count()
                >= 2
        });
        assert_eq!(counted(db, &p).await, busy, "{dialect:?} related count");

        // Two conditions on a related entity hold on the same related row.
        let p = count_of(
            "wounds",
            vec![
                cmp(
                    "assessments.tissue_type",
                    CompareOp::Eq,
                    Value::Text("slough".into()),
                ),
                cmp("assessments.pain_score", CompareOp::Gte, 6),
            ],
        );
        let same_row = t.wounds_where(|w| {
            t.visits(w.id)
                .iter()
                .any(|a| a.tissue_type.as_str() == "slough" && a.pain_score >= 6)
        });
        assert_eq!(counted(db, &p).await, same_row, "{dialect:?} same related row");

        // A negated condition on a related entity: no related row matches.
        let p = count_of(
            "wounds",
            vec![Constraint::Not {
                of: Box::new(cmp("assessments.infection_signs", CompareOp::Eq, true)),
            }],
        );
        let never = t.wounds_where(|w| !t.visits(w.id).iter().any(|a| a.infection_signs));
        assert_eq!(counted(db, &p).await, never, "{dialect:?} no infected assessment");

        // "non smokers where none of their wounds was ever infected": the patient's own
        // flag, and no related wound flagged (not "some wound that is not").
        let p = count_of(
            "patients",
            vec![
                cmp("patients.smoker", CompareOp::Eq, false),
                Constraint::Not {
                    of: Box::new(cmp("wounds.infected", CompareOp::Eq, true)),
                },
            ],
        );
        let clean = t
            .data
            .patients
            .iter()
            .filter(|p| !p.smoker && !t.data.wounds.iter().any(|w| w.patient_id == p.id && w.infected))
            .count() as i64;
        let some_clean = t
            .data
            .patients
            .iter()
            .filter(|p| !p.smoker && t.data.wounds.iter().any(|w| w.patient_id == p.id && !w.infected))
            .count() as i64;
        assert_ne!(clean, some_clean, "the data tells the two readings apart");
        assert_eq!(
            counted(db, &p).await,
            clean,
            "{dialect:?} none of their wounds infected"
        );

        // "wounds of patients registered at <clinic>": a reference compared with a name is
        // the referenced clinic's name, through that reference (the patient's clinic), not
        // the wound's treating clinic.
        let clinic = &t.data.clinics[0];
        let p = count_of(
            "wounds",
            vec![cmp(
                "patients.clinic_id",
                CompareOp::Eq,
                Value::Text(clinic.name.clone()),
            )],
        );
        let registered = t.wounds_where(|w| {
            t.data
                .patients
                .iter()
                .any(|p| p.id == w.patient_id && p.clinic_id == clinic.id)
        });
        let treated = t.wounds_where(|w| w.clinic_id == clinic.id);
        assert_ne!(registered, treated, "the data tells the two clinics apart");
        assert_eq!(
            counted(db, &p).await,
            registered,
            "{dialect:?} patient's clinic by name"
        );

        // A related count of only the rows a condition describes: wounds with at least 2
        // assessments showing slough.
        let p = count_of(
            "wounds",
            vec![Constraint::RelatedCount {
                per: None,
                related: "assessments".into(),
                op: CompareOp::Gte,
                value: 2,
                within: None,
                condition: Some(Box::new(cmp(
                    "assessments.tissue_type",
                    CompareOp::Eq,
                    Value::Text("slough".into()),
                ))),
            }],
        );
        let sloughy = t.wounds_where(|w| {
            t.visits(w.id)
                .iter()
                .filter(|a| a.tissue_type.as_str() == "slough")
                .count()
                >= 2
        });
        assert_eq!(
            counted(db, &p).await,
            sloughy,
            "{dialect:?} related count with a condition"
        );

        // "both": two single-member `any` on the same related entity are two rows.
        let p = count_of(
            "wounds",
            vec![
                Constraint::Any {
                    of: vec![cmp(
                        "assessments.tissue_type",
                        CompareOp::Eq,
                        Value::Text("slough".into()),
                    )],
                },
                Constraint::Any {
                    of: vec![cmp(
                        "assessments.tissue_type",
                        CompareOp::Eq,
                        Value::Text("necrotic".into()),
                    )],
                },
            ],
        );
        let both = t.wounds_where(|w| {
            let v = t.visits(w.id);
            v.iter().any(|a| a.tissue_type.as_str() == "slough")
                && v.iter().any(|a| a.tissue_type.as_str() == "necrotic")
        });
        assert!(both > 0, "the fixture has wounds with both");
        assert_eq!(counted(db, &p).await, both, "{dialect:?} both, on separate rows");

        // "rounded to 1 decimal": the average BMI, rounded by the database.
        let mut p = plan("patients", Intent::Aggregate);
        p.metrics = vec![Metric {
            agg: MeasureAgg::Avg,
            attribute: Some("patients.bmi".into()),
            condition: None,
            label: "Average BMI".into(),
        }];
        p.round = Some(1);
        let got = match &rows(db, &p).await[0][0] {
            Cell::Real(v) => *v,
            other => panic!("{dialect:?}: expected a real, got {other:?}"),
        };
        let n = t.data.patients.len() as f64;
        let mean = t.data.patients.iter().map(|x| x.bmi).sum::<f64>() / n;
        assert!(
            (got * 10.0 - (got * 10.0).round()).abs() < 1e-6,
            "{dialect:?}: {got} has one decimal"
        );
        assert!((got - mean).abs() <= 0.05 + 1e-9, "{dialect:?}: {got} vs {mean}");

        // "clinicians who assessed at least N different wounds": through the assessments
        // (one to many) to their wounds (many to one), each wound counted once.
        let mut wounds_of: HashMap<i64, std::collections::HashSet<i64>> = HashMap::new();
        let mut visits_of: HashMap<i64, i64> = HashMap::new();
        for a in &t.data.assessments {
            wounds_of.entry(a.clinician_id).or_default().insert(a.wound_id);
            *visits_of.entry(a.clinician_id).or_default() += 1;
        }
        let mut distinct: Vec<i64> = wounds_of.values().map(|w| w.len() as i64).collect();
        distinct.sort_unstable();
        let n = distinct[distinct.len() / 2];
        let want = t
            .data
            .clinicians
            .iter()
            .filter(|c| wounds_of.get(&c.id).map_or(0, |w| w.len() as i64) >= n)
            .count() as i64;
        // the cut must tell distinct wounds from visits, or the check proves nothing
        let by_visits = t
            .data
            .clinicians
            .iter()
            .filter(|c| visits_of.get(&c.id).copied().unwrap_or(0) >= n)
            .count() as i64;
        assert_ne!(want, by_visits, "the fixture separates wounds from visits");
        let p = count_of(
            "clinicians",
            vec![Constraint::RelatedCount {
                per: None,
                related: "wounds".into(),
                op: CompareOp::Gte,
                value: n as u32,
                within: None,
                condition: None,
            }],
        );
        assert_eq!(
            counted(db, &p).await,
            want,
            "{dialect:?} distinct wounds through visits"
        );

        // "locations with more than N open wounds": groups kept by their count (HAVING).
        let mut per_location: BTreeMap<&str, i64> = BTreeMap::new();
        for w in t.data.wounds.iter().filter(|w| w.status.as_str() == "open") {
            *per_location.entry(w.location.as_str()).or_default() += 1;
        }
        let mut counts: Vec<i64> = per_location.values().copied().collect();
        counts.sort_unstable();
        // a cut between the smallest and largest group, so some groups stay and some go
        let cut = counts[counts.len() / 2];
        let mut p = count_of(
            "wounds",
            vec![cmp("wounds.status", CompareOp::Eq, Value::Text("open".into()))],
        );
        p.dimensions = vec![Dimension::Attribute {
            attribute: "wounds.location".into(),
        }];
        p.having = Some(server::engine::plan::Having {
            op: CompareOp::Gt,
            value: cut as f64,
        });
        let want: BTreeMap<String, i64> = per_location
            .iter()
            .filter(|(_, n)| **n > cut)
            .map(|(k, n)| ((*k).to_owned(), *n))
            .collect();
        assert!(
            !want.is_empty() && want.len() < per_location.len(),
            "the cut splits the groups"
        );
        let got: BTreeMap<String, i64> = rows(db, &p)
            .await
            .iter()
            .map(|r| match &r[0] {
                Cell::Text(k) => (k.clone(), int(&r[1])),
                other => panic!("{dialect:?}: expected a location, got {other:?}"),
            })
            .collect();
        assert_eq!(got, want, "{dialect:?} groups kept by their count");

        // "etiologies whose average initial area is above X": groups kept by an average.
        let mut sums: BTreeMap<&str, (f64, f64)> = BTreeMap::new();
        for w in &t.data.wounds {
            let e = sums.entry(w.etiology.as_str()).or_default();
            e.0 += w.initial_area_cm2;
            e.1 += 1.0;
        }
        let mut avgs: Vec<f64> = sums.values().map(|(s, n)| s / n).collect();
        avgs.sort_by(f64::total_cmp);
        let cut = (avgs[avgs.len() / 2 - 1] + avgs[avgs.len() / 2]) / 2.0;
        let mut p = plan("wounds", Intent::Aggregate);
        p.metrics = vec![Metric {
            agg: MeasureAgg::Avg,
            attribute: Some("wounds.initial_area".into()),
            condition: None,
            label: "Average initial area".into(),
        }];
        p.dimensions = vec![Dimension::Attribute {
            attribute: "wounds.etiology".into(),
        }];
        p.having = Some(server::engine::plan::Having {
            op: CompareOp::Gt,
            value: cut,
        });
        let want: Vec<&str> = sums
            .iter()
            .filter(|(_, (s, n))| s / n > cut)
            .map(|(k, _)| *k)
            .collect();
        assert!(
            !want.is_empty() && want.len() < sums.len(),
            "the cut splits the groups"
        );
        let mut got: Vec<String> = rows(db, &p)
            .await
            .iter()
            .map(|r| match &r[0] {
                Cell::Text(k) => k.clone(),
                other => panic!("{dialect:?}: expected an etiology, got {other:?}"),
            })
            .collect();
        got.sort();
        assert_eq!(got, want, "{dialect:?} groups kept by an average");

        // "months with more than N assessments": periods of the records' date kept by
        // their count (a time bucket with HAVING).
        let mut per_month: BTreeMap<String, i64> = BTreeMap::new();
        for a in &t.data.assessments {
            *per_month
                .entry(a.assessed_on.format("%Y-%m-01").to_string())
                .or_default() += 1;
        }
        let mut counts: Vec<i64> = per_month.values().copied().collect();
        counts.sort_unstable();
        let cut = counts[counts.len() / 2];
        let mut p = plan("assessments", Intent::Trend);
        p.metrics = vec![Metric {
            agg: MeasureAgg::Count,
            attribute: None,
            condition: None,
            label: "Assessments".into(),
        }];
        p.dimensions = vec![Dimension::Time {
            attribute: "assessments.assessed_on".into(),
            grain: Grain::Month,
        }];
        p.having = Some(server::engine::plan::Having {
            op: CompareOp::Gt,
            value: cut as f64,
        });
        let want: BTreeMap<String, i64> = per_month
            .iter()
            .filter(|(_, n)| **n > cut)
            .map(|(k, n)| (k.clone(), *n))
            .collect();
        assert!(
            !want.is_empty() && want.len() < per_month.len(),
            "the cut splits the months"
        );
        let got: BTreeMap<String, i64> = rows(db, &p)
            .await
            .iter()
            .map(|r| match &r[0] {
                Cell::Text(k) => (k[..10].to_owned(), int(&r[1])),
                other => panic!("{dialect:?}: expected a month, got {other:?}"),
            })
            .collect();
        assert_eq!(got, want, "{dialect:?} months kept by their count");

        // Healing rate per clinic, best first, top 3.
        let mut p = plan("wounds", Intent::Rank);
        p.dimensions = vec![Dimension::Attribute {
            attribute: "wounds.clinic_id".into(),
        }];
        p.metrics = vec![Metric {
            agg: MeasureAgg::Share,
            attribute: None,
            condition: Some(cmp("wounds.status", CompareOp::Eq, Value::Text("healed".into()))),
            label: "Healing rate".into(),
        }];
        p.limit = Some(3);
        let mut per_clinic: HashMap<i64, (i64, i64)> = HashMap::new();
        for w in &t.data.wounds {
            let e = per_clinic.entry(w.clinic_id).or_default();
            e.1 += 1;
            if w.status.as_str() == "healed" {
                e.0 += 1;
            }
        }
        let mut want: Vec<(i64, f64)> = per_clinic
            .into_iter()
            .map(|(c, (h, n))| (c, 100.0 * h as f64 / n as f64))
            .collect();
        want.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        want.truncate(3);
        let got = rows(db, &p).await;
        assert_eq!(got.len(), 3);
        for (row, (clinic, rate)) in got.iter().zip(&want) {
            assert_eq!(
                (int(&row[0]), row[1].clone()),
                (*clinic, Cell::Real(*rate)),
                "{dialect:?} healing rate"
            );
        }
    }
    for db in dbs {
        db.cleanup().await;
    }
}

#[tokio::test]
async fn row_counts_by_period_are_the_generated_rows_counted_per_period() {
    // "assessments per month in 2026" is rendered as counts per day summed per month
    // (`per_day`); the groups, counts, HAVING and order must be those of the rows
    let dbs = seeded_backends().await;
    let t = Truth::new();
    let day = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
    let (start, end) = (day(2025, 7, 1), day(2026, 11, 1));
    let mut want: BTreeMap<String, i64> = BTreeMap::new();
    for a in t
        .data
        .assessments
        .iter()
        .filter(|a| a.assessed_on >= start && a.assessed_on < end)
    {
        *want
            .entry(a.assessed_on.format("%Y-%m-01").to_string())
            .or_default() += 1;
    }
    assert!(want.len() >= 12, "the dataset should cover the range: {want:?}");
    let mut p = plan("assessments", Intent::GroupBy);
    p.dimensions = vec![Dimension::Time {
        attribute: "assessments.assessed_on".into(),
        grain: Grain::Month,
    }];
    p.time_range = Some(server::engine::plan::TimeRange {
        attribute: "assessments.assessed_on".into(),
        start,
        end,
    });
    let mut counts: Vec<i64> = want.values().copied().collect();
    counts.sort();
    let threshold = counts[counts.len() / 2];
    for db in &dbs {
        let dialect = Dialect::from(db.db.backend());
        p.having = None;
        p.order = Vec::new();
        p.metrics = Vec::new();
        let sql = render(&p, &MODEL, dialect).unwrap().sql;
        assert!(sql.contains("per_day"), "{dialect:?}: {sql}");
        let got: Vec<(String, i64)> = rows(db, &p)
            .await
            .iter()
            .map(|r| match &r[0] {
                Cell::Text(m) => (m.clone(), int(&r[1])),
                other => panic!("{dialect:?}: a month as text, got {other:?}"),
            })
            .collect();
        assert_eq!(got, want.clone().into_iter().collect::<Vec<_>>(), "{dialect:?}");

        // months with more than the median count, the busiest first
        p.metrics = vec![Metric {
            agg: MeasureAgg::Count,
            attribute: None,
            condition: None,
            label: "Assessments".into(),
        }];
        p.having = Some(server::engine::plan::Having {
            op: CompareOp::Gt,
            value: threshold as f64,
        });
        p.order = vec![OrderBy {
            key: OrderKey::Metric { index: 0 },
            order: SortOrder::Desc,
        }];
        let mut busy: Vec<(String, i64)> = want
            .iter()
            .filter(|(_, n)| **n > threshold)
            .map(|(m, n)| (m.clone(), *n))
            .collect();
        busy.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let got: Vec<(String, i64)> = rows(db, &p)
            .await
            .iter()
            .map(|r| match &r[0] {
                Cell::Text(m) => (m.clone(), int(&r[1])),
                other => panic!("{dialect:?}: a month as text, got {other:?}"),
            })
            .collect();
        assert_eq!(got, busy, "{dialect:?} with HAVING");
    }
    for db in dbs {
        db.cleanup().await;
    }
}

#[tokio::test]
async fn the_row_cap_fetches_one_extra_row_to_detect_truncation() {
    let dbs = seeded_backends().await;
    let mut p = plan("assessments", Intent::List);
    p.order = vec![OrderBy {
        key: OrderKey::Attribute {
            attribute: "assessments.area".into(),
        },
        order: SortOrder::Desc,
    }];
    for db in &dbs {
        let dialect = Dialect::from(db.db.backend());
        let capped = render_with_cap(&p, &MODEL, dialect, 25).unwrap();
        let got = run(&db.db, &capped).await.unwrap();
        assert_eq!(got.len(), 26);
        assert!(capped.is_truncated(got.len()));
        let mut small = p.clone();
        small.limit = Some(10);
        let r = render_with_cap(&small, &MODEL, dialect, 25).unwrap();
        let got = run(&db.db, &r).await.unwrap();
        assert_eq!(got.len(), 10);
        assert!(!r.is_truncated(got.len()));
    }
    for db in dbs {
        db.cleanup().await;
    }
}

/// Least privilege: the warehouse reads the clinical tables and nothing else, so a
/// statement naming Clarion's own tables fails even if it reached the warehouse.
#[tokio::test]
async fn the_warehouse_can_read_the_clinical_tables_and_nothing_else_on_every_backend() {
    use server::semantic::AttributeType;
    use server::sql::{ColumnSource, OutputColumn, Rendered};
    use server::warehouse::exec::{ExecLimits, Warehouse};
    use server::warehouse::privilege::ReadableTables;
    for db in seeded_backends().await {
        let b = db.db.backend();
        let store = server::store::Store::new(db.db.clone());
        store
            .ensure_user("victim", "Victim", server::store::Role::Admin, "a-long-password")
            .await
            .unwrap();
        let tables = ReadableTables::new(MODEL.entities.iter().map(|e| e.table.clone()));
        let warehouse = Warehouse::new(&db.db, ExecLimits::default()).with_readable_tables(tables);
        let statement = |sql: &str| Rendered {
            dialect: Dialect::from(b),
            sql: sql.to_string(),
            values: Vec::new(),
            columns: vec![OutputColumn {
                name: "x".into(),
                label: "x".into(),
                ty: AttributeType::Text,
                source: ColumnSource::RowCount,
            }],
            row_cap: Some(10),
        };
        let ok = warehouse
            .run(&statement(
                "SELECT CAST(COUNT(*) AS TEXT) FROM patients p JOIN wounds w ON w.patient_id = p.id",
            ))
            .await;
        assert!(ok.is_ok(), "{b:?}: clinical tables are readable: {ok:?}");
        for forbidden in [
            "SELECT password_hash FROM users",
            "SELECT token_hash FROM sessions",
            "SELECT p.mrn FROM patients p WHERE EXISTS (SELECT 1 FROM api_tokens)",
            "SELECT question FROM query_history",
        ] {
            let r = warehouse.run(&statement(forbidden)).await;
            assert!(r.is_err(), "{b:?}: {forbidden} must not run: {r:?}");
            let e = r.unwrap_err().to_string();
            assert!(
                e.contains("prohibited") || e.contains("not authorized") || e.contains("permission denied"),
                "{b:?}: {forbidden}: {e}"
            );
        }
        db.cleanup().await;
    }
}

#[tokio::test]
async fn a_limit_with_its_ties_keeps_every_row_tied_with_the_last_one() {
    let dbs = seeded_backends().await;
    let t = Truth::new();
    let today = today();
    // wounds per patient, most first: the third patient's count and every patient with as
    // many or more
    let mut per_patient: HashMap<i64, i64> = HashMap::new();
    for w in &t.data.wounds {
        *per_patient.entry(w.patient_id).or_default() += 1;
    }
    let mut counts: Vec<i64> = per_patient.values().copied().collect();
    counts.sort_unstable_by(|a, b| b.cmp(a));
    let third = counts[2];
    let tied_ranked = counts.iter().filter(|&&c| c >= third).count();
    // oldest first: by age, and within one age in whole years by birth date, so only
    // patients born on the same day as the fifth oldest tie with it
    let _ = today;
    let mut born: Vec<NaiveDate> = t.data.patients.iter().map(|p| p.birth_date).collect();
    born.sort_unstable();
    let fifth = born[4];
    let tied_listed = born.iter().filter(|&&b| b <= fifth).count();

    let mut ranked = plan("wounds", Intent::Rank);
    ranked.metrics = vec![Metric {
        agg: MeasureAgg::Count,
        attribute: None,
        condition: None,
        label: "Wounds".into(),
    }];
    ranked.dimensions = vec![Dimension::Attribute {
        attribute: "patients.mrn".into(),
    }];
    ranked.order = vec![OrderBy {
        key: OrderKey::Metric { index: 0 },
        order: SortOrder::Desc,
    }];
    ranked.limit = Some(3);
    let mut listed = plan("patients", Intent::List);
    listed.order = vec![OrderBy {
        key: OrderKey::Attribute {
            attribute: "patients.age".into(),
        },
        order: SortOrder::Desc,
    }];
    listed.limit = Some(5);
    for db in &dbs {
        let dialect = Dialect::from(db.db.backend());
        // without ties: exactly the limit
        assert_eq!(rows(db, &ranked).await.len(), 3, "{dialect:?}");
        assert_eq!(rows(db, &listed).await.len(), 5, "{dialect:?}");
        let mut r = ranked.clone();
        r.limit_ties = true;
        let got = rows(db, &r).await;
        assert_eq!(got.len(), tied_ranked, "{dialect:?} ranked with ties: {got:?}");
        let figures: Vec<i64> = got.iter().map(|row| int(&row[1])).collect();
        assert!(
            figures.windows(2).all(|w| w[0] >= w[1]),
            "{dialect:?} in order: {figures:?}"
        );
        assert_eq!(figures.last().copied(), Some(third), "{dialect:?}");
        let mut l = listed.clone();
        l.limit_ties = true;
        let got = rows(db, &l).await;
        assert_eq!(got.len(), tied_listed, "{dialect:?} listed with ties");
    }
}
