//! The optional language-model backend (F24): an OpenAI-compatible chat-completions
//! endpoint that reads what the deterministic engine cannot — words it reports as
//! unexplained, free-text clarification answers it cannot parse — and proposes typed
//! plan pieces or one typed clarification. Never SQL; never called on the fast path
//! (the orchestrator calls it only when the engine could not settle something).
//!
//! - [`config`]: the environment (off unless `CLARION_LLM_URL` is set; the key never printed);
//! - [`client`]: the HTTP exchange, time limits, `Retry-After` once, the circuit breaker;
//! - [`card`]: what is sent (the schema card, masked question and previous plan) — and
//!   therefore what is never sent;
//! - [`reply`]: the reply types, their JSON Schema (schemars) and our own parsing;
//! - [`validate`]: proposals → typed resolutions checked against the model (0.75 / 0.3).
//!
//! The prompts are versioned files under `server/prompts/`.
//!
//! Layering: this module reads the semantic model and the engine's types and knows
//! nothing of the store or HTTP; only the orchestrator calls it.

pub mod card;
pub mod client;
pub mod config;
pub mod fold;
pub mod reply;
pub mod validate;

pub use client::{BreakerStatus, LlmError};
pub use config::{LlmConfig, ResponseFormat, Secret};
pub use reply::{ModelReply, ProposedOption, ProposedPiece};

use crate::engine::{AllowedValuesSnapshot, QueryPlan, Resolutions};
use crate::semantic::SemanticModel;
use chrono::NaiveDate;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The prompt for reading a question's unexplained words.
pub const PLAN_PROMPT: &str = include_str!("../../prompts/plan.v1.md");
/// Its version, recorded with every call.
pub const PLAN_PROMPT_VERSION: &str = "plan.v1";
/// The prompt for reading a free-text clarification answer.
pub const ANSWER_PROMPT: &str = include_str!("../../prompts/answer.v1.md");
/// Its version.
pub const ANSWER_PROMPT_VERSION: &str = "answer.v1";

/// One word (or run of words) the engine could not read.
#[derive(Clone, Debug, PartialEq)]
pub struct Unexplained {
    /// The engine's ambiguity for it (`unknown:stalling`).
    pub ambiguity_id: String,
    /// The words as typed.
    pub word: String,
}

/// What a question's reading sends.
#[derive(Clone, Copy, Debug)]
pub struct WordsRequest<'a> {
    pub model: &'a SemanticModel,
    pub allowed: &'a AllowedValuesSnapshot,
    pub question: &'a str,
    pub entity: &'a str,
    pub unexplained: &'a [Unexplained],
    pub previous: Option<&'a QueryPlan>,
    pub resolutions: &'a Resolutions,
    pub today: NaiveDate,
}

/// What a free-text answer's reading sends.
#[derive(Clone, Copy, Debug)]
pub struct AnswerRequest<'a> {
    pub model: &'a SemanticModel,
    pub allowed: &'a AllowedValuesSnapshot,
    /// The clarification question asked.
    pub question: &'a str,
    /// The words of the original question it is about.
    pub word: &'a str,
    /// What the clinician typed.
    pub answer: &'a str,
    pub entity: &'a str,
    /// The options offered: (id, label).
    pub options: &'a [(String, String)],
    pub today: NaiveDate,
}

/// One call as the audit log and analytics record it (never the values).
#[derive(Clone, Debug, PartialEq)]
pub struct CallRecord {
    pub model: String,
    pub prompt_version: &'static str,
    pub latency: Duration,
    pub tokens: Option<u32>,
    /// `ok`, or the [`LlmError::code`].
    pub outcome: &'static str,
}

/// The configured endpoint with its breaker. One per orchestrator.
#[derive(Debug)]
pub struct Llm {
    client: client::Client,
    schema: Value,
}

impl Llm {
    pub fn new(config: LlmConfig) -> Self {
        Llm {
            client: client::Client::new(config),
            schema: reply::reply_schema(),
        }
    }

    pub fn config(&self) -> &LlmConfig {
        &self.client.config
    }

    /// The breaker's state (for `/healthz`).
    pub fn status(&self) -> BreakerStatus {
        self.client.status()
    }

    /// Start-up reachability check; logged, never fatal.
    pub async fn probe(&self) -> Result<(), String> {
        self.client.probe().await
    }

    /// Whether a reply turned out usable after validation (a reply with nothing valid
    /// counts as a failure for the breaker).
    pub fn record_usable(&self, ok: bool) {
        self.client.record(ok);
    }

    /// Reads a question's unexplained words.
    pub async fn read_words(&self, r: &WordsRequest<'_>) -> (CallRecord, Result<ModelReply, LlmError>) {
        let user = json!({
            "question": card::mask_question(r.question),
            "entity": r.entity,
            "unexplained": r.unexplained.iter().map(|u| json!({"word": u.word})).collect::<Vec<_>>(),
            "previous_plan": r.previous.map(|p| card::masked_plan(r.model, p)),
            "resolutions": card::resolutions_summary(r.model, r.resolutions),
            "today": card::today(r.today),
            "schema": card::schema_card(r.model, r.allowed),
        });
        self.call(
            PLAN_PROMPT,
            PLAN_PROMPT_VERSION,
            &user,
            self.config().plan_timeout,
        )
        .await
    }

    /// Reads a free-text clarification answer.
    pub async fn read_answer(&self, r: &AnswerRequest<'_>) -> (CallRecord, Result<ModelReply, LlmError>) {
        let user = json!({
            "question": r.question,
            "word": r.word,
            "answer": card::mask_question(r.answer),
            "entity": r.entity,
            "options": r.options.iter().map(|(id, l)| json!([id, l])).collect::<Vec<_>>(),
            "today": card::today(r.today),
            "schema": card::schema_card(r.model, r.allowed),
        });
        self.call(
            ANSWER_PROMPT,
            ANSWER_PROMPT_VERSION,
            &user,
            self.config().answer_timeout,
        )
        .await
    }

    async fn call(
        &self,
        system: &str,
        version: &'static str,
        user: &Value,
        timeout: Duration,
    ) -> (CallRecord, Result<ModelReply, LlmError>) {
        let t = Instant::now();
        let result = self
            .client
            .chat(system, &user.to_string(), &self.schema, timeout)
            .await;
        let (tokens, parsed) = match result {
            Ok(reply) => {
                let parsed = reply::parse(&reply.content).map_err(|e| {
                    self.client.record(false);
                    match e {
                        reply::ReplyError::Malformed(why) => {
                            tracing::warn!(prompt = version, why = %why, "language model: reply was not JSON");
                            LlmError::Malformed
                        }
                        reply::ReplyError::Schema(why) => {
                            tracing::warn!(prompt = version, why = %why, "language model: reply did not match the schema");
                            LlmError::Schema
                        }
                    }
                });
                (reply.tokens, parsed)
            }
            Err(e) => {
                tracing::warn!(prompt = version, error = %e, "language model: call failed");
                (None, Err(e))
            }
        };
        let record = CallRecord {
            model: self.config().model.clone(),
            prompt_version: version,
            latency: t.elapsed(),
            tokens,
            outcome: match &parsed {
                Ok(_) => "ok",
                Err(e) => e.code(),
            },
        };
        (record, parsed)
    }
}
