//! The evaluation CI gate: the understanding engine, run on the labeled question set
//! against a freshly seeded SQLite database, must meet the thresholds of issue 4 on
//! both the tuned and the holdout part. Also checks the labeled set itself: every gold
//! query runs on the seeded data and most return something.

use server::eval::compare::Cell;
use server::eval::exec::{DEFAULT_EVAL_SCALE, EvalDb};
use server::eval::set::{DEFAULT_DIR, LabeledSet};
use server::eval::{EvalOptions, PartChoice, run};
use server::semantic::SemanticModel;
use std::path::Path;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_gold_query_runs_on_the_seeded_data_and_almost_all_return_something() {
    let model = SemanticModel::wound_care();
    let set = LabeledSet::load(Path::new(DEFAULT_DIR), &model).unwrap_or_else(|e| panic!("{e}"));
    let db = EvalDb::open(None, DEFAULT_EVAL_SCALE).await.unwrap();
    let mut failed = Vec::new();
    let mut empty = Vec::new();
    let mut total = 0;
    for item in &set.items {
        for (key, sql) in &item.gold {
            total += 1;
            match db.gold(sql).await {
                Err(e) => failed.push(format!("#{} {key}: {e}", item.id)),
                Ok(rows) => {
                    let trivial = rows.is_empty()
                        || (rows.len() == 1
                            && rows[0].len() == 1
                            && matches!(rows[0][0], Cell::Null | Cell::Int(0)));
                    if trivial {
                        empty.push(format!("#{} {key}", item.id));
                    }
                }
            }
        }
    }
    assert!(
        failed.is_empty(),
        "gold SQL that does not run:\n{}",
        failed.join("\n")
    );
    assert!(total >= 250, "{total} gold queries");
    // An empty or zero gold result cannot tell a right plan from a wrong one.
    assert!(
        empty.len() * 50 <= total,
        "too many trivial gold results ({} of {total}): {empty:?}",
        empty.len()
    );
}

// The CI gate of issue 12: every threshold on the tuned and the holdout part, and the
// blind part's floors (a ratchet until it reaches the same targets).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_engine_meets_the_evaluation_thresholds_on_every_part() {
    let options = EvalOptions {
        part: PartChoice::All,
        ..EvalOptions::default()
    };
    let report = run(&options)
        .await
        .unwrap_or_else(|e| panic!("the evaluation could not run: {e}"));
    let parts: Vec<String> = report.parts.iter().map(|p| p.part.to_string()).collect();
    assert_eq!(parts, ["tuned", "holdout", "blind"]);
    assert!(
        report.passes(),
        "evaluation below its thresholds:\n  {}\n\n{}",
        report.failures().join("\n  "),
        report.to_text(false)
    );
}
