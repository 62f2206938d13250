//! The understanding engine: a question in plain English → a typed [`QueryPlan`], with a
//! confidence per piece, structured ambiguities and a routing decision.
//!
//! **Pure**: no I/O, no clock, no randomness, no SQL. Everything it needs is in the
//! [`EngineInput`] (model, allowed-values snapshot, conversation context, the user's
//! remembered choices, answers already given, the question and `today`), so the same
//! input always gives the same [`Understanding`], in well under a millisecond.
//!
//! The stages, in pipeline order (one module each):
//! 1. [`tokenize`] — normalise case, punctuation, units (`cm²` → `cm2`) and number words.
//! 2. [`vocab`] — the model's vocabulary, indexed once per model ([`EngineIndex`]).
//! 3. [`time`] — time expressions into typed date ranges relative to `today`.
//! 4. [`link`] — schema linking: entities, attributes, values, measures, terms,
//!    comparisons, each with a span and a confidence (F4).
//! 5. [`intent`] — the structural words and what to do with the rows, with a confidence
//!    (F1).
//! 6. [`read`] — what each linked phrase does in the question (entity, metric, filters,
//!    groupings, time, ranking, negation, follow-ups): a short list of steps, one file per
//!    concept under `read/` (its module page has the table), producing a [`reading::Reading`].
//! 7. [`ambiguity`] — the detectors (F2), each producing an [`Ambiguity`];
//!    `coverage` accounts for every word (used, known filler, or unexplained — F26):
//!    unexplained words become `unknown_word` ambiguities, a question of mostly unknown
//!    words is refused, and words naming data the model does not record are refused
//!    with what is missing.
//! 8. [`draft`] — the draft [`QueryPlan`] with answers, remembered choices and defaults
//!    applied; [`context`] merges a follow-up into the previous plan.
//! 9. [`gate`] — the confidence gate: answer, answer with assumptions, or clarify (F3).
//!    Before answering, the plan is checked with the renderer's rules when the caller
//!    passes them ([`PlanCheck`]); a plan they reject is refused with help
//!    ([`RefuseReason::CannotAnswer`]), never answered — a clarification's plan too,
//!    since it is the best guess a non-interactive caller runs.
//! 10. [`explain`] — the one-sentence restatement and the assumption texts.
//! 11. [`suggest`] — follow-up suggestions from the plan's schema area (F18).
//!
//! [`plan`] holds the typed plan itself (shared with `crate::sql`); [`reading`] the
//! reading's types (what stage 6 produces and 7–8 consume); [`plan_ops`] the typed plan
//! operations several stages share (metrics, labels, anchoring, plan changes, negation).
//! Each stage imports only stages before it: no module of the engine imports one that
//! imports it back (the suggestion stage gets the pipeline as a function argument). The shapes the engine
//! produces:
//!
//! | intent | plan |
//! |---|---|
//! | `List` | no metrics; `columns` may name extra attributes; rows ranked by an attribute ("the 5 oldest patients", "top 10 wounds by area") are a `List` with `order = [Attribute]` and a `limit` |
//! | `Count` / `Aggregate` | one metric, no dimensions |
//! | `GroupBy` | metric(s) and attribute dimensions (`clinics.name`, `wounds.etiology`) |
//! | `Trend` | the first dimension is `Time { attribute, grain }`, usually with a `time_range` |
//! | `Rank` | a metric, the ranked entity's label as the dimension, `order = [Metric 0]`, `limit` |
//! | `Compare` | a metric, the compared attribute as a dimension, an `in_set` filter on the values compared |
//!
//! Filters on the same one-to-many related entity are grouped in one `all` (one wound
//! that is both stage 4 and a pressure injury). Time windows from dictionary terms carry
//! an explicit time dimension. A count measure with a filter ("open wounds") becomes a
//! count metric whose `condition` is the filter.
//!
//! What this module must not do: touch the database, read the clock, or produce SQL
//! text. User text never ends up in a plan except as a typed, model-checked value.

pub mod ambiguity;
pub mod context;
pub(crate) mod coverage;
pub mod draft;
pub mod explain;
pub mod gate;
pub mod intent;
pub mod link;
pub mod plan;
pub(crate) mod plan_ops;
pub mod read;
pub(crate) mod reading;
pub mod suggest;
pub mod time;
pub mod tokenize;
pub mod vocab;

mod pipeline;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::semantic::{CompareOp, Constraint, PlanChange, SemanticModel, SuggestionKind, Value};

pub use app::protocol::Sensitivity;
pub use custom::{CustomValueError, OWN_WORDS_HINT, parse_custom_constraint, read_own_words};
pub use explain::restate;
pub use gate::GateThresholds;
pub use pipeline::piece_name;
pub use plan::{Dimension, Intent, Metric, OrderBy, OrderKey, QueryPlan, TimeRange};
pub use suggest::suggest_relaxations;
pub use vocab::EngineIndex;

mod custom;

/// Longest question accepted, in characters; longer input is refused with a clear message.
pub const MAX_QUESTION_CHARS: usize = 1000;

/// The message shown for anything outside the engine's domain.
pub const DOMAIN_MESSAGE: &str =
    "I can only answer questions about wounds, patients, assessments and clinics.";

// =====================================================================================
// Input
// =====================================================================================

/// Everything [`understand`] reads. Build it with [`EngineInput::new`] and the `with_*`
/// methods; unset parts are empty (no context, no preferences, no answers).
#[derive(Clone, Copy, Debug)]
pub struct EngineInput<'a> {
    /// The semantic model.
    pub model: &'a SemanticModel,
    /// Precomputed vocabulary of `model`; `None` uses a per-process cache keyed by the
    /// model (pass one explicitly when models are edited in place).
    pub index: Option<&'a EngineIndex>,
    /// Allowed values of low-cardinality attributes, as loaded from the database.
    pub allowed: &'a AllowedValuesSnapshot,
    /// The thread so far (previous plan, schema-area streak).
    pub context: &'a ConversationContext,
    /// The user's remembered choices.
    pub preferences: &'a Preferences,
    /// Answers already given for this question (from a clarification round).
    pub resolutions: &'a Resolutions,
    /// The question as typed.
    pub question: &'a str,
    /// The date relative expressions are computed from.
    pub today: NaiveDate,
    /// Confidence-gate thresholds.
    pub thresholds: GateThresholds,
    /// The renderer's plan rules; a plan they reject is refused with help instead of
    /// answered (none: not checked).
    pub check: Option<&'a dyn PlanCheck>,
}

/// The renderer's rules for a plan (fan-out, types, ordering), handed to the engine so
/// that it never decides to answer with a plan that cannot run. The engine stays free of
/// SQL: `crate::sql::RenderCheck` implements this with the renderer itself.
pub trait PlanCheck: Sync + std::fmt::Debug {
    /// `Err` with the reason in the user's words when the plan cannot run.
    fn check(&self, plan: &QueryPlan) -> Result<(), String>;
}

static EMPTY_ALLOWED: AllowedValuesSnapshot = AllowedValuesSnapshot::empty();
static EMPTY_CONTEXT: ConversationContext = ConversationContext::empty();
static EMPTY_PREFERENCES: Preferences = Preferences::empty();
static EMPTY_RESOLUTIONS: Resolutions = Resolutions::empty();

impl<'a> EngineInput<'a> {
    /// A question with no context, preferences or answers, default thresholds, and only
    /// the values the model itself lists as allowed values.
    pub fn new(model: &'a SemanticModel, question: &'a str, today: NaiveDate) -> Self {
        EngineInput {
            model,
            index: None,
            allowed: &EMPTY_ALLOWED,
            context: &EMPTY_CONTEXT,
            preferences: &EMPTY_PREFERENCES,
            resolutions: &EMPTY_RESOLUTIONS,
            question,
            today,
            thresholds: GateThresholds::default(),
            check: None,
        }
    }

    /// Checks plans with these rules before answering.
    pub fn with_check(mut self, check: &'a dyn PlanCheck) -> Self {
        self.check = Some(check);
        self
    }

    /// Uses a precomputed index of the model.
    pub fn with_index(mut self, index: &'a EngineIndex) -> Self {
        self.index = Some(index);
        self
    }

    /// Uses these allowed values (from the database cache).
    pub fn with_allowed(mut self, allowed: &'a AllowedValuesSnapshot) -> Self {
        self.allowed = allowed;
        self
    }

    /// Uses this conversation context.
    pub fn with_context(mut self, context: &'a ConversationContext) -> Self {
        self.context = context;
        self
    }

    /// Uses these remembered choices.
    pub fn with_preferences(mut self, preferences: &'a Preferences) -> Self {
        self.preferences = preferences;
        self
    }

    /// Uses these answers from a clarification round.
    pub fn with_resolutions(mut self, resolutions: &'a Resolutions) -> Self {
        self.resolutions = resolutions;
        self
    }

    /// Uses these gate thresholds.
    pub fn with_thresholds(mut self, thresholds: GateThresholds) -> Self {
        self.thresholds = thresholds;
        self
    }
}

/// The allowed values of low-cardinality attributes, keyed by qualified attribute
/// (`clinics.name`). Values the model lists itself (static lists and `known` values) are
/// always used in addition; this snapshot adds what the database holds.
#[derive(Debug, Default)]
pub struct AllowedValuesSnapshot {
    attributes: BTreeMap<String, AttributeValues>,
    lookup: OnceLock<vocab::ValueLookup>,
}

/// The values of one attribute in a snapshot.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttributeValues {
    /// Distinct stored values.
    pub values: Vec<String>,
    /// More values exist than were loaded: fuzzy matching is off for this attribute.
    pub truncated: bool,
}

impl Clone for AllowedValuesSnapshot {
    fn clone(&self) -> Self {
        AllowedValuesSnapshot {
            attributes: self.attributes.clone(),
            lookup: OnceLock::new(),
        }
    }
}

impl AllowedValuesSnapshot {
    /// A snapshot with no database values.
    pub const fn empty() -> Self {
        AllowedValuesSnapshot {
            attributes: BTreeMap::new(),
            lookup: OnceLock::new(),
        }
    }

    /// The values the model lists itself (static lists and known database values), as if
    /// the database held exactly those. For tests and for running without a database.
    pub fn from_model_static(model: &SemanticModel) -> Self {
        let mut snap = Self::empty();
        for e in &model.entities {
            for a in &e.attributes {
                if let Some(allowed) = &a.allowed {
                    let values: Vec<String> = allowed
                        .listed()
                        .iter()
                        .filter_map(|v| v.value.as_str().map(str::to_owned))
                        .collect();
                    if !values.is_empty() {
                        snap.insert(format!("{}.{}", e.name, a.name), values, false);
                    }
                }
            }
        }
        snap
    }

    /// Builds a snapshot from values keyed by `table.column` (the allowed-values cache's
    /// shape), mapping each column to the model attribute(s) reading it.
    pub fn from_table_columns<'v>(
        model: &SemanticModel,
        columns: impl IntoIterator<Item = (&'v str, &'v [String], bool)>,
    ) -> Self {
        let mut snap = Self::empty();
        for (key, values, truncated) in columns {
            let Some((table, column)) = key.split_once('.') else {
                continue;
            };
            for e in model.entities.iter().filter(|e| e.table == table) {
                for a in e
                    .attributes
                    .iter()
                    .filter(|a| a.column.as_deref() == Some(column))
                {
                    snap.insert(format!("{}.{}", e.name, a.name), values.to_vec(), truncated);
                }
            }
        }
        snap
    }

    /// Sets the values of one attribute (qualified name).
    pub fn insert(&mut self, attribute: impl Into<String>, values: Vec<String>, truncated: bool) {
        self.attributes
            .insert(attribute.into(), AttributeValues { values, truncated });
        self.lookup = OnceLock::new();
    }

    /// The values of one attribute.
    pub fn get(&self, attribute: &str) -> Option<&AttributeValues> {
        self.attributes.get(attribute)
    }

    /// Every attribute with values.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &AttributeValues)> {
        self.attributes.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub(crate) fn lookup(&self) -> &vocab::ValueLookup {
        self.lookup.get_or_init(|| vocab::ValueLookup::build(self))
    }
}

/// What the thread already established.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ConversationContext {
    /// The plan of the previous question in the thread (for follow-ups and pronouns).
    pub previous: Option<QueryPlan>,
    /// How many consecutive questions, up to and including the previous one, were in the
    /// previous plan's schema area. With this question in the same area the streak is one
    /// more ([`suggest::streak`]); from 3 a cross-area suggestion is offered.
    pub same_area_streak: u32,
}

impl ConversationContext {
    /// No previous question.
    pub const fn empty() -> Self {
        ConversationContext {
            previous: None,
            same_area_streak: 0,
        }
    }

    /// A thread whose previous question had this plan.
    pub fn after(previous: QueryPlan, same_area_streak: u32) -> Self {
        ConversationContext {
            previous: Some(previous),
            same_area_streak,
        }
    }
}

/// The user's learned preferences (F12), keyed by ambiguity id (`term:large@wounds`).
/// A key without `@entity` (`term:large`) applies to every entity.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Preferences {
    /// "Remember my choice": applied automatically, confidence 1.0, shown as "your saved
    /// definition".
    pub remembered: BTreeMap<String, String>,
    /// Answered the same way often enough: preselected as the default, still asked.
    pub offered_defaults: BTreeMap<String, String>,
}

impl Preferences {
    /// No preferences.
    pub const fn empty() -> Self {
        Preferences {
            remembered: BTreeMap::new(),
            offered_defaults: BTreeMap::new(),
        }
    }

    pub(crate) fn remembered_for(&self, id: &str) -> Option<&str> {
        lookup_pref(&self.remembered, id)
    }

    pub(crate) fn offered_for(&self, id: &str) -> Option<&str> {
        lookup_pref(&self.offered_defaults, id)
    }
}

/// The choice a preference map holds for an ambiguity id (`term:serious@wounds`), or for
/// its base (`term:serious`) when the choice was stored without an entity.
pub(crate) fn lookup_pref<'m>(map: &'m BTreeMap<String, String>, id: &str) -> Option<&'m str> {
    map.get(id)
        .or_else(|| id.split_once('@').and_then(|(base, _)| map.get(base)))
        .map(String::as_str)
}

/// Answers already given for this question, keyed by ambiguity id.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Resolutions {
    /// Ambiguity id → the answer.
    pub answers: BTreeMap<String, Resolution>,
}

impl Resolutions {
    /// No answers.
    pub const fn empty() -> Self {
        Resolutions {
            answers: BTreeMap::new(),
        }
    }

    /// Adds an answer (builder style, handy in tests).
    pub fn with(mut self, ambiguity_id: impl Into<String>, resolution: Resolution) -> Self {
        self.answers.insert(ambiguity_id.into(), resolution);
        self
    }

    /// Adds "option `option_id`" for an ambiguity.
    pub fn with_option(self, ambiguity_id: impl Into<String>, option_id: impl Into<String>) -> Self {
        self.with(ambiguity_id, Resolution::Option { id: option_id.into() })
    }
}

/// One answer to one ambiguity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Resolution {
    /// One of the offered options.
    Option {
        /// The option's id.
        id: String,
    },
    /// A custom typed constraint (validated by [`parse_custom_constraint`] or built from
    /// the question's [`CustomValue`] kind), used instead of the options.
    Custom {
        /// The constraint.
        constraint: Constraint,
    },
    /// A custom typed plan change (e.g. a different limit or attribute).
    Change {
        /// The change.
        change: PlanChange,
    },
    /// "I don't know — use your best judgment": the default, reported as an assumption,
    /// never asked again.
    DontKnow,
}

// =====================================================================================
// Output
// =====================================================================================

/// A half-open byte range `[start, end)` of the original question.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TextSpan {
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

impl TextSpan {
    /// A span.
    pub fn new(start: usize, end: usize) -> Self {
        TextSpan { start, end }
    }

    /// The text it covers in `question` (empty when out of range).
    pub fn slice(self, question: &str) -> &str {
        question.get(self.start..self.end).unwrap_or("")
    }
}

/// How a piece of the question was linked to the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkMethod {
    /// The model's name, label or an allowed value, as written (1.0).
    Exact,
    /// A synonym from the model (1.0).
    Synonym,
    /// A close spelling of a model word (0.85).
    Fuzzy,
    /// Not in the question: a default was applied (0.7, or lower for critical fields).
    Default,
    /// The user's saved definition (1.0).
    Remembered,
    /// Answered in a clarification round (1.0).
    Answered,
    /// Carried over from the previous question of the thread (1.0).
    Context,
}

/// What a linked piece is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PieceKind {
    /// The entity the question is about (`wounds`).
    Entity,
    /// An attribute (`assessments.pain_score`).
    Attribute,
    /// An allowed value of an attribute (`wounds.etiology = diabetic_foot_ulcer`).
    Value,
    /// A named measure (`healing_rate`).
    Measure,
    /// A date column (`onset`).
    TimeDimension,
    /// A time range ("in 2025").
    Time,
    /// A dictionary term ("large").
    Term,
    /// A comparison with a number ("area > 25 cm²").
    Comparison,
    /// A grouping ("by clinic").
    Dimension,
    /// What to do (count, list …).
    Intent,
}

/// One piece of the question linked to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinkedPiece {
    /// What it is.
    pub kind: PieceKind,
    /// The model name it links to (qualified attribute, entity, measure, term id …).
    pub target: String,
    /// The value, for values and comparisons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<Value>,
    /// The words of the question (empty for defaults).
    pub text: String,
    /// Where in the question (`None` for defaults and context).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<TextSpan>,
    /// How it was linked.
    pub how: LinkMethod,
    /// Confidence in [0, 1] (F4 rules, attribute weights applied).
    pub confidence: f64,
}

/// A time expression found in the question.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeMention {
    /// The words of the question.
    pub text: String,
    /// Where in the question.
    pub span: TextSpan,
    /// A readable form ("in the last 30 days", "in Q3 2025").
    pub label: String,
    /// First day included.
    pub start: NaiveDate,
    /// First day not included.
    pub end: NaiveDate,
}

/// The ambiguity kinds of F2.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AmbiguityKind {
    /// A vague word from the dictionary ("large", "serious", "recent", "doing well").
    VagueQualifier,
    /// A word naming several columns ("which date?", "which size?").
    Column,
    /// Which table the question counts or lists.
    Entity,
    /// A word matching values of different attributes, or several values.
    Value,
    /// A trend, average or rate without a time window.
    MissingTimeWindow,
    /// A count or list whose cohort (all, open, recent) changes the answer.
    MissingCohort,
    /// "High pain", "more than usual": a threshold without a number.
    ThresholdWithoutNumber,
    /// Average over what: per assessment, latest or first per wound.
    Aggregation,
    /// "Top 10 wounds": ranked by what?
    RankingWithoutMeasure,
    /// "It", "that", "them" with nothing to point at.
    UnresolvedReference,
    /// Not a question about this data (or a request to change it).
    OutOfDomain,
    /// What to do with the data at all ("show me data").
    Intent,
    /// A content word nothing in the model explains ("stalling", "problem"): asked
    /// about, or answered as an "ignored: …" assumption — never dropped (F26).
    UnknownWord,
}

impl AmbiguityKind {
    /// Stable machine name (`vague_qualifier`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            AmbiguityKind::VagueQualifier => "vague_qualifier",
            AmbiguityKind::Column => "column",
            AmbiguityKind::Entity => "entity",
            AmbiguityKind::Value => "value",
            AmbiguityKind::MissingTimeWindow => "missing_time_window",
            AmbiguityKind::MissingCohort => "missing_cohort",
            AmbiguityKind::ThresholdWithoutNumber => "threshold_without_number",
            AmbiguityKind::Aggregation => "aggregation",
            AmbiguityKind::RankingWithoutMeasure => "ranking_without_measure",
            AmbiguityKind::UnresolvedReference => "unresolved_reference",
            AmbiguityKind::OutOfDomain => "out_of_domain",
            AmbiguityKind::Intent => "intent",
            AmbiguityKind::UnknownWord => "unknown_word",
        }
    }
}

/// How much a wrong guess matters. Ordered: `Critical` sorts first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// A wrong guess changes the cohort: always asked (unless clarifications are off).
    Critical,
    /// Likely to change the answer: asked under the default thresholds.
    High,
    /// Answered with the default, shown as an assumption badge.
    Medium,
    /// A minor reading choice, shown as an assumption badge.
    Low,
}

impl Severity {
    /// The confidence of the default reading under this severity (before weights).
    pub fn default_confidence(self) -> f64 {
        match self {
            Severity::Critical => 0.4,
            Severity::High => 0.55,
            Severity::Medium => 0.7,
            Severity::Low => 0.8,
        }
    }
}

/// A typed change to the plan that neither a [`Constraint`] nor a [`PlanChange`] expresses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PlanPatch {
    /// Do this instead (count instead of list …).
    SetIntent {
        /// The intent.
        intent: Intent,
    },
    /// Use this date range.
    SetTimeRange {
        /// The range.
        range: TimeRange,
    },
    /// No date range (all time).
    ClearTimeRange,
    /// Answer this plan instead (intent-level and reference questions).
    ReplacePlan {
        /// The plan.
        plan: Box<QueryPlan>,
    },
    /// Leave the plan as it is (e.g. "all wounds, any status").
    NoChange,
}

/// What choosing an option does: a constraint, a plan change, a patch, or several.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Effect {
    /// Rows kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint: Option<Constraint>,
    /// Plan change (which attribute, measure, aggregation, sort …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<PlanChange>,
    /// Anything else.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub patch: Option<PlanPatch>,
}

/// One interpretation offered for an ambiguity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AmbiguityOption {
    /// Stable id within the ambiguity (the term option's id for dictionary terms).
    pub id: String,
    /// Radio-button label.
    pub label: String,
    /// What exactly is counted.
    pub description: String,
    /// The best guess (exactly one per ambiguity).
    pub default: bool,
    /// What choosing it does.
    pub effect: Effect,
}

/// The kind of custom value a question accepts instead of its options (F7).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CustomValue {
    /// No custom value.
    None,
    /// A number (with unit) compared to an attribute: `attribute op <number>`.
    Number {
        /// Qualified attribute.
        attribute: String,
        /// Operator.
        op: CompareOp,
        /// Unit code of the number.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
    },
    /// A date range on a date attribute.
    DateRange {
        /// Qualified date attribute.
        attribute: String,
    },
    /// One of the allowed values of an attribute.
    AllowedValue {
        /// Qualified attribute.
        attribute: String,
    },
    /// A free constraint such as `area > 15`, checked by [`parse_custom_constraint`].
    FreeConstraint {
        /// The entity the constraint is read against.
        entity: String,
    },
}

/// One ambiguity: a structured diagnostic, never a string.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ambiguity {
    /// Stable signature (`term:large@wounds`, `column:date@wounds`, `intent`, …): what
    /// remembered choices, answers and loop prevention match on.
    pub id: String,
    /// Which kind (F2).
    pub kind: AmbiguityKind,
    /// How much a wrong guess matters.
    pub severity: Severity,
    /// The words of the question it concerns (`None` when it is about something missing).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<TextSpan>,
    /// Those words.
    pub text: String,
    /// The question to ask, hypothesis-first.
    pub question: String,
    /// 2–5 options, exactly one `default`.
    pub options: Vec<AmbiguityOption>,
    /// The custom value accepted instead.
    pub custom: CustomValue,
    /// Why it is ambiguous, in one line.
    pub reason: String,
    /// The dictionary term behind it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub term: Option<String>,
    /// Confidence of the default reading (severity, weights and preferences applied).
    pub confidence: f64,
    /// The gate wants this asked (otherwise the default is an assumption).
    pub ask: bool,
}

impl Ambiguity {
    /// The default option.
    pub fn default_option(&self) -> Option<&AmbiguityOption> {
        self.options.iter().find(|o| o.default)
    }

    /// The option with this id.
    pub fn option(&self, id: &str) -> Option<&AmbiguityOption> {
        self.options.iter().find(|o| o.id == id)
    }
}

/// Why a question was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefuseReason {
    /// Nothing was asked.
    Empty,
    /// Longer than [`MAX_QUESTION_CHARS`].
    TooLong,
    /// Not about this data ("what's the weather").
    OutOfDomain,
    /// Asks to change data ("delete all patients") or contains SQL.
    DataChange,
    /// Could not be read at all, or too little of it was understood.
    Unintelligible,
    /// Read into a plan the data cannot answer (a grouping that would repeat rows, a
    /// value that does not fit its column): said with help, never run.
    CannotAnswer,
}

/// What the orchestrator should do with the question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Decision {
    /// Every piece is confident and nothing is ambiguous: run the plan.
    Answer,
    /// Run the plan and show the assumptions as badges.
    AnswerWithAssumptions,
    /// Ask the ambiguities whose `ask` is true (one panel, most severe first). The draft
    /// plan (defaults applied) is there for non-interactive mode.
    Clarify,
    /// Do not answer: show the message. There is no plan.
    Refuse {
        /// Why.
        reason: RefuseReason,
        /// What to tell the user.
        message: String,
    },
}

/// Where an assumption came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AssumptionSource {
    /// The best guess (an ambiguity's default, or "I don't know").
    Default,
    /// The user's remembered choice.
    SavedDefinition,
    /// A link below full confidence (a fuzzy spelling, a weighted field).
    LowConfidenceLink,
}

/// One assumption behind an answer, shown as a badge the user can change (F9).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Assumption {
    /// The words concerned ("large").
    pub piece: String,
    /// What was assumed ("Larger than 10 cm²").
    pub assumed: String,
    /// Where it came from.
    pub source: AssumptionSource,
    /// The ambiguity to reopen when the badge is clicked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ambiguity_id: Option<String>,
    /// The option applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option_id: Option<String>,
    /// Where in the question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<TextSpan>,
}

/// A choice applied without asking: an answer from this round or a remembered one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AppliedChoice {
    /// The ambiguity.
    pub ambiguity_id: String,
    /// The option chosen (`custom` for a custom value, `dont_know` for best judgment).
    pub option_id: String,
    /// How it was chosen.
    pub how: LinkMethod,
}

/// A follow-up suggestion pill (F18).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Suggestion {
    /// The text sent as the next question when clicked.
    pub text: String,
    /// What kind of follow-up it is.
    pub kind: SuggestionKind,
    /// The schema area it comes from.
    pub area: String,
    /// True for the cross-area suggestion offered after a streak in one area.
    pub cross_area: bool,
    /// The plan the text leads to, when the engine can compute it (relaxations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<QueryPlan>,
}

/// One step of the engine's work, for the thinking stream (F16); the orchestrator adds
/// durations.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThinkingStep {
    /// Short name ("Understood intent").
    pub name: String,
    /// Detail ("count, confidence 0.95").
    pub detail: String,
}

/// Everything the engine understood about one question.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Understanding {
    /// The question as given.
    pub question: String,
    /// What to do.
    pub intent: Intent,
    /// Confidence in the intent (< 0.6 → an intent-level question, F1).
    pub intent_confidence: f64,
    /// The entity counted or listed, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entity: Option<String>,
    /// The linked pieces, in question order (defaults last).
    pub pieces: Vec<LinkedPiece>,
    /// Time expressions found.
    pub times: Vec<TimeMention>,
    /// Ambiguities still open (not answered, not remembered), most severe first.
    pub ambiguities: Vec<Ambiguity>,
    /// Choices applied without asking (answers and remembered ones).
    pub applied: Vec<AppliedChoice>,
    /// The routing decision.
    pub decision: Decision,
    /// The draft plan with defaults applied; `None` only when refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<QueryPlan>,
    /// Assumptions behind the plan (every open ambiguity's default, saved definitions,
    /// low-confidence links).
    pub assumptions: Vec<Assumption>,
    /// One sentence saying what the plan computes.
    pub restatement: String,
    /// 2–3 follow-up suggestions.
    pub suggestions: Vec<Suggestion>,
    /// Thinking steps.
    pub steps: Vec<ThinkingStep>,
    /// Overall confidence: the lowest piece confidence.
    pub confidence: f64,
    /// The question refined the previous plan of the thread.
    pub follow_up: bool,
    /// The schema area of the plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub area: Option<String>,
}

impl Understanding {
    /// The ambiguities to ask in this round (most severe first).
    pub fn questions(&self) -> impl Iterator<Item = &Ambiguity> {
        self.ambiguities.iter().filter(|a| a.ask)
    }

    /// The ambiguity with this id.
    pub fn ambiguity(&self, id: &str) -> Option<&Ambiguity> {
        self.ambiguities.iter().find(|a| a.id == id)
    }

    /// True when the question was refused.
    pub fn is_refused(&self) -> bool {
        matches!(self.decision, Decision::Refuse { .. })
    }
}

/// Understands one question. Pure and deterministic; never panics on any input.
pub fn understand(input: &EngineInput<'_>) -> Understanding {
    pipeline::run(input)
}

/// The plan an option of an ambiguity leads to (for option previews, F6): the same
/// question understood again with that option chosen. `None` when the ambiguity or
/// option is unknown or the question is refused.
pub fn option_plan(input: &EngineInput<'_>, ambiguity_id: &str, option_id: &str) -> Option<QueryPlan> {
    let mut answers = input.resolutions.clone();
    answers.answers.insert(
        ambiguity_id.to_owned(),
        Resolution::Option {
            id: option_id.to_owned(),
        },
    );
    let again = EngineInput {
        resolutions: &answers,
        ..*input
    };
    understand(&again).plan
}

/// 2–3 follow-up suggestions for a plan (F18), each understood as a follow-up of it.
pub fn suggest(model: &SemanticModel, plan: &QueryPlan, context: &ConversationContext) -> Vec<Suggestion> {
    let index = EngineIndex::for_model(model);
    suggest::suggest_with(model, plan, context, &|p, t| {
        pipeline::follow(model, &index, p, t)
    })
}
