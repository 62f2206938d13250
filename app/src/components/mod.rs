//! Reusable pieces of the interface.

pub mod answer;
pub mod chart;
pub mod clarify;
pub mod feedback;
pub mod layout;
pub mod results;
pub mod tokens;
pub mod ui;
