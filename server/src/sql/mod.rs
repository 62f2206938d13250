//! SQL text exists only here: rendering typed plans (bound parameters) and
//! guarding SQL text that did not come from the renderer.
//!
//! - [`render`]: `QueryPlan` → [`Rendered`] (SQL with placeholders + [`BoundValue`]s)
//!   for a [`Dialect`]; [`render_count`] for option-count previews;
//!   [`render_with_cap`] for the executor's row cap.
//! - [`bind`]: binding rendered values onto sqlx queries for each backend.
//! - [`scope`]: the [`RowScope`] rendered on every table reference of a statement
//!   (clinic-scoped access, issue 16).
//! - [`guard`]: validating SQL text from elsewhere (the LLM backend): exactly one
//!   read-only `SELECT` over the model's tables, allow-listed functions only.
//!
//! Nothing here executes SQL, reads the clock or logs values.

pub mod bind;
pub mod dialect;
mod expr;
mod fragment;
pub mod guard;
mod predicate;
pub mod render;
pub mod scope;
pub mod summary;

pub use dialect::Dialect;
pub use fragment::BoundValue;
pub use guard::{GuardError, check};
pub use render::{
    ColumnSource, OutputColumn, RenderCheck, RenderError, Rendered, render, render_count,
    render_count_scoped, render_data_version, render_scoped, render_with_cap, render_with_cap_using,
};
pub use scope::RowScope;
pub use summary::SummaryUse;
