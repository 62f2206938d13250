//! Language-model calls (F24) — model, prompt version, tokens, latency and outcome,
//! never the values sent or received — and the instance-wide runtime switch.

use super::time::Ts;
use super::{Store, StoreError};
use chrono::{DateTime, NaiveDate, Utc};
use std::collections::BTreeMap;

/// One call to record.
#[derive(Clone, Debug)]
pub struct NewLlmCall<'a> {
    pub user_id: Option<i64>,
    pub model: &'a str,
    pub prompt_version: &'a str,
    pub tokens: Option<i64>,
    pub latency_ms: i64,
    /// `ok` or a failure code (`timeout`, `http`, `schema`, `invalid`, …).
    pub outcome: &'a str,
}

/// Calls on one UTC day.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LlmDay {
    pub date: NaiveDate,
    pub calls: i64,
    pub failures: i64,
    pub tokens: i64,
    /// Mean latency of the day's calls, milliseconds.
    pub mean_latency_ms: i64,
}

const LLM_ENABLED: &str = "llm_enabled";

impl Store {
    /// Records one language-model call.
    pub async fn record_llm_call(&self, c: NewLlmCall<'_>, now: DateTime<Utc>) -> Result<(), StoreError> {
        let sql = "INSERT INTO llm_calls (user_id, at, model, prompt_version, tokens, latency_ms, outcome) \
                   VALUES ($1, $2, $3, $4, $5, $6, $7)";
        on_pool!(self.database(), |p| sqlx::query(sql)
            .bind(c.user_id)
            .bind(Ts::of(now))
            .bind(c.model)
            .bind(c.prompt_version)
            .bind(c.tokens)
            .bind(c.latency_ms)
            .bind(c.outcome)
            .execute(p)
            .await
            .map(|_| ()))?;
        Ok(())
    }

    /// Calls per UTC day over `[since, until)`, oldest first, days without calls left out.
    pub async fn llm_usage(
        &self,
        since: DateTime<Utc>,
        until: DateTime<Utc>,
    ) -> Result<Vec<LlmDay>, StoreError> {
        let sql = "SELECT at, tokens, latency_ms, outcome FROM llm_calls WHERE at >= $1 AND at < $2";
        let rows: Vec<(Ts, Option<i64>, i64, String)> = on_pool!(self.database(), |p| sqlx::query_as(sql)
            .bind(Ts::of(since))
            .bind(Ts::of(until))
            .fetch_all(p)
            .await)?;
        let mut days: BTreeMap<NaiveDate, (LlmDay, i64)> = BTreeMap::new();
        for (at, tokens, latency, outcome) in rows {
            let date = at.0.date_naive();
            let (d, total) = days.entry(date).or_insert_with(|| {
                (
                    LlmDay {
                        date,
                        ..LlmDay::default()
                    },
                    0,
                )
            });
            d.calls += 1;
            d.failures += i64::from(outcome != "ok");
            d.tokens += tokens.unwrap_or(0);
            *total += latency;
        }
        Ok(days
            .into_values()
            .map(|(mut d, total)| {
                d.mean_latency_ms = if d.calls > 0 { total / d.calls } else { 0 };
                d
            })
            .collect())
    }

    /// The administrators' runtime switch for the language model (default on).
    pub async fn llm_enabled(&self) -> Result<bool, StoreError> {
        let sql = "SELECT value FROM app_settings WHERE key = $1";
        let v: Option<(String,)> = on_pool!(self.database(), |p| sqlx::query_as(sql)
            .bind(LLM_ENABLED)
            .fetch_optional(p)
            .await)?;
        Ok(v.is_none_or(|(v,)| v != "0"))
    }

    /// Switches the language model on or off for every replica.
    pub async fn set_llm_enabled(&self, on: bool) -> Result<(), StoreError> {
        let sql = "INSERT INTO app_settings (key, value) VALUES ($1, $2) \
                   ON CONFLICT (key) DO UPDATE SET value = excluded.value";
        on_pool!(self.database(), |p| sqlx::query(sql)
            .bind(LLM_ENABLED)
            .bind(if on { "1" } else { "0" })
            .execute(p)
            .await
            .map(|_| ()))?;
        Ok(())
    }
}
