//! The pipeline (ARCHITECTURE.md): a question in, an answer or one clarification round
//! out, with everything a later request needs stored in the database.
//!
//! 1. Load context: the thread's previous plan, the user's settings and remembered
//!    choices, the allowed-values snapshot.
//! 2. Run the pure engine with all of that.
//! 3. Clarify (interactive, not skipped, rounds left, new questions only): option
//!    counts in parallel with a time limit, store the round (everything needed to resume
//!    it on any replica), return it.
//! 4. On an answer: load the round (owner, expiry, still pending), turn the answers into
//!    typed resolutions (a bad custom value changes nothing stored), store them
//!    atomically, record preference evidence, re-run with them fixed. An ambiguity is
//!    never asked twice and a question takes at most `max_rounds` rounds; after that the
//!    best guesses are assumptions (F10).
//! 5. Render, execute read-only (row cap, time limit), suggest (relaxations on an empty
//!    result), store history and audit (the SQL and the number of bound values, never
//!    the values), return the answer with measured thinking steps.
//!
//! Non-interactive mode and the "skip clarifications" setting stop at step 3: the
//! questions become `open_questions` and their defaults assumptions.
//!
//! What this module must not do: build SQL (only `crate::sql` does), hold state between
//! requests in memory (rounds are rows), or know about HTTP.

mod answers;
pub mod config;
mod convert;
mod fallback;
mod feedback;
pub mod learning;
mod own_words;
mod pending;
mod readings;
pub mod saved;
pub mod scope;
mod scope_options;
pub mod verified;

pub use config::OrchestratorConfig;
pub use fallback::LlmPiece;
pub use scope::ScopePaths;

use pending::{Pending, PendingAudit, PendingPreference};
use readings::SharedAllowed;

use crate::engine::{
    self, AllowedValuesSnapshot, Ambiguity, ConversationContext, Decision, EngineIndex, EngineInput,
    GateThresholds, Preferences, QueryPlan, Resolution, Resolutions, understand,
};
use crate::semantic::SemanticModel;
use crate::sql::{Dialect, RenderCheck, RenderError, render_count_scoped, render_with_cap};
use crate::store::{
    AnswerChoice, AuditOutcome, ClinicScope, HistoryId, MessageRole, NewAnswer, NewHistoryEntry, NewMessage,
    NewRound, PreferenceChoice, RoundId, Store, StoreError, ThreadId,
};
use crate::warehouse::exec::{ExecError, Warehouse};
use crate::warehouse::{AllowedValuesProvider, ColumnSpec};
use app::protocol::{
    Answer, ApiError, AskRequest, ClarificationRound, ClarifyRequest, ErrorCode, HistoryItem, PreferenceItem,
    QueryOutcome, ResultTable, ReviseRequest, Settings, StoredAnswer, ThinkingStep, ThreadMessage,
    ThreadView,
};
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Said on an answer to a round whose time had run out.
pub const EXPIRED_NOTICE: &str =
    "Your clarification had expired, so Clarion ran the question again with your answers, on today's data.";

/// Why a request could not be served. 4xx variants carry a message a person can act on.
#[derive(Debug, thiserror::Error)]
pub enum OrchestratorError {
    /// The input is wrong (400); the message says how.
    #[error("{message}")]
    BadInput { code: ErrorCode, message: String },
    /// The question is not one Clarion answers (422): out of domain, a data change, …
    #[error("{message}")]
    Refused { code: ErrorCode, message: String },
    /// Unknown, expired or another user's id (404; all three look the same).
    #[error("not found")]
    NotFound,
    /// The round was already answered or cancelled (409).
    #[error("{0}")]
    Conflict(String),
    /// The query ran past its time limit (504).
    #[error("the query took longer than {0:?}")]
    Timeout(Duration),
    /// The user already has as many questions running as allowed (429).
    #[error("{0}")]
    Busy(String),
    /// A fault (500); logged with its cause chain, shown only as a reference.
    #[error("internal error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// An error already turned into what the user sees (and logged, for a fault).
    #[error("{0}")]
    Reported(ApiError),
}

impl OrchestratorError {
    fn bad(code: ErrorCode, message: impl Into<String>) -> Self {
        OrchestratorError::BadInput {
            code,
            message: message.into(),
        }
    }

    /// A fault, keeping its cause (an error, or a description) for the log.
    pub fn internal(e: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        OrchestratorError::Internal(e.into())
    }

    /// The code a user (or API client) gets for this error.
    pub fn code(&self) -> ErrorCode {
        match self {
            OrchestratorError::BadInput { code, .. } | OrchestratorError::Refused { code, .. } => *code,
            OrchestratorError::NotFound => ErrorCode::NotFound,
            OrchestratorError::Conflict(_) => ErrorCode::Conflict,
            OrchestratorError::Timeout(_) => ErrorCode::QueryTimeout,
            OrchestratorError::Busy(_) => ErrorCode::TooManyQueries,
            OrchestratorError::Internal(_) => ErrorCode::Internal,
            OrchestratorError::Reported(e) => e.code,
        }
    }

    /// What the user sees: the one mapping from this error to `{code, message}` used
    /// by the JSON API, the server functions and the pages. A fault is logged here
    /// with its whole cause chain and a reference the message shows.
    pub fn into_public(self) -> ApiError {
        let code = self.code();
        match self {
            OrchestratorError::BadInput { message, .. }
            | OrchestratorError::Refused { message, .. }
            | OrchestratorError::Busy(message) => ApiError::new(code, message),
            OrchestratorError::NotFound => ApiError::not_found(),
            OrchestratorError::Conflict(why) => ApiError::new(
                code,
                format!("That clarification can no longer be answered: {why}."),
            ),
            OrchestratorError::Timeout(d) => ApiError::new(code, timeout_message(d)),
            OrchestratorError::Internal(cause) => crate::error::internal_fault(cause.as_ref()),
            OrchestratorError::Reported(e) => e,
        }
    }
}

/// What the user is told when a query ran past its time limit.
fn timeout_message(d: Duration) -> String {
    format!(
        "The query took longer than {} ms and was stopped. Try narrowing the question.",
        d.as_millis()
    )
}

impl OrchestratorError {
    /// The message a refused or timed-out question shows (other errors: their text).
    fn to_public_message(&self) -> String {
        match self {
            OrchestratorError::Refused { message, .. } | OrchestratorError::BadInput { message, .. } => {
                message.clone()
            }
            OrchestratorError::Timeout(d) => timeout_message(*d),
            other => other.to_string(),
        }
    }
}

impl From<OrchestratorError> for ApiError {
    fn from(e: OrchestratorError) -> Self {
        e.into_public()
    }
}

impl From<OrchestratorError> for crate::error::ErrorResponse {
    fn from(e: OrchestratorError) -> Self {
        crate::error::ErrorResponse(e.into_public())
    }
}

impl From<StoreError> for OrchestratorError {
    fn from(e: StoreError) -> Self {
        match e {
            StoreError::NotFound | StoreError::Expired => OrchestratorError::NotFound,
            StoreError::Conflict(why) => OrchestratorError::Conflict(why.to_owned()),
            other => OrchestratorError::internal(other),
        }
    }
}

/// The 422 for a plan the renderer rejects: what went wrong in the user's words (see
/// [`RenderError::user_message`]), and how to ask instead.
fn unanswerable(model: &SemanticModel, e: &RenderError) -> OrchestratorError {
    OrchestratorError::Refused {
        code: ErrorCode::CannotAnswer,
        message: format!(
            "I can't answer that as I read it: {}. Try naming the records and the one thing to compute, e.g. \"average latest wound area by clinic\".",
            e.user_message(model)
        ),
    }
}

/// What a stored round needs to resume on any replica (its `understanding_json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct RoundState {
    /// The question as asked.
    question: String,
    /// The thread context it was asked in.
    context: ConversationContext,
    /// Answers from earlier rounds of this question.
    resolutions: Resolutions,
    /// Every ambiguity asked so far, this round included (never asked again).
    asked: Vec<String>,
    /// The ambiguities asked in this round, with their options and custom-value kinds.
    ambiguities: Vec<Ambiguity>,
    /// The plan's entity (free custom constraints are read against it).
    entity: Option<String>,
    /// What the user chose in earlier rounds: (ambiguity id, "“serious”: Infected").
    #[serde(default)]
    chosen: Vec<(String, String)>,
    /// Language-model calls made for this question so far.
    #[serde(default)]
    llm_calls: u32,
    /// Pieces the language model proposed that are in the resolutions.
    #[serde(default)]
    llm_pieces: Vec<LlmPiece>,
}

/// Option counts of some questions: per question, per option; how many counts came back
/// in time, how many were wanted, how many were unchanged since last counted.
struct Previews {
    per_question: Vec<Vec<convert::Preview>>,
    known: usize,
    wanted: usize,
    reused: usize,
}

/// What a history entry needs for a re-run or a revision (its `clarifications_json`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct HistoryResume {
    resolutions: Resolutions,
    context: ConversationContext,
    applied: Vec<engine::AppliedChoice>,
    /// What the user chose in clarification rounds: (ambiguity id, "“serious”: Infected").
    #[serde(default)]
    chosen: Vec<(String, String)>,
    /// Pieces the language model proposed (badges "proposed by the language model").
    #[serde(default)]
    llm_pieces: Vec<LlmPiece>,
    /// The verified question that answered it, if one did: a re-run is answered by
    /// the same definition (or says it was retired), never by a fresh reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    verified: Option<i64>,
}

/// How a choice reads in the thread and in the history: "serious: Infected", or for a
/// question about something missing "which records: Wounds".
fn chosen_text(amb: &Ambiguity, label: &str) -> String {
    format!("{}: {label}", engine::piece_name(amb))
}

/// What a thread message carries for later requests (its `payload_json`).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Payload {
    Question,
    ClarificationAnswer {
        clarification_id: String,
    },
    Clarification {
        clarification_id: String,
    },
    Answer {
        history_id: String,
        plan: Box<QueryPlan>,
        streak: u32,
    },
}

/// One run of the pipeline for one question.
struct Job {
    user_id: i64,
    thread_id: ThreadId,
    question: String,
    context: ConversationContext,
    resolutions: Resolutions,
    asked: Vec<String>,
    rounds_done: u32,
    interactive: bool,
    thinking: Vec<ThinkingStep>,
    started: Instant,
    /// What the user chose in this question's rounds: (ambiguity id, label).
    chosen: Vec<(String, String)>,
    /// The language model may be asked (a new question or a round's answer; never a
    /// revision or re-run, which replay their stored resolutions exactly).
    allow_llm: bool,
    /// Language-model calls made for this question so far (all rounds).
    llm_calls: u32,
    /// Pieces the language model proposed that are in `resolutions`.
    llm_pieces: Vec<LlmPiece>,
    /// The verified question answering this one (its phrasing matched, or its plan).
    verified: Option<verified::InForce>,
    /// Verified questions a new question's plan may match (empty for rounds, revisions
    /// and re-runs, which keep their own definitions).
    candidates: Vec<verified::InForce>,
}

/// The user's side of the engine input, loaded once per request.
struct Loaded {
    settings: Settings,
    /// Remembered choices and, among them, the learned ones (`usual`).
    preferences: Preferences,
    /// Signature → option applied by the learning rule without asking.
    usual: BTreeMap<String, String>,
    /// Remembered custom values, applied like answers (F12).
    saved_customs: std::collections::BTreeMap<String, answers::SavedCustom>,
    /// Shared by the requests that saw the same values (see [`readings`]).
    allowed: SharedAllowed,
    /// The clinics the user may see, read on every request (a change applies at once).
    access: Access,
}

/// The clinics a user may see on this request: the stored scope, and for a scoped
/// account the visible clinics' ids and names (for reading clinics a question names
/// and for the pickers).
#[derive(Clone, Debug)]
pub struct Access {
    pub scope: ClinicScope,
    pub visible: Vec<(i64, String)>,
}

impl Access {
    /// Every clinic (the command line, evaluation).
    pub fn all() -> Self {
        Access {
            scope: ClinicScope::All,
            visible: Vec::new(),
        }
    }
}

/// The clarification loop. Cheap to clone; holds no per-question state.
#[derive(Clone)]
pub struct Orchestrator {
    inner: Arc<Inner>,
}

struct Inner {
    store: Store,
    model: &'static SemanticModel,
    warehouse: Warehouse,
    allowed: Option<AllowedValuesProvider>,
    dialect: Dialect,
    config: OrchestratorConfig,
    /// Option counts kept per (statement, data version).
    counts: crate::warehouse::count_cache::CountCache,
    /// An answer's rows kept per (statement, clinical change version).
    answers: crate::warehouse::answer_cache::AnswerCache,
    /// The data version statement the count cache is keyed by.
    data_version: Option<crate::sql::Rendered>,
    /// Each wound's latest and first assessment, kept current beside the clinical data.
    summaries: crate::warehouse::summary::Summaries,
    /// Each user's running questions (`config.user_concurrent_queries` permits each).
    running: std::sync::Mutex<std::collections::HashMap<i64, Arc<tokio::sync::Semaphore>>>,
    /// The optional language model (F24).
    llm: Option<crate::llm::Llm>,
    /// How each entity reaches a clinic (issue 16); `None`: the model has no clinics.
    scope_paths: Option<ScopePaths>,
    /// The model's vocabulary, indexed once (the engine would otherwise look it up per
    /// reading by a fingerprint of the whole model).
    index: Arc<EngineIndex>,
    /// The renderer's rules every reading of a question is checked with.
    check: RenderCheck<'static>,
    /// The last allowed-values snapshot, shared while the loaded values are the same.
    allowed_cache: readings::AllowedCache,
    /// The engine's readings and option plans, kept per input.
    readings: readings::Readings,
}

impl std::fmt::Debug for Orchestrator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Orchestrator")
            .field("config", &self.inner.config)
            .finish()
    }
}

impl Orchestrator {
    /// An orchestrator over `store`'s database (which also holds the clinical tables),
    /// with the shipped wound-care model. Never blocks: pools connect lazily.
    pub fn new(store: Store, config: OrchestratorConfig) -> Self {
        let model = SemanticModel::wound_care_shared();
        let db = store.database().clone();
        let warehouse = Warehouse::new(&db, config.exec_limits()).with_readable_tables(
            crate::warehouse::privilege::ReadableTables::new(
                model
                    .entities
                    .iter()
                    .map(|e| e.table.clone())
                    .chain(crate::sql::summary::TABLES.map(String::from)),
            ),
        );
        let dialect = Dialect::from(db.backend());
        let allowed = AllowedValuesProvider::new(
            db.clone(),
            ColumnSpec::from_model(model),
            config.allowed_values.clone(),
        )
        .map_err(|e| tracing::warn!(error = %e, "allowed values disabled; using the model's own lists"))
        .ok();
        let counts = crate::warehouse::count_cache::CountCache::new(config.count_cache);
        let summaries = crate::warehouse::summary::Summaries::new(db.clone(), config.summaries);
        let answers = crate::warehouse::answer_cache::AnswerCache::new(
            config.answer_cache,
            crate::warehouse::answer_cache::ClinicalVersion::new(
                db.clone(),
                model.entities.iter().map(|e| e.table.clone()),
            ),
        );
        let data_version = crate::sql::render_data_version(model, dialect)
            .map_err(|e| tracing::warn!(error = %e, "option counts are not cached"))
            .ok();
        let llm = config.llm.clone().map(crate::llm::Llm::new);
        let reading_cache = config.reading_cache;
        Orchestrator {
            inner: Arc::new(Inner {
                store,
                model,
                warehouse,
                allowed,
                dialect,
                config,
                counts,
                answers,
                summaries,
                data_version,
                running: std::sync::Mutex::new(std::collections::HashMap::new()),
                llm,
                scope_paths: ScopePaths::from_model(model),
                index: EngineIndex::for_model(model),
                check: RenderCheck { model },
                allowed_cache: readings::AllowedCache::default(),
                readings: readings::Readings::new(reading_cache),
            }),
        }
    }

    /// A new thread titled by its first question, stored with the request's other writes.
    fn new_thread(pending: &mut Pending, question: &str) -> ThreadId {
        let title: String = question.chars().take(120).collect();
        let id = ThreadId::random();
        pending.thread = Some((id.clone(), title));
        id
    }

    /// A slot for one of `user_id`'s questions, held while it runs: a user with
    /// `user_concurrent_queries` questions running is told to wait (429) rather
    /// than queueing more work on the database.
    pub fn slot(&self, user_id: i64) -> Result<tokio::sync::OwnedSemaphorePermit, OrchestratorError> {
        let n = self.inner.config.user_concurrent_queries.max(1);
        let sem = {
            let mut map = self.inner.running.lock().unwrap_or_else(|p| p.into_inner());
            map.entry(user_id)
                .or_insert_with(|| Arc::new(tokio::sync::Semaphore::new(n)))
                .clone()
        };
        sem.try_acquire_owned().map_err(|_| {
            OrchestratorError::Busy(format!(
                "You already have {n} questions running. Wait for one to finish, then try again."
            ))
        })
    }

    /// Deletes what the clarification loop no longer needs: rounds closed (or
    /// expired) longer ago than the round retention and, when a thread retention
    /// is set, threads unused that long. Runs hourly from `serve`. Returns (rounds, threads).
    pub async fn housekeeping(&self, now: DateTime<Utc>) -> Result<(u64, u64), OrchestratorError> {
        let c = &self.inner.config;
        let keep = |d: Duration| chrono::Duration::from_std(d).unwrap_or(chrono::Duration::days(3650));
        let rounds = self
            .inner
            .store
            .purge_rounds(now - keep(c.round_retention))
            .await?;
        let threads = match c.thread_retention {
            Some(d) => self.inner.store.purge_threads(now - keep(d)).await?,
            None => 0,
        };
        Ok((rounds, threads))
    }

    /// Loads the allowed values now instead of on the first question (start-up and
    /// tests; a failed load is logged and retried later, never an error).
    pub async fn warm_up(&self) {
        if let Some(p) = &self.inner.allowed {
            p.refresh_all().await;
        }
        if self.inner.config.summaries.enabled {
            self.inner.summaries.refresh_in_background();
        }
    }

    /// The language model, when one is configured (F24).
    pub fn llm(&self) -> Option<&crate::llm::Llm> {
        self.inner.llm.as_ref()
    }

    /// The limits in force.
    pub fn config(&self) -> &OrchestratorConfig {
        &self.inner.config
    }

    /// The date questions are read against.
    pub fn today(&self) -> NaiveDate {
        self.inner.config.today.unwrap_or_else(|| Utc::now().date_naive())
    }

    /// `POST /api/v1/query`: answers, or asks one round of questions.
    pub async fn ask(&self, user_id: i64, req: &AskRequest) -> Result<QueryOutcome, OrchestratorError> {
        let started = Instant::now();
        let _slot = self.slot(user_id)?;
        // Control characters (NUL above all, which PostgreSQL text refuses) carry no
        // meaning in a question: read them as spaces.
        let cleaned: String = req
            .question
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        let question = cleaned.trim();
        if question.is_empty() {
            return Err(OrchestratorError::bad(
                ErrorCode::EmptyQuestion,
                "Please type a question.",
            ));
        }
        if question.chars().count() > engine::MAX_QUESTION_CHARS {
            return Err(OrchestratorError::bad(
                ErrorCode::QuestionTooLong,
                format!(
                    "That question is longer than {} characters. Please shorten it.",
                    engine::MAX_QUESTION_CHARS
                ),
            ));
        }
        let mut pending = Pending::new(user_id, Utc::now());
        let (thread_id, context) = match &req.thread_id {
            Some(id) => {
                let id = ThreadId::new(id.clone());
                if !id.is_well_formed() {
                    return Err(OrchestratorError::NotFound);
                }
                let context = self.thread_context(user_id, &id).await?;
                // A follow-up that is refused or fails stays in its thread; a new
                // question that is refused or fails leaves no thread behind.
                pending.keep_on_failure = true;
                (id, context)
            }
            None => (
                Self::new_thread(&mut pending, question),
                ConversationContext::empty(),
            ),
        };
        pending.from_suggestion = req.via == Some(app::protocol::AskVia::Suggestion);
        pending
            .user_message(&thread_id, question, &Payload::Question)
            .map_err(OrchestratorError::internal)?;
        // The answer this question follows up on, if any (counted as used once this
        // question is answered).
        let previous = match &req.thread_id {
            Some(_) => self.last_answer(user_id, &thread_id).await,
            None => None,
        };
        // A question one of whose phrasings an administrator verified is answered by
        // that definition and asks nothing; any other new question may still match one
        // by its plan (checked once it is understood).
        let candidates = self.in_force().await?;
        let matched = verified::by_phrasing(&candidates, question).cloned();
        let (context, resolutions, interactive) = match &matched {
            Some(v) => (
                v.definition.context.clone(),
                v.definition.resolutions.clone(),
                false,
            ),
            None => (context, Resolutions::empty(), req.interactive.unwrap_or(true)),
        };
        let outcome = self
            .run(
                Job {
                    user_id,
                    thread_id,
                    question: question.to_owned(),
                    context,
                    resolutions,
                    asked: Vec::new(),
                    rounds_done: 0,
                    interactive,
                    thinking: Vec::new(),
                    started,
                    chosen: Vec::new(),
                    allow_llm: matched.is_none(),
                    llm_calls: 0,
                    llm_pieces: Vec::new(),
                    verified: matched,
                    candidates,
                },
                pending,
            )
            .await;
        match outcome {
            Ok(o) => {
                // A follow-up asked on an answer used it as it was (F12: success).
                if let Some(h) = previous {
                    self.count_used(user_id, &h).await;
                }
                Ok(o)
            }
            // Refused and failed questions go to History with the message shown.
            Err(e) => Err(self.record_unanswered(user_id, question, started, e).await),
        }
    }

    /// `POST /api/v1/query/clarify`: applies the answers to a round and continues.
    pub async fn clarify(
        &self,
        user_id: i64,
        req: &ClarifyRequest,
    ) -> Result<QueryOutcome, OrchestratorError> {
        let started = Instant::now();
        let _slot = self.slot(user_id)?;
        let store = &self.inner.store;
        let id = RoundId::new(req.clarification_id.clone());
        if !id.is_well_formed() {
            return Err(OrchestratorError::NotFound);
        }
        let now = Utc::now();
        // A round answered after its time ran out is reopened and its question run again
        // with the answers given (said on the answer); a foreign or unknown id stays 404.
        let (round, revived) = match store.pending_round(user_id, &id, now).await {
            Err(StoreError::Expired) => {
                let ttl = chrono::Duration::from_std(self.inner.config.round_ttl)
                    .unwrap_or(chrono::Duration::minutes(15));
                if !store.revive_round(user_id, &id, now, now + ttl).await? {
                    return Err(OrchestratorError::NotFound);
                }
                (store.pending_round(user_id, &id, now).await?, true)
            }
            other => (other?, false),
        };
        let state: RoundState =
            serde_json::from_str(&round.understanding_json).map_err(OrchestratorError::internal)?;
        let allowed = self.allowed_snapshot().await;
        // Answers in the clinician's own words are read and shown back before anything runs (F28).
        if req.answers.iter().any(|a| a.in_own_words.is_some()) {
            return self.read_back(user_id, &id, &round, state, req, &allowed).await;
        }

        let mut resolutions = state.resolutions.clone();
        let mut stored = Vec::new();
        let mut labels = Vec::new();
        let mut chosen_now = Vec::new();
        let mut llm_now = Vec::new();
        for answer in &req.answers {
            let Some(amb) = state.ambiguities.iter().find(|a| a.id == answer.question_id) else {
                return Err(OrchestratorError::bad(
                    ErrorCode::UnknownQuestion,
                    format!("\"{}\" is not a question of this round.", answer.question_id),
                ));
            };
            if stored.iter().any(|s: &NewAnswer| s.ambiguity_id == amb.id) {
                return Err(OrchestratorError::bad(
                    ErrorCode::DuplicateAnswer,
                    format!(
                        "\"{}\" was answered twice; send one answer per question.",
                        amb.question
                    ),
                ));
            }
            // An option the language model proposed carries its typed piece; it is answered
            // as that piece (and shown as proposed by the language model).
            let proposed = answer
                .option_id
                .as_deref()
                .filter(|_| answer.custom.is_none() && !answer.dont_know)
                .and_then(|id| amb.option(id))
                .and_then(fallback::proposed_resolution);
            let resolution = match proposed {
                Some(r) => {
                    let o = answer.option_id.as_deref().and_then(|id| amb.option(id));
                    if o.is_some_and(|o| fallback::is_proposed_id(&o.id)) {
                        llm_now.push(LlmPiece {
                            ambiguity_id: amb.id.clone(),
                            word: amb.text.clone(),
                            label: o.map(|o| o.label.clone()).unwrap_or_default(),
                        });
                    }
                    r
                }
                None => answers::resolution(
                    self.inner.model,
                    &allowed,
                    state.entity.as_deref(),
                    amb,
                    answer.option_id.as_deref(),
                    answer.custom.as_deref(),
                    answer.dont_know,
                )?,
            };
            let option_label = answer
                .option_id
                .as_deref()
                .and_then(|id| amb.option(id))
                .map(|o| o.label.clone());
            let (choice, label) = match &resolution {
                Resolution::Option { id } => (
                    AnswerChoice::Option(id.clone()),
                    amb.option(id).map(|o| o.label.clone()).unwrap_or_default(),
                ),
                Resolution::Custom { constraint } => (
                    AnswerChoice::Custom(
                        serde_json::to_string(constraint).map_err(OrchestratorError::internal)?,
                    ),
                    option_label
                        .clone()
                        .unwrap_or_else(|| answer.custom.clone().unwrap_or_default().trim().to_owned()),
                ),
                Resolution::Change { .. } => (
                    AnswerChoice::Option(answer.option_id.clone().unwrap_or_default()),
                    option_label.clone().unwrap_or_default(),
                ),
                Resolution::DontKnow => (AnswerChoice::DontKnow, "your best judgment".to_owned()),
            };
            let text = chosen_text(amb, &label);
            // "I don't know" is not a choice: the answer shows it as an assumption instead.
            if !matches!(choice, AnswerChoice::DontKnow) {
                chosen_now.push((amb.id.clone(), text.clone()));
            }
            labels.push(text);
            resolutions.answers.insert(amb.id.clone(), resolution);
            stored.push(NewAnswer {
                ambiguity_id: amb.id.clone(),
                choice,
                remember: answer.remember,
            });
        }
        if let Some(missing) = state
            .ambiguities
            .iter()
            .find(|a| !resolutions.answers.contains_key(&a.id))
        {
            return Err(OrchestratorError::bad(
                ErrorCode::MissingAnswer,
                format!(
                    "\"{}\" has no answer. Choose an option, type a value, or send dont_know for Clarion's best judgment.",
                    missing.question
                ),
            ));
        }
        // A custom value must also make a plan that renders; check before storing anything.
        if stored.iter().any(|s| matches!(s.choice, AnswerChoice::Custom(_))) {
            self.check_custom_renders(&state.question, &state.context, &allowed, &resolutions)?;
        }

        // Preferences are learned only from an answer that was given: they are stored
        // with it.
        let mut preferences = Vec::new();
        for (answer, s) in req.answers.iter().zip(&stored) {
            let choice = match &s.choice {
                // a proposed plan change is not a reusable definition
                AnswerChoice::Option(o) if fallback::is_proposed_id(o) => continue,
                AnswerChoice::Option(o) => PreferenceChoice::Option(o.clone()),
                AnswerChoice::Custom(c) => PreferenceChoice::Custom(c.clone()),
                AnswerChoice::DontKnow => continue,
            };
            let amb = state.ambiguities.iter().find(|a| a.id == s.ambiguity_id);
            let label = match (&choice, amb) {
                (PreferenceChoice::Option(o), Some(a)) => {
                    format!(
                        "{} = {}",
                        a.text,
                        a.option(o).map(|o| o.label.as_str()).unwrap_or(o)
                    )
                }
                (_, Some(a)) => match answer.option_id.as_deref().and_then(|id| a.option(id)) {
                    Some(o) => format!("{} = {}", a.text, o.label),
                    None => format!("{} = {}", a.text, answer.custom.as_deref().unwrap_or("").trim()),
                },
                _ => s.ambiguity_id.clone(),
            };
            preferences.push(PendingPreference {
                signature: s.ambiguity_id.clone(),
                choice,
                label,
                remember: s.remember,
            });
        }
        // The round is closed only together with an answer (or the next round), in one
        // transaction: when the answer cannot be computed (a timeout, a database fault),
        // the round stays pending, so the clinician can try again instead of meeting
        // "already answered"; their answer stays in the thread as it did.
        let mut pending = Pending::new(user_id, now);
        pending.keep_on_failure = true;
        pending
            .user_message(
                &round.thread_id,
                &labels.join("; "),
                &Payload::ClarificationAnswer {
                    clarification_id: id.as_str().to_owned(),
                },
            )
            .map_err(OrchestratorError::internal)?;
        pending.answer = Some((id.clone(), stored));
        pending.preferences = preferences;
        let outcome = self
            .run(
                Job {
                    user_id,
                    thread_id: round.thread_id,
                    question: state.question,
                    context: state.context,
                    resolutions,
                    asked: state.asked,
                    rounds_done: u32::try_from(round.round_number).unwrap_or(u32::MAX),
                    interactive: true,
                    thinking: Vec::new(),
                    started,
                    chosen: state.chosen.into_iter().chain(chosen_now).collect(),
                    allow_llm: true,
                    verified: None,
                    candidates: Vec::new(),
                    llm_calls: state.llm_calls,
                    llm_pieces: state.llm_pieces.into_iter().chain(llm_now).collect(),
                },
                pending,
            )
            .await?;
        let outcome = match outcome {
            QueryOutcome::Answered(mut a) if revived => {
                a.notice = Some(EXPIRED_NOTICE.to_owned());
                QueryOutcome::Answered(a)
            }
            o => o,
        };
        Ok(outcome)
    }

    /// `POST /api/v1/query/cancel`: the clinician closed a pending round without
    /// answering; it is stored as abandoned at once (analytics count it then, not after
    /// its expiry). A round whose time already ran out is closed anyway (no error); an
    /// answered or already cancelled one is a 409; unknown or foreign ids 404.
    pub async fn cancel(&self, user_id: i64, clarification_id: &str) -> Result<(), OrchestratorError> {
        let id = RoundId::new(clarification_id.to_owned());
        if !id.is_well_formed() {
            return Err(OrchestratorError::NotFound);
        }
        match self.inner.store.abandon_round(user_id, &id, Utc::now()).await {
            Ok(_) | Err(StoreError::Expired) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// A 400 (`invalid_custom_value`) when the question read with `resolutions`
    /// makes a plan the renderer rejects (a custom value that cannot be used).
    fn check_custom_renders(
        &self,
        question: &str,
        context: &ConversationContext,
        allowed: &AllowedValuesSnapshot,
        resolutions: &Resolutions,
    ) -> Result<(), OrchestratorError> {
        let input = EngineInput::new(self.inner.model, question, self.today())
            .with_allowed(allowed)
            .with_context(context)
            .with_resolutions(resolutions);
        if let Some(plan) = understand(&input).plan
            && let Err(e) = render_with_cap(&plan, self.inner.model, self.inner.dialect, 1)
        {
            return Err(OrchestratorError::bad(
                ErrorCode::InvalidCustomValue,
                format!("That custom value cannot be used here: {e}."),
            ));
        }
        Ok(())
    }

    /// `POST /api/v1/query/revise`: the same question with one assumption changed and
    /// every other confirmed choice kept (F9). Never asks.
    pub async fn revise(&self, user_id: i64, req: &ReviseRequest) -> Result<Answer, OrchestratorError> {
        let started = Instant::now();
        let _slot = self.slot(user_id)?;
        let store = &self.inner.store;
        let hid = HistoryId::new(req.history_id.clone());
        if !hid.is_well_formed() {
            return Err(OrchestratorError::NotFound);
        }
        let entry = store.history_entry(user_id, &hid).await?;
        let resume: HistoryResume = serde_json::from_str(&entry.clarifications_json).unwrap_or_default();
        let mut resolutions = resume.resolutions.clone();
        resolutions.answers.remove(&req.ambiguity_id);
        let loaded = self.load(user_id).await?;
        let check = RenderCheck {
            model: self.inner.model,
        };
        let input = EngineInput::new(self.inner.model, &entry.question, self.today())
            .with_allowed(&loaded.allowed)
            .with_context(&resume.context)
            .with_resolutions(&resolutions)
            .with_check(&check);
        let u = understand(&input);
        let Some(amb) = u.ambiguity(&req.ambiguity_id) else {
            return Err(OrchestratorError::bad(
                ErrorCode::UnknownAssumption,
                format!("\"{}\" is not an assumption of this answer.", req.ambiguity_id),
            ));
        };
        let r = answers::resolution(
            self.inner.model,
            &loaded.allowed,
            u.entity.as_deref(),
            amb,
            req.option_id.as_deref(),
            req.custom.as_deref(),
            false,
        )?;
        // The changed assumption is now the user's own choice.
        let picked = match (&req.option_id, &req.custom) {
            (Some(o), _) => amb.option(o).map(|o| o.label.clone()),
            (None, Some(c)) => Some(c.trim().to_owned()),
            (None, None) => None,
        }
        .map(|label| (req.ambiguity_id.clone(), chosen_text(amb, &label)));
        let mut chosen = resume.chosen.clone();
        chosen.retain(|c| c.0 != req.ambiguity_id);
        chosen.extend(picked);
        let custom = matches!(r, Resolution::Custom { .. });
        resolutions.answers.insert(req.ambiguity_id.clone(), r);
        // Validated like a round's answer: a custom value that makes no plan is a 400.
        if custom {
            self.check_custom_renders(&entry.question, &resume.context, &loaded.allowed, &resolutions)?;
        }
        // A revision of an answer asked outside any thread starts one, kept even when
        // the revision fails.
        let mut pending = Pending::new(user_id, Utc::now());
        pending.keep_on_failure = true;
        let thread_id = match entry.thread_id {
            Some(t) => t,
            None => {
                let id = ThreadId::random();
                pending.thread = Some((id.clone(), entry.question.clone()));
                id
            }
        };
        let outcome = self
            .run(
                Job {
                    user_id,
                    thread_id,
                    question: entry.question.clone(),
                    context: resume.context,
                    resolutions,
                    asked: Vec::new(),
                    rounds_done: 0,
                    interactive: false,
                    thinking: Vec::new(),
                    started,
                    chosen,
                    allow_llm: false,
                    verified: None,
                    candidates: Vec::new(),
                    llm_calls: 0,
                    llm_pieces: resume
                        .llm_pieces
                        .into_iter()
                        .filter(|p| p.ambiguity_id != req.ambiguity_id)
                        .collect(),
                },
                pending,
            )
            .await?;
        match outcome {
            QueryOutcome::Answered(a) => Ok(a),
            QueryOutcome::NeedsClarification(_) => {
                Err(OrchestratorError::internal("a revision asked a question"))
            }
        }
    }

    /// History's "Re-run" (F19): the entry's question asked again, in a new
    /// thread, with exactly the clarifications and saved definitions it had, so
    /// nothing is asked again; the rows are today's. Never asks. Refused (422
    /// `no_longer_applies`) when they no longer give the same query (see [`saved`]).
    pub async fn rerun(&self, user_id: i64, history_id: &str) -> Result<Answer, OrchestratorError> {
        let started = Instant::now();
        let _slot = self.slot(user_id)?;
        let hid = HistoryId::new(history_id.to_owned());
        if !hid.is_well_formed() {
            return Err(OrchestratorError::NotFound);
        }
        let entry = self.inner.store.history_entry(user_id, &hid).await?;
        // Like a saved question: never run with another cohort than the entry's.
        let cx = self.check_context(user_id).await?;
        let applies = self.applies_with(&cx, &entry.question, &entry.clarifications_json, &entry.plan_json);
        if !applies.changes.is_empty() {
            return Err(saved::no_longer_applies("That question", &applies));
        }
        let resume: HistoryResume = serde_json::from_str(&entry.clarifications_json).unwrap_or_default();
        self.rerun_resume(user_id, &entry.question, resume, started).await
    }

    /// Asks `question` again in a new thread with exactly `resume`'s resolutions and
    /// context (and its verified definition, when one answered it): History's re-run
    /// and a saved question's run. Never asks, never consults the language model.
    async fn rerun_resume(
        &self,
        user_id: i64,
        question: &str,
        resume: HistoryResume,
        started: Instant,
    ) -> Result<Answer, OrchestratorError> {
        let verified = match resume.verified {
            Some(id) => self.in_force().await?.into_iter().find(|v| v.id == id),
            None => None,
        };
        // A re-run's new thread and question stay even when it fails.
        let mut pending = Pending::new(user_id, Utc::now());
        pending.keep_on_failure = true;
        let thread_id = Self::new_thread(&mut pending, question);
        pending
            .user_message(&thread_id, question, &Payload::Question)
            .map_err(OrchestratorError::internal)?;
        let outcome = self
            .run(
                Job {
                    user_id,
                    thread_id,
                    question: question.to_owned(),
                    context: resume.context,
                    resolutions: resume.resolutions,
                    asked: Vec::new(),
                    rounds_done: 0,
                    interactive: false,
                    thinking: Vec::new(),
                    started,
                    chosen: resume.chosen,
                    allow_llm: false,
                    verified,
                    candidates: Vec::new(),
                    llm_calls: 0,
                    llm_pieces: resume.llm_pieces,
                },
                pending,
            )
            .await?;
        match outcome {
            QueryOutcome::Answered(a) => Ok(a),
            QueryOutcome::NeedsClarification(_) => {
                Err(OrchestratorError::internal("a re-run asked a question"))
            }
        }
    }

    /// The rows of a stored answer, computed again from its stored plan (read-only, the
    /// same row cap and audit as any query). Records nothing in the thread or history:
    /// a reloaded thread shows its tables and charts as of now.
    pub async fn replay(&self, user_id: i64, history_id: &str) -> Result<ResultTable, OrchestratorError> {
        let _slot = self.slot(user_id)?;
        let hid = HistoryId::new(history_id.to_owned());
        if !hid.is_well_formed() {
            return Err(OrchestratorError::NotFound);
        }
        let entry = self.inner.store.history_entry(user_id, &hid).await?;
        let plan: QueryPlan = serde_json::from_str(&entry.plan_json).map_err(OrchestratorError::internal)?;
        let access = self.access(user_id).await?;
        let mut audit = None;
        let ran = self.execute(&plan, &access, &mut audit).await;
        if let Some(a) = &audit {
            self.inner
                .store
                .audit(pending::audit_entry(user_id, a), a.at)
                .await?;
        }
        let (rendered, rows, _, scoped) = ran?;
        Ok(convert::table(&rendered, rows, self.inner.model, &scoped.plan))
    }

    /// The one place a user's clinic scope meets a plan (issue 16): every statement run
    /// for a user (answers, re-runs, revisions, replays, option counts) is rendered from
    /// this. Clinics the question named outside the scope are taken out and reported.
    fn scoped(&self, plan: &QueryPlan, access: &Access) -> Result<scope::Scoped, OrchestratorError> {
        if access.scope == ClinicScope::All {
            return Ok(scope::Scoped {
                plan: plan.clone(),
                outside: Vec::new(),
                rows: crate::sql::RowScope::All,
            });
        }
        let refused = |message: String| OrchestratorError::Refused {
            code: ErrorCode::OutsideScope,
            message,
        };
        let paths = self.inner.scope_paths.as_ref().ok_or_else(|| {
            refused(
                "Your access is limited to some clinics, and this data has no clinics to limit it by.".into(),
            )
        })?;
        paths
            .apply(plan, &access.scope, &access.visible)
            .map_err(|e| refused(format!("Your access is limited to some clinics: {e}.")))
    }

    /// The clinics `user_id` may see now (read per request: a scope change applies on
    /// the next question). For a scoped account the visible clinics' names are read
    /// through the renderer like any other statement.
    pub async fn access(&self, user_id: i64) -> Result<Access, OrchestratorError> {
        let scope = self.inner.store.clinic_scope(user_id).await?;
        let visible = match (&scope, &self.inner.scope_paths) {
            (ClinicScope::Clinics(ids), Some(paths)) if !ids.is_empty() => {
                self.visible_clinics(paths, &scope).await?
            }
            _ => Vec::new(),
        };
        Ok(Access { scope, visible })
    }

    /// The clinics `scope` covers, as (id, name), by id: every clinic for
    /// [`ClinicScope::All`] (the administrators' page lists them to choose from).
    pub async fn clinics(&self, scope: &ClinicScope) -> Result<Vec<(i64, String)>, OrchestratorError> {
        match &self.inner.scope_paths {
            Some(paths) => self.visible_clinics(paths, scope).await,
            None => Ok(Vec::new()),
        }
    }

    async fn visible_clinics(
        &self,
        paths: &ScopePaths,
        scope: &ClinicScope,
    ) -> Result<Vec<(i64, String)>, OrchestratorError> {
        let inner = &*self.inner;
        let mut plan = QueryPlan::new(scope::CLINIC_ENTITY, self.today());
        plan.columns = std::iter::once(paths.clinic_key().to_owned())
            .chain(paths.clinic_display().map(str::to_owned))
            .collect();
        plan.filters.extend(
            paths
                .constraint(scope::CLINIC_ENTITY, scope)
                .map_err(OrchestratorError::internal)?,
        );
        let rendered = render_with_cap(&plan, inner.model, inner.dialect, 10_000)
            .map_err(OrchestratorError::internal)?;
        let rows = inner
            .warehouse
            .run(&rendered)
            .await
            .map_err(OrchestratorError::internal)?;
        let at = |name: &str| rendered.columns.iter().position(|c| c.name == name);
        let key = at(paths.clinic_key()).unwrap_or(0);
        let display = paths.clinic_display().and_then(at);
        Ok(rows
            .rows
            .into_iter()
            .filter_map(|r| {
                let id = r.get(key)?.as_i64()?;
                let name = display.and_then(|d| r.get(d)?.as_str().map(str::to_owned));
                Some((id, name.unwrap_or_else(|| format!("clinic {id}"))))
            })
            .collect::<Vec<_>>())
        .map(|mut v| {
            v.sort();
            v
        })
    }

    /// Renders `plan` limited to the user's clinics, runs it read-only and gives the
    /// audit entry to write in `audit` (SQL, bound-value count, row count, the scope —
    /// never the values), also when the query failed.
    async fn execute(
        &self,
        plan: &QueryPlan,
        access: &Access,
        audit: &mut Option<PendingAudit>,
    ) -> Result<
        (
            crate::sql::Rendered,
            crate::warehouse::exec::QueryRows,
            Duration,
            scope::Scoped,
        ),
        OrchestratorError,
    > {
        let inner = &*self.inner;
        let scoped = self.scoped(plan, access)?;
        let rendered = self
            .render_to_run(&scoped.plan, &scoped.rows)
            .await
            .map_err(|e| {
                // The engine read the question into a plan the renderer's rules reject: the
                // question cannot be answered as read. That is a 422 with help, never a 500.
                tracing::warn!(code = e.code(), error = %e, "plan did not render");
                unanswerable(inner.model, &e)
            })?;
        let t = Instant::now();
        // the same statement over unchanged clinical data: the rows it gave (see
        // `crate::warehouse::answer_cache` for how a change is seen)
        let (result, _reused) = inner.answers.run(&inner.warehouse, &rendered).await;
        let exec_time = t.elapsed();
        let (outcome, rows) = match result {
            Ok(r) => (AuditOutcome::Ok, Ok(r)),
            Err(ExecError::Timeout(d)) => (AuditOutcome::Timeout, Err(OrchestratorError::Timeout(d))),
            Err(e @ ExecError::Database(_)) => (AuditOutcome::Error, Err(OrchestratorError::internal(e))),
        };
        *audit = Some(PendingAudit {
            sql: rendered.sql.clone(),
            param_count: rendered.values.len(),
            row_count: rows.as_ref().map_or(0, |r| r.rows.len() as i64),
            duration_ms: exec_time.as_millis() as i64,
            outcome,
            scope: access.scope.label(),
            at: Utc::now(),
        });
        Ok((rendered, rows?, exec_time, scoped))
    }

    /// The statement an answer runs for `plan` within `rows`: a wound's latest or first
    /// value read from Clarion's summary when it is current (the same rows, one key probe
    /// per wound instead of a walk of its assessments), the live query otherwise.
    async fn render_to_run(
        &self,
        plan: &QueryPlan,
        rows: &crate::sql::RowScope,
    ) -> Result<crate::sql::Rendered, RenderError> {
        let inner = &*self.inner;
        let render = |summaries| {
            crate::sql::render_scoped(
                plan,
                inner.model,
                inner.dialect,
                inner.config.row_cap,
                summaries,
                rows,
            )
        };
        let live = render(crate::sql::SummaryUse::LIVE)?;
        Ok(match render(crate::sql::SummaryUse::CURRENT) {
            Ok(summary) if summary.sql != live.sql && inner.summaries.is_current().await => summary,
            _ => live,
        })
    }

    /// `GET /api/v1/threads/{id}`.
    pub async fn thread(&self, user_id: i64, id: &str) -> Result<ThreadView, OrchestratorError> {
        let id = ThreadId::new(id.to_owned());
        if !id.is_well_formed() {
            return Err(OrchestratorError::NotFound);
        }
        let thread = self.inner.store.thread(user_id, &id).await?;
        let messages = self.inner.store.messages(user_id, &id).await?;
        let answers = self
            .inner
            .store
            .thread_history(user_id, &id)
            .await?
            .into_iter()
            .map(|(e, rows)| StoredAnswer {
                table: rows.and_then(|r| serde_json::from_str(&r).ok()),
                history: history_item(e),
            })
            .collect();
        Ok(ThreadView {
            answers,
            id: thread.id.as_str().to_owned(),
            title: thread.title,
            created_at: thread.created_at.to_rfc3339(),
            messages: messages
                .into_iter()
                .map(|m| {
                    let payload = m
                        .payload_json
                        .as_deref()
                        .and_then(|p| serde_json::from_str::<Payload>(p).ok());
                    let (kind, history_id, clarification_id) = match payload {
                        Some(Payload::Answer { history_id, .. }) => ("answer", Some(history_id), None),
                        Some(Payload::Clarification { clarification_id }) => {
                            ("clarification", None, Some(clarification_id))
                        }
                        Some(Payload::ClarificationAnswer { clarification_id }) => {
                            ("clarification_answer", None, Some(clarification_id))
                        }
                        Some(Payload::Question) | None => ("question", None, None),
                    };
                    ThreadMessage {
                        role: match m.role {
                            MessageRole::User => "user".into(),
                            MessageRole::Assistant => "assistant".into(),
                        },
                        body: m.body,
                        kind: kind.into(),
                        history_id,
                        clarification_id,
                        created_at: m.created_at.to_rfc3339(),
                    }
                })
                .collect(),
        })
    }

    /// `GET /api/v1/history`: the user's past questions, newest first.
    pub async fn history(&self, user_id: i64, limit: i64) -> Result<Vec<HistoryItem>, OrchestratorError> {
        let entries = self.inner.store.history(user_id, limit.clamp(1, 500)).await?;
        Ok(entries.into_iter().map(history_item).collect())
    }

    /// `GET /api/v1/preferences`: what the user answered, how often, what is remembered.
    pub async fn preferences(&self, user_id: i64) -> Result<Vec<PreferenceItem>, OrchestratorError> {
        let prefs = self.inner.store.preferences(user_id).await?;
        let learned = self.inner.config.learning.learn(&prefs);
        let totals = learning::Totals::of(&prefs);
        let confidences: Vec<f64> = prefs.iter().map(|p| totals.confidence(p)).collect();
        Ok(prefs
            .into_iter()
            .zip(confidences)
            .map(|(p, confidence)| {
                let option_id = match &p.choice {
                    PreferenceChoice::Option(o) => Some(o.clone()),
                    PreferenceChoice::Custom(_) => None,
                };
                let is = |m: &BTreeMap<String, String>| {
                    option_id.as_ref().is_some_and(|o| m.get(&p.signature) == Some(o))
                };
                PreferenceItem {
                    offered_as_default: is(&learned.offered),
                    usual: is(&learned.usual),
                    successes: p.successes,
                    confidence: (confidence * 1000.0).round() / 1000.0,
                    id: p.id,
                    signature: p.signature,
                    option_id,
                    label: p.label,
                    count: p.count,
                    remembered: p.remembered,
                }
            })
            .collect())
    }

    /// `DELETE /api/v1/preferences/{id}`.
    pub async fn delete_preference(&self, user_id: i64, id: i64) -> Result<(), OrchestratorError> {
        Ok(self.inner.store.delete_preference(user_id, id).await?)
    }

    /// `GET /api/v1/settings`.
    pub async fn settings(&self, user_id: i64) -> Result<Settings, OrchestratorError> {
        Ok(self.inner.store.settings(user_id).await?)
    }

    /// `PUT /api/v1/settings`.
    pub async fn save_settings(&self, user_id: i64, s: &Settings) -> Result<Settings, OrchestratorError> {
        self.inner.store.save_settings(user_id, s).await?;
        self.settings(user_id).await
    }

    // ---------------------------------------------------------------------------------

    /// The allowed values as of now: the snapshot built the last time, as long as the
    /// cache holds the same loaded values (the engine's lookup of them is then built
    /// already).
    async fn allowed_snapshot(&self) -> SharedAllowed {
        let inner = &*self.inner;
        match &inner.allowed {
            Some(p) => {
                let snap = p.snapshot_all().await;
                inner.allowed_cache.get(&snap, || {
                    AllowedValuesSnapshot::from_table_columns(
                        inner.model,
                        snap.iter().map(|(k, v)| (k.as_str(), &v.values[..], v.truncated)),
                    )
                })
            }
            None => inner.allowed_cache.get(&BTreeMap::new(), || {
                AllowedValuesSnapshot::from_model_static(inner.model)
            }),
        }
    }

    async fn load(&self, user_id: i64) -> Result<Loaded, OrchestratorError> {
        let store = &self.inner.store;
        let (settings, prefs, allowed, access) = tokio::join!(
            store.settings(user_id),
            store.preferences(user_id),
            self.allowed_snapshot(),
            self.access(user_id)
        );
        let prefs = prefs?;
        let mut preferences = Preferences::empty();
        for p in prefs.iter().filter(|p| p.remembered) {
            if let PreferenceChoice::Option(o) = &p.choice {
                preferences.remembered.insert(p.signature.clone(), o.clone());
            }
        }
        // the learning rule (learning.rs): a usual answer is applied like a remembered
        // one, and its badge says "your usual definition"
        let learned = self.inner.config.learning.learn(&prefs);
        preferences.offered_defaults = learned.offered;
        for (signature, option) in &learned.usual {
            preferences.remembered.insert(signature.clone(), option.clone());
        }
        Ok(Loaded {
            usual: learned.usual,
            settings: settings?,
            preferences,
            saved_customs: answers::saved_customs(&prefs),
            allowed,
            access: access?,
        })
    }

    /// The previous answer's plan in a thread (for follow-ups and pronouns).
    async fn thread_context(
        &self,
        user_id: i64,
        id: &ThreadId,
    ) -> Result<ConversationContext, OrchestratorError> {
        let messages = self.inner.store.messages(user_id, id).await?;
        let last = messages.iter().rev().find_map(|m| {
            match serde_json::from_str::<Payload>(m.payload_json.as_deref()?).ok()? {
                Payload::Answer { plan, streak, .. } => Some(ConversationContext::after(*plan, streak)),
                _ => None,
            }
        });
        Ok(last.unwrap_or_else(ConversationContext::empty))
    }

    /// Answers `job` (or asks its next round) and stores it with `pending` in one
    /// transaction; on failure stores what a failed request leaves behind.
    async fn run(&self, job: Job, mut pending: Pending) -> Result<QueryOutcome, OrchestratorError> {
        let outcome = self.run_pending(job, &mut pending).await;
        if outcome.is_err() {
            pending.after_failure(&self.inner.store).await;
        }
        outcome
    }

    async fn run_pending(
        &self,
        mut job: Job,
        pending: &mut Pending,
    ) -> Result<QueryOutcome, OrchestratorError> {
        let inner = &*self.inner;
        let model = inner.model;
        let store = &inner.store;

        let t = Instant::now();
        let loaded = self.load(job.user_id).await?;
        job.thinking.push(convert::step(
            "Loaded your context",
            format!(
                "settings, {} saved definition(s), {} usual definition(s), {} allowed-value list(s){}",
                loaded.preferences.remembered.len() - loaded.usual.len() + loaded.saved_customs.len(),
                loaded.usual.len(),
                loaded.allowed.iter().count(),
                if job.context.previous.is_some() {
                    ", the previous question"
                } else {
                    ""
                }
            ),
            Some(t.elapsed()),
        ));

        let thresholds = GateThresholds::for_sensitivity(loaded.settings.sensitivity);
        let today = self.today();
        // The engine input borrows these while `job` moves on to build the reply.
        // A verified question is read as the administrator asked it, with their answers.
        let question = match &job.verified {
            Some(v) => v.question.clone(),
            None => job.question.clone(),
        };
        let context = job.context.clone();
        let mut resolutions = answers::with_saved_customs(&job.resolutions, &loaded.saved_customs);
        let first = EngineInput::new(model, &question, today)
            .with_index(&inner.index)
            .with_check(&inner.check)
            .with_allowed(&loaded.allowed)
            .with_context(&context)
            .with_preferences(&loaded.preferences)
            .with_thresholds(thresholds);
        let t = Instant::now();
        let mut u =
            engine::Understanding::clone(&self.understand(&first.with_resolutions(&resolutions), &loaded));
        let engine_time = t.elapsed();
        job.thinking.push(convert::step(
            "Understood the question",
            format!("confidence {:.2}", u.confidence),
            Some(engine_time),
        ));
        job.thinking.extend(convert::engine_steps(&u));
        // Only what the engine could not settle goes to the language model (F24); a
        // question it reads confidently never reaches this call.
        if let Some(llm) = &inner.llm
            && fallback::wanted(&u, &job)
        {
            let cx = fallback::Ctx {
                llm,
                store,
                model,
                loaded: &loaded,
                thresholds,
                asking: job.interactive && !loaded.settings.skip_clarifications,
                input: first.with_resolutions(&resolutions),
            };
            let mut next = resolutions.clone();
            fallback::consult(cx, &mut job, &mut u, &mut next).await;
            resolutions = next;
        }
        let input = first.with_resolutions(&resolutions);
        let scoped_lists = self.hide_outside_options(&mut u, &loaded.access).await;
        if let Decision::Refuse { reason, message } = &u.decision {
            use engine::RefuseReason as R;
            let code = match reason {
                R::Empty => ErrorCode::EmptyQuestion,
                R::TooLong => ErrorCode::QuestionTooLong,
                R::OutOfDomain => ErrorCode::OutOfDomain,
                R::DataChange => ErrorCode::DataChange,
                R::Unintelligible => ErrorCode::Unintelligible,
                R::CannotAnswer => ErrorCode::CannotAnswer,
            };
            return Err(match reason {
                R::Empty | R::TooLong => OrchestratorError::bad(code, message.clone()),
                _ => OrchestratorError::Refused {
                    code,
                    message: message.clone(),
                },
            });
        }

        if job.verified.is_none()
            && let Some(plan) = &u.plan
        {
            job.verified = job.candidates.iter().find(|v| v.same_plan(plan)).cloned();
        }
        // A verified definition asks nothing and leaves nothing open.
        let clarify = matches!(u.decision, Decision::Clarify) && job.verified.is_none();
        let new_questions: Vec<&Ambiguity> = if clarify {
            u.questions()
                .filter(|a| !job.asked.contains(&a.id) && !job.resolutions.answers.contains_key(&a.id))
                .collect()
        } else {
            Vec::new()
        };
        let asking = job.interactive && !loaded.settings.skip_clarifications;
        if asking && !new_questions.is_empty() && job.rounds_done < inner.config.max_rounds {
            return self
                .ask_round(job, &input, &u, &new_questions, &loaded, &scoped_lists, pending)
                .await;
        }
        if clarify && job.interactive && !loaded.settings.skip_clarifications {
            job.thinking.push(convert::step(
                "Proceeded on best guesses",
                format!(
                    "{} round(s) asked; the rest are assumptions",
                    job.rounds_done.min(inner.config.max_rounds)
                ),
                None,
            ));
        }
        let open_questions = if clarify {
            u.questions().map(convert::open_question).collect()
        } else {
            Vec::new()
        };
        let plan = match &job.verified {
            Some(v) => {
                job.thinking
                    .push(convert::step("Answered by a verified question", v.badge(), None));
                if let Err(e) = store.count_verified_use(v.id).await {
                    tracing::warn!(error = %e, "a verified question's use was not counted");
                }
                let mut p = v.plan.clone();
                p.today = self.today();
                p
            }
            None => u
                .plan
                .clone()
                .ok_or_else(|| OrchestratorError::internal("the engine gave no plan"))?,
        };
        let (rendered, rows, exec_time, scoped) =
            self.execute(&plan, &loaded.access, &mut pending.audit).await?;
        let ties = self
            .ties_past_the_cut(&scoped.plan, &scoped.rows, rows.rows.len())
            .await;
        let param_count = rendered.values.len();
        let row_count = rows.rows.len() as i64;
        let now = Utc::now();
        job.thinking.push(convert::step(
            "Ran the query",
            format!(
                "{} row(s){}, read-only",
                rows.rows.len(),
                if rows.truncated {
                    " (truncated at the row cap)"
                } else {
                    ""
                }
            ),
            Some(exec_time),
        ));
        let empty = rows.rows.is_empty();
        let suggestions = if empty {
            let relax = engine::suggest_relaxations(model, &plan);
            if relax.is_empty() {
                u.suggestions.clone()
            } else {
                relax
            }
        } else {
            u.suggestions.clone()
        };
        let mut table = convert::table(&rendered, rows, model, &scoped.plan);
        let mut assumptions = convert::assumptions(&u);
        convert::mark_usual(&mut assumptions, &loaded.usual);
        if assumptions.iter().any(convert::needs_alternatives) {
            // A remembered or usual choice settled its ambiguity before it was asked, so
            // its badge has no alternatives yet: one more sub-millisecond reading without
            // them gives the ambiguity as it would have been asked, to change it on the
            // answer like any assumption.
            let plain = Preferences {
                remembered: BTreeMap::new(),
                offered_defaults: loaded.preferences.offered_defaults.clone(),
            };
            let own = self.understand(
                &first.with_preferences(&plain).with_resolutions(&resolutions),
                &loaded,
            );
            convert::offer_alternatives(&mut assumptions, &own);
        }
        // What the user chose in this question's rounds is a badge too (F29), first:
        // changeable on the answer through `revise`, each option with its count (the
        // round's own statements, so usually unchanged since it was asked).
        let chosen: Vec<&str> = job
            .chosen
            .iter()
            .map(|c| c.0.as_str())
            .filter(|id| resolutions.answers.contains_key(*id))
            .filter(|id| !job.llm_pieces.iter().any(|p| p.ambiguity_id == *id))
            .collect();
        if !chosen.is_empty() {
            let mut open = resolutions.clone();
            for id in &chosen {
                open.answers.remove(*id);
            }
            let asked = first.with_resolutions(&open);
            let own = self.understand(&asked, &loaded);
            let ambiguities: Vec<&Ambiguity> = chosen.iter().filter_map(|id| own.ambiguity(id)).collect();
            let counted = self.previews(&asked, &ambiguities, &loaded).await;
            let badges =
                convert::chosen_badges(&ambiguities, &counted.per_question, &resolutions, &job.chosen);
            assumptions.splice(0..0, badges);
        }
        assumptions.extend(convert::scope_badges(&loaded.access, &scoped.outside));
        assumptions.extend(convert::saved_custom_assumptions(
            &u,
            &job.resolutions,
            &loaded.saved_customs,
        ));
        if !job.llm_pieces.is_empty() {
            // A proposed piece's badge offers the engine's own readings of the word (one
            // more sub-millisecond reading without the proposed pieces).
            let mut without = resolutions.clone();
            for p in &job.llm_pieces {
                without.answers.remove(&p.ambiguity_id);
            }
            let own = self.understand(&first.with_resolutions(&without), &loaded);
            assumptions.extend(fallback::badges(&own, &job.resolutions, &job.llm_pieces));
        }

        let t = Instant::now();
        let streak = engine::suggest::streak(model, &plan, &job.context);
        let resume = HistoryResume {
            resolutions: job.resolutions.clone(),
            context: job.context.clone(),
            applied: u.applied.clone(),
            chosen: job.chosen.clone(),
            llm_pieces: job.llm_pieces.clone(),
            verified: job.verified.as_ref().map(|v| v.id),
        };
        let plan_json = serde_json::to_string(&plan).map_err(OrchestratorError::internal)?;
        // serialized once: the same text is stored with the History entry and written
        // into the response
        let result_json = table.serialize_once().map_err(OrchestratorError::internal)?;
        let mut tx = pending.begin(store).await?;
        let entry = tx
            .add_history(
                job.user_id,
                NewHistoryEntry {
                    thread_id: Some(&job.thread_id),
                    question: &job.question,
                    plan_json: &plan_json,
                    sql: &rendered.sql,
                    clarifications_json: &serde_json::to_string(&resume)
                        .map_err(OrchestratorError::internal)?,
                    assumptions_json: &serde_json::to_string(&assumptions)
                        .map_err(OrchestratorError::internal)?,
                    row_count,
                    duration_ms: job.started.elapsed().as_millis() as i64,
                    result_json: Some(result_json),
                    verified_id: job.verified.as_ref().map(|v| v.id),
                    // The Ask page shows at most three pills.
                    suggestions_shown: Some(suggestions.len().min(3) as i64),
                },
                now,
            )
            .await?;
        let payload = serde_json::to_string(&Payload::Answer {
            history_id: entry.id.as_str().to_owned(),
            plan: Box::new(plan),
            streak,
        })
        .map_err(OrchestratorError::internal)?;
        tx.append_message(
            job.user_id,
            &job.thread_id,
            NewMessage {
                role: MessageRole::Assistant,
                body: &u.restatement,
                payload_json: Some(&payload),
                from_suggestion: false,
            },
            now,
        )
        .await?;
        tx.commit().await?;
        job.thinking.push(convert::step(
            "Saved to your history",
            "question, plan, SQL and assumptions; audit entry without values",
            Some(t.elapsed()),
        ));

        Ok(QueryOutcome::Answered(Answer {
            thread_id: job.thread_id.as_str().to_owned(),
            history_id: entry.id.as_str().to_owned(),
            question: job.question,
            restatement: u.restatement.clone(),
            assumptions,
            open_questions,
            table,
            sql: rendered.sql.clone(),
            param_count: u32::try_from(param_count).unwrap_or(u32::MAX),
            confidence: u.confidence,
            suggestions: convert::suggestions(&suggestions),
            thinking: job.thinking,
            rounds: job.rounds_done,
            duration_ms: ms(job.started.elapsed()),
            notice: ties,
            verified: job.verified.as_ref().map(|v| v.badge()),
        }))
    }

    /// "top 3 patients by number of wounds" when 120 more tie with the third: a cut that
    /// falls inside a tie is said, never made silently. Only for a plan that kept exactly
    /// its limit of ordered rows (`shown`) without its ties; the same statement with its
    /// ties (see `QueryPlan::limit_ties`) tells how many more there are. A failure of that
    /// second statement says nothing rather than failing the answer.
    async fn ties_past_the_cut(
        &self,
        plan: &QueryPlan,
        rows_scope: &crate::sql::RowScope,
        shown: usize,
    ) -> Option<String> {
        let inner = &*self.inner;
        let n = plan.limit?;
        if plan.limit_ties
            || plan.order.is_empty()
            || plan.limit_per_group.is_some()
            || plan.offset.is_some_and(|o| o > 0)
            || shown != n as usize
            || n == 0
        {
            return None;
        }
        let mut tied = plan.clone();
        tied.limit_ties = true;
        let rendered = self.render_to_run(&tied, rows_scope).await.ok()?;
        let (result, _) = inner.answers.run(&inner.warehouse, &rendered).await;
        let all = result.ok()?;
        let more = all.rows.len().checked_sub(n as usize).filter(|&m| m > 0)?;
        let more = if all.truncated {
            format!("More than {more} more rows tie")
        } else if more == 1 {
            "1 more row ties".to_owned()
        } else {
            format!("{more} more rows tie")
        };
        Some(format!(
            "{more} with the last one shown. Add \"ties included\" to the question to see them all."
        ))
    }

    /// The engine's reading of `input` (of this request's allowed values), kept per
    /// input (see [`readings`]).
    fn understand(&self, input: &EngineInput<'_>, loaded: &Loaded) -> Arc<engine::Understanding> {
        self.inner
            .readings
            .understand(input, &loaded.allowed, &self.inner.check)
    }

    /// The plan option `o` of `a` leads to ([`fallback::option_plan_any`]), kept per
    /// input; an option the language model proposed is read every time (its piece is
    /// part of the option, not of the input).
    fn option_plan(
        &self,
        input: &EngineInput<'_>,
        a: &Ambiguity,
        o: &engine::AmbiguityOption,
        loaded: &Loaded,
    ) -> Option<Arc<QueryPlan>> {
        if fallback::proposed_resolution(o).is_some() {
            return fallback::option_plan_any(input, a, o).map(Arc::new);
        }
        self.inner
            .readings
            .option_plan(input, &loaded.allowed, &self.inner.check, &a.id, &o.id, || {
                fallback::option_plan_any(input, a, o)
            })
    }

    /// How many records each option of `questions` would match (F6): at most
    /// `preview_cap` statements, in parallel with a time limit, kept per data version.
    async fn previews(&self, input: &EngineInput<'_>, questions: &[&Ambiguity], loaded: &Loaded) -> Previews {
        let inner = &*self.inner;
        let mut statements = Vec::new();
        let mut slots = Vec::new();
        for (qi, a) in questions.iter().enumerate() {
            for (oi, o) in a.options.iter().enumerate() {
                // at most `preview_cap` counts per round: the rest show no count
                if statements.len() >= inner.config.preview_cap {
                    break;
                }
                if let Some(plan) = self.option_plan(input, a, o, loaded)
                    && let Ok(scoped) = self.scoped(&plan, &loaded.access)
                    && let Ok(r) = render_count_scoped(&scoped.plan, inner.model, inner.dialect, &scoped.rows)
                {
                    statements.push(r);
                    slots.push((qi, oi, scoped.plan.entity));
                }
            }
        }
        let wanted = statements.len();
        // the same question over the same data has the same counts: kept per data version
        let version = match &inner.data_version {
            Some(stmt) if !statements.is_empty() => inner.warehouse.data_version(stmt).await,
            _ => None,
        };
        let (counts, reused) = inner
            .warehouse
            .counts_cached(statements, version.map(|v| (&inner.counts, v)))
            .await;
        let mut per_question: Vec<Vec<convert::Preview>> = questions
            .iter()
            .map(|a| vec![convert::Preview::default(); a.options.len()])
            .collect();
        let mut known = 0;
        for ((qi, oi, entity), count) in slots.into_iter().zip(counts) {
            known += usize::from(count.is_some());
            per_question[qi][oi] = convert::Preview { count, entity };
        }
        Previews {
            per_question,
            known,
            wanted,
            reused,
        }
    }

    /// Stores the next round with the request's other writes (`pending`) and returns it.
    #[allow(clippy::too_many_arguments)] // the engine's reading of the question, passed through
    async fn ask_round(
        &self,
        mut job: Job,
        input: &EngineInput<'_>,
        u: &engine::Understanding,
        questions: &[&Ambiguity],
        loaded: &Loaded,
        scoped_lists: &BTreeMap<String, Vec<String>>,
        pending: &mut Pending,
    ) -> Result<QueryOutcome, OrchestratorError> {
        let inner = &*self.inner;
        let t = Instant::now();
        let Previews {
            per_question,
            known,
            wanted,
            reused,
        } = self.previews(input, questions, loaded).await;
        job.thinking.push(convert::step(
            "Counted the records each option matches",
            if reused > 0 {
                format!(
                    "{known} of {wanted} counts in time ({reused} unchanged since they were last counted)"
                )
            } else {
                format!("{known} of {wanted} counts in time")
            },
            Some(t.elapsed()),
        ));

        // Pickers list only the clinics the user may see.
        let picker_allowed = self.scoped_allowed(&loaded.allowed, &loaded.access, scoped_lists);
        let protocol_questions: Vec<_> = questions
            .iter()
            .zip(&per_question)
            .map(|(a, p)| convert::question(inner.model, a, Some(p), &picker_allowed))
            .collect();
        let mut asked = job.asked.clone();
        asked.extend(questions.iter().map(|a| a.id.clone()));
        let asked_now: Vec<String> = questions.iter().map(|a| a.id.clone()).collect();
        let state = RoundState {
            question: job.question.clone(),
            context: job.context.clone(),
            resolutions: job.resolutions.clone(),
            asked,
            ambiguities: questions.iter().map(|a| (*a).clone()).collect(),
            entity: u.entity.clone(),
            chosen: job.chosen.clone(),
            llm_calls: job.llm_calls,
            llm_pieces: job.llm_pieces.clone(),
        };
        let t = Instant::now();
        let now = Utc::now();
        let ttl = chrono::Duration::from_std(inner.config.round_ttl).unwrap_or(chrono::Duration::minutes(15));
        let expires_at: DateTime<Utc> = now + ttl;
        let round_number = job.rounds_done + 1;
        let state_json = serde_json::to_string(&state).map_err(OrchestratorError::internal)?;
        let questions_json =
            serde_json::to_string(&protocol_questions).map_err(OrchestratorError::internal)?;
        let mut tx = pending.begin(&inner.store).await?;
        let round = tx
            .create_round(
                job.user_id,
                NewRound {
                    thread_id: &job.thread_id,
                    question: &job.question,
                    round_number: i32::try_from(round_number).unwrap_or(i32::MAX),
                    previous_round: None,
                    understanding_json: &state_json,
                    questions_json: &questions_json,
                    asked_ambiguity_ids: &asked_now,
                    expires_at,
                },
                now,
            )
            .await?;
        let reason = questions
            .first()
            .map(|a| a.reason.clone())
            .unwrap_or_else(|| "Part of the question is ambiguous.".into());
        let payload = serde_json::to_string(&Payload::Clarification {
            clarification_id: round.id.as_str().to_owned(),
        })
        .map_err(OrchestratorError::internal)?;
        tx.append_message(
            job.user_id,
            &job.thread_id,
            NewMessage {
                role: MessageRole::Assistant,
                body: &reason,
                payload_json: Some(&payload),
                from_suggestion: false,
            },
            now,
        )
        .await?;
        tx.commit().await?;
        job.thinking.push(convert::step(
            "Saved the questions",
            format!("round {round_number} of at most {}", inner.config.max_rounds),
            Some(t.elapsed()),
        ));
        Ok(QueryOutcome::NeedsClarification(ClarificationRound {
            clarification_id: round.id.as_str().to_owned(),
            thread_id: job.thread_id.as_str().to_owned(),
            round: round_number,
            max_rounds: inner.config.max_rounds,
            reason,
            questions: protocol_questions,
            understood_so_far: u.restatement.clone(),
            thinking: job.thinking,
            expires_at: expires_at.to_rfc3339(),
        }))
    }
}

/// A stored history entry as the API and the History page show it.
fn history_item(e: crate::store::HistoryEntry) -> HistoryItem {
    let resume: HistoryResume = serde_json::from_str(&e.clarifications_json).unwrap_or_default();
    HistoryItem {
        id: e.id.as_str().to_owned(),
        thread_id: e.thread_id.map(|t| t.as_str().to_owned()),
        question: e.question,
        sql: e.sql,
        assumptions: serde_json::from_str(&e.assumptions_json).unwrap_or_default(),
        clarifications: u32::try_from(resume.applied.len()).unwrap_or(u32::MAX),
        chosen: resume.chosen.into_iter().map(|c| c.1).collect(),
        row_count: e.row_count,
        duration_ms: e.duration_ms,
        created_at: e.created_at.to_rfc3339(),
        status: match e.status {
            crate::store::HistoryStatus::Answered => app::protocol::HistoryStatus::Answered,
            crate::store::HistoryStatus::Refused => app::protocol::HistoryStatus::Refused,
            crate::store::HistoryStatus::Failed => app::protocol::HistoryStatus::Failed,
        },
        message: e.message,
    }
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{Intent, QueryPlan};
    use crate::sql::render;

    #[test]
    fn a_plan_the_renderer_rejects_is_a_422_in_the_users_words() {
        let model = SemanticModel::wound_care();
        let today = chrono::NaiveDate::from_ymd_opt(2026, 11, 1).unwrap();
        let mut p = QueryPlan::new("wounds", today);
        p.intent = Intent::List;
        p.columns = vec!["assessments.area".into()];
        let e = render(&p, &model, Dialect::Sqlite).unwrap_err();
        assert_eq!(e.code(), "fan_out");
        match unanswerable(&model, &e) {
            OrchestratorError::Refused { code, message } => {
                assert_eq!(code, ErrorCode::CannotAnswer);
                assert!(message.contains("many values per wound"), "{message}");
                assert!(
                    !message.contains("assessments.area"),
                    "model names leak: {message}"
                );
                assert!(!message.to_lowercase().contains("select"), "{message}");
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
}
