//! The semantic model: entities, attributes, joins, measures, time dimensions,
//! schema areas and the ambiguity dictionary, loaded from TOML and validated.
//!
//! Pure data plus validation: no I/O except reading the model file
//! ([`SemanticModel::from_path`]), no SQL text (constraints are typed), no database
//! access (a [`SchemaInfo`] is passed in when tables and columns should be checked).
//! The file format is documented in `server/docs/semantic-model.md`.

pub mod glossary;
pub mod introspect;
pub mod load;
pub mod lookup;
pub mod model;
pub mod schema;
pub mod validate;

pub use load::{ModelError, Problem, WOUND_CARE_FILE, WOUND_CARE_TOML};
pub use lookup::{AttributeRef, DatabaseColumn, JoinStep, normalize_phrase};
pub use model::{
    Aggregation, AllowedValue, AllowedValues, Attribute, AttributeRole, AttributeType, CompareOp, Constraint,
    DateOperand, Derived, Entity, Grain, Join, Measure, MeasureAgg, ModelInfo, PlanChange, SchemaArea,
    SemanticModel, SortOrder, Span, SpanUnit, Suggestion, SuggestionKind, Term, TermKind, TermOption,
    TimeDimension, Value, split_qualified, unit_symbol,
};
pub use schema::{ColumnInfo, SchemaInfo, TableInfo};
