//! Benchmark of the understanding engine: `understand()` over the whole labeled set
//! (`server/eval/questions`), with the allowed values of the evaluation dataset
//! (generated in memory: no database) and, for follow-ups, the previous question's plan
//! as context (computed outside the timed loop).
//!
//! Two measurements:
//! 1. criterion: one iteration = every question of the set once (`understand/whole_set`),
//!    plus a few single questions of different shapes;
//! 2. per question: each question is timed over many calls and its median taken; the
//!    p50 / p99 / max over questions are printed, with the slowest questions. Target:
//!    p99 < 1 ms.
//!
//! Run: `cargo bench -p server --profile server-release --target-dir target/native --bench understand`
//! (`-- --quick` for a shorter criterion run). Use the `server-release` profile — the
//! native server's (opt-level 3); the default bench profile inherits the workspace
//! `release` profile, which is tuned for the wasm bundle's size (opt-level "z", LTO).

use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::Criterion;
use server::dataset::{self, DEFAULT_ANCHOR, GenConfig};
use server::engine::{
    AllowedValuesSnapshot, ConversationContext, Decision, EngineIndex, EngineInput, Resolution, Resolutions,
    understand,
};
use server::eval::exec::DEFAULT_EVAL_SCALE;
use server::eval::set::{DEFAULT_DIR, LabeledSet};
use server::semantic::SemanticModel;
use server::sql::RenderCheck;

/// One benchmark case: a question and its thread context.
struct Case {
    id: u32,
    question: String,
    context: ConversationContext,
}

/// The database-sourced allowed values of the evaluation dataset, without a database.
fn allowed(model: &SemanticModel) -> AllowedValuesSnapshot {
    let data = dataset::generate(&GenConfig::new(DEFAULT_EVAL_SCALE, dataset::DEFAULT_SEED));
    let distinct = |mut v: Vec<String>| {
        v.sort();
        v.dedup();
        v
    };
    let columns = [
        (
            "clinics.name",
            distinct(data.clinics.iter().map(|c| c.name.clone()).collect()),
        ),
        (
            "clinics.region",
            distinct(data.clinics.iter().map(|c| c.region.to_owned()).collect()),
        ),
        (
            "clinicians.name",
            distinct(data.clinicians.iter().map(|c| c.name.clone()).collect()),
        ),
        (
            "wounds.location",
            distinct(
                data.wounds
                    .iter()
                    .map(|w| w.location.as_str().to_owned())
                    .collect(),
            ),
        ),
    ];
    AllowedValuesSnapshot::from_table_columns(model, columns.iter().map(|(k, v)| (*k, &v[..], false)))
}

/// The previous question's plan (every clarification answered "I don't know").
fn context_for(
    model: &SemanticModel,
    index: &EngineIndex,
    allowed: &AllowedValuesSnapshot,
    previous: &str,
) -> ConversationContext {
    let mut answers = Resolutions::empty();
    for _ in 0..4 {
        let input = EngineInput::new(model, previous, DEFAULT_ANCHOR)
            .with_index(index)
            .with_allowed(allowed)
            .with_resolutions(&answers);
        let u = understand(&input);
        match u.decision {
            Decision::Clarify => {
                for a in u.questions() {
                    answers.answers.insert(a.id.clone(), Resolution::DontKnow);
                }
            }
            _ => {
                return u
                    .plan
                    .map(|p| ConversationContext::after(p, 0))
                    .unwrap_or_default();
            }
        }
    }
    ConversationContext::empty()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn main() {
    let model = SemanticModel::wound_care();
    let set = LabeledSet::load(Path::new(DEFAULT_DIR), &model).unwrap_or_else(|e| panic!("{e}"));
    let index = EngineIndex::build(&model);
    let allowed = allowed(&model);
    let check = RenderCheck { model: &model };
    let cases: Vec<Case> = set
        .items
        .iter()
        .map(|i| Case {
            id: i.id,
            question: i.question.clone(),
            context: i
                .previous
                .as_deref()
                .map(|p| context_for(&model, &index, &allowed, p))
                .unwrap_or_default(),
        })
        .collect();
    let run = |case: &Case| {
        // as the server runs it: with the renderer's plan check
        let input = EngineInput::new(&model, &case.question, DEFAULT_ANCHOR)
            .with_index(&index)
            .with_allowed(&allowed)
            .with_context(&case.context)
            .with_check(&check);
        understand(black_box(&input))
    };

    let mut c = Criterion::default().configure_from_args();
    {
        let mut group = c.benchmark_group("understand");
        group.bench_function("whole_set", |b| {
            b.iter(|| {
                for case in &cases {
                    black_box(run(case));
                }
            })
        });
        for id in [23, 121, 201, 245, 277, 1] {
            if let Some(case) = cases.iter().find(|c| c.id == id) {
                group.bench_function(format!("q{id}"), |b| b.iter(|| black_box(run(case))));
            }
        }
        group.finish();
    }
    c.final_summary();

    // Per-question latency: the median of many calls per question.
    const CALLS: usize = 201;
    for case in &cases {
        black_box(run(case)); // warm-up
    }
    let mut per_question: Vec<(Duration, u32, &str)> = cases
        .iter()
        .map(|case| {
            let mut times: Vec<Duration> = (0..CALLS)
                .map(|_| {
                    let started = Instant::now();
                    black_box(run(case));
                    started.elapsed()
                })
                .collect();
            times.sort();
            (times[CALLS / 2], case.id, case.question.as_str())
        })
        .collect();
    per_question.sort();
    let medians: Vec<Duration> = per_question.iter().map(|(d, _, _)| *d).collect();
    println!(
        "\nunderstand() per question over {} questions (median of {CALLS} calls each): \
         p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs (target p99 < 1000 µs)",
        medians.len(),
        percentile(&medians, 0.50).as_secs_f64() * 1e6,
        percentile(&medians, 0.99).as_secs_f64() * 1e6,
        medians.last().map_or(0.0, |d| d.as_secs_f64() * 1e6),
    );
    println!("slowest questions:");
    for (d, id, q) in per_question.iter().rev().take(5) {
        println!("  {:>8.1} µs  #{id:<4} {q}", d.as_secs_f64() * 1e6);
    }
}
