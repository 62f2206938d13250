//! Clarion's server: configuration, storage, HTTP and the Leptos integration.
//!
//! `main.rs` only parses the command line; everything testable lives here.

pub mod auth;
pub mod backend;
pub mod config;
pub mod dataset;
pub mod db;
pub mod engine;
pub mod error;
pub mod eval;
pub mod http;
pub mod llm;
pub mod orchestrator;
pub mod password;
pub mod semantic;
pub mod serve;
pub mod sql;
pub mod state;
pub mod store;
pub mod telemetry;
pub mod warehouse;
