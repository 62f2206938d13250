//! Clinic scope, property-style (issue 16): every plan the engine makes for every
//! question of the labeled evaluation set (server/eval/questions/*.toml) — the answer's
//! plan and the plan of every option of every ambiguity (the option-count previews) —
//! is scoped by the orchestrator's one function, and then:
//!
//! - its rendered SQL carries the scope on both dialects (every clinic id bound, the
//!   scope's column named);
//! - run on the seeded demo data of every backend with a scope of a clinic that does not
//!   exist, it returns nothing: no row of a list, and 0 or null for every count and
//!   figure. A query that read any row outside the scope would show it here.

mod common;

use server::dataset::{self, GenConfig, OnExisting};
use server::engine::{
    AllowedValuesSnapshot, ConversationContext, EngineInput, QueryPlan, option_plan, understand,
};
use server::eval::set::{DEFAULT_DIR, LabeledSet};
use server::orchestrator::scope::{ScopePaths, carries};
use server::semantic::SemanticModel;
use server::sql::{ColumnSource, Dialect, render_with_cap};
use server::store::ClinicScope;
use server::warehouse::exec::{ExecLimits, Warehouse};
use std::path::Path;

/// A clinic id no dataset has.
const NOWHERE: i64 = 90_001;

/// Every distinct plan of the labeled set: answers, follow-ups (with their previous
/// question's plan as context) and every option of every ambiguity.
fn every_plan(model: &SemanticModel, allowed: &AllowedValuesSnapshot) -> Vec<QueryPlan> {
    let set = LabeledSet::load(Path::new(DEFAULT_DIR), model).unwrap_or_else(|e| panic!("{e}"));
    let today = dataset::DEFAULT_ANCHOR;
    let mut plans: Vec<QueryPlan> = Vec::new();
    let mut push = |p: QueryPlan| {
        if !plans.contains(&p) {
            plans.push(p);
        }
    };
    for item in &set.items {
        let context = match &item.previous {
            Some(prev) => {
                let u = understand(&EngineInput::new(model, prev, today).with_allowed(allowed));
                match u.plan {
                    Some(p) => ConversationContext::after(p, 1),
                    None => ConversationContext::empty(),
                }
            }
            None => ConversationContext::empty(),
        };
        let input = EngineInput::new(model, &item.question, today)
            .with_allowed(allowed)
            .with_context(&context);
        let u = understand(&input);
        if let Some(p) = u.plan.clone() {
            push(p);
        }
        for a in &u.ambiguities {
            for o in &a.options {
                if let Some(p) = option_plan(&input, &a.id, &o.id) {
                    push(p);
                }
            }
        }
    }
    plans
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_evaluation_plan_carries_the_scope_and_shows_nothing_outside_it() {
    let model = SemanticModel::wound_care();
    let paths = ScopePaths::from_model(&model).expect("the wound-care model has clinics");
    for t in common::all_backends().await {
        dataset::seed(
            &t.db,
            &GenConfig::new(1, dataset::DEFAULT_SEED),
            OnExisting::Refuse,
        )
        .await
        .expect("seed");
        // the engine reads clinic names from the data, as the server does
        let mut allowed = AllowedValuesSnapshot::from_model_static(&model);
        let warehouse = Warehouse::new(&t.db, ExecLimits::default());
        let mut names_plan = QueryPlan::new("clinics", dataset::DEFAULT_ANCHOR);
        names_plan.columns = vec!["clinics.name".into()];
        let dialect = Dialect::from(t.db.backend());
        let names = warehouse
            .run(&render_with_cap(&names_plan, &model, dialect, 1000).unwrap())
            .await
            .unwrap();
        allowed.insert(
            "clinics.name",
            names
                .rows
                .iter()
                .filter_map(|r| r.last()?.as_str().map(str::to_owned))
                .collect(),
            false,
        );
        let plans = every_plan(&model, &allowed);
        let mut rendered_plans = 0;
        let mut leaks = Vec::new();
        for plan in &plans {
            // plans the renderer rejects never run, scoped or not
            if render_with_cap(plan, &model, dialect, 50).is_err() {
                continue;
            }
            rendered_plans += 1;
            for scope in [
                ClinicScope::clinics([NOWHERE]),
                ClinicScope::clinics([NOWHERE, NOWHERE + 1]),
                ClinicScope::clinics([]),
            ] {
                let scoped = paths
                    .apply(plan, &scope, &[])
                    .unwrap_or_else(|e| panic!("{e}: {plan:?}"));
                let column = paths.attribute(&plan.entity).unwrap().split_once('.').unwrap().1;
                for d in [Dialect::Sqlite, Dialect::Postgres] {
                    let r = render_with_cap(&scoped.plan, &model, d, 50)
                        .unwrap_or_else(|e| panic!("a scoped plan does not render ({e}): {plan:?}"));
                    assert!(carries(&r, &scope), "{scope:?} not bound in {}", r.sql);
                    assert!(r.sql.contains(column), "{column} not in {}", r.sql);
                }
            }
            let scoped = paths.apply(plan, &ClinicScope::clinics([NOWHERE]), &[]).unwrap();
            let r = render_with_cap(&scoped.plan, &model, dialect, 50).unwrap();
            let rows = warehouse
                .run(&r)
                .await
                .unwrap_or_else(|e| panic!("{e}: {}", r.sql));
            let figures: Vec<usize> = r
                .columns
                .iter()
                .enumerate()
                .filter(|(_, c)| matches!(c.source, ColumnSource::Metric { .. } | ColumnSource::RowCount))
                .map(|(i, _)| i)
                .collect();
            let shows_something = if figures.is_empty() {
                !rows.rows.is_empty()
            } else {
                rows.rows.iter().any(|row| {
                    figures
                        .iter()
                        .any(|&i| !(row[i].is_null() || row[i].as_f64() == Some(0.0)))
                })
            };
            if shows_something {
                leaks.push(format!("{}\n  rows: {:?}", r.sql, rows.rows));
            }
        }
        eprintln!(
            "{:?}: {} distinct plans from the labeled set, {} rendered, each scoped 3 ways on 2 dialects and run once",
            t.db.backend(),
            plans.len(),
            rendered_plans
        );
        assert!(
            rendered_plans > 500,
            "only {rendered_plans} plans: the set did not load"
        );
        assert!(
            leaks.is_empty(),
            "{} plans showed data outside the scope:\n{}",
            leaks.len(),
            leaks.join("\n")
        );
        t.cleanup().await;
    }
}
