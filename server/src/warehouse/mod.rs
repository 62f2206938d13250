//! Read-only access to the clinical data: the allowed-values cache (and, later,
//! query execution and option-count previews). Never writes to the clinical tables.

pub mod allowed_values;
pub mod count_cache;
pub mod exec;
pub mod privilege;

pub use allowed_values::{
    AllowedValuesConfig, AllowedValuesError, AllowedValuesProvider, AllowedValuesStats, Clock, ColumnRef,
    ColumnSpec, ColumnValues, ManualClock, SystemClock, ValueSource, ValuesByColumn,
};
