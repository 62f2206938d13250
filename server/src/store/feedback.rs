//! Feedback (issue 15, point 3): thumbs up / down on an answer, with an optional reason
//! for thumbs down, and "was this question helpful?" on a clarification round.
//!
//! One row per user and answer (or round): a later vote replaces the earlier one
//! (an upsert, so two replicas never leave two rows). Votes are only accepted on the
//! user's own answers and rounds; another user's id is [`StoreError::NotFound`].
//!
//! A thumbs-up (or an answer used without edits, see [`Store::count_success`]) marks
//! the preferences the answer used as successful, once per answer.

use super::ids::{HistoryId, RoundId};
use super::time::Ts;
use super::{Store, StoreError};
use chrono::{DateTime, Utc};

/// Thumbs up or down.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rating {
    Up,
    Down,
}

impl Rating {
    pub fn as_str(self) -> &'static str {
        match self {
            Rating::Up => "up",
            Rating::Down => "down",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "up" => Some(Rating::Up),
            "down" => Some(Rating::Down),
            _ => None,
        }
    }
}

/// Why an answer was not right (thumbs down only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FeedbackReason {
    WrongCohort,
    WrongNumbers,
    TooManyQuestions,
    Other,
}

impl FeedbackReason {
    pub const ALL: [FeedbackReason; 4] = [
        FeedbackReason::WrongCohort,
        FeedbackReason::WrongNumbers,
        FeedbackReason::TooManyQuestions,
        FeedbackReason::Other,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FeedbackReason::WrongCohort => "wrong_cohort",
            FeedbackReason::WrongNumbers => "wrong_numbers",
            FeedbackReason::TooManyQuestions => "too_many_questions",
            FeedbackReason::Other => "other",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// A vote on an answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerFeedback {
    pub history_id: HistoryId,
    pub rating: Rating,
    pub reason: Option<FeedbackReason>,
    pub comment: Option<String>,
    pub updated_at: DateTime<Utc>,
}

#[derive(sqlx::FromRow)]
struct AnswerFeedbackRow {
    history_id: String,
    rating: String,
    reason: Option<String>,
    comment: Option<String>,
    updated_at: Ts,
}

impl TryFrom<AnswerFeedbackRow> for AnswerFeedback {
    type Error = StoreError;

    fn try_from(r: AnswerFeedbackRow) -> Result<Self, StoreError> {
        Ok(AnswerFeedback {
            history_id: HistoryId::new(r.history_id),
            rating: Rating::parse(&r.rating)
                .ok_or_else(|| StoreError::Corrupt(format!("rating {:?}", r.rating)))?,
            reason: match r.reason {
                None => None,
                Some(s) => Some(
                    FeedbackReason::parse(&s).ok_or_else(|| StoreError::Corrupt(format!("reason {s:?}")))?,
                ),
            },
            comment: r.comment,
            updated_at: r.updated_at.0,
        })
    }
}

/// Feedback figures over a window, for Analytics.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FeedbackCounts {
    pub thumbs_up: i64,
    pub thumbs_down: i64,
    /// Thumbs-down reasons, in [`FeedbackReason::ALL`] order (zeros included); a vote
    /// without a reason is not counted here.
    pub reasons: Vec<(FeedbackReason, i64)>,
    pub helpful_yes: i64,
    pub helpful_no: i64,
}

/// Feedback on the answers one verified question gave.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifiedFeedback {
    pub verified_id: i64,
    pub thumbs_up: i64,
    pub thumbs_down: i64,
}

impl Store {
    /// Stores (or replaces) the user's vote on one of their answered questions;
    /// `NotFound` for someone else's, a refused one or an unknown id. A reason or
    /// comment with thumbs up is a `Conflict` (the caller validates first).
    pub async fn set_answer_feedback(
        &self,
        user_id: i64,
        history_id: &HistoryId,
        rating: Rating,
        reason: Option<FeedbackReason>,
        comment: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<AnswerFeedback, StoreError> {
        if rating == Rating::Up && (reason.is_some() || comment.is_some()) {
            return Err(StoreError::Conflict("a reason goes with thumbs down only"));
        }
        // The insert reads the entry itself, so another user's (or a refused) entry
        // inserts nothing and is indistinguishable from a missing one.
        let sql = "INSERT INTO answer_feedback (user_id, history_id, rating, reason, comment, created_at, updated_at) \
                   SELECT $1, h.id, $3, $4, $5, $6, $6 FROM query_history h \
                   WHERE h.id = $2 AND h.user_id = $1 AND h.status = 'answered' \
                   ON CONFLICT (user_id, history_id) DO UPDATE SET rating = excluded.rating, \
                   reason = excluded.reason, comment = excluded.comment, updated_at = excluded.updated_at \
                   RETURNING history_id, rating, reason, comment, updated_at";
        let row: Option<AnswerFeedbackRow> = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(user_id)
            .bind(history_id.as_str())
            .bind(rating.as_str())
            .bind(reason.map(FeedbackReason::as_str))
            .bind(comment)
            .bind(Ts::of(now))
            .fetch_optional(p)
            .await)?;
        row.ok_or(StoreError::NotFound)?.try_into()
    }

    /// The user's vote on one of their answers, if any.
    pub async fn answer_feedback(
        &self,
        user_id: i64,
        history_id: &HistoryId,
    ) -> Result<Option<AnswerFeedback>, StoreError> {
        let sql = "SELECT history_id, rating, reason, comment, updated_at FROM answer_feedback \
                   WHERE user_id = $1 AND history_id = $2";
        let row: Option<AnswerFeedbackRow> = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(user_id)
            .bind(history_id.as_str())
            .fetch_optional(p)
            .await)?;
        row.map(AnswerFeedback::try_from).transpose()
    }

    /// Stores (or replaces) whether the user found one of their rounds' questions
    /// helpful; `NotFound` for someone else's or an unknown round. Returns the thread
    /// the round belongs to.
    pub async fn set_clarification_feedback(
        &self,
        user_id: i64,
        round_id: &RoundId,
        helpful: bool,
        now: DateTime<Utc>,
    ) -> Result<String, StoreError> {
        let owner = "SELECT thread_id FROM clarification_rounds WHERE id = $1 AND user_id = $2";
        let upsert = "INSERT INTO clarification_feedback (user_id, round_id, helpful, created_at, updated_at) \
                      VALUES ($1, $2, $3, $4, $4) ON CONFLICT (user_id, round_id) DO UPDATE SET \
                      helpful = excluded.helpful, updated_at = excluded.updated_at";
        let thread = on_pool!(&self.db, |p| async {
            let mut tx = p.begin().await?;
            let thread: Option<(String,)> = sqlx::query_as(owner)
                .bind(round_id.as_str())
                .bind(user_id)
                .fetch_optional(&mut *tx)
                .await?;
            let Some((thread,)) = thread else {
                return Ok::<_, sqlx::Error>(None);
            };
            sqlx::query(upsert)
                .bind(user_id)
                .bind(round_id.as_str())
                .bind(helpful)
                .bind(Ts::of(now))
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(Some(thread))
        }
        .await)?;
        thread.ok_or(StoreError::NotFound)
    }

    /// The user's vote on one of their rounds, if any.
    pub async fn clarification_feedback(
        &self,
        user_id: i64,
        round_id: &RoundId,
    ) -> Result<Option<bool>, StoreError> {
        let sql = "SELECT helpful FROM clarification_feedback WHERE user_id = $1 AND round_id = $2";
        let row: Option<(bool,)> = on_pool!(&self.db, |p| sqlx::query_as(sql)
            .bind(user_id)
            .bind(round_id.as_str())
            .fetch_optional(p)
            .await)?;
        Ok(row.map(|r| r.0))
    }

    /// Counts one success for each of `used` — the (signature, choice key) pairs of
    /// the preferences one of the user's answers used — the first time this is called
    /// for that answer; later calls change nothing. Returns how many preferences were
    /// counted (0 when the answer had already counted). `NotFound` for someone else's
    /// or an unknown answer.
    pub async fn count_success(
        &self,
        user_id: i64,
        history_id: &HistoryId,
        used: &[(String, String)],
    ) -> Result<u64, StoreError> {
        let claim = "UPDATE query_history SET success_counted = TRUE \
                     WHERE id = $1 AND user_id = $2 AND status = 'answered' AND NOT success_counted";
        let exists = "SELECT 1 FROM query_history WHERE id = $1 AND user_id = $2 AND status = 'answered'";
        let bump = "UPDATE preferences SET successes = successes + 1 \
                    WHERE user_id = $1 AND signature = $2 AND choice_key = $3";
        let counted = on_pool!(&self.db, |p| async {
            let mut tx = p.begin().await?;
            let claimed = sqlx::query(claim)
                .bind(history_id.as_str())
                .bind(user_id)
                .execute(&mut *tx)
                .await?
                .rows_affected();
            if claimed == 0 {
                let found: Option<(i32,)> = sqlx::query_as(exists)
                    .bind(history_id.as_str())
                    .bind(user_id)
                    .fetch_optional(&mut *tx)
                    .await?;
                return Ok::<_, sqlx::Error>(found.map(|_| 0));
            }
            let mut n = 0;
            for (signature, key) in used {
                n += sqlx::query(bump)
                    .bind(user_id)
                    .bind(signature)
                    .bind(key)
                    .execute(&mut *tx)
                    .await?
                    .rows_affected();
            }
            tx.commit().await?;
            Ok(Some(n))
        }
        .await)?;
        counted.ok_or(StoreError::NotFound)
    }

    /// Everyone's feedback given in `[since, until)`, for Analytics (read-only).
    pub async fn feedback_counts(
        &self,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<FeedbackCounts, StoreError> {
        let answers = "SELECT rating, reason, COUNT(*) AS n FROM answer_feedback \
                       WHERE updated_at >= $1 AND updated_at < $2 GROUP BY rating, reason";
        let rounds = "SELECT helpful, COUNT(*) AS n FROM clarification_feedback \
                      WHERE updated_at >= $1 AND updated_at < $2 GROUP BY helpful";
        let rows: Vec<(String, Option<String>, i64)> = on_pool!(&self.db, |p| sqlx::query_as(answers)
            .bind(Ts::of(since))
            .bind(Ts::of(until))
            .fetch_all(p)
            .await)?;
        let helpful: Vec<(bool, i64)> = on_pool!(&self.db, |p| sqlx::query_as(rounds)
            .bind(Ts::of(since))
            .bind(Ts::of(until))
            .fetch_all(p)
            .await)?;
        let mut c = FeedbackCounts {
            reasons: FeedbackReason::ALL.iter().map(|r| (*r, 0)).collect(),
            ..FeedbackCounts::default()
        };
        for (rating, reason, n) in rows {
            match Rating::parse(&rating) {
                Some(Rating::Up) => c.thumbs_up += n,
                Some(Rating::Down) => c.thumbs_down += n,
                None => return Err(StoreError::Corrupt(format!("rating {rating:?}"))),
            }
            if let Some(r) = reason.as_deref().and_then(FeedbackReason::parse)
                && let Some(slot) = c.reasons.iter_mut().find(|(k, _)| *k == r)
            {
                slot.1 += n;
            }
        }
        for (yes, n) in helpful {
            if yes {
                c.helpful_yes += n;
            } else {
                c.helpful_no += n;
            }
        }
        Ok(c)
    }

    /// Thumbs up and down on the answers each verified question gave (every vote,
    /// whenever given), one entry per verified question with any vote.
    pub async fn verified_feedback(&self) -> Result<Vec<VerifiedFeedback>, StoreError> {
        let sql = "SELECT h.verified_id, \
                   SUM(CASE WHEN f.rating = 'up' THEN 1 ELSE 0 END) AS up, \
                   SUM(CASE WHEN f.rating = 'down' THEN 1 ELSE 0 END) AS down \
                   FROM answer_feedback f JOIN query_history h ON h.id = f.history_id \
                   WHERE h.verified_id IS NOT NULL GROUP BY h.verified_id ORDER BY h.verified_id";
        let rows: Vec<(i64, i64, i64)> = on_pool!(&self.db, |p| sqlx::query_as(sql).fetch_all(p).await)?;
        Ok(rows
            .into_iter()
            .map(|(verified_id, thumbs_up, thumbs_down)| VerifiedFeedback {
                verified_id,
                thumbs_up,
                thumbs_down,
            })
            .collect())
    }
}
