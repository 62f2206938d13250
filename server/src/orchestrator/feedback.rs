//! Feedback and the outcomes History keeps (issue 15, points 3 and 7).
//!
//! - A vote on an answer (thumbs up / down with an optional reason) or on a round's
//!   question ("was this helpful?") is validated here and stored per user.
//! - A thumbs-up, or a follow-up question asked on an answer (the answer was used as
//!   it was), counts the preferences that answer used as successful — once per answer.
//! - A question Clarion refused, or one that failed, is recorded in History with the
//!   message the user saw.

use super::{HistoryResume, Orchestrator, OrchestratorError};
use crate::engine::Resolution;
use crate::store::{FeedbackReason, HistoryId, HistoryStatus, PreferenceChoice, Rating, RoundId, ThreadId};
use app::protocol::{self, AnswerFeedbackRequest, AnswerFeedbackView, ClarificationFeedbackView, ErrorCode};
use chrono::Utc;
use std::time::Instant;

/// Longest comment kept with a thumbs down, in characters.
pub const MAX_COMMENT_CHARS: usize = 1000;

/// A vote on an answer, checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vote {
    pub rating: Rating,
    pub reason: Option<FeedbackReason>,
    pub comment: Option<String>,
}

impl Vote {
    /// Checks a request: 400 for an unknown rating or reason or a comment over
    /// [`MAX_COMMENT_CHARS`], 422 for a reason or comment with thumbs up. A blank
    /// reason or comment is the same as none.
    pub fn parse(req: &AnswerFeedbackRequest) -> Result<Vote, OrchestratorError> {
        let rating = Rating::parse(req.rating.trim()).ok_or_else(|| {
            OrchestratorError::bad(ErrorCode::BadRating, "rating must be \"up\" or \"down\".")
        })?;
        let reason = match req.reason.as_deref().map(str::trim).filter(|r| !r.is_empty()) {
            None => None,
            Some(r) => Some(FeedbackReason::parse(r).ok_or_else(|| {
                OrchestratorError::bad(
                    ErrorCode::BadReason,
                    "reason must be one of \"wrong_cohort\", \"wrong_numbers\", \"too_many_questions\", \"other\".",
                )
            })?),
        };
        let comment = req
            .comment
            .as_deref()
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(|c| {
                c.chars()
                    .map(|ch| if ch.is_control() && ch != '\n' { ' ' } else { ch })
                    .collect::<String>()
            });
        if comment
            .as_ref()
            .is_some_and(|c| c.chars().count() > MAX_COMMENT_CHARS)
        {
            return Err(OrchestratorError::bad(
                ErrorCode::CommentTooLong,
                format!("The comment is longer than {MAX_COMMENT_CHARS} characters. Please shorten it."),
            ));
        }
        if rating == Rating::Up && (reason.is_some() || comment.is_some()) {
            return Err(OrchestratorError::Refused {
                code: ErrorCode::ReasonWithThumbsUp,
                message: "A reason or comment goes with thumbs down only.".into(),
            });
        }
        Ok(Vote {
            rating,
            reason,
            comment,
        })
    }
}

fn rating_view(r: Rating) -> protocol::FeedbackRating {
    match r {
        Rating::Up => protocol::FeedbackRating::Up,
        Rating::Down => protocol::FeedbackRating::Down,
    }
}

fn reason_view(r: FeedbackReason) -> protocol::FeedbackReason {
    match r {
        FeedbackReason::WrongCohort => protocol::FeedbackReason::WrongCohort,
        FeedbackReason::WrongNumbers => protocol::FeedbackReason::WrongNumbers,
        FeedbackReason::TooManyQuestions => protocol::FeedbackReason::TooManyQuestions,
        FeedbackReason::Other => protocol::FeedbackReason::Other,
    }
}

/// The preferences an answer used, as (signature, choice key): every choice it was
/// resolved with (answers, remembered choices), read from its stored clarifications.
fn used_preferences(resume: &HistoryResume) -> Vec<(String, String)> {
    let mut used: Vec<(String, String)> = Vec::new();
    for (ambiguity, r) in &resume.resolutions.answers {
        let choice = match r {
            Resolution::Option { id } => PreferenceChoice::Option(id.clone()),
            Resolution::Custom { constraint } => match serde_json::to_string(constraint) {
                Ok(json) => PreferenceChoice::Custom(json),
                Err(_) => continue,
            },
            Resolution::Change { .. } | Resolution::DontKnow => continue,
        };
        used.push((ambiguity.clone(), choice.key()));
    }
    for a in &resume.applied {
        if a.option_id == "custom" || a.option_id == "dont_know" {
            continue;
        }
        let pair = (
            a.ambiguity_id.clone(),
            PreferenceChoice::Option(a.option_id.clone()).key(),
        );
        if !used.contains(&pair) {
            used.push(pair);
        }
    }
    used
}

impl Orchestrator {
    /// `PUT /api/v1/history/{id}/feedback` and the answer's feedback form: stores the
    /// user's vote on one of their answers (replacing an earlier one); a thumbs-up
    /// counts the answer's preferences as successful (once per answer). Returns the
    /// vote and the answer's thread (the form goes back there).
    pub async fn answer_feedback(
        &self,
        user_id: i64,
        history_id: &str,
        req: &AnswerFeedbackRequest,
    ) -> Result<(AnswerFeedbackView, Option<String>), OrchestratorError> {
        let hid = HistoryId::new(history_id.to_owned());
        if !hid.is_well_formed() {
            return Err(OrchestratorError::NotFound);
        }
        let vote = Vote::parse(req)?;
        let store = &self.inner.store;
        let entry = store.history_entry(user_id, &hid).await?;
        let stored = store
            .set_answer_feedback(
                user_id,
                &hid,
                vote.rating,
                vote.reason,
                vote.comment.as_deref(),
                Utc::now(),
            )
            .await?;
        let successes_counted = if vote.rating == Rating::Up {
            let resume: HistoryResume = serde_json::from_str(&entry.clarifications_json).unwrap_or_default();
            store
                .count_success(user_id, &hid, &used_preferences(&resume))
                .await?
        } else {
            0
        };
        Ok((
            AnswerFeedbackView {
                history_id: stored.history_id.as_str().to_owned(),
                rating: rating_view(stored.rating),
                reason: stored.reason.map(reason_view),
                comment: stored.comment,
                successes_counted,
            },
            entry.thread_id.map(|t| t.as_str().to_owned()),
        ))
    }

    /// `PUT /api/v1/clarifications/{id}/feedback` and the panel's "Was this question
    /// helpful?": stores the user's vote on one of their rounds (replacing an earlier
    /// one). Returns the vote and the round's thread.
    pub async fn clarification_feedback(
        &self,
        user_id: i64,
        clarification_id: &str,
        helpful: bool,
    ) -> Result<(ClarificationFeedbackView, String), OrchestratorError> {
        let id = RoundId::new(clarification_id.to_owned());
        if !id.is_well_formed() {
            return Err(OrchestratorError::NotFound);
        }
        let thread = self
            .inner
            .store
            .set_clarification_feedback(user_id, &id, helpful, Utc::now())
            .await?;
        Ok((
            ClarificationFeedbackView {
                clarification_id: clarification_id.to_owned(),
                helpful,
            },
            thread,
        ))
    }

    /// The latest answer of one of the user's threads, if any.
    pub(super) async fn last_answer(&self, user_id: i64, thread: &ThreadId) -> Option<HistoryId> {
        match self.inner.store.last_answer_in(user_id, thread).await {
            Ok(id) => id,
            Err(e) => {
                tracing::warn!(error = %e, "could not read a thread's answers");
                None
            }
        }
    }

    /// An answer was used as it was (a follow-up was asked on it): its preferences
    /// count as successful, once per answer. A failure is logged, never shown.
    pub(super) async fn count_used(&self, user_id: i64, history_id: &HistoryId) {
        let store = &self.inner.store;
        let result = async {
            let entry = store.history_entry(user_id, history_id).await?;
            let resume: HistoryResume = serde_json::from_str(&entry.clarifications_json).unwrap_or_default();
            store
                .count_success(user_id, history_id, &used_preferences(&resume))
                .await
        }
        .await;
        if let Err(e) = result {
            tracing::warn!(error = %e, "an answer's success was not counted");
        }
    }

    /// Records a refused or failed question in History with the message the user
    /// sees, and gives back the error to return (a fault already reported, so the
    /// reference in History is the one shown). Other errors (bad input, not found,
    /// busy) are not questions that ran and are returned as they are.
    pub(super) async fn record_unanswered(
        &self,
        user_id: i64,
        question: &str,
        started: Instant,
        e: OrchestratorError,
    ) -> OrchestratorError {
        let (status, e) = match e {
            OrchestratorError::Refused { .. } => (HistoryStatus::Refused, e),
            OrchestratorError::Timeout(_) => (HistoryStatus::Failed, e),
            OrchestratorError::Internal(_) => (
                HistoryStatus::Failed,
                OrchestratorError::Reported(e.into_public()),
            ),
            other => return other,
        };
        let message = match &e {
            OrchestratorError::Reported(api) => api.message.clone(),
            other => other.to_public_message(),
        };
        let ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        if let Err(err) = self
            .inner
            .store
            .add_unanswered(user_id, question, status, &message, ms, Utc::now())
            .await
        {
            tracing::warn!(error = %err, "a refused or failed question was not added to the history");
        }
        e
    }

    /// The user's history filtered by how each question ended, newest first.
    pub async fn history_filtered(
        &self,
        user_id: i64,
        show: protocol::HistoryShow,
        limit: i64,
    ) -> Result<Vec<protocol::HistoryItem>, OrchestratorError> {
        use protocol::HistoryShow as S;
        let statuses: &[HistoryStatus] = match show {
            S::All => &[
                HistoryStatus::Answered,
                HistoryStatus::Refused,
                HistoryStatus::Failed,
            ],
            S::Answered => &[HistoryStatus::Answered],
            S::Refused => &[HistoryStatus::Refused],
            S::Failed => &[HistoryStatus::Failed],
        };
        let entries = self.inner.store.history_with(user_id, statuses, limit).await?;
        Ok(entries.into_iter().map(super::history_item).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(rating: &str, reason: Option<&str>, comment: Option<&str>) -> AnswerFeedbackRequest {
        AnswerFeedbackRequest {
            rating: rating.into(),
            reason: reason.map(Into::into),
            comment: comment.map(Into::into),
        }
    }

    fn code(r: Result<Vote, OrchestratorError>) -> ErrorCode {
        r.unwrap_err().code()
    }

    #[test]
    fn votes_are_checked_with_the_documented_codes() {
        assert_eq!(code(Vote::parse(&req("meh", None, None))), ErrorCode::BadRating);
        assert_eq!(
            code(Vote::parse(&req("down", Some("bad"), None))),
            ErrorCode::BadReason
        );
        let long = "x".repeat(MAX_COMMENT_CHARS + 1);
        assert_eq!(
            code(Vote::parse(&req("down", None, Some(&long)))),
            ErrorCode::CommentTooLong
        );
        assert_eq!(
            code(Vote::parse(&req("up", Some("other"), None))),
            ErrorCode::ReasonWithThumbsUp
        );
        assert_eq!(
            code(Vote::parse(&req("up", None, Some("nice")))),
            ErrorCode::ReasonWithThumbsUp
        );
        assert_eq!(ErrorCode::ReasonWithThumbsUp.status(), 422);
        assert_eq!(ErrorCode::CommentTooLong.status(), 400);
        // 1,000 characters (not bytes) is fine; blank reason and comment are none.
        let ok = "é".repeat(MAX_COMMENT_CHARS);
        let v = Vote::parse(&req("down", Some("other"), Some(&ok))).unwrap();
        assert_eq!((v.rating, v.reason), (Rating::Down, Some(FeedbackReason::Other)));
        let v = Vote::parse(&req("up", Some(" "), Some("  "))).unwrap();
        assert_eq!(
            v,
            Vote {
                rating: Rating::Up,
                reason: None,
                comment: None
            }
        );
    }
}
