//! The semantic model's types: what the data means, as plain serde data.
//!
//! A [`SemanticModel`] is read from (and written to) a TOML file; the format is
//! described in `server/docs/semantic-model.md`. Everything the engine may apply to a
//! question — a dictionary option, a custom value, a remembered choice, an LLM proposal —
//! is a typed [`Constraint`] or [`PlanChange`] over the model's names. There is no SQL
//! text anywhere in these types: turning them into bound-parameter SQL is the
//! renderer's job (Principle 1).
//!
//! This module must not do I/O, validation or rendering: it is data plus the lookups
//! the engine needs (in `lookup.rs`). Validation lives in `validate.rs`.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::sync::OnceLock;

use super::lookup::Index;

/// A whole semantic model: one file, validated as a unit.
///
/// Field order matters for serialisation: TOML wants plain values before tables.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SemanticModel {
    /// Name, version and description of the model.
    pub model: ModelInfo,
    /// The things questions are about (tables), with their attributes (columns).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub entities: Vec<Entity>,
    /// Foreign-key paths between entities.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub joins: Vec<Join>,
    /// Named aggregates ("number of wounds", "healing rate").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measures: Vec<Measure>,
    /// Date attributes questions can be windowed and grouped by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub time_dimensions: Vec<TimeDimension>,
    /// Groups of entities for follow-up suggestions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub areas: Vec<SchemaArea>,
    /// The ambiguity dictionary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub terms: Vec<Term>,
    /// Lookup tables, built on first use (never serialised).
    #[serde(skip)]
    pub(crate) index: OnceLock<Index>,
}

impl PartialEq for SemanticModel {
    fn eq(&self, other: &Self) -> bool {
        self.model == other.model
            && self.entities == other.entities
            && self.joins == other.joins
            && self.measures == other.measures
            && self.time_dimensions == other.time_dimensions
            && self.areas == other.areas
            && self.terms == other.terms
    }
}

/// The `[model]` header of a model file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelInfo {
    /// Short machine name, e.g. `wound_care`.
    pub name: String,
    /// Free-form version of the model's content.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// What data the model describes.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

/// A thing questions are about, backed by one table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entity {
    /// Model name, used in qualified references (`wounds.area`).
    pub name: String,
    /// The table in the clinical database.
    pub table: String,
    /// The attribute holding the primary key.
    pub key: String,
    /// Singular human label ("Wound").
    pub label: String,
    /// Words that mean this entity ("ulcer", "sores").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synonyms: Vec<String>,
    /// What one row is, for the glossary.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The attribute that names a row for people (a clinic's name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub display_attribute: Option<String>,
    /// Attributes of this entity shown after the key and the display attribute when its
    /// rows are listed ("list open wounds" → etiology, location, status, …).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub list_attributes: Vec<String>,
    /// The time dimension used when a question gives a window but no date column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_time_dimension: Option<String>,
    /// Dictionary terms offered when a word said about these records is unknown
    /// ("crusty wounds": infected, necrotic, sloughy …), after the terms spelled like it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub unknown_word_terms: Vec<String>,
    /// The entity's attributes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<Attribute>,
}

/// One property of an entity: a column, or a typed derivation from other attributes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Attribute {
    /// Name inside its entity (qualified as `entity.name` elsewhere).
    pub name: String,
    /// The column it reads; exactly one of `column` and `derived` is set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
    /// Value type.
    #[serde(rename = "type")]
    pub ty: AttributeType,
    /// Unit code (`cm`, `cm2`, `days`, `years`, `kg/m2`, `points`, `percent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Words that mean this attribute.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synonyms: Vec<String>,
    /// What it holds, for the glossary.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// How the engine should treat it (key, foreign key, display name, plain attribute).
    #[serde(default, skip_serializing_if = "AttributeRole::is_default")]
    pub role: AttributeRole,
    /// Personal data: never offered as a grouping or shown in previews.
    #[serde(default, skip_serializing_if = "is_false")]
    pub pii: bool,
    /// Confidence weight in (0, 1]; below 1 pushes a guess about this field down a tier.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub weight: f64,
    /// The typed derivation, when the attribute is not a plain column.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub derived: Option<Derived>,
    /// The column never holds NULL (declared `NOT NULL`; filled from the schema when a
    /// model is checked against one). Lets the renderer order by it without `NULLS LAST`,
    /// which keeps an index on it usable.
    #[serde(default, skip_serializing_if = "is_false")]
    pub not_null: bool,
    /// The values it may take (static list, or read from the database).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed: Option<AllowedValues>,
}

/// The value type of an attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttributeType {
    /// Free or enumerated text.
    Text,
    /// Whole numbers.
    Integer,
    /// Floating-point numbers.
    Real,
    /// True or false.
    Boolean,
    /// A calendar date (ISO `YYYY-MM-DD`).
    Date,
}

impl AttributeType {
    /// Integer or real.
    pub fn is_numeric(self) -> bool {
        matches!(self, AttributeType::Integer | AttributeType::Real)
    }

    /// Can be compared with `<`/`>` (numbers and dates).
    pub fn is_ordered(self) -> bool {
        self.is_numeric() || self == AttributeType::Date
    }

    /// The lowercase name used in the file format.
    pub fn as_str(self) -> &'static str {
        match self {
            AttributeType::Text => "text",
            AttributeType::Integer => "integer",
            AttributeType::Real => "real",
            AttributeType::Boolean => "boolean",
            AttributeType::Date => "date",
        }
    }
}

impl fmt::Display for AttributeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the engine treats an attribute.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttributeRole {
    /// An ordinary attribute: filterable, groupable, aggregatable by type.
    #[default]
    Attribute,
    /// The primary key: never aggregated or shown as a value.
    Key,
    /// A foreign key: used for joins, never aggregated.
    ForeignKey,
    /// The human name of a row (clinic name).
    Label,
    /// An external identifier (record number): matched exactly, never aggregated.
    Identifier,
}

impl AttributeRole {
    fn is_default(&self) -> bool {
        *self == AttributeRole::Attribute
    }
}

/// A typed derivation: how an attribute that is not a column is computed.
///
/// Names without a dot are attributes of the same entity; qualified names
/// (`assessments.area`) are attributes of a related entity reached through the joins.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub enum Derived {
    /// Whole days from `from` to `to`; when `to` is null, `if_null` is used instead.
    /// Type: integer.
    DaysBetween {
        /// Start date (same-entity attribute or `today`).
        from: DateOperand,
        /// End date (same-entity attribute or `today`).
        to: DateOperand,
        /// Replacement for a null `to` (e.g. `today` for still-open wounds).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        if_null: Option<DateOperand>,
    },
    /// Whole years from `from` to `to` (age). Type: integer.
    YearsBetween {
        /// Start date.
        from: DateOperand,
        /// End date.
        to: DateOperand,
    },
    /// The value of a related entity's attribute on its most recent row. Type: that
    /// attribute's type.
    Latest {
        /// Qualified attribute of a related entity.
        attribute: String,
        /// Qualified date ordering the rows; default: the related entity's default time
        /// dimension.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// The value of a related entity's attribute on its earliest row.
    First {
        /// Qualified attribute of a related entity.
        attribute: String,
        /// Qualified date ordering the rows (default as for `latest`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        by: Option<String>,
    },
    /// How many rows of a related entity belong to this row. Type: integer.
    CountRelated {
        /// The related entity.
        entity: String,
    },
    /// `(to - from) / from * 100` between two numeric attributes of the same entity.
    /// Negative means a reduction. Type: real.
    PercentChange {
        /// Baseline attribute.
        from: String,
        /// Current attribute.
        to: String,
    },
    /// `to - from` between two numeric attributes of the same entity ("pain now higher
    /// than at the first visit": above 0). Type: that of the two attributes.
    Difference {
        /// Baseline attribute.
        from: String,
        /// Current attribute.
        to: String,
    },
}

/// A date operand of a derivation: a same-entity attribute or the current date.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "String", into = "String")]
pub enum DateOperand {
    /// The date of the question (`now`, given to the engine).
    Today,
    /// A date attribute of the same entity.
    Attribute(String),
}

impl From<String> for DateOperand {
    fn from(s: String) -> Self {
        if s == "today" {
            DateOperand::Today
        } else {
            DateOperand::Attribute(s)
        }
    }
}

impl From<DateOperand> for String {
    fn from(d: DateOperand) -> Self {
        match d {
            DateOperand::Today => "today".to_owned(),
            DateOperand::Attribute(a) => a,
        }
    }
}

/// Where an attribute's allowed values come from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "snake_case", deny_unknown_fields)]
pub enum AllowedValues {
    /// A fixed list written in the model.
    Static {
        /// The values (at least one).
        values: Vec<AllowedValue>,
    },
    /// `SELECT DISTINCT` from the database, cached (F17).
    Database {
        /// Labels and synonyms for values known in advance; the database may hold more.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        known: Vec<AllowedValue>,
    },
}

impl AllowedValues {
    /// The values written in the model (all of them for `static`, the known ones for
    /// `database`).
    pub fn listed(&self) -> &[AllowedValue] {
        match self {
            AllowedValues::Static { values } => values,
            AllowedValues::Database { known } => known,
        }
    }

    /// The human label of a listed value (`venous_leg_ulcer` → "Venous leg ulcer"), when
    /// the model gives it one.
    pub fn label_for(&self, v: &Value) -> Option<&str> {
        self.listed()
            .iter()
            .find(|x| x.value == *v)
            .map(|x| x.label.as_str())
            .filter(|l| !l.is_empty())
    }

    /// [`AllowedValues::label_for`] of a text value, without making a [`Value`] of it
    /// (an answer's table looks up every coded cell).
    pub fn label_for_text(&self, code: &str) -> Option<&str> {
        self.listed()
            .iter()
            .find(|x| matches!(&x.value, Value::Text(t) if t == code))
            .map(|x| x.label.as_str())
            .filter(|l| !l.is_empty())
    }

    /// True when the list in the model is the complete set.
    pub fn is_static(&self) -> bool {
        matches!(self, AllowedValues::Static { .. })
    }
}

/// One allowed value with the words people use for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllowedValue {
    /// The stored value.
    pub value: Value,
    /// Human label.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub label: String,
    /// Other words for it ("DFU").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synonyms: Vec<String>,
}

/// A literal value in a constraint or an allowed-values list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Value {
    /// `true` / `false`.
    Bool(bool),
    /// A whole number.
    Integer(i64),
    /// A floating-point number.
    Real(f64),
    /// Text, or an ISO date for date attributes.
    Text(String),
}

impl Value {
    /// The value as a number, when it is one.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Integer(i) => Some(*i as f64),
            Value::Real(r) => Some(*r),
            _ => None,
        }
    }

    /// The value as text, when it is text.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Text(s) => Some(s),
            _ => None,
        }
    }

    /// What kind of literal this is, for messages.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Bool(_) => "a boolean",
            Value::Integer(_) => "an integer",
            Value::Real(_) => "a real number",
            Value::Text(_) => "text",
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(b) => write!(f, "{b}"),
            Value::Integer(i) => write!(f, "{i}"),
            Value::Real(r) => write!(f, "{r}"),
            Value::Text(s) => write!(f, "\"{s}\""),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::Text(s.to_owned())
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::Integer(i)
    }
}

impl From<f64> for Value {
    fn from(r: f64) -> Self {
        Value::Real(r)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}

/// A foreign-key path: `from` (many side) references `to` (one side).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Join {
    /// Qualified attribute holding the reference (`wounds.patient_id`).
    pub from: String,
    /// Qualified attribute referenced (`patients.id`).
    pub to: String,
    /// What the path means, for explanations ("the wound's patient").
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
}

impl Join {
    /// The entity on the `from` side.
    pub fn from_entity(&self) -> &str {
        split_qualified(&self.from).map_or("", |(e, _)| e)
    }

    /// The entity on the `to` side.
    pub fn to_entity(&self) -> &str {
        split_qualified(&self.to).map_or("", |(e, _)| e)
    }
}

/// A named aggregate over one entity's rows.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Measure {
    /// Model name (`healing_rate`).
    pub name: String,
    /// Human label ("Healing rate").
    pub label: String,
    /// The entity whose rows are aggregated.
    pub entity: String,
    /// The aggregation.
    pub agg: MeasureAgg,
    /// Qualified attribute aggregated (not for `count`/`share`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attribute: Option<String>,
    /// Unit of the result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Words that mean this measure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synonyms: Vec<String>,
    /// What it computes, for the glossary.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Rows kept before aggregating (`open_wound_count` = count where status = open).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filter: Option<Constraint>,
    /// For `share`: the rows counted in the numerator.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<Constraint>,
}

/// How a measure aggregates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MeasureAgg {
    /// Number of rows.
    Count,
    /// Number of distinct values of `attribute`.
    CountDistinct,
    /// Sum of a numeric attribute.
    Sum,
    /// Mean of a numeric attribute.
    Avg,
    /// Median of a numeric attribute.
    Median,
    /// Smallest value (numbers, dates).
    Min,
    /// Largest value (numbers, dates).
    Max,
    /// Percentage of rows matching `condition`.
    Share,
}

impl MeasureAgg {
    /// The name used in the file format.
    pub fn as_str(self) -> &'static str {
        match self {
            MeasureAgg::Count => "count",
            MeasureAgg::CountDistinct => "count_distinct",
            MeasureAgg::Sum => "sum",
            MeasureAgg::Avg => "avg",
            MeasureAgg::Median => "median",
            MeasureAgg::Min => "min",
            MeasureAgg::Max => "max",
            MeasureAgg::Share => "share",
        }
    }
}

/// A date attribute questions can be windowed ("last month") and grouped ("by week") by.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimeDimension {
    /// Model name (`onset`).
    pub name: String,
    /// Qualified date attribute.
    pub attribute: String,
    /// Human label ("Wound onset").
    pub label: String,
    /// Words that point at this date ("started", "began").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub synonyms: Vec<String>,
    /// Grains it may be grouped by; empty means all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grains: Vec<Grain>,
}

/// A time grain for grouping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Grain {
    /// Calendar day.
    Day,
    /// ISO week.
    Week,
    /// Calendar month.
    Month,
    /// Calendar quarter.
    Quarter,
    /// Calendar year.
    Year,
}

impl Grain {
    /// The name used in the file format.
    pub fn as_str(self) -> &'static str {
        match self {
            Grain::Day => "day",
            Grain::Week => "week",
            Grain::Month => "month",
            Grain::Quarter => "quarter",
            Grain::Year => "year",
        }
    }
}

/// A region of the schema, used to suggest follow-ups (F18).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SchemaArea {
    /// Model name (`wounds`).
    pub name: String,
    /// Human label ("Wounds").
    pub label: String,
    /// Entities that belong to the area.
    pub entities: Vec<String>,
    /// Qualified attributes worth suggesting a breakdown or filter by.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attributes: Vec<String>,
    /// Measures worth suggesting.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measures: Vec<String>,
    /// Areas a cross-area suggestion may lead to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<String>,
    /// Follow-up suggestion templates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub suggestions: Vec<Suggestion>,
}

/// A follow-up suggestion: the text becomes the next question when clicked.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suggestion {
    /// The question text ("Break down by clinic").
    pub text: String,
    /// What kind of follow-up it is, so suggestions can be varied.
    pub kind: SuggestionKind,
}

/// The kind of a follow-up suggestion.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SuggestionKind {
    /// Group the same result by a dimension.
    Breakdown,
    /// Narrow the same result.
    Filter,
    /// Change the time window.
    Time,
    /// Compare groups.
    Compare,
    /// Go into a related entity.
    Drill,
    /// Relax a constraint (for empty results).
    Relax,
}

/// An entry of the ambiguity dictionary: a word that means different things.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Term {
    /// Stable id (preferences and analytics refer to it).
    pub id: String,
    /// The word or phrase as users write it.
    pub phrase: String,
    /// Other spellings and words with the same options.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub variants: Vec<String>,
    /// What kind of word it is.
    pub kind: TermKind,
    /// Entities the word is ambiguous for.
    pub applies_to: Vec<String>,
    /// The question asked, hypothesis-first.
    pub question: String,
    /// A wrong guess here changes the cohort (clarify rather than assume).
    #[serde(default, skip_serializing_if = "is_false")]
    pub critical: bool,
    /// Why the word is ambiguous, for the glossary.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The published definition the default follows ("WHO BMI classification"), when
    /// there is one: a word that decides the cohort is then answered with its default
    /// as an assumption badge instead of asked (see `engine::ambiguity`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub standard: Option<String>,
    /// 2–5 typed interpretations, exactly one of them the default.
    pub options: Vec<TermOption>,
}

/// What kind of word a term is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TermKind {
    /// Size ("large", "tiny").
    Size,
    /// Severity ("serious", "mild").
    Severity,
    /// Time ("recent", "old").
    Time,
    /// Status ("active", "current").
    Status,
    /// Trajectory ("improving", "stalled").
    Trend,
    /// A threshold without a number ("high pain").
    Threshold,
    /// How often ("frequent").
    Frequency,
    /// How many ("multiple").
    Quantity,
    /// Quality of tissue or outcome ("necrotic", "good").
    Quality,
    /// Risk ("at risk").
    Risk,
    /// Who a patient is ("elderly", "obese").
    Demographic,
    /// Ranking ("best", "busiest").
    Ranking,
    /// A word matching values of different attributes ("diabetic").
    Value,
    /// A word naming different columns ("date", "size"); options are `choose_attribute`.
    Column,
    /// Which aggregation ("average").
    Aggregation,
    /// Which measure ("rate").
    Measure,
}

/// One interpretation of a term: a typed constraint, a typed plan change, or both.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TermOption {
    /// Stable id within the term.
    pub id: String,
    /// Short label shown on the radio button.
    pub label: String,
    /// One line saying exactly what is counted.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// The best guess (exactly one per term).
    #[serde(default, skip_serializing_if = "is_false")]
    pub default: bool,
    /// Rows kept when this option is chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constraint: Option<Constraint>,
    /// Plan change applied when this option is chosen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<PlanChange>,
    /// The rows that settle this reading: a question already limited to rows where this
    /// holds ("pressure injuries", `etiology = pressure_injury`, for the pressure-injury
    /// stage) takes the option without asking — asking would ask what it already says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub when: Option<Constraint>,
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CompareOp {
    /// `>`
    Gt,
    /// `>=`
    Gte,
    /// `<`
    Lt,
    /// `<=`
    Lte,
    /// `=`
    Eq,
    /// `<>`
    Ne,
}

impl CompareOp {
    /// The name used in the file format.
    pub fn as_str(self) -> &'static str {
        match self {
            CompareOp::Gt => "gt",
            CompareOp::Gte => "gte",
            CompareOp::Lt => "lt",
            CompareOp::Lte => "lte",
            CompareOp::Eq => "eq",
            CompareOp::Ne => "ne",
        }
    }

    /// The operator that holds exactly where this one does not (`eq` ↔ `ne`, `gt` ↔ `lte`,
    /// `gte` ↔ `lt`).
    pub fn negated(self) -> CompareOp {
        match self {
            CompareOp::Eq => CompareOp::Ne,
            CompareOp::Ne => CompareOp::Eq,
            CompareOp::Gt => CompareOp::Lte,
            CompareOp::Gte => CompareOp::Lt,
            CompareOp::Lt => CompareOp::Gte,
            CompareOp::Lte => CompareOp::Gt,
        }
    }

    /// True for the ordering operators (`gt`, `gte`, `lt`, `lte`).
    pub fn is_ordering(self) -> bool {
        !matches!(self, CompareOp::Eq | CompareOp::Ne)
    }

    /// The operator's symbol, for restatements.
    pub fn symbol(self) -> &'static str {
        match self {
            CompareOp::Gt => ">",
            CompareOp::Gte => "≥",
            CompareOp::Lt => "<",
            CompareOp::Lte => "≤",
            CompareOp::Eq => "=",
            CompareOp::Ne => "≠",
        }
    }

    /// Applies the operator to two numbers (for previews and tests).
    pub fn holds(self, left: f64, right: f64) -> bool {
        match self {
            CompareOp::Gt => left > right,
            CompareOp::Gte => left >= right,
            CompareOp::Lt => left < right,
            CompareOp::Lte => left <= right,
            CompareOp::Eq => left == right,
            CompareOp::Ne => left != right,
        }
    }
}

/// A length of time ("30 days", "4 weeks").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Span {
    /// How many units (at least 1).
    pub n: u32,
    /// The unit.
    pub unit: SpanUnit,
}

impl Span {
    /// A span of `n` days.
    pub fn days(n: u32) -> Self {
        Span {
            n,
            unit: SpanUnit::Days,
        }
    }

    /// The span in days, counting a month as 30 and a year as 365 (for previews and
    /// ordering spans; the renderer uses calendar arithmetic).
    pub fn approx_days(self) -> u32 {
        let per = match self.unit {
            SpanUnit::Days => 1,
            SpanUnit::Weeks => 7,
            SpanUnit::Months => 30,
            SpanUnit::Years => 365,
        };
        self.n.saturating_mul(per)
    }
}

/// The unit of a [`Span`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SpanUnit {
    /// Days.
    Days,
    /// Weeks.
    Weeks,
    /// Calendar months.
    Months,
    /// Calendar years.
    Years,
}

/// A typed filter over the model — never SQL text.
///
/// Attributes are qualified (`wounds.latest_area`). When the attribute belongs to an
/// entity other than the question's, the renderer follows the join path; across a
/// one-to-many path the constraint means "at least one related row matches" (EXISTS),
/// and all members of an `all` that concern the same related entity must match on the
/// same related row.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Constraint {
    /// `attribute op value`, e.g. latest area > 25 cm².
    Compare {
        /// Qualified attribute.
        attribute: String,
        /// Operator.
        op: CompareOp,
        /// Literal of the attribute's type (ISO text for dates).
        value: Value,
        /// Unit of `value`; must be the attribute's unit when given.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
    },
    /// `min <= attribute <= max`.
    Between {
        /// Qualified attribute (number or date).
        attribute: String,
        /// Lower bound, inclusive.
        min: Value,
        /// Upper bound, inclusive.
        max: Value,
        /// Unit of the bounds.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
    },
    /// The attribute is one of `values`.
    InSet {
        /// Qualified attribute.
        attribute: String,
        /// At least one literal of the attribute's type.
        values: Vec<Value>,
    },
    /// The attribute is null (e.g. no healed date).
    IsNull {
        /// Qualified attribute.
        attribute: String,
    },
    /// The attribute is not null.
    NotNull {
        /// Qualified attribute.
        attribute: String,
    },
    /// The date lies within the last `last` before `now`.
    TimeWindow {
        /// Time dimension; none means the question entity's default time dimension.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dimension: Option<String>,
        /// How far back.
        last: Span,
    },
    /// The date lies more than `age` before `now`.
    OlderThan {
        /// Time dimension; none means the question entity's default time dimension.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dimension: Option<String>,
        /// How long ago at least.
        age: Span,
    },
    /// Relative change of a measured attribute over a window, per row of `per`:
    /// `(latest − baseline) / baseline × 100 op pct`, where the baseline is the last
    /// value on or before the window's start (or, without one, the first value inside
    /// the window). Rows with fewer than two values do not match.
    /// Area reduction ≥ 40 % over 4 weeks is `op = "lte", pct = -40`.
    Change {
        /// Qualified numeric attribute of a dated entity (`assessments.area`).
        attribute: String,
        /// The entity whose rows are compared (`wounds`).
        per: String,
        /// The window.
        over: Span,
        /// Operator applied to the signed percentage.
        op: CompareOp,
        /// Threshold, in percent (negative = reduction).
        pct: f64,
    },
    /// How many related rows each row has (optionally within a window):
    /// at least 4 assessments in the last 30 days. Rows without related rows count 0.
    RelatedCount {
        /// The counting entity; none means the question's entity.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        per: Option<String>,
        /// The entity counted.
        related: String,
        /// Operator.
        op: CompareOp,
        /// Threshold.
        value: u32,
        /// Only related rows whose default time dimension lies within this span.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        within: Option<Span>,
        /// Only related rows that match this constraint on their own attributes ("more
        /// than 150 *open* wounds").
        #[serde(default, skip_serializing_if = "Option::is_none")]
        condition: Option<Box<Constraint>>,
    },
    /// Every member holds.
    All {
        /// Members (at least one).
        of: Vec<Constraint>,
    },
    /// At least one member holds.
    Any {
        /// Members (at least one).
        of: Vec<Constraint>,
    },
    /// The member does not hold.
    Not {
        /// The negated constraint.
        of: Box<Constraint>,
    },
}

impl Constraint {
    /// The same condition on another attribute (`assessments.exudate` → `wounds.latest_exudate`):
    /// a comparison, range or set whose attribute `to` maps, or `not` of one. `None` for
    /// any other shape or when `to` has no counterpart.
    pub fn on_attribute(&self, to: &dyn Fn(&str) -> Option<String>) -> Option<Constraint> {
        Some(match self {
            Constraint::Compare {
                attribute,
                op,
                value,
                unit,
            } => Constraint::Compare {
                attribute: to(attribute)?,
                op: *op,
                value: value.clone(),
                unit: unit.clone(),
            },
            Constraint::Between {
                attribute,
                min,
                max,
                unit,
            } => Constraint::Between {
                attribute: to(attribute)?,
                min: min.clone(),
                max: max.clone(),
                unit: unit.clone(),
            },
            Constraint::InSet { attribute, values } => Constraint::InSet {
                attribute: to(attribute)?,
                values: values.clone(),
            },
            Constraint::Not { of } => Constraint::Not {
                of: Box::new(of.on_attribute(to)?),
            },
            _ => return None,
        })
    }

    /// Every qualified attribute the constraint reads (not time dimensions or entities).
    pub fn attributes(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.visit(&mut |c| match c {
            Constraint::Compare { attribute, .. }
            | Constraint::Between { attribute, .. }
            | Constraint::InSet { attribute, .. }
            | Constraint::IsNull { attribute }
            | Constraint::NotNull { attribute }
            | Constraint::Change { attribute, .. } => out.push(attribute.as_str()),
            _ => {}
        });
        out
    }

    /// Calls `f` on this constraint and every nested one, depth first.
    pub fn visit<'a>(&'a self, f: &mut impl FnMut(&'a Constraint)) {
        f(self);
        match self {
            Constraint::All { of } | Constraint::Any { of } => of.iter().for_each(|c| c.visit(f)),
            Constraint::Not { of } => of.visit(f),
            _ => {}
        }
    }

    /// The constraint's kind as written in the file (`compare`, `in_set`, …).
    pub fn kind_name(&self) -> &'static str {
        match self {
            Constraint::Compare { .. } => "compare",
            Constraint::Between { .. } => "between",
            Constraint::InSet { .. } => "in_set",
            Constraint::IsNull { .. } => "is_null",
            Constraint::NotNull { .. } => "not_null",
            Constraint::TimeWindow { .. } => "time_window",
            Constraint::OlderThan { .. } => "older_than",
            Constraint::Change { .. } => "change",
            Constraint::RelatedCount { .. } => "related_count",
            Constraint::All { .. } => "all",
            Constraint::Any { .. } => "any",
            Constraint::Not { .. } => "not",
        }
    }
}

/// Which single value to take when an attribute has many rows per entity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Aggregation {
    /// The most recent value.
    Latest,
    /// The earliest value.
    First,
    /// The arithmetic mean.
    Mean,
    /// The median.
    Median,
    /// The smallest value.
    Min,
    /// The largest value.
    Max,
    /// The total.
    Sum,
    /// The number of rows.
    Count,
}

/// Sort direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SortOrder {
    /// Smallest first.
    Asc,
    /// Largest first.
    Desc,
}

/// A typed change to the query plan (not a filter): which column, which aggregate,
/// ordering and limits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum PlanChange {
    /// Use this attribute where the question's word named a column ("which date").
    ChooseAttribute {
        /// Qualified attribute.
        attribute: String,
    },
    /// Use this entity where the question's word named a table.
    ChooseEntity {
        /// Entity name.
        entity: String,
    },
    /// Use this measure where the question's word named a measure ("rate").
    ChooseMeasure {
        /// Measure name.
        measure: String,
    },
    /// Reduce many values per row with this aggregation.
    ChooseAggregation {
        /// The aggregation.
        aggregation: Aggregation,
    },
    /// Keep only the first `n` rows.
    SetLimit {
        /// Row count (at least 1).
        n: u32,
    },
    /// Order rows by an attribute, optionally keeping the first `limit`.
    Sort {
        /// Qualified attribute.
        attribute: String,
        /// Direction.
        order: SortOrder,
        /// Rows kept.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u32>,
    },
    /// Group by `per`, compute `measure`, order and keep the first `limit` groups
    /// ("the busiest clinics").
    Rank {
        /// Measure name.
        measure: String,
        /// Entity ranked.
        per: String,
        /// Direction.
        order: SortOrder,
        /// Groups kept (at least 1).
        limit: u32,
    },
    /// Group over time by this grain.
    SetGrain {
        /// The grain.
        grain: Grain,
        /// Time dimension; none means the question entity's default.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        dimension: Option<String>,
    },
}

impl PlanChange {
    /// The change's kind as written in the file (`choose_attribute`, `rank`, …).
    pub fn kind_name(&self) -> &'static str {
        match self {
            PlanChange::ChooseAttribute { .. } => "choose_attribute",
            PlanChange::ChooseEntity { .. } => "choose_entity",
            PlanChange::ChooseMeasure { .. } => "choose_measure",
            PlanChange::ChooseAggregation { .. } => "choose_aggregation",
            PlanChange::SetLimit { .. } => "set_limit",
            PlanChange::Sort { .. } => "sort",
            PlanChange::Rank { .. } => "rank",
            PlanChange::SetGrain { .. } => "set_grain",
        }
    }
}

/// Splits `entity.attribute`; `None` when there is no single dot with text either side.
pub fn split_qualified(qualified: &str) -> Option<(&str, &str)> {
    let (e, a) = qualified.split_once('.')?;
    (!e.is_empty() && !a.is_empty() && !a.contains('.')).then_some((e, a))
}

/// The display symbol of a unit code (`cm2` → `cm²`); unknown codes are returned as is.
pub fn unit_symbol(code: &str) -> &str {
    match code {
        "cm2" => "cm²",
        "mm2" => "mm²",
        "kg/m2" => "kg/m²",
        "percent" => "%",
        other => other,
    }
}

fn one() -> f64 {
    1.0
}

fn is_one(w: &f64) -> bool {
    *w == 1.0
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Holder {
        c: Constraint,
    }

    #[test]
    fn every_constraint_kind_round_trips_through_toml() {
        let cases = [
            r#"{ kind = "compare", attribute = "wounds.latest_area", op = "gt", value = 25, unit = "cm2" }"#,
            r#"{ kind = "between", attribute = "patients.bmi", min = 25, max = 29.9 }"#,
            r#"{ kind = "in_set", attribute = "wounds.stage", values = ["stage_3", "stage_4"] }"#,
            r#"{ kind = "is_null", attribute = "wounds.healed_date" }"#,
            r#"{ kind = "not_null", attribute = "wounds.healed_date" }"#,
            r#"{ kind = "time_window", last = { n = 30, unit = "days" } }"#,
            r#"{ kind = "older_than", dimension = "onset", age = { n = 6, unit = "months" } }"#,
            r#"{ kind = "change", attribute = "assessments.area", per = "wounds", over = { n = 4, unit = "weeks" }, op = "lte", pct = -40.0 }"#,
            r#"{ kind = "related_count", related = "assessments", op = "gte", value = 4, within = { n = 30, unit = "days" } }"#,
            r#"{ kind = "all", of = [{ kind = "is_null", attribute = "a.b" }] }"#,
            r#"{ kind = "any", of = [{ kind = "is_null", attribute = "a.b" }] }"#,
            r#"{ kind = "not", of = { kind = "is_null", attribute = "a.b" } }"#,
        ];
        for inline in cases {
            let parsed: Holder =
                toml::from_str(&format!("c = {inline}")).unwrap_or_else(|e| panic!("{inline}: {e}"));
            let written = toml::to_string(&parsed).unwrap();
            let again: Holder = toml::from_str(&written).unwrap();
            assert_eq!(parsed, again, "{inline}");
        }
    }

    #[test]
    fn a_misspelt_field_in_a_constraint_is_refused_not_ignored() {
        let err = toml::from_str::<Holder>(
            r#"c = { kind = "compare", attribute = "a.b", op = "gt", value = 1, units = "cm" }"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains("units"), "{err}");
        assert!(
            toml::from_str::<Holder>(r#"c = { kind = "sql", text = "1=1" }"#).is_err(),
            "no SQL escape hatch"
        );
    }

    #[test]
    fn literals_keep_their_toml_type() {
        #[derive(Deserialize)]
        struct V {
            v: Vec<Value>,
        }
        let v: V = toml::from_str(r#"v = [true, 3, 2.5, "open"]"#).unwrap();
        assert_eq!(
            v.v,
            [
                Value::Bool(true),
                Value::Integer(3),
                Value::Real(2.5),
                Value::Text("open".into())
            ]
        );
    }

    #[test]
    fn today_is_a_keyword_and_anything_else_an_attribute() {
        assert_eq!(DateOperand::from("today".to_owned()), DateOperand::Today);
        assert_eq!(
            DateOperand::from("onset_date".to_owned()),
            DateOperand::Attribute("onset_date".into())
        );
        assert_eq!(String::from(DateOperand::Today), "today");
    }

    #[test]
    fn spans_convert_to_approximate_days() {
        let cases = [
            (Span::days(30), 30),
            (
                Span {
                    n: 4,
                    unit: SpanUnit::Weeks,
                },
                28,
            ),
            (
                Span {
                    n: 1,
                    unit: SpanUnit::Years,
                },
                365,
            ),
        ];
        for (span, days) in cases {
            assert_eq!(span.approx_days(), days);
        }
    }

    #[test]
    fn constraint_attributes_lists_every_attribute_at_any_depth() {
        let c: Holder = toml::from_str(
            r#"c = { kind = "all", of = [
                { kind = "compare", attribute = "wounds.status", op = "eq", value = "open" },
                { kind = "not", of = { kind = "change", attribute = "assessments.area", per = "wounds", over = { n = 4, unit = "weeks" }, op = "gt", pct = 0 } },
                { kind = "time_window", last = { n = 1, unit = "days" } },
            ] }"#,
        )
        .unwrap();
        assert_eq!(c.c.attributes(), ["wounds.status", "assessments.area"]);
    }

    #[test]
    fn qualified_names_need_exactly_one_dot_with_text_on_both_sides() {
        assert_eq!(split_qualified("wounds.area"), Some(("wounds", "area")));
        for bad in ["wounds", ".area", "wounds.", "a.b.c"] {
            assert_eq!(split_qualified(bad), None, "{bad}");
        }
        assert_eq!(unit_symbol("cm2"), "cm²");
        assert_eq!(unit_symbol("days"), "days");
    }
}
