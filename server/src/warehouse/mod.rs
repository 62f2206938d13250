//! Read-only access to the clinical data: the allowed-values cache, query execution and
//! option-count previews, and the summaries Clarion keeps beside the clinical tables
//! (`summary`, the only writer here: it writes its own tables, never a clinical one).

pub mod allowed_values;
pub mod answer_cache;
pub mod count_cache;
pub mod exec;
pub mod privilege;
pub mod sqlite_rows;
pub mod summary;

pub use allowed_values::{
    AllowedValuesConfig, AllowedValuesError, AllowedValuesProvider, AllowedValuesStats, Clock, ColumnRef,
    ColumnSpec, ColumnValues, ManualClock, SystemClock, ValueSource, ValuesByColumn,
};
