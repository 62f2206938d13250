//! `server eval --llm`: the evaluation with the language-model fallback on (F24), so
//! anyone with an endpoint can measure what it adds. Where the engine leaves words
//! unexplained, the model is asked once per question, exactly as the orchestrator asks
//! it (the same request, the same checks, folded by [`crate::llm::fold`]); proposed
//! options a simulated clinician picks are run as their typed readings. The report adds
//! the calls, failures, tokens and latency.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;

use super::simulate::WordReader;
use crate::engine::{EngineInput, Resolution, Resolutions, Understanding};
use crate::llm::fold::{Fold, fold_reply, open_words, proposed_resolution};
use crate::llm::{Llm, Unexplained, WordsRequest};

/// What the model cost and gave over a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct ModelStats {
    /// The model name sent.
    pub model: String,
    /// Calls made (one per question at most).
    pub calls: u32,
    /// Calls that failed (time-out, HTTP error, malformed or schema-invalid reply).
    pub failures: u32,
    /// Replies with at least one valid proposal folded in.
    pub used: u32,
    /// Tokens reported by the endpoint.
    pub tokens: i64,
    /// Median call latency, milliseconds.
    pub p50_ms: u64,
    /// 95th percentile call latency, milliseconds.
    pub p95_ms: u64,
}

/// What one question settled with the model.
#[derive(Default)]
struct Memo {
    /// Pieces applied as resolutions.
    applied: Vec<(String, Resolution)>,
    /// Proposed options (id → typed reading) of a proposed clarification.
    proposed: HashMap<(String, String), Resolution>,
}

/// The language model as a [`WordReader`].
pub struct ModelReader {
    llm: Llm,
    handle: tokio::runtime::Handle,
    memo: Mutex<HashMap<String, Memo>>,
    latencies: Mutex<Vec<Duration>>,
    stats: Mutex<ModelStats>,
}

impl ModelReader {
    /// A reader calling `llm` on the current (multi-threaded) Tokio runtime.
    pub fn new(llm: Llm) -> Self {
        let model = llm.config().model.clone();
        ModelReader {
            llm,
            handle: tokio::runtime::Handle::current(),
            memo: Mutex::new(HashMap::new()),
            latencies: Mutex::new(Vec::new()),
            stats: Mutex::new(ModelStats {
                model,
                ..ModelStats::default()
            }),
        }
    }

    /// The figures so far.
    pub fn stats(&self) -> ModelStats {
        let mut s = self.stats.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let mut l = self.latencies.lock().unwrap_or_else(|e| e.into_inner()).clone();
        l.sort();
        let pick = |q: f64| -> u64 {
            if l.is_empty() {
                return 0;
            }
            let i = ((l.len() as f64 * q).ceil() as usize).clamp(1, l.len()) - 1;
            l[i].as_millis() as u64
        };
        s.p50_ms = pick(0.5);
        s.p95_ms = pick(0.95);
        s
    }
}

impl WordReader for ModelReader {
    fn prepare(&self, question: &str, answers: &Resolutions) -> Resolutions {
        let memo = self.memo.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = answers.clone();
        let Some(m) = memo.get(question) else {
            return out;
        };
        for (id, r) in &m.applied {
            out.answers.entry(id.clone()).or_insert_with(|| r.clone());
        }
        for (amb, r) in out.answers.iter_mut() {
            if let Resolution::Option { id } = r
                && let Some(reading) = m.proposed.get(&(amb.clone(), id.clone()))
            {
                *r = reading.clone();
            }
        }
        out
    }

    fn after(&self, question: &str, input: &EngineInput<'_>, mut u: Understanding) -> Understanding {
        if self
            .memo
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(question)
        {
            return u;
        }
        // The orchestrator's condition: unexplained words left open in a plan that runs.
        let words: Vec<_> = open_words(&u, |id| input.resolutions.answers.contains_key(id))
            .into_iter()
            .cloned()
            .collect();
        if words.is_empty() {
            return u;
        }
        let entity = u.entity.clone().unwrap_or_default();
        let unexplained: Vec<Unexplained> = words
            .iter()
            .map(|a| Unexplained {
                ambiguity_id: a.id.clone(),
                word: a.text.clone(),
            })
            .collect();
        let request = WordsRequest {
            model: input.model,
            allowed: input.allowed,
            question,
            entity: &entity,
            unexplained: &unexplained,
            previous: input.context.previous.as_ref(),
            resolutions: input.resolutions,
            today: input.today,
        };
        let (record, reply) =
            tokio::task::block_in_place(|| self.handle.block_on(self.llm.read_words(&request)));
        self.latencies
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(record.latency);
        let mut memo = Memo::default();
        {
            let mut s = self.stats.lock().unwrap_or_else(|e| e.into_inner());
            s.calls += 1;
            s.tokens += i64::from(record.tokens.unwrap_or(0));
            if reply.is_err() {
                s.failures += 1;
            }
        }
        if let Ok(reply) = reply {
            let fold = Fold {
                model: input.model,
                allowed: input.allowed,
                entity: &entity,
                thresholds: input.thresholds,
                asking: true,
                input: *input,
            };
            let mut resolutions = input.resolutions.clone();
            let folded = fold_reply(&fold, &words, reply, &mut u, &mut resolutions);
            if folded.summary.is_some() {
                self.stats.lock().unwrap_or_else(|e| e.into_inner()).used += 1;
            }
            memo.applied = folded
                .applied
                .into_iter()
                .map(|a| (a.ambiguity_id, a.resolution))
                .collect();
            for a in &u.ambiguities {
                for o in &a.options {
                    if let Some(r) = proposed_resolution(o) {
                        memo.proposed.insert((a.id.clone(), o.id.clone()), r);
                    }
                }
            }
        }
        self.memo
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(question.to_owned(), memo);
        u
    }
}
