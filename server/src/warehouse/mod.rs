//! Read-only access to the clinical data: allowed-values cache (and, later,
//! query execution and option-count previews).
