//! The summaries Clarion keeps of the clinical data (each wound's latest and first
//! assessment) give exactly the rows of the live query, on SQLite and PostgreSQL: every
//! question of the labeled set is read, rendered live and with the summaries, and each
//! statement that differs is run both ways and compared row for row. Then rows are
//! added (a newer visit, a back-dated one, a first visit of a new wound) and deleted:
//! the summary is stale at once, refreshed incrementally (or rebuilt after a delete),
//! and identical again.

mod common;

use server::dataset::{GenConfig, OnExisting, seed};
use server::db::Database;
use server::engine::{AllowedValuesSnapshot, ConversationContext, Decision, EngineInput, understand};
use server::eval::set::{Behaviour, LabeledSet};
use server::semantic::SemanticModel;
use server::sql::{Dialect, RenderCheck, Rendered, SummaryUse, render_with_cap, render_with_cap_using};
use server::warehouse::exec::{ExecLimits, Warehouse};
use server::warehouse::summary::{Refreshed, Summaries, SummaryConfig};

fn today() -> chrono::NaiveDate {
    chrono::NaiveDate::from_ymd_opt(2026, 11, 1).unwrap()
}

/// (live, with summaries) for every labeled question whose two renderings differ.
fn pairs(model: &SemanticModel, dialect: Dialect) -> Vec<(String, Rendered, Rendered)> {
    let set = LabeledSet::load(std::path::Path::new(server::eval::set::DEFAULT_DIR), model).unwrap();
    let allowed = AllowedValuesSnapshot::from_model_static(model);
    let check = RenderCheck { model };
    let mut out = Vec::new();
    for item in set.items.iter().filter(|i| i.behaviour != Behaviour::Refuse) {
        let context = match &item.previous {
            Some(p) => {
                let input = EngineInput::new(model, p, today())
                    .with_check(&check)
                    .with_allowed(&allowed);
                match understand(&input).plan {
                    Some(plan) => ConversationContext::after(plan, 0),
                    None => continue,
                }
            }
            None => ConversationContext::empty(),
        };
        let input = EngineInput::new(model, &item.question, today())
            .with_check(&check)
            .with_allowed(&allowed)
            .with_context(&context);
        let u = understand(&input);
        if matches!(u.decision, Decision::Refuse { .. }) {
            continue;
        }
        let Some(plan) = u.plan else { continue };
        let (Ok(live), Ok(summary)) = (
            render_with_cap(&plan, model, dialect, 1000),
            render_with_cap_using(&plan, model, dialect, 1000, SummaryUse::CURRENT),
        ) else {
            continue;
        };
        if live.sql != summary.sql {
            out.push((item.question.clone(), live, summary));
        }
    }
    out
}

/// The rows with each floating-point cell written to 10 significant digits.
fn approx(rows: &[Vec<serde_json::Value>]) -> Vec<Vec<serde_json::Value>> {
    rows.iter()
        .map(|row| {
            row.iter()
                .map(|v| match v.as_f64() {
                    Some(f) if !v.is_i64() && !v.is_u64() => serde_json::Value::String(format!("{f:.9e}")),
                    _ => v.clone(),
                })
                .collect()
        })
        .collect()
}

async fn same_rows(wh: &Warehouse, pairs: &[(String, Rendered, Rendered)], when: &str) {
    for (question, live, summary) in pairs {
        let a = wh
            .run(live)
            .await
            .unwrap_or_else(|e| panic!("{question}: live: {e}"));
        let b = wh
            .run(summary)
            .await
            .unwrap_or_else(|e| panic!("{question}: summary: {e}\n{}", summary.sql));
        // Floating-point sums may add in another order: equal to 10 significant digits.
        assert_eq!(
            (approx(&a.rows), a.truncated),
            (approx(&b.rows), b.truncated),
            "{when}: {question:?}\nlive:    {}\nsummary: {}",
            live.sql,
            summary.sql
        );
    }
}

async fn exec(db: &Database, sql: &str) {
    match db {
        Database::Sqlite(p) => sqlx::query(sql).execute(p).await.map(|_| ()),
        Database::Postgres(p) => sqlx::query(sql).execute(p).await.map(|_| ()),
    }
    .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

#[tokio::test]
async fn summaries_give_the_live_rows_and_follow_added_and_deleted_rows() {
    let model = SemanticModel::wound_care_shared();
    for t in common::all_backends().await {
        seed(&t.db, &GenConfig::new(2, 11), OnExisting::Refuse)
            .await
            .expect("seed");
        let dialect = Dialect::from(t.db.backend());
        let pairs = pairs(model, dialect);
        // the summaries apply to the latest/first family: many questions of the set
        assert!(pairs.len() >= 20, "only {} questions read a summary", pairs.len());
        assert!(
            pairs
                .iter()
                .all(|(_, _, s)| s.sql.contains("wound_latest_assessment")
                    || s.sql.contains("wound_first_assessment"))
        );
        let wh = Warehouse::new(&t.db, ExecLimits::default());
        let summaries = Summaries::new(t.db.clone(), SummaryConfig::default());

        // never used before this process has built / verified them
        assert!(!summaries.is_current().await);
        assert_eq!(summaries.refresh().await.unwrap(), Refreshed::Full);
        assert!(summaries.is_current().await);
        same_rows(&wh, &pairs, "after the first build").await;
        assert_eq!(summaries.refresh().await.unwrap(), Refreshed::Unchanged);

        // a newer visit of wound 1, a back-dated visit of wound 2 (before its first), and
        // the first visit of a wound that had none
        let none: i64 = match &t.db {
            Database::Sqlite(p) => sqlx::query_scalar(
                "SELECT COALESCE(MIN(id), 0) FROM wounds w WHERE NOT EXISTS (SELECT 1 FROM assessments a WHERE a.wound_id = w.id)",
            )
            .fetch_one(p)
            .await
            .unwrap(),
            Database::Postgres(p) => sqlx::query_scalar(
                "SELECT COALESCE(MIN(id), 0) FROM wounds w WHERE NOT EXISTS (SELECT 1 FROM assessments a WHERE a.wound_id = w.id)",
            )
            .fetch_one(p)
            .await
            .unwrap(),
        };
        let date = |d: &str| match dialect {
            Dialect::Sqlite => format!("'{d}'"),
            Dialect::Postgres => format!("DATE '{d}'"),
        };
        let mut rows = vec![
            format!(
                "(1000001, 1, 1, {}, 9.5, 8.5, 1.5, 80.75, 10, 'high', 'necrotic', TRUE)",
                date("2026-10-31")
            ),
            format!(
                "(1000002, 2, 1, {}, 0.5, 0.5, 0.1, 0.25, 0, 'none', 'epithelial', FALSE)",
                date("2020-01-02")
            ),
        ];
        if none > 0 {
            rows.push(format!(
                "(1000003, {none}, 1, {}, 3.0, 2.0, 0.5, 6.0, 4, 'low', 'granulation', FALSE)",
                date("2026-10-30")
            ));
        }
        exec(
            &t.db,
            &format!(
                "INSERT INTO assessments (id, wound_id, clinician_id, assessed_on, length_cm, width_cm, depth_cm, \
                 area_cm2, pain_score, exudate, tissue_type, infection_signs) VALUES {}",
                rows.join(", ")
            ),
        )
        .await;
        assert!(
            !summaries.is_current().await,
            "a new row makes the summary stale at once"
        );
        assert_eq!(
            summaries.refresh().await.unwrap(),
            Refreshed::Incremental {
                new_rows: rows.len() as i64
            }
        );
        assert!(summaries.is_current().await);
        same_rows(&wh, &pairs, "after rows were added").await;

        // a deleted row (not the newest): the count check rebuilds
        exec(&t.db, "DELETE FROM assessments WHERE id = 1000002").await;
        assert_eq!(summaries.refresh().await.unwrap(), Refreshed::Full);
        same_rows(&wh, &pairs, "after a row was deleted").await;
        t.cleanup().await;
    }
}

#[tokio::test]
async fn summaries_switched_off_are_never_current() {
    let t = common::TestDb::sqlite().await;
    let summaries = Summaries::new(
        t.db.clone(),
        SummaryConfig {
            enabled: false,
            ..SummaryConfig::default()
        },
    );
    summaries.refresh().await.unwrap();
    assert!(!summaries.is_current().await);
    t.cleanup().await;
}
