//! From per-item outcomes to the metrics of one part of the set, the CI thresholds,
//! and the printed table.
//!
//! Definitions (also in `server/eval/README.md`):
//! - **Positives** are `ask` and `refuse` items. The engine *flags* an item when its
//!   first decision is to clarify or to refuse (a refusal counts as the
//!   `out_of_domain` kind). A positive is **detected** when one of the ambiguities asked
//!   matches an expected one (same dictionary term, else same kind). A **false
//!   positive** is a flag on an `answer` / `answer_with_assumption` item, or a flag
//!   on a positive item with none of the expected kinds. Precision = TP / (TP + FP),
//!   recall = TP / positives.
//! - **Per kind**: TP = positive items expecting the kind where it was asked; FN =
//!   the other positive items expecting it; FP = asked ambiguities of the kind that
//!   matched nothing expected, and every ambiguity asked on a clear item.
//! - **Clarification rate on clear questions**: clear (`answer`,
//!   `answer_with_assumption`) items whose first decision was to clarify or refuse.
//! - **Execution accuracy (clear)**: clear items answered at once whose result equals
//!   the gold result (see `compare.rs`); a clarification is a miss.
//! - **Accuracy after one answer**: `ask` items with a gold interpretation, after the
//!   simulated user's first answer (see `simulate.rs`); still clarifying is a miss.
//! - **Mean rounds**: clarification rounds until an answer, over non-refused items.
//!
//! Pure: no I/O.

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use super::exec::PlanError;
use super::set::Item;
use super::set::{Behaviour, Part};
use super::simulate::{DecisionKind, Seen, Trace, matching};
use crate::engine::AmbiguityKind;

/// Whether one result matched its gold result.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "status", content = "detail", rename_all = "snake_case")]
pub enum Check {
    /// Equal to the gold result.
    Match,
    /// Different; why.
    Mismatch(String),
    /// The engine gave no plan to run (clarified, refused, panicked).
    NoAnswer(String),
    /// The plan could not be rendered or run.
    PlanFailed(PlanError),
    /// The gold SQL itself failed (a bug in the labeled set).
    GoldFailed(String),
}

impl Check {
    /// Counts as correct.
    pub fn ok(&self) -> bool {
        matches!(self, Check::Match)
    }
}

/// Everything measured on one item.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// Item id.
    pub id: u32,
    /// Its part.
    pub part: Part,
    /// Expected behaviour.
    pub behaviour: Behaviour,
    /// The question.
    pub question: String,
    /// Expected kinds.
    pub expected_kinds: Vec<AmbiguityKind>,
    /// What the engine did.
    pub trace: Trace,
    /// Execution check of the first answer (clear items).
    pub exec_first: Option<Check>,
    /// Execution check after one simulated answer (`ask` items with gold).
    pub exec_after: Option<Check>,
    /// Execution check of the best-guess plan (items with a best-guess gold).
    pub exec_best_guess: Option<Check>,
}

/// Detection classification of one item.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Detection {
    /// Positive and detected.
    pub tp: bool,
    /// Flagged wrongly.
    pub fp: bool,
    /// Positive and missed.
    pub fn_: bool,
    /// Expected kinds that were asked.
    pub matched: Vec<AmbiguityKind>,
    /// Kinds asked that matched nothing expected (all of them on clear items).
    pub stray: Vec<AmbiguityKind>,
}

/// The asked ambiguities of a first decision (a refusal is one out-of-domain flag).
fn asked(trace: &Trace) -> Vec<Seen> {
    match trace.first.decision {
        DecisionKind::Clarify => trace
            .first
            .ambiguities
            .iter()
            .filter(|a| a.asked)
            .cloned()
            .collect(),
        DecisionKind::Refuse => {
            vec![Seen {
                kind: AmbiguityKind::OutOfDomain,
                term: None,
                text: String::new(),
                asked: true,
                options: Vec::new(),
            }]
        }
        _ => Vec::new(),
    }
}

/// Classifies one item's first decision.
pub fn detection(item: &Item, trace: &Trace) -> Detection {
    let asked = asked(trace);
    let flagged = trace.first.decision.flags();
    let mut d = Detection::default();
    if item.behaviour.is_positive() {
        for a in &asked {
            match matching(a, &item.expect) {
                Some(e) if !e.assumed => d.matched.push(e.kind),
                Some(e) => d.stray.push(e.kind),
                None => d.stray.push(a.kind),
            }
        }
        d.tp = !d.matched.is_empty();
        d.fn_ = !d.tp;
        d.fp = flagged && !d.tp;
    } else {
        d.stray = asked.iter().map(|a| a.kind).collect();
        d.fp = flagged;
    }
    d.matched.sort();
    d.matched.dedup();
    d
}

/// Precision, recall and their counts.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Prf {
    pub support: usize,
    pub tp: usize,
    pub fp: usize,
    #[serde(rename = "fn")]
    pub fn_: usize,
    /// `None` when nothing was flagged.
    pub precision: Option<f64>,
    /// `None` when there is nothing to detect.
    pub recall: Option<f64>,
}

impl Prf {
    fn finish(mut self) -> Self {
        self.precision = (self.tp + self.fp > 0).then(|| self.tp as f64 / (self.tp + self.fp) as f64);
        self.recall = (self.support > 0).then(|| self.tp as f64 / self.support as f64);
        self
    }
}

/// `ok` of `total`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Ratio {
    pub ok: usize,
    pub total: usize,
}

impl Ratio {
    fn add(&mut self, ok: bool) {
        self.total += 1;
        self.ok += usize::from(ok);
    }

    /// `ok / total`, `None` when empty.
    pub fn value(self) -> Option<f64> {
        (self.total > 0).then(|| self.ok as f64 / self.total as f64)
    }
}

/// One CI threshold and whether the part meets it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Threshold {
    /// Metric name.
    pub metric: &'static str,
    /// The measured value (`None`: undefined, which fails).
    pub value: Option<f64>,
    /// The limit.
    pub limit: f64,
    /// `true`: value must be ≥ limit; `false`: ≤ limit.
    pub at_least: bool,
    /// Met.
    pub pass: bool,
}

/// Engine latency over the first call of every item.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Latency {
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

/// The metrics of one part.
#[derive(Clone, Debug, Serialize)]
pub struct PartReport {
    pub part: Part,
    pub items: usize,
    pub by_behaviour: BTreeMap<Behaviour, usize>,
    /// Item-level ambiguity detection.
    pub detection: Prf,
    /// Per-kind detection.
    pub per_kind: BTreeMap<AmbiguityKind, Prf>,
    /// Clear items clarified or refused at once.
    pub clarified_clear: Ratio,
    /// Clear items answered at once with the gold result.
    pub exec_clear: Ratio,
    /// `ask` items right after one simulated answer.
    pub after_one_answer: Ratio,
    /// Best-guess plans (what non-interactive mode returns) equal to the default gold.
    pub best_guess: Ratio,
    /// `answer_with_assumption` items whose answer showed the expected assumption.
    pub assumptions_shown: Ratio,
    /// `refuse` items refused (or asked about as out of domain).
    pub refused: Ratio,
    /// `refuse` items that got an answer (a plan that could run).
    pub hostile_answered: usize,
    /// Mean clarification rounds until an answer (non-refuse items).
    pub mean_rounds: f64,
    /// Items still clarifying after the round limit.
    pub gave_up: usize,
    /// Engine panics.
    pub panics: usize,
    /// Gold SQL that failed to run (labeled-set bugs).
    pub gold_failures: Vec<u32>,
    /// Silent guesses: `ask`, `answer_with_assumption` and `refuse` items answered at
    /// once with no question, no refusal and no assumption shown.
    pub silent: Ratio,
    /// Plans the renderer rejected (first answer, after one answer, best guess).
    pub render_errors: usize,
    /// Items meeting their expectation, per `family` tag (blind items).
    pub per_family: BTreeMap<String, Ratio>,
    pub latency: Latency,
    pub thresholds: Vec<Threshold>,
}

impl PartReport {
    /// Every threshold met.
    pub fn passes(&self) -> bool {
        self.thresholds.iter().all(|t| t.pass)
    }
}

/// The CI thresholds (issue 12), for the tuned and holdout parts — and the targets of the
/// blind part, which is gated by [`BLIND_FLOORS`] until it reaches them.
pub const MIN_PRECISION: f64 = 0.90;
pub const MIN_RECALL: f64 = 0.90;
pub const MAX_CLARIFY_CLEAR: f64 = 0.05;
pub const MIN_EXEC_CLEAR: f64 = 0.92;
pub const MIN_AFTER_ANSWER: f64 = 0.95;
pub const MAX_SILENT: f64 = 0.03;

/// The limits one part is gated by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    pub precision: f64,
    pub recall: f64,
    pub clarify_clear: f64,
    pub exec_clear: f64,
    pub after_answer: f64,
    pub silent: f64,
}

/// The issue-12 thresholds.
pub const TARGETS: Limits = Limits {
    precision: MIN_PRECISION,
    recall: MIN_RECALL,
    clarify_clear: MAX_CLARIFY_CLEAR,
    exec_clear: MIN_EXEC_CLEAR,
    after_answer: MIN_AFTER_ANSWER,
    silent: MAX_SILENT,
};

/// The blind part's ratchet: its figures as measured when they were committed (see
/// `server/eval/README.md`). A change that makes any of them worse fails CI; raise them as
/// the engine improves, until they reach [`TARGETS`].
pub const BLIND_FLOORS: Limits = Limits {
    // All twenty-three blind batches together (2,230 items) after the batch-23 round; every
    // batch's untouched and after-fix figures are in server/eval/README.md. Raise as the
    // engine improves.
    precision: 571.0 / 647.0 - 1e-9,
    recall: 571.0 / 624.0 - 1e-9,
    clarify_clear: 55.0 / 1606.0 + 1e-9,
    exec_clear: 1506.0 / 1587.0 - 1e-9,
    after_answer: 185.0 / 192.0 - 1e-9,
    silent: 20.0 / 817.0 + 1e-9,
};

/// Silent guesses in the tuned and holdout parts: a ratchet below the 3 % target, at the
/// figures measured when it was last tightened (5 of 164 tuned since a named average
/// measure said as "average …" shows its mean/median badge; 2 of 35 holdout: items
/// labeled as needing a badge where the engine settles the reading itself).
pub const SILENT_FLOOR_TUNED: f64 = 5.0 / 164.0;
pub const SILENT_FLOOR_HOLDOUT: f64 = 2.0 / 35.0;

/// The limits of a part: the targets (silent guesses: the ratchet until it reaches 3 %),
/// or for the blind part its floors.
pub fn limits(part: Part) -> Limits {
    match part {
        Part::Blind => BLIND_FLOORS,
        Part::Tuned => Limits {
            silent: SILENT_FLOOR_TUNED.max(MAX_SILENT) + 1e-9,
            ..TARGETS
        },
        Part::Holdout => Limits {
            silent: SILENT_FLOOR_HOLDOUT.max(MAX_SILENT) + 1e-9,
            ..TARGETS
        },
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((p * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1].as_secs_f64() * 1e6
}

/// Summarises the outcomes of one part (`items` pairs each outcome with its item).
pub fn part_report(part: Part, items: &[(&Item, &Outcome)]) -> PartReport {
    let mut r = PartReport {
        part,
        items: items.len(),
        by_behaviour: BTreeMap::new(),
        detection: Prf::default(),
        per_kind: BTreeMap::new(),
        clarified_clear: Ratio::default(),
        exec_clear: Ratio::default(),
        after_one_answer: Ratio::default(),
        best_guess: Ratio::default(),
        assumptions_shown: Ratio::default(),
        refused: Ratio::default(),
        hostile_answered: 0,
        mean_rounds: 0.0,
        gave_up: 0,
        panics: 0,
        gold_failures: Vec::new(),
        silent: Ratio::default(),
        render_errors: 0,
        per_family: BTreeMap::new(),
        latency: Latency::default(),
        thresholds: Vec::new(),
    };
    let mut rounds = Ratio::default();
    let mut latencies = Vec::with_capacity(items.len());
    for (item, o) in items {
        *r.by_behaviour.entry(item.behaviour).or_default() += 1;
        latencies.push(o.trace.latency);
        let d = detection(item, &o.trace);
        if item.behaviour.is_positive() {
            r.detection.support += 1;
            for kind in expected_kinds(item) {
                let k = r.per_kind.entry(kind).or_default();
                k.support += 1;
                if d.matched.contains(&kind) {
                    k.tp += 1;
                } else {
                    k.fn_ += 1;
                }
            }
        }
        r.detection.tp += usize::from(d.tp);
        r.detection.fp += usize::from(d.fp);
        r.detection.fn_ += usize::from(d.fn_);
        for kind in &d.stray {
            r.per_kind.entry(*kind).or_default().fp += 1;
        }
        if item.behaviour.is_clear() {
            r.clarified_clear.add(o.trace.first.decision.flags());
        }
        if item.behaviour == Behaviour::AnswerWithAssumption {
            let shown = o.trace.first.decision.answers()
                && o.trace
                    .first
                    .ambiguities
                    .iter()
                    .any(|a| matching(a, &item.expect).is_some());
            r.assumptions_shown.add(shown);
        }
        if item.behaviour == Behaviour::Refuse {
            r.refused.add(d.tp);
            if o.trace.first.decision.answers() && o.trace.first.plan.is_some() {
                r.hostile_answered += 1;
            }
        } else {
            rounds.total += 1;
            rounds.ok += o.trace.rounds as usize;
        }
        if !item.behaviour.is_clear() || item.behaviour == Behaviour::AnswerWithAssumption {
            r.silent.add(o.trace.first.decision == DecisionKind::Answer);
        }
        if let Some(family) = &item.family {
            r.per_family
                .entry(family.clone())
                .or_default()
                .add(meets(item, o));
        }
        r.render_errors += [&o.exec_first, &o.exec_after, &o.exec_best_guess]
            .into_iter()
            .filter(|c| matches!(c, Some(Check::PlanFailed(PlanError::Render(_)))))
            .count();
        r.gave_up += usize::from(o.trace.gave_up);
        r.panics += usize::from(o.trace.first.decision == DecisionKind::Panic);
        for (check, ratio) in [
            (&o.exec_first, &mut r.exec_clear),
            (&o.exec_after, &mut r.after_one_answer),
            (&o.exec_best_guess, &mut r.best_guess),
        ] {
            if let Some(c) = check {
                ratio.add(c.ok());
                if matches!(c, Check::GoldFailed(_)) && !r.gold_failures.contains(&item.id) {
                    r.gold_failures.push(item.id);
                }
            }
        }
    }
    r.detection = r.detection.finish();
    r.per_kind = r.per_kind.into_iter().map(|(k, v)| (k, v.finish())).collect();
    r.mean_rounds = if rounds.total > 0 {
        rounds.ok as f64 / rounds.total as f64
    } else {
        0.0
    };
    latencies.sort();
    r.latency = Latency {
        p50_us: percentile(&latencies, 0.50),
        p99_us: percentile(&latencies, 0.99),
        max_us: latencies.last().map_or(0.0, |d| d.as_secs_f64() * 1e6),
    };
    // undefined fails, except in the blind part, whose batches need not cover every figure
    let undefined_passes = part == Part::Blind;
    let check = |metric, value: Option<f64>, limit, at_least: bool| Threshold {
        metric,
        value,
        limit,
        at_least,
        pass: match value {
            Some(v) if at_least => v >= limit,
            Some(v) => v <= limit,
            None => undefined_passes,
        },
    };
    let l = limits(part);
    r.thresholds = vec![
        check("ambiguity precision", r.detection.precision, l.precision, true),
        check("ambiguity recall", r.detection.recall, l.recall, true),
        check(
            "clarification rate on clear questions",
            r.clarified_clear.value(),
            l.clarify_clear,
            false,
        ),
        check(
            "execution accuracy, clear questions",
            r.exec_clear.value(),
            l.exec_clear,
            true,
        ),
        check(
            "execution accuracy after one answer",
            r.after_one_answer.value(),
            l.after_answer,
            true,
        ),
        check(
            "silent guesses",
            Some(r.silent.value().unwrap_or(0.0)),
            l.silent,
            false,
        ),
        check("render errors", Some(r.render_errors as f64), 0.0, false),
    ];
    r
}

/// The item did what it is labeled to do: answered right, asked, showed the assumption,
/// or refused.
fn meets(item: &Item, o: &Outcome) -> bool {
    let first = o.trace.first.decision;
    match item.behaviour {
        Behaviour::Answer => o.exec_first.as_ref().is_some_and(Check::ok),
        Behaviour::Ask => first == DecisionKind::Clarify,
        Behaviour::AnswerWithAssumption => {
            matches!(first, DecisionKind::AnswerWithAssumptions | DecisionKind::Clarify)
        }
        Behaviour::Refuse => first == DecisionKind::Refuse,
    }
}

/// The kinds a positive item should be asked about (not those marked `assumed`).
fn expected_kinds(item: &Item) -> Vec<AmbiguityKind> {
    let mut kinds: Vec<AmbiguityKind> = item
        .expect
        .iter()
        .filter(|e| !e.assumed)
        .map(|e| e.kind)
        .collect();
    kinds.sort();
    kinds.dedup();
    kinds
}

fn fmt_opt(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_owned(), |v| format!("{v:.3}"))
}

fn fmt_ratio(r: Ratio) -> String {
    match r.value() {
        Some(v) => format!("{:.1} % ({}/{})", v * 100.0, r.ok, r.total),
        None => "—".to_owned(),
    }
}

/// The metrics table for the terminal, one column per part.
pub fn render_table(parts: &[PartReport]) -> String {
    let mut s = String::new();
    let header: Vec<String> = parts.iter().map(|p| p.part.to_string()).collect();
    let w = 24;
    let _ = writeln!(
        s,
        "{:<44}{}",
        "metric",
        header.iter().map(|h| format!("{h:>w$}")).collect::<String>()
    );
    let row = |s: &mut String, name: &str, cells: Vec<String>, limit: &str| {
        let _ = writeln!(
            s,
            "{name:<44}{}  {limit}",
            cells.iter().map(|c| format!("{c:>w$}")).collect::<String>()
        );
    };
    row(
        &mut s,
        "items",
        parts.iter().map(|p| p.items.to_string()).collect(),
        "",
    );
    for b in [
        Behaviour::Answer,
        Behaviour::AnswerWithAssumption,
        Behaviour::Ask,
        Behaviour::Refuse,
    ] {
        row(
            &mut s,
            &format!("  {}", b.as_str()),
            parts
                .iter()
                .map(|p| p.by_behaviour.get(&b).copied().unwrap_or(0).to_string())
                .collect(),
            "",
        );
    }
    let verdict = |p: &PartReport, metric: &str| {
        p.thresholds
            .iter()
            .find(|t| t.metric == metric)
            .map_or("", |t| if t.pass { "ok" } else { "FAIL" })
    };
    let with_verdict = |p: &PartReport, metric: &str, text: String| format!("{text} {}", verdict(p, metric));
    row(
        &mut s,
        "ambiguity precision",
        parts
            .iter()
            .map(|p| {
                let d = &p.detection;
                with_verdict(
                    p,
                    "ambiguity precision",
                    format!("{} ({}/{})", fmt_opt(d.precision), d.tp, d.tp + d.fp),
                )
            })
            .collect(),
        "≥ 0.90",
    );
    row(
        &mut s,
        "ambiguity recall",
        parts
            .iter()
            .map(|p| {
                let d = &p.detection;
                with_verdict(
                    p,
                    "ambiguity recall",
                    format!("{} ({}/{})", fmt_opt(d.recall), d.tp, d.support),
                )
            })
            .collect(),
        "≥ 0.90",
    );
    row(
        &mut s,
        "clarification rate on clear questions",
        parts
            .iter()
            .map(|p| {
                with_verdict(
                    p,
                    "clarification rate on clear questions",
                    fmt_ratio(p.clarified_clear),
                )
            })
            .collect(),
        "≤ 5 %",
    );
    row(
        &mut s,
        "execution accuracy, clear questions",
        parts
            .iter()
            .map(|p| with_verdict(p, "execution accuracy, clear questions", fmt_ratio(p.exec_clear)))
            .collect(),
        "≥ 92 %",
    );
    row(
        &mut s,
        "execution accuracy after one answer",
        parts
            .iter()
            .map(|p| {
                with_verdict(
                    p,
                    "execution accuracy after one answer",
                    fmt_ratio(p.after_one_answer),
                )
            })
            .collect(),
        "≥ 95 %",
    );
    row(
        &mut s,
        "silent guesses (ask/assume/refuse answered silently)",
        parts
            .iter()
            .map(|p| with_verdict(p, "silent guesses", fmt_ratio(p.silent)))
            .collect(),
        "≤ 3 % (tuned/holdout: ≤ 6/164, 2/35 ratchet)",
    );
    row(
        &mut s,
        "render errors",
        parts
            .iter()
            .map(|p| with_verdict(p, "render errors", p.render_errors.to_string()))
            .collect(),
        "0",
    );
    row(
        &mut s,
        "best-guess accuracy (non-interactive)",
        parts.iter().map(|p| fmt_ratio(p.best_guess)).collect(),
        "",
    );
    row(
        &mut s,
        "assumption shown (answer_with_assumption)",
        parts.iter().map(|p| fmt_ratio(p.assumptions_shown)).collect(),
        "",
    );
    row(
        &mut s,
        "refused (refuse items)",
        parts.iter().map(|p| fmt_ratio(p.refused)).collect(),
        "",
    );
    row(
        &mut s,
        "hostile/out-of-domain answered",
        parts.iter().map(|p| p.hostile_answered.to_string()).collect(),
        "",
    );
    row(
        &mut s,
        "mean clarification rounds",
        parts.iter().map(|p| format!("{:.2}", p.mean_rounds)).collect(),
        "",
    );
    row(
        &mut s,
        "gave up after round limit",
        parts.iter().map(|p| p.gave_up.to_string()).collect(),
        "",
    );
    row(
        &mut s,
        "engine panics",
        parts.iter().map(|p| p.panics.to_string()).collect(),
        "",
    );
    row(
        &mut s,
        "engine latency p50 (µs)",
        parts.iter().map(|p| format!("{:.1}", p.latency.p50_us)).collect(),
        "",
    );
    row(
        &mut s,
        "engine latency p99 (µs)",
        parts.iter().map(|p| format!("{:.1}", p.latency.p99_us)).collect(),
        "",
    );
    row(
        &mut s,
        "engine latency max (µs)",
        parts.iter().map(|p| format!("{:.1}", p.latency.max_us)).collect(),
        "",
    );
    let _ = writeln!(s);
    let _ = writeln!(s, "per kind: support  TP  FP  FN  precision  recall");
    let mut kinds: Vec<AmbiguityKind> = parts.iter().flat_map(|p| p.per_kind.keys().copied()).collect();
    kinds.sort();
    kinds.dedup();
    for kind in kinds {
        let cells: Vec<String> = parts
            .iter()
            .map(|p| match p.per_kind.get(&kind) {
                Some(k) => format!(
                    "{}: {:>3} {:>3} {:>3} {:>3} {:>6} {:>6}",
                    p.part,
                    k.support,
                    k.tp,
                    k.fp,
                    k.fn_,
                    fmt_opt(k.precision),
                    fmt_opt(k.recall)
                ),
                None => format!("{}: —", p.part),
            })
            .collect();
        let _ = writeln!(s, "  {:<26}{}", kind.as_str(), cells.join("   "));
    }
    for p in parts {
        if !p.gold_failures.is_empty() {
            let _ = writeln!(
                s,
                "\n{}: gold SQL failed for items {:?} (fix the labeled set)",
                p.part, p.gold_failures
            );
        }
        if !p.per_family.is_empty() {
            let _ = writeln!(s, "\n{}: items meeting their label, per family", p.part);
            for (family, r) in &p.per_family {
                let _ = writeln!(s, "  {family:<20}{}", fmt_ratio(*r));
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::set::Expected;
    use crate::eval::simulate::Observation;

    fn item(id: u32, behaviour: Behaviour, expect: Vec<(AmbiguityKind, &str, Option<&str>)>) -> Item {
        Item {
            id,
            question: "q".into(),
            previous: None,
            behaviour,
            holdout: false,
            expect: expect
                .into_iter()
                .map(|(kind, span, term)| Expected {
                    kind,
                    span: span.into(),
                    term: term.map(str::to_owned),
                    pick: None,
                    pick_constraint: None,
                    pick_change: None,
                    assumed: false,
                })
                .collect(),
            gold: BTreeMap::new(),
            family: None,
            file: String::new(),
        }
    }

    fn trace(decision: DecisionKind, asked: Vec<(AmbiguityKind, Option<&str>)>) -> Trace {
        let obs = Observation {
            decision,
            refuse_reason: None,
            ambiguities: asked
                .into_iter()
                .map(|(kind, term)| Seen {
                    kind,
                    term: term.map(str::to_owned),
                    text: String::new(),
                    asked: true,
                    options: Vec::new(),
                })
                .collect(),
            panic: None,
            restatement: String::new(),
            plan: None,
        };
        Trace {
            first: obs.clone(),
            after_one: None,
            last: obs,
            rounds: 0,
            gave_up: false,
            latency: Duration::from_micros(100),
            context_problem: None,
        }
    }

    use AmbiguityKind::*;

    #[test]
    fn asking_the_expected_kind_is_a_true_positive() {
        let i = item(
            1,
            Behaviour::Ask,
            vec![(VagueQualifier, "serious", Some("serious"))],
        );
        let d = detection(
            &i,
            &trace(DecisionKind::Clarify, vec![(VagueQualifier, Some("serious"))]),
        );
        assert!(d.tp && !d.fp && !d.fn_);
    }

    #[test]
    fn asking_with_a_wrong_kind_is_both_a_false_positive_and_a_miss() {
        let i = item(1, Behaviour::Ask, vec![(Entity, "how many", None)]);
        let d = detection(&i, &trace(DecisionKind::Clarify, vec![(Column, Some("date"))]));
        assert!(!d.tp && d.fp && d.fn_);
        assert_eq!(d.stray, [Column]);
    }

    #[test]
    fn asking_on_a_clear_question_is_a_false_positive_and_answering_an_ask_item_is_a_miss() {
        let clear = item(1, Behaviour::Answer, vec![]);
        assert!(detection(&clear, &trace(DecisionKind::Clarify, vec![(Column, None)])).fp);
        assert!(!detection(&clear, &trace(DecisionKind::Answer, vec![])).fp);
        let ask = item(2, Behaviour::Ask, vec![(VagueQualifier, "bad", Some("bad"))]);
        let d = detection(&ask, &trace(DecisionKind::AnswerWithAssumptions, vec![]));
        assert!(d.fn_ && !d.fp);
    }

    #[test]
    fn asking_a_secondary_ambiguity_marked_assumed_is_a_false_positive_not_a_hit() {
        let mut i = item(
            1,
            Behaviour::Ask,
            vec![
                (VagueQualifier, "infected", Some("infected")),
                (Column, "by clinic", Some("clinic_column")),
            ],
        );
        i.expect[1].assumed = true;
        let only_secondary = detection(
            &i,
            &trace(DecisionKind::Clarify, vec![(Column, Some("clinic_column"))]),
        );
        assert!(!only_secondary.tp && only_secondary.fp && only_secondary.fn_);
        assert_eq!(only_secondary.stray, [Column]);
        assert_eq!(
            expected_kinds(&i),
            [VagueQualifier],
            "not part of the per-kind support"
        );
    }

    #[test]
    fn a_refusal_detects_an_out_of_domain_item() {
        let i = item(1, Behaviour::Refuse, vec![(OutOfDomain, "delete", None)]);
        assert!(detection(&i, &trace(DecisionKind::Refuse, vec![])).tp);
        let clear = item(2, Behaviour::Answer, vec![]);
        assert_eq!(
            detection(&clear, &trace(DecisionKind::Refuse, vec![])).stray,
            [OutOfDomain]
        );
    }

    #[test]
    fn part_metrics_and_thresholds_follow_the_definitions() {
        let items = [
            item(
                1,
                Behaviour::Ask,
                vec![(VagueQualifier, "serious", Some("serious"))],
            ),
            item(2, Behaviour::Ask, vec![(Entity, "how many", None)]),
            item(3, Behaviour::Answer, vec![]),
            item(4, Behaviour::Answer, vec![]),
        ];
        let traces = [
            trace(DecisionKind::Clarify, vec![(VagueQualifier, Some("serious"))]),
            trace(DecisionKind::Answer, vec![]),
            trace(DecisionKind::Clarify, vec![(Column, None)]),
            trace(DecisionKind::Answer, vec![]),
        ];
        let outcomes: Vec<Outcome> = items
            .iter()
            .zip(&traces)
            .map(|(i, t)| Outcome {
                id: i.id,
                part: Part::Tuned,
                behaviour: i.behaviour,
                question: i.question.clone(),
                expected_kinds: vec![],
                trace: t.clone(),
                exec_first: i.behaviour.is_clear().then_some(Check::Match),
                exec_after: None,
                exec_best_guess: None,
            })
            .collect();
        let pairs: Vec<(&Item, &Outcome)> = items.iter().zip(&outcomes).collect();
        let r = part_report(Part::Tuned, &pairs);
        assert_eq!((r.detection.tp, r.detection.fp, r.detection.fn_), (1, 1, 1));
        assert_eq!(r.detection.precision, Some(0.5));
        assert_eq!(r.detection.recall, Some(0.5));
        assert_eq!(r.per_kind[&Entity].fn_, 1);
        assert_eq!(r.per_kind[&Column].fp, 1);
        assert_eq!(r.clarified_clear, Ratio { ok: 1, total: 2 });
        assert!(!r.passes());
        assert!(
            r.thresholds
                .iter()
                .find(|t| t.metric.contains("after one"))
                .is_some_and(|t| !t.pass),
            "undefined fails"
        );
        assert!(render_table(&[r]).contains("ambiguity precision"));
    }

    fn outcome(i: &Item, t: &Trace) -> Outcome {
        Outcome {
            id: i.id,
            part: i.part(),
            behaviour: i.behaviour,
            question: i.question.clone(),
            expected_kinds: vec![],
            trace: t.clone(),
            exec_first: None,
            exec_after: None,
            exec_best_guess: None,
        }
    }

    #[test]
    fn a_silent_guess_is_an_answer_with_nothing_shown_to_a_question_that_needed_something() {
        let vague = item(
            1,
            Behaviour::AnswerWithAssumption,
            vec![(VagueQualifier, "big", Some("large"))],
        );
        let ask = item(2, Behaviour::Ask, vec![(VagueQualifier, "bad", Some("bad"))]);
        let refuse = item(3, Behaviour::Refuse, vec![(OutOfDomain, "delete", None)]);
        let clear = item(4, Behaviour::Answer, vec![]);
        let silent = trace(DecisionKind::Answer, vec![]);
        let shown = trace(DecisionKind::AnswerWithAssumptions, vec![]);
        let os = [
            outcome(&vague, &silent),
            outcome(&ask, &shown),
            outcome(&refuse, &silent),
            outcome(&clear, &silent),
        ];
        let pairs: Vec<(&Item, &Outcome)> = [&vague, &ask, &refuse, &clear].into_iter().zip(&os).collect();
        let r = part_report(Part::Tuned, &pairs);
        // the clear item is not counted; the vague and the refused one are silent
        assert_eq!((r.silent.ok, r.silent.total), (2, 3));
    }

    #[test]
    fn a_render_error_is_counted_and_gated_at_zero() {
        let clear = item(1, Behaviour::Answer, vec![]);
        let mut o = outcome(&clear, &trace(DecisionKind::Answer, vec![]));
        o.exec_first = Some(Check::PlanFailed(PlanError::Render("fan_out".into())));
        let r = part_report(Part::Tuned, &[(&clear, &o)]);
        assert_eq!(r.render_errors, 1);
        assert!(
            r.thresholds
                .iter()
                .any(|t| t.metric == "render errors" && !t.pass)
        );
    }

    #[test]
    fn the_blind_part_is_gated_by_its_floors_and_the_others_by_the_targets() {
        assert_eq!(limits(Part::Blind), BLIND_FLOORS);
        assert_eq!(limits(Part::Tuned).exec_clear, MIN_EXEC_CLEAR);
        assert_eq!(limits(Part::Holdout).recall, MIN_RECALL);
        // a blind figure worse than its floor fails
        let clear = item(2001, Behaviour::Answer, vec![]);
        let mut o = outcome(&clear, &trace(DecisionKind::Answer, vec![]));
        o.exec_first = Some(Check::Mismatch("rows".into()));
        let r = part_report(Part::Blind, &[(&clear, &o)]);
        let exec = r
            .thresholds
            .iter()
            .find(|t| t.metric == "execution accuracy, clear questions")
            .unwrap();
        assert_eq!(exec.pass, BLIND_FLOORS.exec_clear <= 0.0);
    }
}
