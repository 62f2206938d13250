//! Clinic scope, property-style (issue 16): every plan the engine makes for every
//! question of the labeled evaluation set (server/eval/questions/*.toml) — the answer's
//! plan and the plan of every option of every ambiguity (the option-count previews) —
//! is scoped by the orchestrator's one function, and then:
//!
//! - its rendered SQL carries the scope on both dialects (every clinic id bound, the
//!   scope's column named), and on **every table reference** of the statement — the
//!   plan's own table, every joined parent, every `EXISTS` and every correlated count or
//!   latest/first value — each alias of a clinical table has its own scope condition
//!   (`"a"."clinic_id" IN (…)`, or for assessments `"a"."wound_id" IN (SELECT …)`), with
//!   and without Clarion's summary tables;
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
use server::sql::{ColumnSource, Dialect, Rendered, SummaryUse, render_scoped, render_with_cap};
use server::store::ClinicScope;
use server::warehouse::exec::{ExecLimits, Warehouse};
use std::path::Path;

/// A clinic id no dataset has.
const NOWHERE: i64 = 90_001;

/// The table references of `sql` (`FROM|JOIN "table" AS "alias"`) of the model's
/// clinical tables, as (entity, alias); other names (summary tables, CTEs) are skipped.
fn clinical_references(sql: &str, model: &SemanticModel) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for kw in ["FROM \"", "JOIN \""] {
        let mut rest = sql;
        while let Some(i) = rest.find(kw) {
            rest = &rest[i + kw.len()..];
            let Some(end) = rest.find('"') else { break };
            let table = &rest[..end];
            let after = &rest[end + 1..];
            let Some(entity) = model.entities.iter().find(|e| e.table == table) else {
                continue;
            };
            if after.starts_with('.') {
                // a column (`EXTRACT(YEAR FROM "patients"."birth_date")`), not a table
                continue;
            }
            let alias = after
                .strip_prefix(" AS \"")
                .and_then(|a| a.split_once('"'))
                .map(|(a, _)| a.to_owned())
                .unwrap_or_else(|| panic!("{table} without an alias in {sql}"));
            out.push((entity.name.clone(), alias));
        }
    }
    out
}

/// The text the scope condition on a row of `entity` aliased `alias` starts with: its own
/// clinic column, or the reference to the parent its clinic is read from.
fn scope_condition_start(
    model: &SemanticModel,
    paths: &ScopePaths,
    entity: &str,
    alias: &str,
) -> Vec<String> {
    let attribute = paths
        .attribute(entity)
        .unwrap_or_else(|| panic!("{entity} has no clinic"));
    let owner = model.attribute(attribute).unwrap();
    let column = |q: &str| model.attribute(q).unwrap().attribute.column.clone().unwrap();
    if owner.entity.name == entity {
        let c = column(attribute);
        // `IN (…)` for clinics, `IS NULL AND … IS NOT NULL` for no clinic at all
        vec![
            format!("\"{alias}\".\"{c}\" IN ("),
            format!("\"{alias}\".\"{c}\" IS NULL"),
        ]
    } else {
        let route = model.join_path(entity, &owner.entity.name).unwrap();
        let fk = column(&route[0].join.from);
        vec![format!("\"{alias}\".\"{fk}\" IN (SELECT ")]
    }
}

/// The clinical table references of `r` with no scope condition on their alias; adds
/// the number of references checked to `checked`.
fn unscoped(r: &Rendered, model: &SemanticModel, paths: &ScopePaths, checked: &mut usize) -> Vec<String> {
    let refs = clinical_references(&r.sql, model);
    *checked += refs.len();
    refs.into_iter()
        .filter(|(entity, alias)| {
            !scope_condition_start(model, paths, entity, alias)
                .iter()
                .any(|start| r.sql.contains(start.as_str()))
        })
        .map(|(entity, alias)| format!("{entity} as {alias}"))
        .collect()
}

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
        let mut statements = 0;
        let mut references = 0;
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
                    for summaries in [SummaryUse::LIVE, SummaryUse::CURRENT] {
                        let r = render_scoped(&scoped.plan, &model, d, 50, summaries, &scoped.rows)
                            .unwrap_or_else(|e| panic!("a scoped plan does not render ({e}): {plan:?}"));
                        assert!(carries(&r, &scope), "{scope:?} not bound in {}", r.sql);
                        assert!(r.sql.contains(column), "{column} not in {}", r.sql);
                        let missing = unscoped(&r, &model, &paths, &mut references);
                        assert!(
                            missing.is_empty(),
                            "{missing:?} read without the scope in {}\nplan: {plan:?}",
                            r.sql
                        );
                        statements += 1;
                    }
                }
            }
            let scoped = paths.apply(plan, &ClinicScope::clinics([NOWHERE]), &[]).unwrap();
            let r = render_scoped(&scoped.plan, &model, dialect, 50, SummaryUse::LIVE, &scoped.rows).unwrap();
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
            "{:?}: {} distinct plans from the labeled set, {} rendered, each scoped 3 ways on 2 dialects with and without summaries ({statements} statements, {references} clinical table references each with its scope condition) and run once",
            t.db.backend(),
            plans.len(),
            rendered_plans
        );
        assert!(
            references > statements,
            "{references} references in {statements} statements"
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
