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
//!   rewrites it), *open* while it can still be answered.
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
}

/// How one ambiguity was answered, by choice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChoiceCount {
    /// `option`, `custom` or `dont_know`.
    pub kind: String,
    /// The option chosen (for `option`).
    pub option_id: Option<String>,
    pub count: i64,
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
        }
        t
    }
}

#[derive(sqlx::FromRow)]
struct AnswerRow {
    created_at: Ts,
    after_round: bool,
    assumptions_json: String,
}

/// The badge sources that mean a remembered or learned definition was applied.
const PREFERENCE_SOURCES: [&str; 2] = ["saved_definition", "usual_definition"];

impl AnswerRow {
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
    n: i64,
}

impl Store {
    /// Everyone's clarification figures for the `days` UTC days ending with
    /// `now`'s day (1–366), and the `top` most asked ambiguities. Read-only.
    pub async fn analytics(
        &self,
        now: DateTime<Utc>,
        days: u32,
        top: usize,
    ) -> Result<AnalyticsCounts, StoreError> {
        let days = days.clamp(1, 366);
        let first_day = now.date_naive() - Duration::days(i64::from(days) - 1);
        let since = first_day.and_hms_opt(0, 0, 0).expect("midnight exists").and_utc();
        let until = (now.date_naive() + Duration::days(1))
            .and_hms_opt(0, 0, 0)
            .expect("midnight exists")
            .and_utc();

        let answers_sql = "SELECT h.created_at, h.assumptions_json, \
             EXISTS (SELECT 1 FROM clarification_rounds r WHERE r.thread_id = h.thread_id \
                     AND r.question = h.question AND r.created_at <= h.created_at) AS after_round \
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
             FROM clarification_rounds WHERE created_at >= $1 AND created_at < $2";
        let rounds: Vec<RoundRow> = on_pool!(&self.db, |p| sqlx::query_as(rounds_sql)
            .bind(Ts::of(since))
            .bind(Ts::of(until))
            .fetch_all(p)
            .await)?;

        let choices_sql = "SELECT a.ambiguity_id, a.kind, a.option_id, COUNT(*) AS n \
             FROM clarification_answers a JOIN clarification_rounds r ON r.id = a.round_id \
             WHERE r.created_at >= $1 AND r.created_at < $2 \
             GROUP BY a.ambiguity_id, a.kind, a.option_id";
        let choices: Vec<ChoiceRow> = on_pool!(&self.db, |p| sqlx::query_as(choices_sql)
            .bind(Ts::of(since))
            .bind(Ts::of(until))
            .fetch_all(p)
            .await)?;

        let mut days_out: BTreeMap<NaiveDate, DayCounts> = (0..i64::from(days))
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
                if a.after_round {
                    d.answered_after_round += 1;
                } else {
                    d.auto_resolved += 1;
                    d.auto_resolved_by_preference += i64::from(a.by_preference());
                    d.questions += 1;
                }
            }
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

        let mut per_ambiguity: BTreeMap<String, Vec<ChoiceCount>> = BTreeMap::new();
        for c in choices {
            asked.entry(c.ambiguity_id.clone()).or_default();
            per_ambiguity
                .entry(c.ambiguity_id)
                .or_default()
                .push(ChoiceCount {
                    kind: c.kind,
                    option_id: c.option_id,
                    count: c.n,
                });
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
