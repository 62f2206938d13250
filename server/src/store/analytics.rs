//! Read-only figures for the administrators' Analytics page (F21): how often
//! questions needed a clarification round, how many rounds were left
//! unanswered, how many answers needed no round, and which ambiguities are
//! asked most with what people chose.
//!
//! Every statement only reads, uses bound parameters and portable SQL (no
//! date functions: timestamps are bucketed into UTC days here, in Rust, which
//! keeps the two backends identical). The clock is passed in.
//!
//! Definitions (one question is counted once):
//! - a *clarified question* is a first round (`round_number = 1`), counted on
//!   the day it was asked;
//! - an *answer* is an answered history entry (refused and failed questions are
//!   not answers) that is not a repeat of an earlier entry
//!   with the same question in the same thread (revisions of an assumption
//!   re-run the same question in its thread and are not new questions);
//! - an answer *needed a round* when a round for the same question exists in
//!   its thread from before it; otherwise it was *auto-resolved* (answered
//!   directly, remembered choices included);
//! - *questions* = clarified questions + auto-resolved answers;
//! - an auto-resolved answer was resolved *by a preference* when one of its badges is
//!   the user's remembered ("saved") or learned ("usual") definition: asked before and
//!   not asked again, counted apart from questions that needed nothing;
//! - a round is *abandoned* when it was cancelled or its time ran out
//!   (a pending round past `expires_at` counts as expired before housekeeping
//!   rewrites it), *open* while it can still be answered;
//! - an answer's *time to answer* is, for an answer that needed no round, its own
//!   duration; for one that came after rounds, from the question (the user's message
//!   in the thread, else the first round) to the answer after the last round;
//! - an answer was *revised* when a later answer to the same question exists in its
//!   thread (a revision re-runs the question there); otherwise it was accepted
//!   without edit;
//! - a round is a *repeat* when the same user had been asked one of its ambiguities
//!   in an earlier round within the previous 30 days;
//! - a choice *succeeded* when the answer it led to (the first answer to that
//!   question in the thread after the round) was counted as a success by learning (a
//!   thumbs-up or a follow-up asked on it) and is not voted thumbs down as the vote
//!   stands;
//! - *pills shown*: the follow-up suggestion pills each answer showed (every answered
//!   entry, revisions included; answers from before that was recorded are left out);
//!   a *click* is a question sent from a pill, counted on the day it was sent.
//!
//! Must not: write, read any user's question text into the result, or know
//! about the engine's or the UI's types.

use super::time::Ts;
use super::{Store, StoreError};
use chrono::{DateTime, Duration, NaiveDate, Utc};
use std::collections::BTreeMap;

/// Counts for one UTC day.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DayCounts {
    pub date: NaiveDate,
    /// Clarified questions + auto-resolved answers.
    pub questions: i64,
    /// Questions that got a first clarification round.
    pub clarified: i64,
    /// Answers that needed no round.
    pub auto_resolved: i64,
    /// Of those: resolved by the user's remembered or learned definition.
    pub auto_resolved_by_preference: i64,
    /// Answers that came after at least one round.
    pub answered_after_round: i64,
    /// Rounds of any number created that day.
    pub rounds: i64,
    /// Of those: answered.
    pub rounds_answered: i64,
    /// Of those: cancelled or expired.
    pub rounds_abandoned: i64,
    /// Of those: still open.
    pub rounds_open: i64,
    /// Answers revised afterwards (the rest were accepted without edit).
    pub answers_revised: i64,
    /// Rounds that asked an ambiguity the same user had been asked within 30 days.
    pub repeat_rounds: i64,
    /// Answers whose pills were recorded.
    pub pill_answers: i64,
    /// Of those: answers that showed at least two pills.
    pub pill_answers_two_plus: i64,
    /// Pills shown (every answered entry whose pills were recorded).
    pub pills_shown: i64,
    /// Questions sent by clicking a pill.
    pub pills_clicked: i64,
    /// Milliseconds from question to final answer, one per answer, ascending.
    pub answer_ms: Vec<i64>,
}

impl DayCounts {
    /// Answers (auto-resolved or after a round).
    pub fn answers(&self) -> i64 {
        self.auto_resolved + self.answered_after_round
    }

    /// The median time from question to final answer, in milliseconds.
    pub fn median_ms(&self) -> Option<i64> {
        percentile(&self.answer_ms, 50)
    }

    /// The 90th percentile of the time from question to final answer, in milliseconds.
    pub fn p90_ms(&self) -> Option<i64> {
        percentile(&self.answer_ms, 90)
    }
}

/// The `p`th percentile (nearest rank) of ascending `sorted` values; `None` when empty.
pub fn percentile(sorted: &[i64], p: u32) -> Option<i64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len();
    // nearest rank: the smallest value with at least p % of the values at or below it
    let rank = (u64::from(p.min(100)) * n as u64).div_ceil(100).max(1) as usize;
    sorted.get(rank.min(n) - 1).copied()
}

/// How one ambiguity was answered, by choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChoiceCount {
    /// `option`, `custom` or `dont_know`.
    pub kind: String,
    /// The option chosen (for `option`).
    pub option_id: Option<String>,
    pub count: i64,
    /// Of `count`: choices that led to an answer.
    pub answers: i64,
    /// Of `answers`: answers that succeeded (see the module doc).
    pub successes: i64,
}

/// One ambiguity (`term:large@wounds`): how often it was asked and answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmbiguityCounts {
    pub ambiguity_id: String,
    /// Rounds that asked it.
    pub asked: i64,
    /// Answers given, by choice, most frequent first.
    pub choices: Vec<ChoiceCount>,
}

/// Everything the Analytics page shows, over `[since, until)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnalyticsCounts {
    pub since: DateTime<Utc>,
    pub until: DateTime<Utc>,
    /// One entry per UTC day of the window, oldest first, zero-filled.
    pub days: Vec<DayCounts>,
    /// Most asked first (ties: most answered, then id), at most the limit asked for.
    pub ambiguities: Vec<AmbiguityCounts>,
}

impl AnalyticsCounts {
    /// The sum over every day.
    pub fn totals(&self) -> DayCounts {
        let mut t = DayCounts {
            date: self.until.date_naive(),
            ..DayCounts::default()
        };
        for d in &self.days {
            t.questions += d.questions;
            t.clarified += d.clarified;
            t.auto_resolved += d.auto_resolved;
            t.auto_resolved_by_preference += d.auto_resolved_by_preference;
            t.answered_after_round += d.answered_after_round;
            t.rounds += d.rounds;
            t.rounds_answered += d.rounds_answered;
            t.rounds_abandoned += d.rounds_abandoned;
            t.rounds_open += d.rounds_open;
            t.answers_revised += d.answers_revised;
            t.repeat_rounds += d.repeat_rounds;
            t.pill_answers += d.pill_answers;
            t.pill_answers_two_plus += d.pill_answers_two_plus;
            t.pills_shown += d.pills_shown;
            t.pills_clicked += d.pills_clicked;
            t.answer_ms.extend_from_slice(&d.answer_ms);
        }
        t.answer_ms.sort_unstable();
        t
    }
}

#[derive(sqlx::FromRow)]
struct AnswerRow {
    created_at: Ts,
    after_round: bool,
    assumptions_json: String,
    duration_ms: i64,
    /// The user's message with the question in the thread, the earliest.
    asked_at: Option<Ts>,
    /// The first round for the question in the thread.
    first_round_at: Option<Ts>,
    revised: bool,
    suggestions_shown: Option<i32>,
}

/// The badge sources that mean a remembered or learned definition was applied.
const PREFERENCE_SOURCES: [&str; 2] = ["saved_definition", "usual_definition"];

impl AnswerRow {
    /// Milliseconds from the question to this answer (see the module doc).
    fn answer_ms(&self) -> i64 {
        let start = if self.after_round {
            self.asked_at.or(self.first_round_at)
        } else {
            None
        };
        match start {
            Some(s) => (self.created_at.0 - s.0).num_milliseconds().max(0),
            None => self.duration_ms.max(0),
        }
    }

    /// One of its badges is the user's remembered or learned definition.
    fn by_preference(&self) -> bool {
        serde_json::from_str::<Vec<serde_json::Value>>(&self.assumptions_json)
            .unwrap_or_default()
            .iter()
            .any(|a| {
                a["source"]
                    .as_str()
                    .is_some_and(|s| PREFERENCE_SOURCES.contains(&s))
            })
    }
}

#[derive(sqlx::FromRow)]
struct RoundRow {
    created_at: Ts,
    expires_at: Ts,
    round_number: i32,
    status: String,
    asked_ambiguities_json: String,
}

#[derive(sqlx::FromRow)]
struct ChoiceRow {
    ambiguity_id: String,
    kind: String,
    option_id: Option<String>,
    /// 1 when the answer it led to succeeded, 0 when not, NULL without an answer.
    success: Option<i32>,
}

#[derive(sqlx::FromRow)]
struct AskedRow {
    user_id: i64,
    created_at: Ts,
    asked_ambiguities_json: String,
}

/// How far back a round counts as asking the same ambiguity again.
pub const REPEAT_WINDOW_DAYS: i64 = 30;

/// The most days one report covers.
pub const MAX_DAYS: i64 = 366;

impl Store {
    /// Everyone's clarification figures for the `days` UTC days ending with
    /// `now`'s day (1–366), and the `top` most asked ambiguities. Read-only.
    pub async fn analytics(
        &self,
        now: DateTime<Utc>,
        days: u32,
        top: usize,
    ) -> Result<AnalyticsCounts, StoreError> {
        let days = days.clamp(1, MAX_DAYS as u32);
        let first_day = now.date_naive() - Duration::days(i64::from(days) - 1);
        self.analytics_range(first_day, now.date_naive(), now, top).await
    }

    /// Everyone's clarification figures for the UTC days `first_day` to `last_day`
    /// (both included; at most [`MAX_DAYS`], counted from `first_day`), with `now`
    /// deciding which pending rounds have expired. Read-only.
    pub async fn analytics_range(
        &self,
        first_day: NaiveDate,
        last_day: NaiveDate,
        now: DateTime<Utc>,
        top: usize,
    ) -> Result<AnalyticsCounts, StoreError> {
        let days = (last_day - first_day).num_days().clamp(0, MAX_DAYS - 1) + 1;
        let last_day = first_day + Duration::days(days - 1);
        let since = first_day.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc();
        let until = (last_day + Duration::days(1))
            .and_hms_opt(0, 0, 0)
            .expect("midnight exists")
            .and_utc();

        let answers_sql = "SELECT h.created_at, h.assumptions_json, h.duration_ms, h.suggestions_shown, \
             EXISTS (SELECT 1 FROM clarification_rounds r WHERE r.thread_id = h.thread_id \
                     AND r.question = h.question AND r.created_at <= h.created_at) AS after_round, \
             (SELECT MIN(m.created_at) FROM messages m WHERE m.thread_id = h.thread_id \
                     AND m.role = 'user' AND m.body = h.question AND m.created_at <= h.created_at) AS asked_at, \
             (SELECT MIN(r.created_at) FROM clarification_rounds r WHERE r.thread_id = h.thread_id \
                     AND r.question = h.question AND r.created_at <= h.created_at) AS first_round_at, \
             EXISTS (SELECT 1 FROM query_history e WHERE e.thread_id = h.thread_id AND e.status = 'answered' \
                     AND e.question = h.question \
                     AND (e.created_at > h.created_at OR (e.created_at = h.created_at AND e.id > h.id))) AS revised \
             FROM query_history h \
             WHERE h.created_at >= $1 AND h.created_at < $2 AND h.status = 'answered' \
             AND NOT EXISTS (SELECT 1 FROM query_history e WHERE e.thread_id = h.thread_id AND e.status = 'answered' \
                     AND e.question = h.question \
                     AND (e.created_at < h.created_at OR (e.created_at = h.created_at AND e.id < h.id)))";
        let answers: Vec<AnswerRow> = on_pool!(&self.db, |p| sqlx::query_as(answers_sql)
            .bind(Ts::of(since))
            .bind(Ts::of(until))
            .fetch_all(p)
            .await)?;

        let rounds_sql = "SELECT created_at, expires_at, round_number, status, asked_ambiguities_json \
             FROM clarification_rounds WHERE created_at >= $1 AND created_at < $2 ORDER BY created_at, id";
        let rounds: Vec<RoundRow> = on_pool!(&self.db, |p| sqlx::query_as(rounds_sql)
            .bind(Ts::of(since))
            .bind(Ts::of(until))
            .fetch_all(p)
            .await)?;

        // Each choice with the success of the answer it led to: the first answer to
        // the round's question in its thread after the round.
        let choices_sql = "SELECT a.ambiguity_id, a.kind, a.option_id, \
             (SELECT CASE WHEN h.success_counted AND NOT EXISTS (SELECT 1 FROM answer_feedback f \
                          WHERE f.history_id = h.id AND f.rating = 'down') THEN 1 ELSE 0 END \
              FROM query_history h WHERE h.thread_id = r.thread_id AND h.question = r.question \
              AND h.status = 'answered' AND h.created_at >= r.created_at \
              ORDER BY h.created_at, h.id LIMIT 1) AS success \
             FROM clarification_answers a JOIN clarification_rounds r ON r.id = a.round_id \
             WHERE r.created_at >= $1 AND r.created_at < $2";
        let choices: Vec<ChoiceRow> = on_pool!(&self.db, |p| sqlx::query_as(choices_sql)
            .bind(Ts::of(since))
            .bind(Ts::of(until))
            .fetch_all(p)
            .await)?;

        // Every round of the window and of the 30 days before it, for repeats.
        let asked_sql = "SELECT user_id, created_at, asked_ambiguities_json FROM clarification_rounds \
             WHERE created_at >= $1 AND created_at < $2 ORDER BY created_at, id";
        let asked_rows: Vec<AskedRow> = on_pool!(&self.db, |p| sqlx::query_as(asked_sql)
            .bind(Ts::of(since - Duration::days(REPEAT_WINDOW_DAYS)))
            .bind(Ts::of(until))
            .fetch_all(p)
            .await)?;

        // Pills shown by every answered entry (revisions included), and clicks.
        let shown_sql = "SELECT created_at, suggestions_shown FROM query_history \
             WHERE created_at >= $1 AND created_at < $2 AND status = 'answered' AND suggestions_shown IS NOT NULL";
        let shown: Vec<(Ts, i32)> = on_pool!(&self.db, |p| sqlx::query_as(shown_sql)
            .bind(Ts::of(since))
            .bind(Ts::of(until))
            .fetch_all(p)
            .await)?;
        let clicks_sql = "SELECT created_at FROM messages \
             WHERE from_suggestion = $3 AND created_at >= $1 AND created_at < $2";
        let clicks: Vec<(Ts,)> = on_pool!(&self.db, |p| sqlx::query_as(clicks_sql)
            .bind(Ts::of(since))
            .bind(Ts::of(until))
            .bind(true)
            .fetch_all(p)
            .await)?;

        let mut days_out: BTreeMap<NaiveDate, DayCounts> = (0..days)
            .map(|i| {
                let date = first_day + Duration::days(i);
                (
                    date,
                    DayCounts {
                        date,
                        ..DayCounts::default()
                    },
                )
            })
            .collect();
        let mut asked: BTreeMap<String, i64> = BTreeMap::new();
        for a in &answers {
            if let Some(d) = days_out.get_mut(&a.created_at.0.date_naive()) {
                d.answer_ms.push(a.answer_ms());
                d.answers_revised += i64::from(a.revised);
                if let Some(n) = a.suggestions_shown {
                    d.pill_answers += 1;
                    d.pill_answers_two_plus += i64::from(n >= 2);
                }
                if a.after_round {
                    d.answered_after_round += 1;
                } else {
                    d.auto_resolved += 1;
                    d.auto_resolved_by_preference += i64::from(a.by_preference());
                    d.questions += 1;
                }
            }
        }
        for (at, n) in &shown {
            if let Some(d) = days_out.get_mut(&at.0.date_naive()) {
                d.pills_shown += i64::from(*n);
            }
        }
        for (at,) in &clicks {
            if let Some(d) = days_out.get_mut(&at.0.date_naive()) {
                d.pills_clicked += 1;
            }
        }
        // Repeats: each round of the window against the same user's earlier rounds.
        let mut last_asked: BTreeMap<(i64, String), Ts> = BTreeMap::new();
        for r in &asked_rows {
            let ids = serde_json::from_str::<Vec<String>>(&r.asked_ambiguities_json)
                .map_err(|e| StoreError::Corrupt(format!("asked ambiguity ids: {e}")))?;
            let window_start = Ts::of(r.created_at.0 - Duration::days(REPEAT_WINDOW_DAYS));
            let repeat = ids.iter().any(|id| {
                last_asked
                    .get(&(r.user_id, id.clone()))
                    .is_some_and(|t| *t >= window_start && *t < r.created_at)
            });
            if repeat
                && r.created_at.0 >= since
                && let Some(d) = days_out.get_mut(&r.created_at.0.date_naive())
            {
                d.repeat_rounds += 1;
            }
            for id in ids {
                last_asked.insert((r.user_id, id), r.created_at);
            }
        }
        for d in days_out.values_mut() {
            d.answer_ms.sort_unstable();
        }
        let now_ts = Ts::of(now);
        for r in &rounds {
            for id in serde_json::from_str::<Vec<String>>(&r.asked_ambiguities_json)
                .map_err(|e| StoreError::Corrupt(format!("asked ambiguity ids: {e}")))?
            {
                *asked.entry(id).or_default() += 1;
            }
            let Some(d) = days_out.get_mut(&r.created_at.0.date_naive()) else {
                continue;
            };
            d.rounds += 1;
            if r.round_number == 1 {
                d.clarified += 1;
                d.questions += 1;
            }
            match r.status.as_str() {
                "answered" => d.rounds_answered += 1,
                "abandoned" | "expired" => d.rounds_abandoned += 1,
                "pending" if r.expires_at <= now_ts => d.rounds_abandoned += 1,
                "pending" => d.rounds_open += 1,
                other => return Err(StoreError::Corrupt(format!("round status {other:?}"))),
            }
        }

        let mut per_choice: BTreeMap<(String, String, Option<String>), ChoiceCount> = BTreeMap::new();
        for c in choices {
            asked.entry(c.ambiguity_id.clone()).or_default();
            let e = per_choice
                .entry((c.ambiguity_id, c.kind.clone(), c.option_id.clone()))
                .or_insert(ChoiceCount {
                    kind: c.kind,
                    option_id: c.option_id,
                    count: 0,
                    answers: 0,
                    successes: 0,
                });
            e.count += 1;
            e.answers += i64::from(c.success.is_some());
            e.successes += i64::from(c.success == Some(1));
        }
        let mut per_ambiguity: BTreeMap<String, Vec<ChoiceCount>> = BTreeMap::new();
        for ((id, _, _), c) in per_choice {
            per_ambiguity.entry(id).or_default().push(c);
        }
        let mut ambiguities: Vec<AmbiguityCounts> = asked
            .into_iter()
            .map(|(id, asked)| {
                let mut choices = per_ambiguity.remove(&id).unwrap_or_default();
                choices.sort_by(|a, b| {
                    b.count
                        .cmp(&a.count)
                        .then_with(|| a.kind.cmp(&b.kind))
                        .then_with(|| a.option_id.cmp(&b.option_id))
                });
                AmbiguityCounts {
                    ambiguity_id: id,
                    asked,
                    choices,
                }
            })
            .collect();
        let answered = |a: &AmbiguityCounts| a.choices.iter().map(|c| c.count).sum::<i64>();
        ambiguities.sort_by(|a, b| {
            b.asked
                .cmp(&a.asked)
                .then_with(|| answered(b).cmp(&answered(a)))
                .then_with(|| a.ambiguity_id.cmp(&b.ambiguity_id))
        });
        ambiguities.truncate(top);

        Ok(AnalyticsCounts {
            since,
            until,
            days: days_out.into_values().collect(),
            ambiguities,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank_and_absent_without_values() {
        assert_eq!(percentile(&[], 50), None);
        assert_eq!(percentile(&[7], 50), Some(7));
        assert_eq!(percentile(&[7], 90), Some(7));
        let ten: Vec<i64> = (1..=10).collect();
        assert_eq!(percentile(&ten, 50), Some(5));
        assert_eq!(percentile(&ten, 90), Some(9));
        assert_eq!(percentile(&ten, 100), Some(10));
        assert_eq!(percentile(&[10, 20, 30, 40], 50), Some(20));
    }
}
