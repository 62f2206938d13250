//! Offline evaluation of the understanding engine against the labeled question set
//! (`server/eval/questions`, format in `server/eval/README.md`), and the command-line
//! `ask`.
//!
//! `server eval` seeds (or opens) a SQLite database with the deterministic dataset,
//! runs the engine on every item the way a clinician would meet it ([`simulate`]),
//! renders and executes the plans it produces, compares their results with the
//! hand-written gold SQL ([`compare`]) and reports ambiguity precision/recall, the
//! clarification rate on clear questions, execution accuracy before and after one
//! simulated answer, mean rounds and engine latency ([`metrics`]) — separately for the
//! tuned part and the holdout part (every id divisible by 5), each against the CI
//! thresholds.
//!
//! Nothing here special-cases an item or a result: the engine sees only the question,
//! the previous question's plan, the model, the allowed values and `today` (the
//! dataset's anchor date). What this module must not do: write to the clinical data
//! of a database it did not seed, or hide an engine failure (panics are caught and
//! counted, never ignored).

pub mod ask;
pub mod cli;
pub mod compare;
pub mod exec;
pub mod metrics;
pub mod model;
pub mod set;
pub mod simulate;

use chrono::NaiveDate;
use serde::Serialize;
use std::path::PathBuf;
use std::sync::Mutex;

use crate::dataset::DEFAULT_ANCHOR;
use crate::engine::EngineIndex;
use crate::semantic::SemanticModel;
use exec::{DEFAULT_EVAL_SCALE, EvalDb};
use metrics::{Check, Outcome, PartReport, part_report};
use set::{Item, LabeledSet, Part};
use simulate::{Env, simulate};

/// Which part(s) of the set to run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum PartChoice {
    /// The items the engine may be tuned on.
    Tuned,
    /// The held-out items (every id divisible by 5).
    Holdout,
    /// The items written blind (ids from 2000).
    Blind,
    /// All three, reported separately.
    #[default]
    All,
}

impl PartChoice {
    fn parts(self) -> Vec<Part> {
        match self {
            PartChoice::Tuned => vec![Part::Tuned],
            PartChoice::Holdout => vec![Part::Holdout],
            PartChoice::Blind => vec![Part::Blind],
            PartChoice::All => vec![Part::Tuned, Part::Holdout, Part::Blind],
        }
    }
}

/// How to run the evaluation.
#[derive(Clone, Debug)]
pub struct EvalOptions {
    /// A SQLite URL to use (seeded if its clinical tables are empty); `None` = a fresh
    /// temporary file.
    pub database: Option<String>,
    /// Dataset scale when seeding.
    pub scale: u32,
    /// The part(s) to run.
    pub part: PartChoice,
    /// The directory holding the labeled set.
    pub set_dir: PathBuf,
    /// Only these item ids (all when empty).
    pub only: Vec<u32>,
    /// The language model to consult where the engine leaves words unexplained
    /// (`server eval --llm`); none: the engine alone.
    pub llm: Option<crate::llm::LlmConfig>,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            database: None,
            scale: DEFAULT_EVAL_SCALE,
            part: PartChoice::All,
            set_dir: PathBuf::from(set::DEFAULT_DIR),
            only: Vec::new(),
            llm: None,
        }
    }
}

/// The whole evaluation result.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// The `today` given to the engine and used by the gold SQL.
    pub today: NaiveDate,
    /// The database used.
    pub database: String,
    /// Metrics per part, in the order run.
    pub parts: Vec<PartReport>,
    /// Every item's outcome.
    pub outcomes: Vec<Outcome>,
    /// Ids of the holdout part (the engine author must not tune on them).
    pub holdout_ids: Vec<u32>,
    /// The language model's calls (`--llm`), none without it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<model::ModelStats>,
}

impl Report {
    /// Every part meets every threshold.
    pub fn passes(&self) -> bool {
        !self.parts.is_empty() && self.parts.iter().all(PartReport::passes)
    }

    /// The failed thresholds, one line each.
    pub fn failures(&self) -> Vec<String> {
        self.parts
            .iter()
            .flat_map(|p| {
                p.thresholds.iter().filter(|t| !t.pass).map(move |t| {
                    let value = t
                        .value
                        .map_or_else(|| "undefined".to_owned(), |v| format!("{v:.3}"));
                    let rel = if t.at_least { "≥" } else { "≤" };
                    format!("{}: {} is {value}, needs {rel} {}", p.part, t.metric, t.limit)
                })
            })
            .collect()
    }

    /// The report for the terminal: header, metrics table, then the misses.
    pub fn to_text(&self, verbose: bool) -> String {
        let mut s = format!(
            "Clarion evaluation — today = {}, {}\n\n",
            self.today, self.database
        );
        s.push_str(&metrics::render_table(&self.parts));
        if let Some(m) = &self.model {
            s.push_str(&format!(
                "\nlanguage model {}: {} calls ({} failed, {} with a usable reading), {} tokens, latency p50 {} ms / p95 {} ms\n",
                m.model, m.calls, m.failures, m.used, m.tokens, m.p50_ms, m.p95_ms
            ));
        }
        if verbose {
            s.push_str("\nitems not meeting their expectation:\n");
            for o in &self.outcomes {
                let miss = |c: &Option<Check>| c.as_ref().is_some_and(|c| !c.ok());
                let first = o.trace.first.decision;
                let wrong_decision = match o.behaviour {
                    set::Behaviour::Answer | set::Behaviour::AnswerWithAssumption => !first.answers(),
                    set::Behaviour::Ask => first != simulate::DecisionKind::Clarify,
                    set::Behaviour::Refuse => first != simulate::DecisionKind::Refuse,
                };
                if wrong_decision || miss(&o.exec_first) || miss(&o.exec_after) {
                    s.push_str(&format!(
                        "  #{:<4} {:<24} {:?} → {:?}; first: {}; after answer: {} | {}\n",
                        o.id,
                        o.behaviour.as_str(),
                        o.expected_kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>(),
                        o.trace
                            .first
                            .asked_kinds()
                            .iter()
                            .map(|k| k.as_str())
                            .collect::<Vec<_>>(),
                        describe(&o.exec_first),
                        describe(&o.exec_after),
                        o.question
                    ));
                }
            }
        }
        s
    }
}

fn describe(check: &Option<Check>) -> String {
    match check {
        None => "-".into(),
        Some(Check::Match) => "ok".into(),
        Some(Check::Mismatch(why)) => format!("wrong ({why})"),
        Some(Check::NoAnswer(why)) => format!("no answer ({why})"),
        Some(Check::PlanFailed(e)) => format!("{e}"),
        Some(Check::GoldFailed(e)) => format!("GOLD FAILED ({e})"),
    }
}

/// Why the evaluation could not run at all (as opposed to running and failing).
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    #[error(transparent)]
    Set(#[from] set::SetError),
    #[error(transparent)]
    Db(#[from] exec::DbError),
}

/// Silences the default panic message while the engine runs (panics are recorded
/// per item), restoring the previous hook afterwards.
struct QuietPanics {
    previous: Option<PanicHook>,
}

type PanicHook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Sync + Send + 'static>;

static HOOK_LOCK: Mutex<()> = Mutex::new(());

impl QuietPanics {
    fn install() -> Self {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        QuietPanics {
            previous: Some(previous),
        }
    }
}

impl Drop for QuietPanics {
    fn drop(&mut self) {
        if let Some(previous) = self.previous.take() {
            std::panic::set_hook(previous);
        }
    }
}

/// Runs the evaluation.
pub async fn run(options: &EvalOptions) -> Result<Report, EvalError> {
    let model = SemanticModel::wound_care();
    let labeled = LabeledSet::load(&options.set_dir, &model)?;
    let db = EvalDb::open(options.database.as_deref(), options.scale).await?;
    let allowed = db.allowed_values(&model).await;
    let index = EngineIndex::build(&model);
    let reader = options
        .llm
        .clone()
        .map(|c| model::ModelReader::new(crate::llm::Llm::new(c)));
    let env = Env {
        model: &model,
        index: &index,
        allowed: &allowed,
        today: DEFAULT_ANCHOR,
        reader: reader.as_ref().map(|r| r as &dyn simulate::WordReader),
    };
    let parts = options.part.parts();
    let selected: Vec<&Item> = labeled
        .items
        .iter()
        .filter(|i| parts.contains(&i.part()))
        .filter(|i| options.only.is_empty() || options.only.contains(&i.id))
        .collect();

    let traces = {
        let _lock = HOOK_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        let _quiet = QuietPanics::install();
        selected
            .iter()
            .map(|item| simulate(&env, item))
            .collect::<Vec<_>>()
    };

    let mut outcomes = Vec::with_capacity(selected.len());
    for (item, trace) in selected.iter().zip(traces) {
        outcomes.push(check_item(&db, &model, item, trace).await);
    }
    let reports = parts
        .iter()
        .map(|&part| {
            let pairs: Vec<(&Item, &Outcome)> = selected
                .iter()
                .copied()
                .zip(&outcomes)
                .filter(|(i, _)| i.part() == part)
                .collect();
            part_report(part, &pairs)
        })
        // no blind batch (or none selected): nothing to report or gate
        .filter(|r| r.part != Part::Blind || r.items > 0)
        .collect();
    Ok(Report {
        today: DEFAULT_ANCHOR,
        database: db.description.clone(),
        parts: reports,
        outcomes,
        holdout_ids: labeled.holdout_ids(),
        model: reader.map(|r| r.stats()),
    })
}

/// Executes what the engine produced for one item and compares it with the gold SQL.
async fn check_item(db: &EvalDb, model: &SemanticModel, item: &Item, trace: simulate::Trace) -> Outcome {
    let answered_plan = |obs: &simulate::Observation| -> Result<crate::engine::QueryPlan, String> {
        if !obs.decision.answers() {
            return Err(match &obs.panic {
                Some(p) => format!("engine panicked: {p}"),
                None => format!("{:?}", obs.decision),
            });
        }
        obs.plan
            .clone()
            .ok_or_else(|| "answered without a plan".to_owned())
    };
    let exec_first = match item.gold.get(set::ANSWER_KEY) {
        Some(gold) if item.behaviour.is_clear() => {
            Some(compare_plan(db, model, gold, answered_plan(&trace.first)).await)
        }
        _ => None,
    };
    let exec_after = match (item.behaviour, item.gold_after_answer()) {
        (set::Behaviour::Ask, Some(gold)) => {
            let plan = match &trace.after_one {
                Some(obs) => answered_plan(obs),
                None => Err(format!("{:?}", trace.first.decision)),
            };
            Some(compare_plan(db, model, gold, plan).await)
        }
        _ => None,
    };
    let exec_best_guess = match item.gold_best_guess(model) {
        Some(gold) if item.behaviour != set::Behaviour::Refuse => {
            let plan = trace
                .first
                .plan
                .clone()
                .ok_or_else(|| format!("{:?} without a plan", trace.first.decision));
            Some(compare_plan(db, model, gold, plan).await)
        }
        _ => None,
    };
    let mut expected_kinds: Vec<_> = item.expect.iter().map(|e| e.kind).collect();
    expected_kinds.dedup();
    Outcome {
        id: item.id,
        part: item.part(),
        behaviour: item.behaviour,
        question: item.question.clone(),
        expected_kinds,
        trace,
        exec_first,
        exec_after,
        exec_best_guess,
    }
}

async fn compare_plan(
    db: &EvalDb,
    model: &SemanticModel,
    gold_sql: &str,
    plan: Result<crate::engine::QueryPlan, String>,
) -> Check {
    let gold = match db.gold(gold_sql).await {
        Ok(rows) => rows,
        Err(e) => return Check::GoldFailed(e),
    };
    let plan = match plan {
        Ok(p) => p,
        Err(why) => return Check::NoAnswer(why),
    };
    match db.plan(&plan, model).await {
        Err(e) => Check::PlanFailed(e),
        Ok(rows) => match compare::difference(&gold, &rows) {
            None => Check::Match,
            Some(why) => Check::Mismatch(why),
        },
    }
}
