//! An answer's rows are reused only while the clinical data is unchanged, on SQLite and
//! PostgreSQL: the same statement twice is run once; after a row is inserted, updated in
//! place or deleted (in any clinical table) it runs again and gives the new rows; with a
//! trigger of the change counter missing or disabled, or the cache off, nothing is reused.

mod common;

use server::dataset::{GenConfig, OnExisting, seed};
use server::db::Database;
use server::engine::{AllowedValuesSnapshot, EngineInput, understand};
use server::semantic::SemanticModel;
use server::sql::{Dialect, RenderCheck, Rendered, render_with_cap};
use server::warehouse::answer_cache::{AnswerCache, AnswerCacheConfig, ClinicalVersion};
use server::warehouse::exec::{ExecLimits, Warehouse};
use std::time::Duration;

fn rendered(model: &SemanticModel, dialect: Dialect, question: &str) -> Rendered {
    let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 1).unwrap();
    let allowed = AllowedValuesSnapshot::from_model_static(model);
    let check = RenderCheck { model };
    let input = EngineInput::new(model, question, today)
        .with_check(&check)
        .with_allowed(&allowed);
    let plan = understand(&input)
        .plan
        .unwrap_or_else(|| panic!("{question}: no plan"));
    render_with_cap(&plan, model, dialect, 1000).unwrap()
}

async fn exec(db: &Database, sql: &str) {
    match db {
        Database::Sqlite(p) => sqlx::query(sql).execute(p).await.map(|_| ()),
        Database::Postgres(p) => sqlx::query(sql).execute(p).await.map(|_| ()),
    }
    .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

fn cache(db: &Database, model: &SemanticModel, cap: usize) -> AnswerCache {
    AnswerCache::new(
        AnswerCacheConfig {
            ttl: Duration::from_secs(600),
            cap,
        },
        ClinicalVersion::new(db.clone(), model.entities.iter().map(|e| e.table.clone())),
    )
}

#[tokio::test]
async fn an_answer_is_reused_only_while_the_clinical_tables_are_unchanged() {
    let model = SemanticModel::wound_care_shared();
    for t in common::all_backends().await {
        seed(&t.db, &GenConfig::new(2, 11), OnExisting::Refuse)
            .await
            .expect("seed");
        let backend = format!("{:?}", t.db.backend());
        let dialect = Dialect::from(t.db.backend());
        let wh = Warehouse::new(&t.db, ExecLimits::default());
        let answers = cache(&t.db, model, 100);
        let statements = [
            rendered(model, dialect, "average pain score by etiology"),
            rendered(model, dialect, "how many clinics"),
            rendered(model, dialect, "number of patients by clinic"),
        ];
        // (a change to the clinical tables, the statement whose rows it changes)
        let changes = [
            ("UPDATE assessments SET pain_score = 10 - pain_score", 0),
            (
                "INSERT INTO clinics (id, name, region, care_setting) \
                 VALUES (900, 'Answer Cache Clinic', 'North', 'community')",
                1,
            ),
            (
                "UPDATE patients SET clinic_id = 900 WHERE id IN (SELECT id FROM patients ORDER BY id LIMIT 3)",
                2,
            ),
            (
                "DELETE FROM assessments WHERE id IN (SELECT id FROM assessments ORDER BY id DESC LIMIT 50)",
                0,
            ),
        ];
        for (change, affected) in changes {
            for r in &statements {
                let (first, _) = answers.run(&wh, r).await;
                let (again, reused) = answers.run(&wh, r).await;
                assert!(
                    reused,
                    "{backend}: the same statement over the same data is reused"
                );
                assert_eq!(first.unwrap().rows, again.unwrap().rows, "{backend}");
            }
            let before = wh.run(&statements[affected]).await.unwrap().rows;
            exec(&t.db, change).await;
            let live = wh.run(&statements[affected]).await.unwrap().rows;
            assert_ne!(
                before, live,
                "{backend}: {change} changes the rows it is tested with"
            );
            for r in &statements {
                let (after, reused) = answers.run(&wh, r).await;
                assert!(!reused, "{backend}: after {change} every statement runs again");
                assert_eq!(
                    after.unwrap().rows,
                    wh.run(r).await.unwrap().rows,
                    "{backend}: after {change}"
                );
            }
        }
        assert!(answers.stats().hits >= 8, "{backend}: {:?}", answers.stats());

        // off: nothing kept
        let off = cache(&t.db, model, 0);
        for _ in 0..2 {
            let (rows, reused) = off.run(&wh, &statements[0]).await;
            assert!(!reused && rows.is_ok(), "{backend}");
        }
        assert!(off.is_empty());

        // a change counter that no longer sees every change: nothing is reused
        let disable = match &t.db {
            Database::Sqlite(_) => "DROP TRIGGER clinical_version_wounds_upd",
            // enabled for ordinary sessions only, not ALWAYS: replication writes would be missed
            Database::Postgres(_) => "ALTER TABLE wounds ENABLE TRIGGER clinical_version_bump",
        };
        exec(&t.db, disable).await;
        let blind = cache(&t.db, model, 100);
        for _ in 0..2 {
            let (rows, reused) = blind.run(&wh, &statements[0]).await;
            assert!(!reused, "{backend}: {disable}: not reused");
            assert_eq!(rows.unwrap().rows, wh.run(&statements[0]).await.unwrap().rows);
        }
        assert!(blind.is_empty(), "{backend}");
        if let Database::Postgres(_) = &t.db {
            exec(&t.db, "ALTER TABLE wounds DISABLE TRIGGER clinical_version_bump").await;
            let (_, reused) = blind.run(&wh, &statements[0]).await;
            assert!(!reused, "{backend}: a disabled trigger: not reused");
            exec(
                &t.db,
                "ALTER TABLE wounds ENABLE ALWAYS TRIGGER clinical_version_bump",
            )
            .await;
            let _ = blind.run(&wh, &statements[0]).await;
            let (_, reused) = blind.run(&wh, &statements[0]).await;
            assert!(reused, "{backend}: enabled ALWAYS again: reused");
            exec(&t.db, "TRUNCATE assessments").await;
            let (rows, reused) = blind.run(&wh, &statements[0]).await;
            assert!(!reused, "{backend}: after TRUNCATE the statement runs again");
            assert_eq!(rows.unwrap().rows, wh.run(&statements[0]).await.unwrap().rows);
        }
    }
}
