//! One module per routed page.

pub mod analytics;
pub mod ask;
pub mod glossary;
pub mod history;
pub mod login;
pub mod not_found;
pub mod settings;
