//! The HTTP side: one chat-completions request with a time limit, `Retry-After`
//! honoured once on 429, a typed error for every way it can fail (never the key, never
//! the reply text), and a circuit breaker that stops calling for a while after repeated
//! failures.

use super::config::{LlmConfig, ResponseFormat};
use serde_json::{Value, json};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Longest `Retry-After` waited for (and only within the call's time limit).
const MAX_RETRY_AFTER: Duration = Duration::from_secs(5);

/// Why a call gave nothing usable. `Display` is what the thinking step says.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    #[error("it did not answer within {} ms", .0.as_millis())]
    Timeout(Duration),
    #[error("it could not be reached")]
    Connect,
    #[error("it answered HTTP {0}")]
    Http(u16),
    #[error("it is rate-limited (HTTP 429)")]
    RateLimited,
    #[error("its reply was not JSON")]
    Malformed,
    #[error("its reply did not match the expected shape")]
    Schema,
    #[error("it failed {0} times in a row and is paused for {1} s")]
    CircuitOpen(u32, u64),
    #[error("this question already used its {0} model call(s)")]
    CallLimit(u32),
    #[error("it is switched off in Settings")]
    SwitchedOff,
}

impl LlmError {
    /// A short code for the audit log and analytics.
    pub fn code(&self) -> &'static str {
        match self {
            LlmError::Timeout(_) => "timeout",
            LlmError::Connect => "connect",
            LlmError::Http(_) => "http",
            LlmError::RateLimited => "rate_limited",
            LlmError::Malformed => "malformed",
            LlmError::Schema => "schema",
            LlmError::CircuitOpen(..) => "circuit_open",
            LlmError::CallLimit(_) => "call_limit",
            LlmError::SwitchedOff => "off",
        }
    }
}

/// A successful exchange: the message content and what it cost.
#[derive(Clone, Debug)]
pub struct ChatReply {
    pub content: String,
    pub tokens: Option<u32>,
    /// HTTP requests made (2 when a 429 was retried or the schema format was refused).
    pub requests: u32,
}

#[derive(Debug, Default)]
struct Breaker {
    failures: u32,
    open_until: Option<Instant>,
}

/// What `/healthz` reports.
#[derive(Clone, Debug, serde::Serialize)]
pub struct BreakerStatus {
    pub state: &'static str,
    pub consecutive_failures: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paused_for_secs: Option<u64>,
}

/// The HTTP client with its breaker.
#[derive(Debug)]
pub struct Client {
    pub config: LlmConfig,
    http: reqwest::Client,
    breaker: Mutex<Breaker>,
    /// The endpoint refused `json_schema`: use `json_object` from now on.
    schema_refused: AtomicBool,
}

impl Client {
    pub fn new(config: LlmConfig) -> Self {
        // rustls with the ring provider, installed once per process.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(3))
            .build()
            .unwrap_or_else(|e| {
                tracing::warn!(error = %e, "language model: default HTTP client used");
                reqwest::Client::new()
            });
        Client {
            config,
            http,
            breaker: Mutex::new(Breaker::default()),
            schema_refused: AtomicBool::new(false),
        }
    }

    /// The breaker's state now.
    pub fn status(&self) -> BreakerStatus {
        let b = self.breaker.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        match b.open_until.filter(|u| *u > now) {
            Some(u) => BreakerStatus {
                state: "paused",
                consecutive_failures: b.failures,
                paused_for_secs: Some((u - now).as_secs().max(1)),
            },
            None => BreakerStatus {
                state: if b.failures == 0 { "ok" } else { "failing" },
                consecutive_failures: b.failures,
                paused_for_secs: None,
            },
        }
    }

    fn admit(&self) -> Result<(), LlmError> {
        let b = self.breaker.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(u) = b.open_until
            && u > Instant::now()
        {
            return Err(LlmError::CircuitOpen(
                b.failures,
                (u - Instant::now()).as_secs().max(1),
            ));
        }
        Ok(())
    }

    /// Records the outcome of a call (a reply that proved unusable counts as a failure).
    pub fn record(&self, ok: bool) {
        let mut b = self.breaker.lock().unwrap_or_else(|e| e.into_inner());
        if ok {
            if b.failures >= self.config.breaker_failures {
                tracing::info!("language model: answering again; calls resumed");
            }
            *b = Breaker::default();
            return;
        }
        b.failures += 1;
        if b.failures >= self.config.breaker_failures {
            b.open_until = Some(Instant::now() + self.config.breaker_cooldown);
            tracing::warn!(
                failures = b.failures,
                pause_secs = self.config.breaker_cooldown.as_secs(),
                "language model: failing repeatedly; calls paused (deterministic answers only)"
            );
        }
    }

    /// One chat completion: `system` and `user` messages, the reply shaped by `schema`.
    /// Transport and HTTP failures are recorded in the breaker here; the caller records
    /// whether a reply it got was usable.
    pub async fn chat(
        &self,
        system: &str,
        user: &str,
        schema: &Value,
        timeout: Duration,
    ) -> Result<ChatReply, LlmError> {
        self.admit()?;
        let deadline = Instant::now() + timeout;
        let mut requests = 0;
        let mut retried_429 = false;
        let mut format = match self.config.response_format {
            ResponseFormat::JsonSchema if self.schema_refused.load(Ordering::Relaxed) => {
                ResponseFormat::JsonObject
            }
            f => f,
        };
        loop {
            requests += 1;
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.record(false);
                return Err(LlmError::Timeout(timeout));
            }
            let body = self.body(system, user, schema, format);
            let mut req = self.http.post(&self.config.url).timeout(left).json(&body);
            if let Some(k) = &self.config.api_key {
                req = if self.config.azure() {
                    req.header("api-key", k.expose())
                } else {
                    req.bearer_auth(k.expose())
                };
            }
            let resp = match req.send().await {
                Ok(r) => r,
                Err(e) => {
                    self.record(false);
                    return Err(if e.is_timeout() {
                        LlmError::Timeout(timeout)
                    } else {
                        LlmError::Connect
                    });
                }
            };
            let status = resp.status();
            if status.as_u16() == 429 {
                let wait = retry_after(resp.headers()).unwrap_or(Duration::from_secs(1));
                if !retried_429 && wait <= MAX_RETRY_AFTER && Instant::now() + wait < deadline {
                    retried_429 = true;
                    tokio::time::sleep(wait).await;
                    continue;
                }
                self.record(false);
                return Err(LlmError::RateLimited);
            }
            if status.as_u16() == 400 && format == ResponseFormat::JsonSchema {
                // An endpoint without structured outputs: ask once more for plain JSON.
                self.schema_refused.store(true, Ordering::Relaxed);
                tracing::info!("language model: json_schema refused; using json_object");
                format = ResponseFormat::JsonObject;
                continue;
            }
            if !status.is_success() {
                self.record(false);
                return Err(LlmError::Http(status.as_u16()));
            }
            let json: Value =
                match tokio::time::timeout(deadline.saturating_duration_since(Instant::now()), resp.json())
                    .await
                {
                    Ok(Ok(v)) => v,
                    Ok(Err(_)) => {
                        self.record(false);
                        return Err(LlmError::Malformed);
                    }
                    Err(_) => {
                        self.record(false);
                        return Err(LlmError::Timeout(timeout));
                    }
                };
            let Some(content) = json
                .pointer("/choices/0/message/content")
                .and_then(Value::as_str)
                .map(str::to_owned)
            else {
                self.record(false);
                return Err(LlmError::Malformed);
            };
            let tokens = json
                .pointer("/usage/total_tokens")
                .and_then(Value::as_u64)
                .and_then(|t| u32::try_from(t).ok());
            return Ok(ChatReply {
                content,
                tokens,
                requests,
            });
        }
    }

    fn body(&self, system: &str, user: &str, schema: &Value, format: ResponseFormat) -> Value {
        let mut body = json!({
            "model": self.config.model,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
            "temperature": self.config.temperature,
            "max_tokens": self.config.max_tokens,
            "stream": false,
        });
        match format {
            ResponseFormat::JsonSchema => {
                body["response_format"] = json!({
                    "type": "json_schema",
                    "json_schema": {"name": "clarion_reply", "schema": schema, "strict": false},
                });
            }
            ResponseFormat::JsonObject => body["response_format"] = json!({"type": "json_object"}),
            ResponseFormat::None => {}
        }
        body
    }

    /// Start-up check: is anything answering at the endpoint? Never fails start-up;
    /// the result is only logged.
    pub async fn probe(&self) -> Result<(), String> {
        let url = self.config.url.clone();
        let models = url
            .split('?')
            .next()
            .unwrap_or(&url)
            .trim_end_matches("/chat/completions")
            .to_owned()
            + "/models";
        let mut req = self.http.get(&models).timeout(Duration::from_secs(3));
        if let Some(k) = &self.config.api_key {
            req = if self.config.azure() {
                req.header("api-key", k.expose())
            } else {
                req.bearer_auth(k.expose())
            };
        }
        match req.send().await {
            Ok(r) if r.status().is_success() || r.status().as_u16() == 404 => Ok(()),
            Ok(r) => Err(format!("HTTP {}", r.status().as_u16())),
            Err(e) if e.is_timeout() => Err("no answer within 3 s".into()),
            Err(_) => Err("not reachable".into()),
        }
    }
}

/// `Retry-After` in seconds (an HTTP date is read as "a second").
fn retry_after(h: &reqwest::header::HeaderMap) -> Option<Duration> {
    let v = h.get(reqwest::header::RETRY_AFTER)?.to_str().ok()?.trim();
    match v.parse::<f64>() {
        Ok(s) if s.is_finite() && s >= 0.0 => Some(Duration::from_secs_f64(s)),
        _ => Some(Duration::from_secs(1)),
    }
}
