//! The clarification loop's limits, read from the environment by `crate::config`.
//! Pure data: no I/O beyond the key lookup it is given.

use crate::error::StartupError;
use chrono::NaiveDate;
use std::time::Duration;

/// Limits of the clarification loop and of read-only execution.
#[derive(Clone, Debug, PartialEq)]
pub struct OrchestratorConfig {
    /// Most clarification rounds per question (`CLARION_MAX_ROUNDS`, default 2).
    pub max_rounds: u32,
    /// How long a round stays answerable (`CLARION_ROUND_TTL_SECS`, default 900).
    pub round_ttl: Duration,
    /// Most rows an answer returns (`CLARION_ROW_CAP`, default 1000).
    pub row_cap: u32,
    /// Statement time limit for an answer (`CLARION_QUERY_TIMEOUT_MS`, default 5000).
    pub query_timeout: Duration,
    /// Time limit of one option-count preview (`CLARION_PREVIEW_TIMEOUT_MS`, default 300).
    pub preview_timeout: Duration,
    /// The date questions are read against (`CLARION_TODAY=YYYY-MM-DD`); the real date
    /// when unset. Tests and the evaluation pin it for reproducible answers.
    pub today: Option<NaiveDate>,
    /// Option counts kept per (statement, data version)
    /// (`CLARION_COUNT_CACHE_TTL_SECS`, default 60; `CLARION_COUNT_CACHE_CAP`, default
    /// 10000, 0 = off).
    pub count_cache: crate::warehouse::count_cache::CountCacheConfig,
    /// An answer's rows kept per (statement, clinical change version)
    /// (`CLARION_ANSWER_CACHE_TTL_SECS`, default 60; `CLARION_ANSWER_CACHE_CAP`, default
    /// 100, 0 = off; see `crate::warehouse::answer_cache`).
    pub answer_cache: crate::warehouse::answer_cache::AnswerCacheConfig,
    /// The allowed-values cache (F17): how long a column's distinct values are fresh
    /// (`CLARION_ALLOWED_VALUES_TTL_SECS`, default 300) and most values kept per column
    /// (`CLARION_ALLOWED_VALUES_CAP`, default 500).
    pub allowed_values: crate::warehouse::AllowedValuesConfig,
    /// Each wound's latest and first assessment kept in summary tables
    /// (`CLARION_SUMMARIES`, default 1; `CLARION_SUMMARY_CHECK_SECS`, default 60).
    pub summaries: crate::warehouse::summary::SummaryConfig,
    /// Questions one user may have running at once (`CLARION_USER_CONCURRENT_QUERIES`,
    /// default 4); more are refused with 429 instead of queueing.
    pub user_concurrent_queries: usize,
    /// Most option counts previewed for one round (`CLARION_PREVIEW_CAP`, default 12);
    /// options beyond it show no count.
    pub preview_cap: usize,
    /// Most warehouse statements at once on PostgreSQL, where they share the pool with
    /// session look-ups (`CLARION_WAREHOUSE_CONNECTIONS`, default 10 of the pool's 16).
    pub warehouse_connections: usize,
    /// Answered, cancelled and expired rounds are deleted this long after they closed
    /// (`CLARION_ROUND_RETENTION_DAYS`, default 7).
    pub round_retention: Duration,
    /// Threads unused this long are deleted with their messages and rounds
    /// (`CLARION_THREAD_RETENTION_DAYS`; unset keeps them).
    pub thread_retention: Option<Duration>,
    /// The optional language model (`CLARION_LLM_URL` and friends; none = off).
    pub llm: Option<crate::llm::LlmConfig>,
    /// When a past answer is preselected or applied as "your usual definition"
    /// (`CLARION_LEARN_MIN_USES`, default 3; `CLARION_LEARN_MIN_SUCCESSES`, default 1;
    /// `CLARION_LEARN_MIN_CONFIDENCE`, default 0.8).
    pub learning: super::learning::LearningRule,
    /// Most engine readings (and, as many, option plans) kept per input
    /// (`CLARION_READING_CACHE_CAP`, default 1000, 0 = off; see `readings`).
    pub reading_cache: usize,
}

impl Default for OrchestratorConfig {
    fn default() -> Self {
        OrchestratorConfig {
            max_rounds: 2,
            round_ttl: Duration::from_secs(15 * 60),
            row_cap: 1000,
            query_timeout: Duration::from_secs(5),
            preview_timeout: Duration::from_millis(300),
            today: None,
            count_cache: crate::warehouse::count_cache::CountCacheConfig::default(),
            answer_cache: crate::warehouse::answer_cache::AnswerCacheConfig::default(),
            allowed_values: crate::warehouse::AllowedValuesConfig::default(),
            summaries: crate::warehouse::summary::SummaryConfig::default(),
            user_concurrent_queries: 4,
            preview_cap: 12,
            warehouse_connections: 10,
            round_retention: Duration::from_secs(7 * 86_400),
            thread_retention: None,
            llm: None,
            learning: super::learning::LearningRule::default(),
            reading_cache: 1000,
        }
    }
}

impl OrchestratorConfig {
    /// Reads the variables through `get` (already trimmed, empty = unset).
    pub fn from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Self, StartupError> {
        let d = OrchestratorConfig::default();
        let number = |name: &'static str, default: u64, min: u64, max: u64| -> Result<u64, StartupError> {
            match get(name) {
                None => Ok(default),
                Some(v) => v
                    .parse::<u64>()
                    .ok()
                    .filter(|n| (min..=max).contains(n))
                    .ok_or_else(|| StartupError::BadConfig {
                        name,
                        reason: format!("{v:?} is not a whole number from {min} to {max}"),
                    }),
            }
        };
        let today = match get("CLARION_TODAY") {
            None => None,
            Some(v) => {
                Some(
                    NaiveDate::parse_from_str(&v, "%Y-%m-%d").map_err(|_| StartupError::BadConfig {
                        name: "CLARION_TODAY",
                        reason: format!("{v:?} is not a date like 2026-11-01"),
                    })?,
                )
            }
        };
        Ok(OrchestratorConfig {
            max_rounds: number("CLARION_MAX_ROUNDS", d.max_rounds.into(), 0, 10)? as u32,
            round_ttl: Duration::from_secs(number("CLARION_ROUND_TTL_SECS", 900, 10, 7 * 86_400)?),
            row_cap: number("CLARION_ROW_CAP", d.row_cap.into(), 1, 100_000)? as u32,
            query_timeout: Duration::from_millis(number("CLARION_QUERY_TIMEOUT_MS", 5000, 10, 600_000)?),
            preview_timeout: Duration::from_millis(number("CLARION_PREVIEW_TIMEOUT_MS", 300, 1, 60_000)?),
            today,
            count_cache: crate::warehouse::count_cache::CountCacheConfig {
                ttl: Duration::from_secs(number("CLARION_COUNT_CACHE_TTL_SECS", 60, 1, 86_400)?),
                cap: number("CLARION_COUNT_CACHE_CAP", 10_000, 0, 1_000_000)? as usize,
            },
            answer_cache: crate::warehouse::answer_cache::AnswerCacheConfig {
                ttl: Duration::from_secs(number("CLARION_ANSWER_CACHE_TTL_SECS", 60, 1, 86_400)?),
                cap: number("CLARION_ANSWER_CACHE_CAP", 100, 0, 100_000)? as usize,
            },
            allowed_values: crate::warehouse::AllowedValuesConfig {
                ttl: Duration::from_secs(number("CLARION_ALLOWED_VALUES_TTL_SECS", 300, 1, 86_400)?),
                cap: number("CLARION_ALLOWED_VALUES_CAP", 500, 1, 100_000)? as usize,
                ..d.allowed_values.clone()
            },
            summaries: crate::warehouse::summary::SummaryConfig {
                enabled: number("CLARION_SUMMARIES", 1, 0, 1)? == 1,
                check_every: Duration::from_secs(number("CLARION_SUMMARY_CHECK_SECS", 60, 1, 86_400)?),
                ..d.summaries
            },
            user_concurrent_queries: number("CLARION_USER_CONCURRENT_QUERIES", 4, 1, 100)? as usize,
            preview_cap: number("CLARION_PREVIEW_CAP", 12, 0, 100)? as usize,
            warehouse_connections: number("CLARION_WAREHOUSE_CONNECTIONS", 10, 1, 1000)? as usize,
            round_retention: Duration::from_secs(
                number("CLARION_ROUND_RETENTION_DAYS", 7, 1, 3650)? * 86_400,
            ),
            thread_retention: match get("CLARION_THREAD_RETENTION_DAYS") {
                None => None,
                Some(_) => Some(Duration::from_secs(
                    number("CLARION_THREAD_RETENTION_DAYS", 0, 1, 36_500)? * 86_400,
                )),
            },
            llm: crate::llm::LlmConfig::from_lookup(get)?,
            learning: super::learning::LearningRule {
                min_uses: number("CLARION_LEARN_MIN_USES", 3, 1, 1000)? as i64,
                min_successes: number("CLARION_LEARN_MIN_SUCCESSES", 1, 0, 1000)? as i64,
                min_confidence: match get("CLARION_LEARN_MIN_CONFIDENCE") {
                    None => d.learning.min_confidence,
                    Some(v) => v
                        .parse::<f64>()
                        .ok()
                        .filter(|c| (0.0..1.0).contains(c))
                        .ok_or_else(|| StartupError::BadConfig {
                            name: "CLARION_LEARN_MIN_CONFIDENCE",
                            reason: format!("{v:?} is not a number from 0 up to (not including) 1"),
                        })?,
                },
            },
            reading_cache: number("CLARION_READING_CACHE_CAP", d.reading_cache as u64, 0, 1_000_000)?
                as usize,
        })
    }

    /// The execution limits for the warehouse.
    pub fn exec_limits(&self) -> crate::warehouse::exec::ExecLimits {
        crate::warehouse::exec::ExecLimits {
            row_cap: self.row_cap,
            query_timeout: self.query_timeout,
            preview_timeout: self.preview_timeout,
            max_concurrent: self.warehouse_connections,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> Result<OrchestratorConfig, StartupError> {
        OrchestratorConfig::from_lookup(&|k: &str| {
            vars.iter().find(|(n, _)| *n == k).map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn the_learning_rules_numbers_come_from_the_environment() {
        assert_eq!(
            from(&[]).unwrap().learning,
            super::super::learning::LearningRule::default()
        );
        let c = from(&[
            ("CLARION_LEARN_MIN_USES", "5"),
            ("CLARION_LEARN_MIN_SUCCESSES", "0"),
            ("CLARION_LEARN_MIN_CONFIDENCE", "0.6"),
        ])
        .unwrap();
        assert_eq!((c.learning.min_uses, c.learning.min_successes), (5, 0));
        assert!((c.learning.min_confidence - 0.6).abs() < 1e-9);
        for bad in ["1", "1.5", "-0.1", "most", "NaN"] {
            let e = from(&[("CLARION_LEARN_MIN_CONFIDENCE", bad)])
                .unwrap_err()
                .to_string();
            assert!(e.contains("CLARION_LEARN_MIN_CONFIDENCE"), "{bad}: {e}");
        }
        assert!(from(&[("CLARION_LEARN_MIN_USES", "0")]).is_err());
    }

    #[test]
    fn the_answer_cache_is_on_by_default_and_can_be_turned_off() {
        let d = from(&[]).unwrap().answer_cache;
        assert_eq!(d, crate::warehouse::answer_cache::AnswerCacheConfig::default());
        assert_eq!((d.ttl, d.cap), (Duration::from_secs(60), 100));
        let c = from(&[
            ("CLARION_ANSWER_CACHE_CAP", "0"),
            ("CLARION_ANSWER_CACHE_TTL_SECS", "5"),
        ])
        .unwrap()
        .answer_cache;
        assert_eq!((c.ttl, c.cap), (Duration::from_secs(5), 0));
        assert!(from(&[("CLARION_ANSWER_CACHE_TTL_SECS", "0")]).is_err());
        assert!(from(&[("CLARION_ANSWER_CACHE_CAP", "many")]).is_err());
    }
}
