//! The typed query plan: what a question means, before any SQL exists.
//!
//! The engine produces a [`QueryPlan`]; `crate::sql::render` is the only place
//! that turns one into SQL (with every value bound as a parameter). Names in a
//! plan are the semantic model's names (`entity`, `entity.attribute`,
//! measure names), never table or column text from the question.

use crate::semantic::{CompareOp, Constraint, Grain, MeasureAgg, SortOrder};
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

/// What the clinician wants done with the rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Intent {
    /// Show matching rows ("show me patients with …").
    List,
    /// How many ("how many wounds …").
    Count,
    /// One or more aggregates (average/sum/min/max/percentage).
    Aggregate,
    /// Aggregates broken down by one or more dimensions ("by clinic").
    GroupBy,
    /// Top-N / ranking ("top 5 clinics by …").
    Rank,
    /// A measure over time ("trend of …", "per month").
    Trend,
    /// Two or more cohorts side by side ("DFU vs VLU").
    Compare,
}

/// One computed column: an aggregate of an attribute (or a count of rows).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metric {
    /// The aggregate.
    pub agg: MeasureAgg,
    /// Qualified attribute (`assessments.area`); `None` for a row count of the plan's entity.
    pub attribute: Option<String>,
    /// Only rows matching this count toward the metric (e.g. share of healed wounds).
    pub condition: Option<Constraint>,
    /// Column label shown to the user ("Average area (cm²)").
    pub label: String,
}

/// A grouping column.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Dimension {
    /// Group by an attribute's value (`clinics.name`, `wounds.etiology`).
    Attribute { attribute: String },
    /// Group by a date attribute truncated to a grain (`assessments.assessed_on` by month).
    Time { attribute: String, grain: Grain },
}

/// A half-open date range `[start, end)` on a date attribute.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeRange {
    /// Qualified date attribute the range applies to.
    pub attribute: String,
    /// First day included.
    pub start: NaiveDate,
    /// First day not included.
    pub end: NaiveDate,
}

/// What a sort applies to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OrderKey {
    /// The n-th metric of the plan (0-based).
    Metric { index: u32 },
    /// An attribute (for lists) or a dimension's attribute (for groups).
    Attribute { attribute: String },
}

/// A condition on a group's figure (SQL `HAVING`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Having {
    pub op: CompareOp,
    pub value: f64,
}

/// One sort key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OrderBy {
    pub key: OrderKey,
    pub order: SortOrder,
}

/// A typed query over the semantic model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QueryPlan {
    /// What to do.
    pub intent: Intent,
    /// The entity whose rows are counted/listed (`wounds`); every other entity is
    /// reached through the model's joins.
    pub entity: String,
    /// Attributes shown for a `List` (qualified names); empty = the entity's defaults.
    pub columns: Vec<String>,
    /// Aggregates (empty for `List`).
    pub metrics: Vec<Metric>,
    /// Group-by columns.
    pub dimensions: Vec<Dimension>,
    /// Row filters, all of which must hold (typed model constraints).
    pub filters: Vec<Constraint>,
    /// An explicit date range from the question ("in Q3 2025", "last 30 days").
    pub time_range: Option<TimeRange>,
    /// Sort keys, first is primary.
    pub order: Vec<OrderBy>,
    /// Row limit requested by the question (the executor also applies its own cap).
    pub limit: Option<u32>,
    /// A ranking kept within each group ("for each care setting, the 2 most common
    /// etiologies", "top 3 locations per clinic"): the first dimension is the one ranked,
    /// the others are the groups, and each group keeps its first this-many rows in the
    /// plan's order (`limit` is then unset). Ranked plans with two or more dimensions only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_per_group: Option<u32>,
    /// Rows skipped before the limit: "the second-highest" is `limit 1, offset 1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset: Option<u32>,
    /// "top 5, ties included", "show all if tied": the rows tied with the last one kept
    /// by `limit` are kept too (the limit counts ranks, not rows).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub limit_ties: bool,
    /// Decimal places real figures are rounded to ("rounded to 1 decimal").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<u8>,
    /// Groups kept by their figure ("etiologies with more than 20 open wounds"): the first
    /// metric (the row count when there is none) compared with a number. Grouped plans only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub having: Option<Having>,
    /// "the average of each wound's largest area": the first metric's attribute, of a
    /// related entity with many rows per record, is first taken per record of `entity`
    /// with this aggregate (`max` or `min`), and the metric aggregates those values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub per_record: Option<MeasureAgg>,
    /// The date relative constraints ("last 30 days", "open > 90 days") are computed from.
    pub today: NaiveDate,
}

impl QueryPlan {
    /// An empty plan over `entity`: list its rows.
    pub fn new(entity: impl Into<String>, today: NaiveDate) -> Self {
        QueryPlan {
            intent: Intent::List,
            entity: entity.into(),
            columns: Vec::new(),
            metrics: Vec::new(),
            dimensions: Vec::new(),
            filters: Vec::new(),
            time_range: None,
            order: Vec::new(),
            limit: None,
            limit_per_group: None,
            offset: None,
            limit_ties: false,
            round: None,
            having: None,
            per_record: None,
            today,
        }
    }
}
