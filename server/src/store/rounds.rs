//! Clarification rounds and their answers (F10, F11).
//!
//! A round is a row, not a value in some server's memory: everything needed to
//! resume it (the question, the partial understanding, the questions asked, the
//! round number) is stored, so any replica can answer it and a restart loses
//! nothing. Answering is one compare-and-set `UPDATE … WHERE status = 'pending'
//! AND expires_at > now`, so when two replicas race, exactly one wins.

use super::ids::{RoundId, ThreadId};
use super::time::Ts;
use super::{Store, StoreError, StoreTx};
use chrono::{DateTime, Utc};

/// Where a round is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundStatus {
    /// Waiting for the clinician.
    Pending,
    /// Answered (exactly once).
    Answered,
    /// Its time ran out first. A pending round past `expires_at` is reported as
    /// `Expired` even before housekeeping rewrites the row.
    Expired,
    /// The clinician cancelled it.
    Abandoned,
}

impl RoundStatus {
    /// Stable machine name, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            RoundStatus::Pending => "pending",
            RoundStatus::Answered => "answered",
            RoundStatus::Expired => "expired",
            RoundStatus::Abandoned => "abandoned",
        }
    }

    fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "pending" => Ok(RoundStatus::Pending),
            "answered" => Ok(RoundStatus::Answered),
            "expired" => Ok(RoundStatus::Expired),
            "abandoned" => Ok(RoundStatus::Abandoned),
            other => Err(StoreError::Corrupt(format!("round status {other:?}"))),
        }
    }
}

/// A round to store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewRound<'a> {
    /// The thread the question belongs to (must be the user's).
    pub thread_id: &'a ThreadId,
    /// The question as the clinician asked it.
    pub question: &'a str,
    /// 1 for the first round of a question, 2 for the next, …
    pub round_number: i32,
    /// The round this one follows, if any.
    pub previous_round: Option<&'a RoundId>,
    /// The engine's partial understanding, serialized (JSON text).
    pub understanding_json: &'a str,
    /// The questions shown to the clinician, serialized (JSON text).
    pub questions_json: &'a str,
    /// Ids of the ambiguities asked about in this round (never asked again).
    pub asked_ambiguity_ids: &'a [String],
    /// After this instant the round can no longer be answered.
    pub expires_at: DateTime<Utc>,
}

/// A stored round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Round {
    pub id: RoundId,
    pub user_id: i64,
    pub thread_id: ThreadId,
    pub question: String,
    pub round_number: i32,
    pub previous_round_id: Option<RoundId>,
    pub understanding_json: String,
    pub questions_json: String,
    pub asked_ambiguity_ids: Vec<String>,
    /// The status as of the `now` the round was read with.
    pub status: RoundStatus,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    /// When it was answered, cancelled or marked expired.
    pub closed_at: Option<DateTime<Utc>>,
}

/// How one question of a round was answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AnswerChoice {
    /// One of the offered options, by id.
    Option(String),
    /// A custom value, already validated by the caller, as JSON text.
    Custom(String),
    /// "I don't know — use your best judgment".
    DontKnow,
}

/// An answer to store with its round.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewAnswer {
    /// Which ambiguity (question) this answers.
    pub ambiguity_id: String,
    pub choice: AnswerChoice,
    /// "Remember my choice" was ticked.
    pub remember: bool,
}

/// A stored answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    pub id: i64,
    pub round_id: RoundId,
    pub ambiguity_id: String,
    pub choice: AnswerChoice,
    pub remember: bool,
    pub created_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct RoundRow {
    id: String,
    user_id: i64,
    thread_id: String,
    question: String,
    round_number: i32,
    previous_round_id: Option<String>,
    understanding_json: String,
    questions_json: String,
    asked_ambiguities_json: String,
    status: String,
    created_at: Ts,
    expires_at: Ts,
    closed_at: Option<Ts>,
}

const ROUND_COLUMNS: &str = "id, user_id, thread_id, question, round_number, previous_round_id, \
     understanding_json, questions_json, asked_ambiguities_json, status, created_at, expires_at, closed_at";

impl RoundRow {
    fn into_round(self, now: DateTime<Utc>) -> Result<Round, StoreError> {
        let asked: Vec<String> = serde_json::from_str(&self.asked_ambiguities_json)
            .map_err(|e| StoreError::Corrupt(format!("asked ambiguity ids: {e}")))?;
        let stored = RoundStatus::parse(&self.status)?;
        let status = if stored == RoundStatus::Pending && self.expires_at <= Ts::of(now) {
            RoundStatus::Expired
        } else {
            stored
        };
        Ok(Round {
            id: RoundId::new(self.id),
            user_id: self.user_id,
            thread_id: ThreadId::new(self.thread_id),
            question: self.question,
            round_number: self.round_number,
            previous_round_id: self.previous_round_id.map(RoundId::new),
            understanding_json: self.understanding_json,
            questions_json: self.questions_json,
            asked_ambiguity_ids: asked,
            status,
            created_at: self.created_at.0,
            expires_at: self.expires_at.0,
            closed_at: self.closed_at.map(|t| t.0),
        })
    }
}

type AnswerRow = (
    i64,
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    bool,
    Ts,
);

fn answer_from_row(
    (id, round_id, ambiguity_id, kind, option_id, custom_json, remember, created): AnswerRow,
) -> Result<Answer, StoreError> {
    let choice = match (kind.as_str(), option_id, custom_json) {
        ("option", Some(o), _) => AnswerChoice::Option(o),
        ("custom", _, Some(c)) => AnswerChoice::Custom(c),
        ("dont_know", _, _) => AnswerChoice::DontKnow,
        (other, _, _) => return Err(StoreError::Corrupt(format!("answer kind {other:?}"))),
    };
    Ok(Answer {
        id,
        round_id: RoundId::new(round_id),
        ambiguity_id,
        choice,
        remember,
        created_at: created.0,
    })
}

impl AnswerChoice {
    fn columns(&self) -> (&'static str, Option<&str>, Option<&str>) {
        match self {
            AnswerChoice::Option(o) => ("option", Some(o), None),
            AnswerChoice::Custom(c) => ("custom", None, Some(c)),
            AnswerChoice::DontKnow => ("dont_know", None, None),
        }
    }
}

impl Store {
    /// Stores a pending round in one of the user's threads; `NotFound` if the
    /// thread is missing or someone else's.
    pub async fn create_round(
        &self,
        user_id: i64,
        round: NewRound<'_>,
        now: DateTime<Utc>,
    ) -> Result<Round, StoreError> {
        let mut tx = self.begin().await?;
        let r = tx.create_round(user_id, round, now).await?;
        tx.commit().await?;
        Ok(r)
    }

    /// One of the user's rounds, with its status as of `now`; `NotFound` if
    /// missing or someone else's.
    pub async fn round(&self, user_id: i64, id: &RoundId, now: DateTime<Utc>) -> Result<Round, StoreError> {
        let sql = format!("SELECT {ROUND_COLUMNS} FROM clarification_rounds WHERE id = $1 AND user_id = $2");
        let row: Option<RoundRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(id.as_str())
            .bind(user_id)
            .fetch_optional(p)
            .await)?;
        row.ok_or(StoreError::NotFound)?.into_round(now)
    }

    /// A round the user can still answer: `NotFound` (missing or someone
    /// else's), `Expired`, or `Conflict` (already answered or cancelled).
    pub async fn pending_round(
        &self,
        user_id: i64,
        id: &RoundId,
        now: DateTime<Utc>,
    ) -> Result<Round, StoreError> {
        let round = self.round(user_id, id, now).await?;
        match round.status {
            RoundStatus::Pending => Ok(round),
            other => Err(closed(other)),
        }
    }

    /// Answers a pending round, atomically: the status moves from `pending` to
    /// `answered` only if the round is the user's, still pending and not
    /// expired, and the answers are stored in the same transaction. A second
    /// answer (from any replica) gets `Conflict`; an expired round `Expired`; a
    /// missing or foreign one `NotFound`. Nothing is stored on failure.
    pub async fn answer_round(
        &self,
        user_id: i64,
        id: &RoundId,
        answers: &[NewAnswer],
        now: DateTime<Utc>,
    ) -> Result<Round, StoreError> {
        let mut tx = self.begin().await?;
        let r = tx.answer_round(user_id, id, answers, now).await?;
        tx.commit().await?;
        Ok(r)
    }

    /// Replaces a pending round's stored state and questions (a free-text answer read
    /// back as a new option to confirm, F28), only while the round is the user's,
    /// pending and not expired; otherwise says why like [`Store::pending_round`].
    pub async fn update_pending_round(
        &self,
        user_id: i64,
        id: &RoundId,
        understanding_json: &str,
        questions_json: &str,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        let sql = "UPDATE clarification_rounds SET understanding_json = $3, questions_json = $4 \
                   WHERE id = $1 AND user_id = $2 AND status = 'pending' AND expires_at > $5";
        let updated = on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(id.as_str())
            .bind(user_id)
            .bind(understanding_json)
            .bind(questions_json)
            .bind(Ts::of(now))
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        if updated == 1 {
            return Ok(());
        }
        let round = self.round(user_id, id, now).await?;
        Err(closed(round.status))
    }

    /// Makes an answered round answerable again (its answers are deleted): the
    /// answer could not be computed, so the round must not stay closed with
    /// nothing to show for it. Does nothing to a round in any other state.
    pub async fn reopen_round(&self, user_id: i64, id: &RoundId) -> Result<(), StoreError> {
        on_pool!(&self.db, |p| async {
            let mut tx = p.begin().await?;
            let reopened = sqlx::query(
                "UPDATE clarification_rounds SET status = 'pending', closed_at = NULL \
                 WHERE id = $1 AND user_id = $2 AND status = 'answered'",
            )
            .bind(id.as_str())
            .bind(user_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
            if reopened == 1 {
                sqlx::query("DELETE FROM clarification_answers WHERE round_id = $1 AND user_id = $2")
                    .bind(id.as_str())
                    .bind(user_id)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await
        }
        .await)?;
        Ok(())
    }

    /// Deletes rounds (and their answers) that closed, or expired, at or before
    /// `before` (retention; housekeeping). Returns how many.
    pub async fn purge_rounds(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let cutoff = Ts::of(before);
        on_pool!(&self.db, |p| async {
            let mut tx = p.begin().await?;
            let old = "SELECT id FROM clarification_rounds WHERE COALESCE(closed_at, expires_at) <= $1";
            sqlx::query(&format!(
                "DELETE FROM clarification_answers WHERE round_id IN ({old})"
            ))
            .bind(cutoff)
            .execute(&mut *tx)
            .await?;
            let n =
                sqlx::query("DELETE FROM clarification_rounds WHERE COALESCE(closed_at, expires_at) <= $1")
                    .bind(cutoff)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
            tx.commit().await.map(|_| n)
        }
        .await)
        .map_err(StoreError::from)
    }

    /// Cancels a pending round (the clinician pressed Cancel). Errors as for
    /// [`Store::answer_round`].
    pub async fn abandon_round(
        &self,
        user_id: i64,
        id: &RoundId,
        now: DateTime<Utc>,
    ) -> Result<Round, StoreError> {
        let cas = "UPDATE clarification_rounds SET status = 'abandoned', closed_at = $3 \
                   WHERE id = $1 AND user_id = $2 AND status = 'pending' AND expires_at > $3";
        let updated = on_pool!(&self.db, |p| sqlx::query(cas)
            .bind(id.as_str())
            .bind(user_id)
            .bind(Ts::of(now))
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        let round = self.round(user_id, id, now).await?;
        if updated == 0 {
            return Err(closed(round.status));
        }
        Ok(round)
    }

    /// Reopens one of the user's rounds whose time ran out (still `pending` past its
    /// expiry, or marked `expired`) until `expires_at`, so answering it late runs the
    /// question with the answers given. Returns whether it was reopened; a round that
    /// was answered or cancelled, missing or someone else's is left alone.
    pub async fn revive_round(
        &self,
        user_id: i64,
        id: &RoundId,
        now: DateTime<Utc>,
        expires_at: DateTime<Utc>,
    ) -> Result<bool, StoreError> {
        let sql = "UPDATE clarification_rounds SET status = 'pending', closed_at = NULL, expires_at = $4 \
                   WHERE id = $1 AND user_id = $2 \
                   AND (status = 'expired' OR (status = 'pending' AND expires_at <= $3))";
        let n = on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(id.as_str())
            .bind(user_id)
            .bind(Ts::of(now))
            .bind(Ts::of(expires_at))
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?;
        Ok(n > 0)
    }

    /// Marks every pending round whose time ran out as `expired` (housekeeping;
    /// reads already report such rounds as expired). Returns how many changed.
    pub async fn expire_rounds(&self, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let sql = "UPDATE clarification_rounds SET status = 'expired', closed_at = $1 \
                   WHERE status = 'pending' AND expires_at <= $1";
        Ok(on_pool!(&self.db, |p| sqlx::query(sql)
            .bind(Ts::of(now))
            .execute(p)
            .await
            .map(|r| r.rows_affected()))?)
    }

    /// Every round of one of the user's threads, oldest first; `NotFound` if
    /// the thread is missing or someone else's.
    pub async fn rounds_in_thread(
        &self,
        user_id: i64,
        thread_id: &ThreadId,
        now: DateTime<Utc>,
    ) -> Result<Vec<Round>, StoreError> {
        self.thread(user_id, thread_id).await?;
        let sql = format!(
            "SELECT {ROUND_COLUMNS} FROM clarification_rounds WHERE thread_id = $1 AND user_id = $2 \
             ORDER BY created_at, round_number"
        );
        let rows: Vec<RoundRow> = on_pool!(&self.db, |p| sqlx::query_as(&sql)
            .bind(thread_id.as_str())
            .bind(user_id)
            .fetch_all(p)
            .await)?;
        rows.into_iter().map(|r| r.into_round(now)).collect()
    }

    /// The answers given to one of the user's rounds (empty until answered);
    /// `NotFound` if the round is missing or someone else's.
    pub async fn answers(&self, user_id: i64, round_id: &RoundId) -> Result<Vec<Answer>, StoreError> {
        let exists = "SELECT COUNT(*) FROM clarification_rounds WHERE id = $1 AND user_id = $2";
        let (n,): (i64,) = on_pool!(&self.db, |p| sqlx::query_as(exists)
            .bind(round_id.as_str())
            .bind(user_id)
            .fetch_one(p)
            .await)?;
        if n == 0 {
            return Err(StoreError::NotFound);
        }
        let sql = "SELECT id, round_id, ambiguity_id, kind, option_id, custom_json, remember, created_at \
                   FROM clarification_answers WHERE round_id = $1 AND user_id = $2 ORDER BY id";
        let rows: Vec<AnswerRow> = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(round_id.as_str())
            .bind(user_id)
            .fetch_all(p)
            .await)?;
        rows.into_iter().map(answer_from_row).collect()
    }
}

/// The error for acting on a round that is no longer pending.
fn closed(status: RoundStatus) -> StoreError {
    match status {
        RoundStatus::Pending => StoreError::Conflict("round is still pending"),
        RoundStatus::Answered => StoreError::Conflict("round already answered"),
        RoundStatus::Abandoned => StoreError::Conflict("round was cancelled"),
        RoundStatus::Expired => StoreError::Expired,
    }
}

impl StoreTx {
    /// [`Store::create_round`] in this transaction (its thread may be one this
    /// transaction created).
    pub async fn create_round(
        &mut self,
        user_id: i64,
        round: NewRound<'_>,
        now: DateTime<Utc>,
    ) -> Result<Round, StoreError> {
        let id = RoundId::random();
        let asked = serde_json::to_string(round.asked_ambiguity_ids)
            .map_err(|e| StoreError::Corrupt(format!("asked ambiguity ids: {e}")))?;
        // Ownership and insertion in one statement: the SELECT yields a row only
        // for the user's own thread.
        let sql = format!(
            "INSERT INTO clarification_rounds (id, user_id, thread_id, question, round_number, \
             previous_round_id, understanding_json, questions_json, asked_ambiguities_json, status, \
             created_at, expires_at) \
             SELECT $1, $2, t.id, $4, $5, $6, $7, $8, $9, 'pending', $10, $11 \
             FROM threads t WHERE t.id = $3 AND t.user_id = $2 \
             RETURNING {ROUND_COLUMNS}"
        );
        let row: Option<RoundRow> = on_tx!(self, |c| sqlx::query_as(&sql)
            .bind(id.as_str())
            .bind(user_id)
            .bind(round.thread_id.as_str())
            .bind(round.question)
            .bind(round.round_number)
            .bind(round.previous_round.map(RoundId::as_str))
            .bind(round.understanding_json)
            .bind(round.questions_json)
            .bind(&asked)
            .bind(Ts::of(now))
            .bind(Ts::of(round.expires_at))
            .fetch_optional(&mut *c)
            .await)?;
        row.ok_or(StoreError::NotFound)?.into_round(now)
    }

    /// [`Store::answer_round`] in this transaction: nothing of it is stored
    /// unless the transaction commits.
    pub async fn answer_round(
        &mut self,
        user_id: i64,
        id: &RoundId,
        answers: &[NewAnswer],
        now: DateTime<Utc>,
    ) -> Result<Round, StoreError> {
        let cas = "UPDATE clarification_rounds SET status = 'answered', closed_at = $3 \
                   WHERE id = $1 AND user_id = $2 AND status = 'pending' AND expires_at > $3";
        let insert = "INSERT INTO clarification_answers \
                      (round_id, user_id, ambiguity_id, kind, option_id, custom_json, remember, created_at) \
                      VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";
        let won: bool = on_tx!(self, |c| sqlx::query(cas)
            .bind(id.as_str())
            .bind(user_id)
            .bind(Ts::of(now))
            .execute(&mut *c)
            .await
            .map(|r| r.rows_affected() == 1))?;
        if !won {
            // Lost: say why, without revealing anything about other users' rounds.
            let round = self.round(user_id, id, now).await?;
            return Err(closed(round.status));
        }
        for a in answers {
            let (kind, option_id, custom_json) = a.choice.columns();
            let inserted = on_tx!(self, |c| sqlx::query(insert)
                .bind(id.as_str())
                .bind(user_id)
                .bind(&a.ambiguity_id)
                .bind(kind)
                .bind(option_id)
                .bind(custom_json)
                .bind(a.remember)
                .bind(Ts::of(now))
                .execute(&mut *c)
                .await
                .map(|_| ()));
            if let Err(e) = inserted {
                return Err(if super::is_unique_violation(&e) {
                    StoreError::Conflict("the same question was answered twice")
                } else {
                    e.into()
                });
            }
        }
        self.round(user_id, id, now).await
    }

    /// One of the user's rounds as this transaction sees it.
    async fn round(&mut self, user_id: i64, id: &RoundId, now: DateTime<Utc>) -> Result<Round, StoreError> {
        let sql = format!("SELECT {ROUND_COLUMNS} FROM clarification_rounds WHERE id = $1 AND user_id = $2");
        let row: Option<RoundRow> = on_tx!(self, |c| sqlx::query_as(&sql)
            .bind(id.as_str())
            .bind(user_id)
            .fetch_optional(&mut *c)
            .await)?;
        row.ok_or(StoreError::NotFound)?.into_round(now)
    }
}
