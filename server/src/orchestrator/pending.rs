//! The writes of one request, collected while it is worked out and stored in one
//! transaction with its answer or its round (issue 17: one WAL flush per request on
//! PostgreSQL instead of one per write).
//!
//! Nothing here is written while the clinical query runs: the transaction opens
//! after it, takes every collected write plus the answer's history entry and
//! message (or the round and its message), and commits. A failed commit stores
//! nothing of the answer. What the request stored before batching even when it
//! failed (a follow-up's question, a re-run's thread, the audit entry of a query
//! that ran) is stored on failure by [`Pending::after_failure`], so History, threads
//! and the audit log read as they did.

use super::Payload;
use crate::store::{
    AuditOutcome, MessageRole, NewAnswer, NewAuditEntry, NewMessage, PreferenceChoice, PreferenceEvidence,
    RoundId, Store, StoreError, StoreTx, ThreadId,
};
use chrono::{DateTime, Utc};

/// The audit entry of a query that ran, written with the request's other writes.
#[derive(Clone, Debug)]
pub(super) struct PendingAudit {
    pub sql: String,
    pub param_count: usize,
    pub row_count: i64,
    pub duration_ms: i64,
    pub outcome: AuditOutcome,
    pub scope: String,
    /// When the query finished.
    pub at: DateTime<Utc>,
}

/// A preference learned from one of a round's answers.
#[derive(Clone, Debug)]
pub(super) struct PendingPreference {
    pub signature: String,
    pub choice: PreferenceChoice,
    pub label: String,
    pub remember: bool,
}

/// See the module doc.
#[derive(Debug)]
pub(super) struct Pending {
    pub user_id: i64,
    /// When the request's first writes happened (thread, message, round answers).
    pub now: DateTime<Utc>,
    /// A thread this request starts: its id and title.
    pub thread: Option<(ThreadId, String)>,
    /// What the user said (a question, a round's answers): thread, text, payload JSON.
    pub message: Option<(ThreadId, String, String)>,
    /// The thread and message are kept when the request fails (a follow-up's
    /// question, a re-run's or revision's thread); a new question's are not.
    pub keep_on_failure: bool,
    /// The round this request answers, closed only together with the answer.
    pub answer: Option<(RoundId, Vec<NewAnswer>)>,
    /// Preferences learned from the round's answers, once it is answered.
    pub preferences: Vec<PendingPreference>,
    /// The audit entry of the query that ran.
    pub audit: Option<PendingAudit>,
    /// The transaction was opened: a failure from here on is the commit's.
    pub committing: bool,
    /// The user's question was sent by clicking a follow-up pill (Analytics).
    pub from_suggestion: bool,
}

impl Pending {
    /// Nothing to write yet.
    pub fn new(user_id: i64, now: DateTime<Utc>) -> Self {
        Pending {
            user_id,
            now,
            thread: None,
            message: None,
            keep_on_failure: false,
            answer: None,
            preferences: Vec::new(),
            audit: None,
            committing: false,
            from_suggestion: false,
        }
    }

    /// Records what the user said in `thread`.
    pub fn user_message(
        &mut self,
        thread: &ThreadId,
        body: &str,
        payload: &Payload,
    ) -> Result<(), serde_json::Error> {
        self.message = Some((thread.clone(), body.to_owned(), serde_json::to_string(payload)?));
        Ok(())
    }

    /// Opens the request's transaction with every collected write in it; the caller
    /// adds the answer's (or round's) own rows and commits.
    pub async fn begin(&mut self, store: &Store) -> Result<StoreTx, StoreError> {
        self.committing = true;
        let mut tx = store.begin().await?;
        let user_id = self.user_id;
        if let Some((id, title)) = &self.thread {
            tx.create_thread(user_id, id, title, self.now).await?;
        }
        if let Some((round, answers)) = &self.answer {
            tx.answer_round(user_id, round, answers, self.now).await?;
        }
        if let Some(m) = &self.message {
            self.append_user_message(&mut tx, m).await?;
        }
        if let Some(a) = &self.audit {
            tx.audit(audit_entry(user_id, a), a.at).await?;
        }
        for p in &self.preferences {
            let evidence = PreferenceEvidence {
                signature: &p.signature,
                choice: &p.choice,
                label: &p.label,
                remember: p.remember,
                success: false,
            };
            tx.record_preference(user_id, evidence, self.now).await?;
        }
        Ok(tx)
    }

    /// Appends what the user said (collected by [`Pending::user_message`]) in `tx`.
    async fn append_user_message(
        &self,
        tx: &mut StoreTx,
        (thread, body, payload): &(ThreadId, String, String),
    ) -> Result<(), StoreError> {
        tx.append_message(
            self.user_id,
            thread,
            user_said(body, payload, self.from_suggestion),
            self.now,
        )
        .await
        .map(|_| ())
    }

    /// After the request failed: stores, in one transaction, what stays of a failed
    /// request — the audit entry of a query that ran and, when the failure was not the
    /// commit's, the thread and message kept on failure. A failure here is logged: the
    /// request's own error is the one to return.
    pub async fn after_failure(&self, store: &Store) {
        let keep = self.keep_on_failure && !self.committing;
        let thread = self.thread.as_ref().filter(|_| keep);
        let message = self.message.as_ref().filter(|_| keep);
        if thread.is_none() && message.is_none() && self.audit.is_none() {
            return;
        }
        let user_id = self.user_id;
        let stored = async {
            let mut tx = store.begin().await?;
            if let Some((id, title)) = thread {
                tx.create_thread(user_id, id, title, self.now).await?;
            }
            if let Some(m) = message {
                self.append_user_message(&mut tx, m).await?;
            }
            if let Some(a) = &self.audit {
                tx.audit(audit_entry(user_id, a), a.at).await?;
            }
            tx.commit().await
        }
        .await;
        if let Err(e) = stored {
            tracing::warn!(error = %e, "what a failed question leaves behind was not stored");
        }
    }
}

fn user_said<'a>(body: &'a str, payload: &'a str, from_suggestion: bool) -> NewMessage<'a> {
    NewMessage {
        role: MessageRole::User,
        body,
        payload_json: Some(payload),
        from_suggestion,
    }
}

/// The audit row of a query that ran.
pub(super) fn audit_entry(user_id: i64, a: &PendingAudit) -> NewAuditEntry<'_> {
    NewAuditEntry {
        user_id: Some(user_id),
        sql: &a.sql,
        param_count: a.param_count,
        row_count: a.row_count,
        duration_ms: a.duration_ms,
        outcome: a.outcome,
        scope: Some(&a.scope),
    }
}
