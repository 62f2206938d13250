//! The vocabulary the browser, the server functions and the JSON API share.
//!
//! Defined once, here, with serde. No server-only dependency may appear in this
//! module: it is compiled into the wasm bundle. Avoid `usize` (wasm32 is 32-bit).

use serde::{Deserialize, Serialize};

/// How eagerly Clarion asks instead of assuming (moves the confidence-gate thresholds).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum Sensitivity {
    /// Ask only when a guess would very likely be wrong.
    Fewer,
    /// The default thresholds (0.6 / 0.85).
    #[default]
    Balanced,
    /// Ask whenever any piece is less than certain.
    More,
}

impl Sensitivity {
    /// Every variant, in the order the UI lists them.
    pub const ALL: [Sensitivity; 3] = [Sensitivity::Fewer, Sensitivity::Balanced, Sensitivity::More];

    /// Stable machine name (stored in the database, used in forms and the API).
    pub fn as_str(self) -> &'static str {
        match self {
            Sensitivity::Fewer => "fewer",
            Sensitivity::Balanced => "balanced",
            Sensitivity::More => "more",
        }
    }

    /// Human label for the settings page.
    pub fn label(self) -> &'static str {
        match self {
            Sensitivity::Fewer => "Fewer questions",
            Sensitivity::Balanced => "Balanced",
            Sensitivity::More => "More questions",
        }
    }

    /// One line on what the choice means.
    pub fn help(self) -> &'static str {
        match self {
            Sensitivity::Fewer => "Assume more; ask only when a guess is likely wrong.",
            Sensitivity::Balanced => "Ask when a piece of the question is unclear.",
            Sensitivity::More => "Ask whenever any part is less than certain.",
        }
    }

    /// Parses the machine name; `None` for anything else.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }
}

/// A clinician's preferences for how Clarion treats ambiguous questions (F13).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Settings {
    /// Never show a clarification panel; answer with assumption badges instead.
    pub skip_clarifications: bool,
    /// How readily to ask.
    pub sensitivity: Sensitivity,
}

/// What the page header needs to know about who is signed in.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct UserSummary {
    pub username: String,
    pub display_name: String,
    pub is_admin: bool,
}

/// The model's vocabulary for the Glossary page (F20).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Glossary {
    /// The ambiguity dictionary, alphabetical by phrase.
    pub terms: Vec<GlossaryTerm>,
    /// What questions can be about.
    pub entities: Vec<GlossaryEntity>,
    /// Questions an administrator verified: (name, question, "Verified by …").
    #[serde(default)]
    pub verified: Vec<(String, String, String)>,
}

/// One dictionary term and what each of its options means.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GlossaryTerm {
    pub id: String,
    pub phrase: String,
    /// Other words that trigger the same question.
    pub variants: Vec<String>,
    /// What kind of word it is ("size", "time", "column"…), human-readable.
    pub kind: String,
    /// Labels of the entities it applies to ("Wound", "Patient").
    pub applies_to: Vec<String>,
    /// The question Clarion asks.
    pub question: String,
    pub description: String,
    pub options: Vec<GlossaryOption>,
}

/// One possible meaning of a term.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GlossaryOption {
    pub label: String,
    pub description: String,
    /// The best guess Clarion preselects.
    pub default: bool,
}

/// An entity with its attributes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GlossaryEntity {
    pub name: String,
    pub label: String,
    pub description: String,
    pub synonyms: Vec<String>,
    pub attributes: Vec<GlossaryAttribute>,
}

/// An attribute as a clinician would read it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct GlossaryAttribute {
    pub name: String,
    pub description: String,
    /// "text", "number", "date", "yes/no".
    pub kind: String,
    /// Display unit ("cm²"), empty when none.
    pub unit: String,
    pub synonyms: Vec<String>,
    /// Known values (labels), empty for free values.
    pub values: Vec<String>,
}

/// Lowercased fields joined by newlines: what a glossary search looks in. A search
/// (one line, lowercased) matches when it occurs in one of the fields.
fn search_text<'a>(fields: impl IntoIterator<Item = &'a str>) -> String {
    fields
        .into_iter()
        .map(str::to_lowercase)
        .collect::<Vec<_>>()
        .join("\n")
}

/// True when a search (lowercased, trimmed) matches a [`search_text`]: every text
/// matches the empty search.
pub fn search_matches(text: &str, query: &str) -> bool {
    query.is_empty() || text.contains(query)
}

impl GlossaryTerm {
    /// What a search looks in: phrase, variants, kind, question, options.
    pub fn search_text(&self) -> String {
        search_text(
            [self.phrase.as_str(), self.kind.as_str(), self.question.as_str()]
                .into_iter()
                .chain(self.variants.iter().map(String::as_str))
                .chain(
                    self.options
                        .iter()
                        .flat_map(|o| [o.label.as_str(), o.description.as_str()]),
                ),
        )
    }
}

impl GlossaryEntity {
    /// What a search looks in for the entity as a whole: its label and synonyms.
    pub fn search_text(&self) -> String {
        search_text(std::iter::once(self.label.as_str()).chain(self.synonyms.iter().map(String::as_str)))
    }
}

/// What a search (lowercased, trimmed) shows of one entity, from the search texts of
/// the entity and of its items: whether the entity shows, and which items. Every item
/// when the entity itself matches (its label or a synonym); otherwise only the matching
/// ones, and the entity only when one does.
pub fn entity_search<'a>(
    entity_text: &str,
    item_texts: impl IntoIterator<Item = &'a str>,
    query: &str,
) -> (bool, Vec<bool>) {
    let whole = search_matches(entity_text, query);
    let items: Vec<bool> = item_texts
        .into_iter()
        .map(|t| whole || search_matches(t, query))
        .collect();
    (whole || items.contains(&true), items)
}

impl GlossaryAttribute {
    /// What a search looks in: name, description, synonyms, values.
    pub fn search_text(&self) -> String {
        search_text(
            [self.name.as_str(), self.description.as_str()]
                .into_iter()
                .chain(self.synonyms.iter().map(String::as_str))
                .chain(self.values.iter().map(String::as_str)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensitivity_round_trips_through_its_machine_name() {
        for s in Sensitivity::ALL {
            assert_eq!(Sensitivity::parse(s.as_str()), Some(s));
        }
        assert_eq!(Sensitivity::parse("'; DROP TABLE settings; --"), None);
        assert_eq!(Sensitivity::parse(""), None);
    }

    fn term(phrase: &str, variants: &[&str]) -> GlossaryTerm {
        GlossaryTerm {
            id: phrase.into(),
            phrase: phrase.into(),
            variants: variants.iter().map(|v| v.to_string()).collect(),
            kind: "size".into(),
            applies_to: vec!["Wound".into()],
            question: "What counts as large?".into(),
            description: String::new(),
            options: vec![GlossaryOption {
                label: "Larger than 10 cm²".into(),
                description: "Latest area".into(),
                default: true,
            }],
        }
    }

    #[test]
    fn glossary_search_matches_phrases_variants_and_option_text() {
        let text = term("large", &["big"]).search_text();
        let matches = |q: &str| search_matches(&text, q);
        assert!(matches(""));
        assert!(matches("big"));
        assert!(matches("10 cm²"));
        assert!(!matches("infection"));
        // A search never spans two fields (phrase "large", variant "big").
        assert!(!matches("large big"));
    }

    #[test]
    fn glossary_entity_search_keeps_only_matching_attributes() {
        let e = GlossaryEntity {
            name: "wounds".into(),
            label: "Wound".into(),
            description: String::new(),
            synonyms: vec!["ulcer".into()],
            attributes: vec![
                GlossaryAttribute {
                    name: "area".into(),
                    description: "Surface area".into(),
                    kind: "number".into(),
                    unit: "cm²".into(),
                    synonyms: vec!["size".into()],
                    values: vec![],
                },
                GlossaryAttribute {
                    name: "etiology".into(),
                    description: "Cause".into(),
                    kind: "text".into(),
                    unit: String::new(),
                    synonyms: vec![],
                    values: vec!["Venous leg ulcer".into()],
                },
            ],
        };
        let items: Vec<String> = e.attributes.iter().map(GlossaryAttribute::search_text).collect();
        let search = |q: &str| entity_search(&e.search_text(), items.iter().map(String::as_str), q);
        assert_eq!(
            search("ulcer"),
            (true, vec![true, true]),
            "entity synonym keeps all"
        );
        assert_eq!(search("venous"), (true, vec![false, true]), "only etiology");
        assert_eq!(search("zzz"), (false, vec![false, false]));
    }

    #[test]
    fn settings_serialize_with_snake_case_sensitivity() {
        let s = Settings {
            skip_clarifications: true,
            sensitivity: Sensitivity::More,
        };
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, r#"{"skip_clarifications":true,"sensitivity":"more"}"#);
    }
}

// =====================================================================================
// JSON API v1 and the ask flow (F6, F8–F16): what `POST /api/v1/query` and friends
// exchange. The server's OpenAPI document (`/api/v1/openapi.json`) describes exactly
// these types; its test serializes each of them and checks every field is documented.
// =====================================================================================

/// `POST /api/v1/query`: a question, optionally in an existing thread.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AskRequest {
    /// The question in plain English (1–1000 characters, not only spaces or control
    /// characters, which are read as spaces).
    #[cfg_attr(
        feature = "ssr",
        schema(
            min_length = 1,
            max_length = 1000,
            pattern = r"[^\s\x00-\x1f\x7f-\x9f]",
            example = "how many open wounds by clinic"
        )
    )]
    pub question: String,
    /// The thread it follows up on; a new thread when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// `false`: never ask, answer on best guesses with `open_questions` (default `true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interactive: Option<bool>,
    /// How the question was sent: `suggestion` when it is a follow-up pill the user
    /// clicked (Analytics' click-through); absent when typed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<AskVia>,
}

/// How a question was sent (see [`AskRequest::via`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AskVia {
    /// A follow-up suggestion pill under an answer.
    Suggestion,
}

/// `POST /api/v1/query/clarify`: the answers to one clarification round.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ClarifyRequest {
    /// The round's id (from the 202 response).
    pub clarification_id: String,
    /// One answer per question of the round.
    pub answers: Vec<ClarifyAnswer>,
}

/// `POST /api/v1/query/cancel`: the clinician closed a round without answering it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CancelRequest {
    /// The round's id (from the 202 response).
    pub clarification_id: String,
}

/// The answer to one question: exactly one of `option_id`, `custom`, `in_own_words` or
/// `dont_know`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ClarifyAnswer {
    /// The question's id.
    pub question_id: String,
    /// One of the question's choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option_id: Option<String>,
    /// A custom value typed by the user ("area > 15", "20", "2025-01-01..2025-06-30").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<String>,
    /// "Describe it in your own words" (F28): read by Clarion's engine first, then by the
    /// language model when one is configured; nothing runs yet — the round comes back
    /// with the reading as a new preselected option ("I read that as: …") to confirm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_own_words: Option<String>,
    /// "I don't know — use your best judgment".
    #[serde(default)]
    pub dont_know: bool,
    /// "Remember my choice": apply it automatically from now on.
    #[serde(default)]
    pub remember: bool,
}

/// `POST /api/v1/query/revise`: change one assumption of an answer (F9) and re-run,
/// keeping every other confirmed choice.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ReviseRequest {
    /// The answer to revise (its `history_id`).
    pub history_id: String,
    /// The assumption's ambiguity id.
    pub ambiguity_id: String,
    /// The option to use instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option_id: Option<String>,
    /// Or a custom value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub custom: Option<String>,
}

/// What asking (or answering a round) led to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum QueryOutcome {
    /// The answer (HTTP 200).
    Answered(Answer),
    /// One round of questions first (HTTP 202).
    NeedsClarification(ClarificationRound),
}

/// [`QueryOutcome`] as the server functions send it to the browser: externally tagged.
/// Decoding an internally tagged enum makes serde buffer the value and compile a second
/// decoder for every type inside it (tens of KB of wasm); the JSON API keeps `status`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub enum Outcome {
    /// The answer.
    Answered(Answer),
    /// One round of questions first.
    NeedsClarification(ClarificationRound),
}

impl From<QueryOutcome> for Outcome {
    fn from(o: QueryOutcome) -> Self {
        match o {
            QueryOutcome::Answered(a) => Outcome::Answered(a),
            QueryOutcome::NeedsClarification(r) => Outcome::NeedsClarification(r),
        }
    }
}

/// An answer: what was computed, on which assumptions, and the rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Answer {
    /// The thread the question belongs to (send it back for follow-ups).
    pub thread_id: String,
    /// The history entry (for re-runs and `POST /api/v1/query/revise`).
    pub history_id: String,
    /// The question as asked.
    pub question: String,
    /// One sentence saying what was computed.
    pub restatement: String,
    /// Every guess behind the answer, as badges the user can change.
    pub assumptions: Vec<Assumption>,
    /// Questions that would have been asked (non-interactive mode, skipped clarifications).
    pub open_questions: Vec<OpenQuestion>,
    /// The rows.
    pub table: ResultTable,
    /// The SQL that ran (placeholders only; values are never shown or logged).
    pub sql: String,
    /// How many values were bound to it.
    pub param_count: u32,
    /// Overall confidence in [0, 1].
    pub confidence: f64,
    /// 2–3 follow-ups (or relaxations when nothing matched).
    pub suggestions: Vec<Suggestion>,
    /// What was done, with measured durations.
    pub thinking: Vec<ThinkingStep>,
    /// How many clarification rounds this question took.
    pub rounds: u32,
    /// Server time for this request, milliseconds.
    pub duration_ms: f64,
    /// Something the clinician should know about how this answer came about (e.g. an
    /// expired clarification answered by running the question again).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
    /// "Verified by <administrator> · <name>" when an administrator's verified question
    /// answered it (its definition applied, nothing asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<String>,
}

/// Where an assumption came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AssumptionSource {
    /// Clarion's best guess (or "I don't know").
    Default,
    /// What the user chose when Clarion asked ("you chose"); changeable like the rest.
    Chosen,
    /// The user's remembered choice ("your saved definition").
    SavedDefinition,
    /// The user's usual answer, applied without asking by the learning rule: given at
    /// least 3 times for this term on this entity, successful, confidence above 0.8
    /// ("your usual definition"; the numbers are configuration, see README).
    UsualDefinition,
    /// A piece of the question matched with less than full confidence.
    LowConfidence,
    /// A reading proposed by the language model and checked against the model (F24).
    LanguageModel,
}

/// One assumption badge (F9).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
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
    /// The alternatives, for changing the assumption (empty when there are none).
    #[serde(default)]
    pub options: Vec<Choice>,
    // Server side only, like `reasoning`: the browser does not read them (the wasm
    // bundle has a size budget, and serde skips fields a struct does not name).
    /// How sure Clarion is of this piece, in [0, 1]: 1 for what the user chose or
    /// remembered, the best guess's confidence for a default, the link's for a loose match.
    #[cfg(feature = "ssr")]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// One line on why this was assumed ("The usual meaning of “large” (1 of 3
    /// readings), not asked because a different reading changes the answer little.").
    #[cfg(feature = "ssr")]
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reasoning: String,
}

impl Assumption {
    /// The assumption as a badge reads it: "large = Larger than 25 cm²", or for a word
    /// matched loosely "Lakeview → Lakeview Community Wound Care".
    pub fn text(&self) -> String {
        format!("{} {} {}", self.piece, self.link(), self.assumed)
    }

    /// "=" between the words and what was assumed; "→" for a loosely matched word.
    pub fn link(&self) -> &'static str {
        if self.source == AssumptionSource::LowConfidence {
            "→"
        } else {
            "="
        }
    }
}

/// A question Clarion would have asked, answered on its best guess instead (F14).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct OpenQuestion {
    /// The question's id (an ambiguity id; usable with `/query/revise`).
    pub id: String,
    /// The question.
    pub text: String,
    /// The option assumed.
    pub assumed_option_id: String,
    /// The options.
    pub options: Vec<Choice>,
}

/// One clarification round (HTTP 202).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ClarificationRound {
    /// Send this back with the answers.
    pub clarification_id: String,
    /// The thread.
    pub thread_id: String,
    /// 1 for the first round of a question, 2 for the next.
    pub round: u32,
    /// The most rounds a question can take.
    pub max_rounds: u32,
    /// Why Clarion asks, in one line.
    pub reason: String,
    /// The questions, most critical first.
    pub questions: Vec<Question>,
    /// What Clarion understood so far (its best-guess restatement).
    pub understood_so_far: String,
    /// What was done, with measured durations.
    pub thinking: Vec<ThinkingStep>,
    /// After this instant (RFC 3339) the round can no longer be answered.
    pub expires_at: String,
}

/// One question of a round: hypothesis-first, best guess preselected.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Question {
    /// Stable id (the ambiguity id, e.g. `term:serious@wounds`).
    pub id: String,
    /// Ambiguity kind (`vague_qualifier`, `column`, `intent`, …).
    pub kind: String,
    /// The question.
    pub text: String,
    /// Why it is asked.
    pub reason: String,
    /// The words of the question it concerns.
    pub span_text: String,
    /// 2–5 choices, exactly one `default`.
    pub options: Vec<Choice>,
    /// What a custom value may be.
    pub custom: CustomInput,
    /// How much a wrong guess would matter: `critical` (it changes the cohort; always
    /// asked), `important` (likely to change the answer), `helpful` (a finer reading).
    #[serde(default)]
    pub priority: String,
    // Server side only: the panel shows the priority, not the number.
    /// Clarion's confidence in its best guess (the preselected option), in [0, 1].
    #[cfg(feature = "ssr")]
    #[serde(default)]
    pub confidence: f64,
}

/// One radio option.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Choice {
    /// Stable id within the question.
    pub id: String,
    /// Radio label.
    pub label: String,
    /// What exactly is counted.
    pub description: String,
    /// The best guess (preselected).
    pub default: bool,
    /// How many records it matches; absent when the count was too slow (F6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<i64>,
    /// What `count` counts, plural: the records this choice's answer would list or count
    /// ("patients" for "patients with serious wounds", "assessments" for "area at each
    /// assessment"); absent without a count.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub counts_of: String,
}

/// The custom value a question accepts (F7).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CustomInput {
    /// `none`, `number`, `date_range`, `allowed_value` or `free_constraint`.
    pub kind: String,
    /// A hint for the input ("e.g. 15 (cm²)").
    pub placeholder: String,
    /// Unit of a number, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// For `allowed_value`: the values to pick from.
    #[serde(default)]
    pub allowed_values: Vec<String>,
}

/// A follow-up suggestion pill.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Suggestion {
    /// The text sent as the next question.
    pub text: String,
    /// What kind of follow-up (`drill_down`, `relax`, …).
    pub kind: String,
    /// True for a suggestion outside the area explored so far.
    pub cross_area: bool,
}

/// One step of the thinking stream (F16).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ThinkingStep {
    /// Short name ("Understood the question").
    pub name: String,
    /// Detail ("count, confidence 0.95").
    pub detail: String,
    /// Measured time of this step, milliseconds; absent for sub-steps of a measured step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<f64>,
}

// On the server the table serializes itself once (`ResultTable::serialize_once`); the
// browser's build keeps the plain derive (the wasm bundle has a size budget).
/// The rows of an answer.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[cfg_attr(not(feature = "ssr"), derive(Serialize))]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ResultTable {
    /// Column descriptions, in order.
    pub columns: Vec<ResultColumn>,
    /// Rows of JSON cells (number, text, boolean, ISO date text, or null).
    pub rows: Vec<Vec<serde_json::Value>>,
    /// Number of rows returned.
    pub row_count: u32,
    /// More rows matched than the row cap allows.
    pub truncated: bool,
    /// The table as JSON, once [`ResultTable::serialize_once`] made it: never sent or
    /// read itself, it is what serializing the table writes from then on.
    #[cfg(feature = "ssr")]
    #[serde(skip)]
    pub serialized: SerializedTable,
}

#[cfg(feature = "ssr")]
impl ResultTable {
    /// Serializes the table as JSON and keeps the text, so that serializing it again (the
    /// answer's response, after the same text was stored with its History entry) writes
    /// the kept text instead of formatting every cell once more. Returns the text.
    ///
    /// The kept text is the table as it is now: change no field afterwards (a change
    /// would not be seen by the next serialization).
    pub fn serialize_once(&mut self) -> Result<&str, serde_json::Error> {
        self.serialized = SerializedTable::default();
        let raw = serde_json::value::to_raw_value(&*self)?;
        Ok(self.serialized.0.insert(std::sync::Arc::from(raw)).get())
    }
}

#[cfg(feature = "ssr")]
impl Serialize for ResultTable {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if let Some(json) = &self.serialized.0 {
            return Serialize::serialize(&**json, serializer);
        }
        /// The fields as they are sent (the same names and order as the struct).
        #[derive(Serialize)]
        #[serde(rename = "ResultTable")]
        struct Fields<'a> {
            columns: &'a [ResultColumn],
            rows: &'a [Vec<serde_json::Value>],
            row_count: u32,
            truncated: bool,
        }
        Fields {
            columns: &self.columns,
            rows: &self.rows,
            row_count: self.row_count,
            truncated: self.truncated,
        }
        .serialize(serializer)
    }
}

/// A [`ResultTable`]'s JSON once serialized ([`ResultTable::serialize_once`]). Cheap to
/// clone; two tables compare by their fields, never by this.
#[cfg(feature = "ssr")]
#[derive(Clone, Default)]
pub struct SerializedTable(Option<std::sync::Arc<serde_json::value::RawValue>>);

#[cfg(feature = "ssr")]
impl SerializedTable {
    /// The kept JSON text, if any.
    pub fn get(&self) -> Option<&str> {
        self.0.as_deref().map(serde_json::value::RawValue::get)
    }
}

#[cfg(feature = "ssr")]
impl PartialEq for SerializedTable {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

#[cfg(feature = "ssr")]
impl std::fmt::Debug for SerializedTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "kept" } else { "none" })
    }
}

/// One result column.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ResultColumn {
    /// Machine name.
    pub name: String,
    /// Human label.
    pub label: String,
    /// `integer`, `real`, `text`, `boolean` or `date`.
    pub kind: String,
    /// Display unit ("cm²"), when the column has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
}

/// Every error Clarion reports, with its HTTP status: the one table the JSON API, the
/// server functions and the pages all use. Serialized in `snake_case`
/// (`empty_question`, `not_found`, …); a code, once published, keeps its meaning.
///
/// 400 means the request breaks its documented schema (JSON, lengths, ranges); 422
/// means it keeps the schema but cannot be processed: it names something the round or
/// the answer does not have, or asks what Clarion does not answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// 400: the question is empty.
    EmptyQuestion,
    /// 400: the question is longer than Clarion reads.
    QuestionTooLong,
    /// 400: the body is not JSON.
    MalformedJson,
    /// 400: the body was sent without `Content-Type: application/json`.
    MissingJsonContentType,
    /// 400: the JSON is well formed but a field is missing or of the wrong type.
    InvalidJsonFields,
    /// 400: a query-string or path parameter is malformed or out of range.
    BadParameter,
    /// 400: `limit` is not a whole number in the documented range.
    BadLimit,
    /// 400: a verified question's name is empty or too long.
    BadName,
    /// 400: a verified question's phrasings are too long or too many.
    BadPhrasings,
    /// 400: any other bad input (sign-in fields, settings, tokens …).
    BadInput,
    /// 400: feedback's `rating` is not `up` or `down`.
    BadRating,
    /// 400: feedback's `reason` is not one of the listed reasons.
    BadReason,
    /// 400: feedback's comment is longer than 1,000 characters.
    CommentTooLong,
    /// 401: nobody is signed in (no session, or the token is unknown or expired).
    Unauthenticated,
    /// 403: needs an administrator account.
    Forbidden,
    /// 403: a state-changing request from another site.
    CrossOrigin,
    /// 404: unknown, expired or another user's id (all three look the same).
    NotFound,
    /// 409: the round was already answered or cancelled.
    Conflict,
    /// 413: the request body is over the limit.
    BodyTooLarge,
    /// 422: a clarification answer names a question the round does not have.
    UnknownQuestion,
    /// 422: a clarification answer names an option the question does not offer.
    UnknownOption,
    /// 422: two answers to one question.
    DuplicateAnswer,
    /// 422: a question of the round was left unanswered.
    MissingAnswer,
    /// 422: an answer is not one of the forms the question accepts.
    InvalidAnswer,
    /// 422: a typed value the question cannot use (not a number, not a known value …).
    InvalidCustomValue,
    /// 422: a revision names an assumption the answer does not have.
    UnknownAssumption,
    /// 422: a clinic scope that lists ids that are not clinic ids, or ids with "all clinics".
    BadScope,
    /// 422: not about the wound-care data.
    OutOfDomain,
    /// 422: a request to change data (Clarion only reads).
    DataChange,
    /// 422: no reading of the words was found.
    Unintelligible,
    /// 422: read, but not a question Clarion can compute.
    CannotAnswer,
    /// 422: only about clinics outside the asker's access.
    OutsideScope,
    /// 422: a reason or comment sent with thumbs up (they explain a thumbs down).
    ReasonWithThumbsUp,
    /// 422: a saved question whose definition no longer applies (a value gone from
    /// the data, a retired verified definition …); the message says what changed.
    NoLongerApplies,
    /// 422: an Analytics range of real dates that cannot be shown: it starts after it
    /// ends, spans more than 366 days, gives `until` without `from` or `days` with them,
    /// or lies outside the years 1970–9998.
    BadRange,
    /// 429: too many questions running at once for this user.
    TooManyQueries,
    /// 429: too many sign-in (or password) attempts: wait and try again.
    TooManyAttempts,
    /// 500: a fault on the server; logged with the reference the message shows.
    Internal,
    /// 503: the server is busy (e.g. checking other passwords): try again shortly.
    Busy,
    /// 504: the query ran past its time limit.
    QueryTimeout,
}

impl ErrorCode {
    /// The HTTP status this code is sent with.
    pub fn status(self) -> u16 {
        use ErrorCode::*;
        match self {
            EmptyQuestion
            | QuestionTooLong
            | MalformedJson
            | MissingJsonContentType
            | InvalidJsonFields
            | BadParameter
            | BadLimit
            | BadName
            | BadPhrasings
            | BadInput
            | BadRating
            | BadReason
            | CommentTooLong => 400,
            Unauthenticated => 401,
            Forbidden | CrossOrigin => 403,
            NotFound => 404,
            Conflict => 409,
            BodyTooLarge => 413,
            UnknownQuestion | UnknownOption | DuplicateAnswer | MissingAnswer | InvalidAnswer
            | InvalidCustomValue | UnknownAssumption | BadScope | OutOfDomain | DataChange
            | Unintelligible | CannotAnswer | OutsideScope | ReasonWithThumbsUp | NoLongerApplies
            | BadRange => 422,
            TooManyQueries | TooManyAttempts => 429,
            Internal => 500,
            Busy => 503,
            QueryTimeout => 504,
        }
    }
}

/// Every API error: a stable machine `code` and a message a person can act on. The
/// same value is what a server function's caller and a page see (as its message).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[error("{message}")]
pub struct ApiError {
    /// Stable machine code; its HTTP status is [`ErrorCode::status`].
    pub code: ErrorCode,
    /// What went wrong and what to do.
    pub message: String,
}

impl ApiError {
    /// An error with its code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
        }
    }

    /// A 400 with the generic `bad_input` code (the message says what is wrong).
    pub fn bad_input(message: impl Into<String>) -> Self {
        ApiError::new(ErrorCode::BadInput, message)
    }

    /// The 404 for unknown, expired and other users' ids alike.
    pub fn not_found() -> Self {
        ApiError::new(
            ErrorCode::NotFound,
            "That was not found. It may have expired or belong to someone else.",
        )
    }

    /// The 401: nobody is signed in.
    pub fn unauthenticated() -> Self {
        ApiError::new(
            ErrorCode::Unauthenticated,
            "You are signed out. Sign in again to continue.",
        )
    }

    /// The 403: only administrators may do this.
    pub fn forbidden() -> Self {
        ApiError::new(ErrorCode::Forbidden, "This needs an administrator account.")
    }

    /// The 500 a user sees: only a reference to quote; the cause is in the log.
    pub fn internal(reference: &str) -> Self {
        ApiError::new(
            ErrorCode::Internal,
            format!("Something went wrong on our side (reference {reference}). Please try again."),
        )
    }
}

/// `GET /api/v1/threads/{id}`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ThreadView {
    /// The thread's id.
    pub id: String,
    /// Its title (the first question).
    pub title: String,
    /// When it started (RFC 3339).
    pub created_at: String,
    /// Its messages, oldest first.
    pub messages: Vec<ThreadMessage>,
    /// Its answers, oldest first, each with the rows as they were shown (opening a
    /// thread runs nothing; running an answer again is an explicit action).
    #[serde(default)]
    pub answers: Vec<StoredAnswer>,
}

/// An answer of a stored thread: its history entry and the rows it showed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct StoredAnswer {
    /// The answer's history entry (question, SQL, assumptions, choices, when).
    pub history: HistoryItem,
    /// The rows as shown then (absent for answers recorded before rows were kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table: Option<ResultTable>,
}

/// One message of a thread.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ThreadMessage {
    /// `user` or `assistant`.
    pub role: String,
    /// The question, or the answer's restatement / the round's reason.
    pub body: String,
    /// `question`, `answer` or `clarification`.
    pub kind: String,
    /// The history entry of an answer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_id: Option<String>,
    /// The round of a clarification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clarification_id: Option<String>,
    /// When (RFC 3339).
    pub created_at: String,
}

/// One past question (F19).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct HistoryItem {
    /// The entry's id.
    pub id: String,
    /// Its thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
    /// The question.
    pub question: String,
    /// The SQL that ran (placeholders only).
    pub sql: String,
    /// The assumptions shown with the answer.
    pub assumptions: Vec<Assumption>,
    /// How many clarification answers and saved definitions applied.
    pub clarifications: u32,
    /// What the user chose in clarification rounds ("“serious”: Infected"), in order.
    #[serde(default)]
    pub chosen: Vec<String>,
    /// Rows returned.
    pub row_count: i64,
    /// How long it ran, milliseconds.
    pub duration_ms: i64,
    /// When (RFC 3339).
    pub created_at: String,
    /// `answered`, `refused` (Clarion declined it) or `failed` (time limit, fault).
    // Not read in the browser bundle (a thread only holds answered questions): skipped
    // there, so the wasm carries no decoder for it.
    #[serde(default)]
    #[cfg_attr(all(feature = "hydrate", not(feature = "ssr")), serde(skip))]
    pub status: HistoryStatus,
    /// What the user was told, for a refused or failed question.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(all(feature = "hydrate", not(feature = "ssr")), serde(skip))]
    pub message: Option<String>,
}

/// Which past questions History lists (`show=`): `answered` by default.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum HistoryShow {
    /// Every question: answered, refused and failed.
    All,
    /// Answered questions only.
    #[default]
    Answered,
    /// Questions Clarion declined.
    Refused,
    /// Questions that failed (time limit, fault).
    Failed,
}

impl HistoryShow {
    /// Reads `show=` (`all`, `answered`, `refused`, `failed`).
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "all" => Some(HistoryShow::All),
            "answered" => Some(HistoryShow::Answered),
            "refused" => Some(HistoryShow::Refused),
            "failed" => Some(HistoryShow::Failed),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            HistoryShow::All => "all",
            HistoryShow::Answered => "answered",
            HistoryShow::Refused => "refused",
            HistoryShow::Failed => "failed",
        }
    }
}

/// How a past question ended.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum HistoryStatus {
    /// Answered with rows.
    #[default]
    Answered,
    /// Clarion declined it (a data change, another subject, too little understood …).
    Refused,
    /// It failed (past its time limit, a fault).
    Failed,
}

/// Thumbs up or down on an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum FeedbackRating {
    Up,
    Down,
}

/// Why an answer was not right (thumbs down only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum FeedbackReason {
    /// It counted the wrong patients or wounds.
    WrongCohort,
    /// The figures are wrong.
    WrongNumbers,
    /// Clarion asked too many questions first.
    TooManyQuestions,
    /// Something else (say what in `comment`).
    Other,
}

/// `PUT /api/v1/history/{id}/feedback`: your vote on one of your answers (a later vote
/// replaces the earlier). `reason` and `comment` go with `down` only.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AnswerFeedbackRequest {
    /// `up` or `down` (anything else: 400 `bad_rating`).
    #[cfg_attr(feature = "ssr", schema(value_type = FeedbackRating))]
    pub rating: String,
    /// Why it was not right (anything else: 400 `bad_reason`; with `up`: 422
    /// `reason_with_thumbs_up`).
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(value_type = Option<FeedbackReason>))]
    pub reason: Option<String>,
    /// Free text, at most 1,000 characters (longer: 400 `comment_too_long`; with `up`:
    /// 422 `reason_with_thumbs_up`). Blank is the same as absent.
    #[serde(default)]
    #[cfg_attr(feature = "ssr", schema(max_length = 1000))]
    pub comment: Option<String>,
}

/// A stored vote on an answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AnswerFeedbackView {
    /// The answer's history entry.
    pub history_id: String,
    pub rating: FeedbackRating,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<FeedbackReason>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
    /// Preferences this vote counted as successful (a thumbs-up counts the answer's
    /// choices once; 0 when it had already counted, or for thumbs down).
    pub successes_counted: u64,
}

/// `PUT /api/v1/clarifications/{id}/feedback`: was this round's question helpful?
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ClarificationFeedbackRequest {
    pub helpful: bool,
}

/// A stored vote on a clarification round.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ClarificationFeedbackView {
    /// The round.
    pub clarification_id: String,
    pub helpful: bool,
}

/// One of the user's saved questions (F27): re-run with exactly the clarifications it
/// was answered with, never asking again.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct SavedQuestion {
    /// Its id (32 hex characters).
    pub id: String,
    /// The name its owner gave it.
    pub name: String,
    /// The question as asked.
    pub question: String,
    /// What was chosen in its clarification rounds ("serious: Infected"), in order.
    pub chosen: Vec<String>,
    /// Answered by this verified question ("Verified by … · name"), if one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verified: Option<String>,
    /// False when its definition no longer applies to today's data or model: running
    /// it is refused (`no_longer_applies`) and it should be asked afresh.
    pub applies: bool,
    /// What no longer applies, one sentence each (empty when `applies`).
    pub changes: Vec<String>,
    /// How many times it was run from the saved list.
    pub run_count: i64,
    /// When it was saved (RFC 3339).
    pub created_at: String,
    /// When it was last run (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_run_at: Option<String>,
}

/// `POST /api/v1/saved`: save one of your answers under a name.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SaveRequest {
    /// The answer to save (its `history_id`).
    pub history_id: String,
    /// Its name (1–120 characters, not only spaces or control characters, which are
    /// read as spaces).
    #[cfg_attr(
        feature = "ssr",
        schema(min_length = 1, max_length = 120, pattern = r"[^\s\x00-\x1f\x7f-\x9f]")
    )]
    pub name: String,
}

/// `PATCH /api/v1/saved/{id}`: rename a saved question.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct SavedRename {
    /// Its new name (1–120 characters, not only spaces or control characters, which are
    /// read as spaces).
    #[cfg_attr(
        feature = "ssr",
        schema(min_length = 1, max_length = 120, pattern = r"[^\s\x00-\x1f\x7f-\x9f]")
    )]
    pub name: String,
}

/// One of the user's API tokens, as listed in Settings (never the secret).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ApiTokenItem {
    /// Id (to revoke it).
    pub id: i64,
    /// What it is for ("nightly export").
    pub name: String,
    /// The first characters of the secret, to tell tokens apart.
    pub prefix: String,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When it stops working (RFC 3339); absent: until revoked or the password changes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// When it was last used (RFC 3339), if ever.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<String>,
}

/// A token just created: its listing and the secret, shown this once.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct CreatedApiToken {
    pub token: ApiTokenItem,
    /// The bearer secret; not stored, never shown again.
    pub secret: String,
}

/// One learned preference (F12, F13).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct PreferenceItem {
    /// Id (for `DELETE /api/v1/preferences/{id}`).
    pub id: i64,
    /// The ambiguity it answers (`term:large@wounds`).
    pub signature: String,
    /// The option chosen (absent for a custom value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option_id: Option<String>,
    /// How it reads ("large = larger than 25 cm²").
    pub label: String,
    /// How many times this answer was given.
    pub count: i64,
    /// Applied automatically without asking.
    pub remembered: bool,
    /// Offered as the preselected default (given 3 times or more).
    pub offered_as_default: bool,
    /// Applied without asking as "your usual definition" (the learning rule: given 3
    /// times or more, successful, confidence above 0.8).
    #[serde(default)]
    pub usual: bool,
    /// How many of those answers were successful (a thumbs-up, or kept without edits).
    #[serde(default)]
    pub successes: i64,
    /// This answer's share of the user's answers to the same question, in [0, 1].
    #[serde(default)]
    pub confidence: f64,
}

// =====================================================================================
// Analytics for administrators (F21) and the account section of Settings.
// =====================================================================================

/// The optional language model as administrators see it on the Settings page (F24).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct LanguageModelStatus {
    /// `CLARION_LLM_URL` is set on this server.
    pub configured: bool,
    /// The runtime switch (every replica).
    pub enabled: bool,
    /// The model name sent with every request.
    pub model: String,
    /// The endpoint without credentials, query string or key.
    pub endpoint: String,
    /// A key is configured (never shown).
    pub key_set: bool,
    /// The circuit breaker on this replica: `ok` or `paused` (`off` without a model).
    pub breaker: String,
    /// Failed calls in a row on this replica.
    pub consecutive_failures: u32,
    /// Seconds until calls resume, while paused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused_for_secs: Option<u64>,
}

/// The Analytics page: everyone's clarification figures over a window of days.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct Analytics {
    /// First day of the window (ISO date, UTC).
    pub since: String,
    /// Last day of the window (ISO date, UTC).
    pub until: String,
    /// The whole window.
    pub totals: AnalyticsDay,
    /// One entry per day, oldest first (days without activity included, as zeros).
    pub days: Vec<AnalyticsDay>,
    /// The most frequently asked ambiguities, most asked first.
    pub terms: Vec<AnalyticsTerm>,
    /// Calls to the optional language model (F24), per day with calls, oldest first.
    #[serde(default)]
    pub model_calls: Vec<ModelCallsDay>,
    /// The verified questions in force, with how often each has answered a question.
    #[serde(default)]
    pub verified: Vec<VerifiedUse>,
    /// Feedback given in the window (issue 15, point 3).
    #[serde(default)]
    pub feedback: FeedbackSummary,
    /// Questions saved in the window (F27), for the saved-question rate.
    #[serde(default)]
    pub saved: i64,
}

impl Analytics {
    /// Saved questions over answers in the window.
    pub fn saved_rate(&self) -> Option<f64> {
        ratio(
            self.saved,
            self.totals.auto_resolved + self.totals.answered_after_round,
        )
    }
}

/// Feedback figures over the Analytics window.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct FeedbackSummary {
    /// Answers voted thumbs up.
    pub thumbs_up: i64,
    /// Answers voted thumbs down.
    pub thumbs_down: i64,
    /// Thumbs-down reasons with how often each was given, in a fixed order.
    pub reasons: Vec<(FeedbackReason, i64)>,
    /// Clarification questions voted helpful.
    pub helpful_yes: i64,
    /// Clarification questions voted not helpful.
    pub helpful_no: i64,
}

/// A verified question in force and its use, for Analytics.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct VerifiedUse {
    /// Its name.
    pub name: String,
    /// The administrator who verified it.
    pub verified_by: String,
    /// Questions it has answered since it was verified.
    pub uses: i64,
    /// Thumbs up on the answers it gave.
    #[serde(default)]
    pub thumbs_up: i64,
    /// Thumbs down on the answers it gave.
    #[serde(default)]
    pub thumbs_down: i64,
}

/// The language model's calls on one day (UTC): never what was sent or received.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct ModelCallsDay {
    /// ISO date (UTC).
    pub date: String,
    /// Calls made.
    pub calls: i64,
    /// Calls that failed (time-out, HTTP error, unusable reply).
    pub failures: i64,
    /// Tokens reported by the endpoint.
    pub tokens: i64,
    /// Mean latency, milliseconds.
    pub mean_latency_ms: i64,
}

/// The counts of one day (or of the whole window in [`Analytics::totals`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AnalyticsDay {
    /// ISO date (UTC); the last day for totals.
    pub date: String,
    /// Questions asked: clarified ones plus those answered directly.
    pub questions: i64,
    /// Questions that got a clarification panel.
    pub clarified: i64,
    /// Answers that needed no clarification round.
    pub auto_resolved: i64,
    /// Of those: resolved by the user's remembered or learned ("usual") definition
    /// instead of being asked again.
    #[serde(default)]
    pub auto_resolved_by_preference: i64,
    /// Answers that came after a clarification round.
    pub answered_after_round: i64,
    /// Clarification rounds shown (first and later rounds).
    pub rounds: i64,
    /// Rounds answered.
    pub rounds_answered: i64,
    /// Rounds cancelled or left until they expired.
    pub rounds_abandoned: i64,
    /// Rounds that can still be answered.
    pub rounds_open: i64,
    /// Answers whose choices or assumptions were revised afterwards (the rest were
    /// accepted without edit).
    #[serde(default)]
    pub answers_revised: i64,
    /// Rounds that asked an ambiguity the same user had been asked within the 30 days
    /// before.
    #[serde(default)]
    pub repeat_rounds: i64,
    /// Answers whose follow-up suggestion pills were recorded.
    #[serde(default)]
    pub pill_answers: i64,
    /// Of those: answers that showed at least two pills.
    #[serde(default)]
    pub pill_answers_two_plus: i64,
    /// Follow-up suggestion pills shown (revisions included).
    #[serde(default)]
    pub pills_shown: i64,
    /// Questions sent by clicking a pill.
    #[serde(default)]
    pub pills_clicked: i64,
    /// Median time from question to final answer, milliseconds (no answers: absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ms: Option<i64>,
    /// 90th percentile of the time from question to final answer, milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub p90_ms: Option<i64>,
}

impl AnalyticsDay {
    /// Share of questions that needed a clarification panel, when any were asked.
    pub fn clarification_rate(&self) -> Option<f64> {
        ratio(self.clarified, self.questions)
    }

    /// Share of finished rounds left unanswered (open rounds not counted yet).
    pub fn abandonment_rate(&self) -> Option<f64> {
        ratio(
            self.rounds_abandoned,
            self.rounds_answered + self.rounds_abandoned,
        )
    }

    /// Share of answers that needed no clarification round.
    pub fn auto_resolution_rate(&self) -> Option<f64> {
        ratio(self.auto_resolved, self.auto_resolved + self.answered_after_round)
    }

    /// Share of answers not revised afterwards.
    pub fn accept_without_edit_rate(&self) -> Option<f64> {
        let answers = self.auto_resolved + self.answered_after_round;
        ratio(answers - self.answers_revised, answers)
    }

    /// Share of rounds that asked the same user about an ambiguity again within 30 days.
    pub fn repeat_clarification_rate(&self) -> Option<f64> {
        ratio(self.repeat_rounds, self.rounds)
    }

    /// Share of answers (whose pills were recorded) that showed at least two pills.
    pub fn pill_coverage(&self) -> Option<f64> {
        ratio(self.pill_answers_two_plus, self.pill_answers)
    }

    /// Share of the pills shown that were clicked.
    pub fn pill_click_through(&self) -> Option<f64> {
        ratio(self.pills_clicked, self.pills_shown)
    }
}

fn ratio(part: i64, whole: i64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

/// One ambiguous term and what people chose for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AnalyticsTerm {
    /// The ambiguity id (`term:large@wounds`).
    pub id: String,
    /// How it reads ("large").
    pub phrase: String,
    /// What it was about ("Wound"), empty when unknown.
    pub applies_to: String,
    /// Rounds that asked it.
    pub asked: i64,
    /// What people chose, most frequent first.
    pub choices: Vec<AnalyticsChoice>,
}

/// One choice and how often it was made.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ssr", derive(utoipa::ToSchema))]
pub struct AnalyticsChoice {
    /// The option's label, "A custom value" or "I don't know".
    pub label: String,
    /// True for Clarion's best guess.
    pub default: bool,
    pub count: i64,
    /// Of `count`: choices that led to an answer.
    #[serde(default)]
    pub answers: i64,
    /// Of `answers`: answers that got a thumbs-up or a follow-up question and are not
    /// voted thumbs down (what learning counts as a success).
    #[serde(default)]
    pub successes: i64,
}

impl AnalyticsChoice {
    /// Share of this choice's answers that succeeded.
    pub fn success_rate(&self) -> Option<f64> {
        ratio(self.successes, self.answers)
    }
}

/// Which days an Analytics report covers (UTC): the last `days` days (1–366, 30 by
/// default), or `from`–`until` (ISO dates, both included, at most 366 days; `until`
/// defaults to today). `days` and `from`/`until` do not go together.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalyticsQuery {
    /// The last N days, today included (1–366).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub days: Option<u32>,
    /// First day (YYYY-MM-DD, UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Last day (YYYY-MM-DD, UTC), included; today when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
}

#[cfg(test)]
mod analytics_tests {
    use super::*;

    #[test]
    fn rates_are_absent_without_a_denominator_and_shares_otherwise() {
        let none = AnalyticsDay::default();
        assert_eq!(none.clarification_rate(), None);
        assert_eq!(none.abandonment_rate(), None);
        assert_eq!(none.auto_resolution_rate(), None);
        let d = AnalyticsDay {
            questions: 4,
            clarified: 1,
            auto_resolved: 3,
            answered_after_round: 1,
            rounds: 2,
            rounds_answered: 1,
            rounds_abandoned: 1,
            rounds_open: 0,
            ..AnalyticsDay::default()
        };
        assert_eq!(d.clarification_rate(), Some(0.25));
        assert_eq!(d.abandonment_rate(), Some(0.5));
        assert_eq!(d.auto_resolution_rate(), Some(0.75));
        let mut a = Analytics {
            since: String::new(),
            until: String::new(),
            totals: AnalyticsDay::default(),
            days: Vec::new(),
            terms: Vec::new(),
            model_calls: Vec::new(),
            verified: Vec::new(),
            feedback: FeedbackSummary::default(),
            saved: 1,
        };
        assert_eq!(a.saved_rate(), None, "no answers, no rate");
        assert_eq!(none.accept_without_edit_rate(), None);
        assert_eq!(none.pill_click_through(), None);
        let e = AnalyticsDay {
            auto_resolved: 3,
            answered_after_round: 1,
            answers_revised: 1,
            rounds: 4,
            repeat_rounds: 1,
            pill_answers: 2,
            pill_answers_two_plus: 1,
            pills_shown: 5,
            pills_clicked: 1,
            ..AnalyticsDay::default()
        };
        assert_eq!(e.accept_without_edit_rate(), Some(0.75), "3 of 4 answers kept");
        assert_eq!(e.repeat_clarification_rate(), Some(0.25));
        assert_eq!(e.pill_coverage(), Some(0.5));
        assert_eq!(e.pill_click_through(), Some(0.2));
        let c = AnalyticsChoice {
            label: "Infected".into(),
            default: true,
            count: 3,
            answers: 2,
            successes: 1,
        };
        assert_eq!(
            c.success_rate(),
            Some(0.5),
            "over the answers it led to, not the choices"
        );
        assert_eq!(AnalyticsChoice { answers: 0, ..c }.success_rate(), None);
        a.totals = d;
        assert_eq!(a.saved_rate(), Some(0.25), "1 saved of 4 answers");
    }
}
