//! Clarion's own tables on SQLite or PostgreSQL: users, sessions and API tokens,
//! threads and messages, clarification rounds and their answers, learned
//! preferences, settings, query history (answered, refused and failed questions),
//! saved questions, feedback on answers and rounds, and the audit log.
//!
//! One [`Store`] over both backends. Every statement uses `$n` placeholders,
//! which both accept, and [`on_pool!`] runs the same statement on whichever pool
//! is configured; the one dialect difference that matters (how a timestamp is
//! stored) lives in [`time::Ts`]. Only bound parameters: no SQL is ever
//! assembled from user text here.
//!
//! Rules every method follows (the conformance suite in
//! `server/tests/store_conformance.rs` checks them on both backends):
//! - every read or write of a user's data takes the user id and filters on it;
//!   another user's id is indistinguishable from a missing one
//!   ([`StoreError::NotFound`]);
//! - the clock is passed in (`now`), never read here and never `now()` in SQL,
//!   so expiry is deterministic and testable;
//! - ids that appear in URLs (threads, rounds, history entries) are random and
//!   opaque ([`ids`]).
//!
//! This module must not know about HTTP, Leptos or the engine's types: plans,
//! understandings and questions arrive as JSON text and leave as JSON text.

#[macro_use]
mod macros;

pub mod ids;
mod time;
#[macro_use]
mod tx;

mod analytics;
mod auth_tables;
mod feedback;
mod history;
mod llm_calls;
mod preferences;
mod rounds;
mod saved;
mod scope;
mod settings;
mod threads;
mod users;
mod verified;

pub use analytics::{
    AmbiguityCounts, AnalyticsCounts, ChoiceCount, DayCounts, MAX_DAYS as ANALYTICS_MAX_DAYS,
    REPEAT_WINDOW_DAYS, percentile,
};
pub use auth_tables::ApiToken;
pub use feedback::{AnswerFeedback, FeedbackCounts, FeedbackReason, Rating, VerifiedFeedback};
pub use history::{AuditEntry, AuditOutcome, HistoryEntry, HistoryStatus, NewAuditEntry, NewHistoryEntry};
pub use ids::{HistoryId, RoundId, SavedId, ThreadId};
pub use llm_calls::{LlmDay, NewLlmCall};
pub use preferences::{Preference, PreferenceChoice, PreferenceEvidence};
pub use rounds::{Answer, AnswerChoice, NewAnswer, NewRound, Round, RoundStatus};
pub use saved::{NewSaved, Saved, SavedCounts};
pub use scope::ClinicScope;
pub use threads::{Message, MessageRole, NewMessage, Thread};
pub use tx::StoreTx;
pub use users::{Role, User};
pub use verified::{NewVerified, Verified};

use crate::db::Database;
use thiserror::Error;

/// Storage failures. `NotFound`, `Expired` and `Conflict` are answers a caller
/// acts on (404, 404, 409 at the HTTP edge); `Db` and `Corrupt` are faults.
#[derive(Debug, Error)]
pub enum StoreError {
    /// No such row for this user (missing, or it belongs to someone else).
    #[error("not found")]
    NotFound,
    /// A clarification round whose time ran out before it was answered.
    #[error("expired")]
    Expired,
    /// The row is not in a state that allows this change (already answered,
    /// username taken, …). The text says which, for logs and messages.
    #[error("conflict: {0}")]
    Conflict(&'static str),
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("stored value is invalid: {0}")]
    Corrupt(String),
}

/// Typed access to Clarion's tables. Cheap to clone (the pool is shared).
#[derive(Clone, Debug)]
pub struct Store {
    db: Database,
}

impl Store {
    /// Wraps a connected, migrated database.
    pub fn new(db: Database) -> Self {
        Store { db }
    }

    /// The underlying pool (health checks, shutdown).
    pub fn database(&self) -> &Database {
        &self.db
    }
}

/// True when a database error is a unique-constraint violation (both backends).
fn is_unique_violation(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(d) => d.is_unique_violation(),
        _ => false,
    }
}
