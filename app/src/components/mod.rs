//! Reusable pieces of the interface.

pub mod layout;
pub mod ui;
