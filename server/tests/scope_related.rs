//! Clinic scope through related rows (issue 16), on SQLite and PostgreSQL: a figure a
//! scoped account sees about one of its rows counts only related rows in its scope too.
//!
//! The demo data refers some patients to another clinic for a wound (the wound's treating
//! clinic is not the patient's registered clinic), so a patient's number of wounds, date
//! of last visit, "patients with a venous leg ulcer" and "wounds of diabetic patients"
//! differ when only the plan's own rows are scoped. Each plan is run as the orchestrator
//! runs it (scoped by `ScopePaths`, rendered by `render_scoped` / `render_count_scoped`)
//! for two scopes that split the clinics, and every figure is compared with one computed
//! here by hand-written SQL that reads only rows of the scope's clinics. The test also
//! checks that scoping the plan's own rows alone would have shown other figures, so it
//! can fail.

mod common;

use chrono::NaiveDate;
use serde_json::Value as Json;
use server::dataset::{self, GenConfig, OnExisting};
use server::db::Database;
use server::engine::{Intent, QueryPlan};
use server::orchestrator::scope::ScopePaths;
use server::semantic::{CompareOp, Constraint, SemanticModel, Value};
use server::sql::{Dialect, SummaryUse, render_count_scoped, render_scoped, render_with_cap};
use server::store::ClinicScope;
use server::warehouse::exec::{ExecLimits, Warehouse};
use std::collections::BTreeMap;

const CAP: u32 = 100_000;

/// `(id → figure as text)` of a hand-written statement `SELECT id, figure …`.
async fn truth(db: &Database, sql: &str) -> BTreeMap<i64, String> {
    let rows: Vec<(i64, Option<String>)> = match db {
        Database::Sqlite(p) => sqlx::query_as(sql).fetch_all(p).await.unwrap(),
        Database::Postgres(p) => sqlx::query_as(sql).fetch_all(p).await.unwrap(),
    };
    rows.into_iter()
        .map(|(id, v)| (id, v.unwrap_or_else(|| "null".into())))
        .collect()
}

/// One number of a hand-written statement.
async fn number(db: &Database, sql: &str) -> i64 {
    let row: (i64,) = match db {
        Database::Sqlite(p) => sqlx::query_as(sql).fetch_one(p).await.unwrap(),
        Database::Postgres(p) => sqlx::query_as(sql).fetch_one(p).await.unwrap(),
    };
    row.0
}

fn cell(v: &Json) -> String {
    match v {
        Json::Null => "null".into(),
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

struct Run<'a> {
    model: &'a SemanticModel,
    paths: &'a ScopePaths,
    warehouse: Warehouse,
    dialect: Dialect,
}

impl Run<'_> {
    /// `(id → column)` of a list plan, run scoped as the orchestrator runs it; with
    /// `own_rows_only`, as it was run before related rows were scoped.
    async fn list(
        &self,
        plan: &QueryPlan,
        scope: &ClinicScope,
        column: &str,
        own_rows_only: bool,
    ) -> BTreeMap<i64, String> {
        let scoped = self.paths.apply(plan, scope, &[]).unwrap();
        let r = if own_rows_only {
            render_with_cap(&scoped.plan, self.model, self.dialect, CAP).unwrap()
        } else {
            render_scoped(
                &scoped.plan,
                self.model,
                self.dialect,
                CAP,
                SummaryUse::LIVE,
                &scoped.rows,
            )
            .unwrap()
        };
        let at = r
            .columns
            .iter()
            .position(|c| c.name == column)
            .unwrap_or_else(|| panic!("no {column} in {:?}", r.columns));
        let rows = self
            .warehouse
            .run(&r)
            .await
            .unwrap_or_else(|e| panic!("{e}: {}", r.sql));
        assert!(!rows.truncated);
        rows.rows
            .iter()
            .map(|row| (row[0].as_i64().unwrap(), cell(&row[at])))
            .collect()
    }

    /// The single figure of a count plan, scoped; and its option-count preview.
    async fn count(&self, plan: &QueryPlan, scope: &ClinicScope, own_rows_only: bool) -> (i64, i64) {
        let scoped = self.paths.apply(plan, scope, &[]).unwrap();
        let r = if own_rows_only {
            render_with_cap(&scoped.plan, self.model, self.dialect, CAP).unwrap()
        } else {
            render_scoped(
                &scoped.plan,
                self.model,
                self.dialect,
                CAP,
                SummaryUse::LIVE,
                &scoped.rows,
            )
            .unwrap()
        };
        let rows = self
            .warehouse
            .run(&r)
            .await
            .unwrap_or_else(|e| panic!("{e}: {}", r.sql));
        let n = rows.rows[0].last().unwrap().as_i64().unwrap();
        let preview = if own_rows_only {
            n
        } else {
            let c = render_count_scoped(&scoped.plan, self.model, self.dialect, &scoped.rows).unwrap();
            let rows = self
                .warehouse
                .run(&c)
                .await
                .unwrap_or_else(|e| panic!("{e}: {}", c.sql));
            rows.rows[0][0].as_i64().unwrap()
        };
        (n, preview)
    }
}

fn eq(attribute: &str, value: Value) -> Constraint {
    Constraint::Compare {
        attribute: attribute.into(),
        op: CompareOp::Eq,
        value,
        unit: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn figures_about_a_scoped_row_count_only_related_rows_in_the_scope() {
    let model = SemanticModel::wound_care();
    let paths = ScopePaths::from_model(&model).unwrap();
    let today: NaiveDate = dataset::DEFAULT_ANCHOR;
    let mut backends = 0;
    for t in common::all_backends().await {
        backends += 1;
        dataset::seed(
            &t.db,
            &GenConfig::new(10, dataset::DEFAULT_SEED),
            OnExisting::Refuse,
        )
        .await
        .expect("seed");
        let db = &t.db;
        let run = Run {
            model: &model,
            paths: &paths,
            warehouse: Warehouse::new(db, ExecLimits::default()),
            dialect: Dialect::from(db.backend()),
        };
        let referred = number(
            db,
            "SELECT COUNT(*) FROM wounds w JOIN patients p ON p.id = w.patient_id WHERE w.clinic_id <> p.clinic_id",
        )
        .await;
        assert!(referred > 0, "the demo data refers no wound to another clinic");
        let mut differs = Vec::new();

        for (ids, list) in [(vec![1_i64], "1"), (vec![2, 3], "2, 3")] {
            let scope = ClinicScope::clinics(ids.clone());

            // A patient's number of wounds and date of last visit.
            let mut plan = QueryPlan::new("patients", today);
            plan.columns = vec!["patients.wound_count".into(), "patients.last_visit_on".into()];
            let want = truth(
                db,
                &format!(
                    "SELECT p.id, CAST((SELECT COUNT(*) FROM wounds w WHERE w.patient_id = p.id AND w.clinic_id IN ({list})) AS TEXT) \
                     FROM patients p WHERE p.clinic_id IN ({list})"
                ),
            )
            .await;
            let got = run.list(&plan, &scope, "patients.wound_count", false).await;
            assert_eq!(got, want, "wound counts of patients of clinics {list}");
            if run.list(&plan, &scope, "patients.wound_count", true).await != want {
                differs.push(format!("wound counts, clinics {list}"));
            }
            let want = truth(
                db,
                &format!(
                    "SELECT p.id, CAST((SELECT MAX(a.assessed_on) FROM assessments a JOIN wounds w ON w.id = a.wound_id \
                     WHERE w.patient_id = p.id AND w.clinic_id IN ({list})) AS TEXT) \
                     FROM patients p WHERE p.clinic_id IN ({list})"
                ),
            )
            .await;
            let got = run.list(&plan, &scope, "patients.last_visit_on", false).await;
            assert_eq!(got, want, "last visits of patients of clinics {list}");
            if run.list(&plan, &scope, "patients.last_visit_on", true).await != want {
                differs.push(format!("last visits, clinics {list}"));
            }

            // A clinician's number of assessments: only assessments of wounds in scope.
            let mut plan = QueryPlan::new("clinicians", today);
            plan.columns = vec!["clinicians.assessment_count".into()];
            let want = truth(
                db,
                &format!(
                    "SELECT c.id, CAST((SELECT COUNT(*) FROM assessments a JOIN wounds w ON w.id = a.wound_id \
                     WHERE a.clinician_id = c.id AND w.clinic_id IN ({list})) AS TEXT) \
                     FROM clinicians c WHERE c.clinic_id IN ({list})"
                ),
            )
            .await;
            assert_eq!(
                run.list(&plan, &scope, "clinicians.assessment_count", false)
                    .await,
                want,
                "assessment counts of clinicians of clinics {list}"
            );

            // A wound's number of assessments.
            let mut plan = QueryPlan::new("wounds", today);
            plan.columns = vec!["wounds.assessment_count".into()];
            let want = truth(
                db,
                &format!(
                    "SELECT w.id, CAST((SELECT COUNT(*) FROM assessments a WHERE a.wound_id = w.id) AS TEXT) \
                     FROM wounds w WHERE w.clinic_id IN ({list})"
                ),
            )
            .await;
            assert_eq!(
                run.list(&plan, &scope, "wounds.assessment_count", false).await,
                want,
                "assessment counts of wounds of clinics {list}"
            );

            // Patients with a venous leg ulcer: the ulcer must be one the account may see.
            let mut plan = QueryPlan::new("patients", today);
            plan.intent = Intent::Count;
            plan.filters
                .push(eq("wounds.etiology", Value::Text("venous_leg_ulcer".into())));
            let want = number(
                db,
                &format!(
                    "SELECT COUNT(*) FROM patients p WHERE p.clinic_id IN ({list}) AND EXISTS (SELECT 1 FROM wounds w \
                     WHERE w.patient_id = p.id AND w.etiology = 'venous_leg_ulcer' AND w.clinic_id IN ({list}))"
                ),
            )
            .await;
            let (n, preview) = run.count(&plan, &scope, false).await;
            assert_eq!((n, preview), (want, want), "patients with a VLU, clinics {list}");
            if run.count(&plan, &scope, true).await.0 != want {
                differs.push(format!("patients with a VLU, clinics {list}"));
            }

            // Patients with at least two wounds.
            let mut plan = QueryPlan::new("patients", today);
            plan.intent = Intent::Count;
            plan.filters.push(Constraint::RelatedCount {
                per: None,
                related: "wounds".into(),
                op: CompareOp::Gte,
                value: 2,
                within: None,
                condition: None,
            });
            let want = number(
                db,
                &format!(
                    "SELECT COUNT(*) FROM patients p WHERE p.clinic_id IN ({list}) AND (SELECT COUNT(*) FROM wounds w \
                     WHERE w.patient_id = p.id AND w.clinic_id IN ({list})) >= 2"
                ),
            )
            .await;
            let (n, preview) = run.count(&plan, &scope, false).await;
            assert_eq!(
                (n, preview),
                (want, want),
                "patients with 2+ wounds, clinics {list}"
            );
            if run.count(&plan, &scope, true).await.0 != want {
                differs.push(format!("patients with 2+ wounds, clinics {list}"));
            }

            // Wounds of diabetic patients: the patient must be one the account may see.
            let mut plan = QueryPlan::new("wounds", today);
            plan.intent = Intent::Count;
            plan.filters.push(eq("patients.diabetes", Value::Bool(true)));
            let want = number(
                db,
                &format!(
                    "SELECT COUNT(*) FROM wounds w JOIN patients p ON p.id = w.patient_id \
                     WHERE w.clinic_id IN ({list}) AND p.clinic_id IN ({list}) AND p.diabetes"
                ),
            )
            .await;
            let (n, preview) = run.count(&plan, &scope, false).await;
            assert_eq!(
                (n, preview),
                (want, want),
                "wounds of diabetic patients, clinics {list}"
            );
            if run.count(&plan, &scope, true).await.0 != want {
                differs.push(format!("wounds of diabetic patients, clinics {list}"));
            }
        }
        eprintln!(
            "{:?}: {referred} referred wounds; scoping only the plan's own rows would have shown other figures for: {differs:?}",
            db.backend()
        );
        assert!(
            differs.len() >= 4,
            "the data does not tell related-row scoping apart: {differs:?}"
        );
        t.cleanup().await;
    }
    assert_eq!(
        backends, 2,
        "PostgreSQL at 127.0.0.1:5432 is needed for this test"
    );
}

/// A clarification that offers clinic names ("I don't recognise "Rvrside". Which is
/// it?") offers a scoped account only names it may see, and its picker lists only its
/// clinics; an account that sees every clinic is offered the near name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clarification_options_and_pickers_name_only_clinics_in_the_scope() {
    use axum::http::{Method, StatusCode};
    use common::api::{Api, test_config};
    use serde_json::json;
    for db in common::all_backends().await {
        dataset::seed(
            &db.db,
            &GenConfig::new(5, dataset::DEFAULT_SEED),
            OnExisting::Refuse,
        )
        .await
        .expect("seed");
        let api = Api::over(db, test_config()).await;
        let store = &api.state.store;
        let bob = store.user_by_username("bob").await.unwrap().unwrap();
        store
            .set_clinic_scope(bob.id, &ClinicScope::clinics([2, 3]))
            .await
            .unwrap();
        let names: BTreeMap<i64, String> = api
            .state
            .orchestrator
            .clinics(&ClinicScope::All)
            .await
            .unwrap()
            .into_iter()
            .collect();
        let riverside = names[&1].clone();
        assert!(riverside.starts_with("Riverside"), "{names:?}");
        let question = "how many open wounds at Rvrside";
        let round = |token: String| {
            let api = &api;
            async move {
                let r = api
                    .call(
                        &token,
                        Method::POST,
                        "/api/v1/query",
                        Some(json!({"question": question})),
                    )
                    .await;
                assert_eq!(r.status, StatusCode::ACCEPTED, "{}", r.body);
                r.body["questions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|q| q["span_text"] == "Rvrside")
                    .unwrap_or_else(|| panic!("no question about Rvrside: {}", r.body))
                    .clone()
            }
        };
        // alice sees every clinic: the near name is offered
        let all = round(api.alice.clone()).await;
        let labels = |q: &Json| -> Vec<String> {
            q["options"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o["label"].as_str().unwrap().to_owned())
                .collect()
        };
        assert!(labels(&all).contains(&riverside), "{all}");
        // bob (clinics 2 and 3) is not offered it, nor any name outside his clinics
        let his = round(api.bob.clone()).await;
        let offered = labels(&his);
        assert!(!offered.contains(&riverside), "{his}");
        assert!(
            his["options"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|o| o["default"] == true)
                .count()
                == 1,
            "one best guess: {his}"
        );
        let picker: std::collections::BTreeSet<String> = his["custom"]["allowed_values"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect();
        assert_eq!(picker, [names[&2].clone(), names[&3].clone()].into(), "{his}");
        // every option counts only bob's rows: a named clinic of his or none
        for o in his["options"].as_array().unwrap() {
            let label = o["label"].as_str().unwrap();
            assert!(
                !names.values().any(|n| n == label) || label == names[&2] || label == names[&3],
                "{label} offered to bob"
            );
        }
        api.finish().await;
    }
}
