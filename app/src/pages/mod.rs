//! One module per routed page.

pub mod analytics;
#[cfg(feature = "ssr")]
pub mod analytics_report;
pub mod ask;
pub mod glossary;
pub mod history;
pub mod login;
pub mod not_found;
pub mod saved;
pub mod settings;
