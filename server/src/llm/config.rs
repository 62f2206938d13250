//! The language model's settings (F24), read from the environment by
//! `crate::orchestrator::OrchestratorConfig`. Off unless `CLARION_LLM_URL` is set.
//! The API key is held in a [`Secret`] whose `Debug` and `Display` never show it.

use crate::error::StartupError;
use std::time::Duration;

/// A value that is never printed (`Debug` and `Display` show `[redacted]`).
#[derive(Clone, PartialEq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    pub fn new(s: impl Into<String>) -> Self {
        Secret(s.into())
    }

    /// The secret itself, for the one header that carries it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

impl std::fmt::Display for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

/// How the reply's shape is requested from the endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResponseFormat {
    /// `response_format: {type: json_schema, …}` with the generated schema; an endpoint
    /// that rejects it (HTTP 400) is asked again once with `json_object`, and from then on.
    JsonSchema,
    /// `response_format: {type: json_object}`.
    JsonObject,
    /// No `response_format` (the prompt still asks for JSON; the reply is checked anyway).
    None,
}

/// Settings of the OpenAI-compatible endpoint. `Debug` shows the endpoint without
/// credentials and never the key.
#[derive(Clone, PartialEq)]
pub struct LlmConfig {
    /// The chat-completions URL (`CLARION_LLM_URL`; a base such as `http://127.0.0.1:11434/v1`
    /// gets `/chat/completions` appended).
    pub url: String,
    /// The model name sent with every request (`CLARION_LLM_MODEL`, default `default`).
    pub model: String,
    /// `CLARION_LLM_API_KEY`, or the first line of the file `CLARION_LLM_API_KEY_FILE`.
    pub api_key: Option<Secret>,
    /// Time limit for reading a question's unknown words (`CLARION_LLM_TIMEOUT_MS`, 8000).
    pub plan_timeout: Duration,
    /// Time limit for reading a free-text answer (`CLARION_LLM_ANSWER_TIMEOUT_MS`, 4000).
    pub answer_timeout: Duration,
    /// Sampling temperature (`CLARION_LLM_TEMPERATURE`, 0).
    pub temperature: f64,
    /// Most output tokens (`CLARION_LLM_MAX_TOKENS`, 600).
    pub max_tokens: u32,
    /// Most model calls for one question, all rounds together (`CLARION_LLM_MAX_CALLS`, 2).
    pub max_calls: u32,
    /// `CLARION_LLM_RESPONSE_FORMAT`: `json_schema` (default), `json_object` or `none`.
    pub response_format: ResponseFormat,
    /// Consecutive failures that stop calls for a while (`CLARION_LLM_BREAKER_FAILURES`, 3).
    pub breaker_failures: u32,
    /// How long calls stay stopped (`CLARION_LLM_BREAKER_SECS`, 60).
    pub breaker_cooldown: Duration,
}

impl std::fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlmConfig")
            .field("endpoint", &self.endpoint_display())
            .field("model", &self.model)
            .field("api_key", &self.api_key)
            .field("plan_timeout", &self.plan_timeout)
            .field("answer_timeout", &self.answer_timeout)
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("max_calls", &self.max_calls)
            .field("response_format", &self.response_format)
            .finish_non_exhaustive()
    }
}

impl LlmConfig {
    /// A configuration for `url` with every other setting at its default.
    pub fn new(url: impl Into<String>) -> Self {
        LlmConfig {
            url: chat_url(&url.into()),
            model: "default".into(),
            api_key: None,
            plan_timeout: Duration::from_millis(8000),
            answer_timeout: Duration::from_millis(4000),
            temperature: 0.0,
            max_tokens: 600,
            max_calls: 2,
            response_format: ResponseFormat::JsonSchema,
            breaker_failures: 3,
            breaker_cooldown: Duration::from_secs(60),
        }
    }

    /// Reads the variables through `get` (already trimmed, empty = unset); `None` when
    /// `CLARION_LLM_URL` is unset (the language model is off).
    pub fn from_lookup(get: &impl Fn(&str) -> Option<String>) -> Result<Option<Self>, StartupError> {
        let Some(url) = get("CLARION_LLM_URL") else {
            return Ok(None);
        };
        if !(url.starts_with("http://") || url.starts_with("https://")) || reqwest::Url::parse(&url).is_err()
        {
            return Err(StartupError::BadConfig {
                name: "CLARION_LLM_URL",
                reason: "not an http(s) URL like http://127.0.0.1:11434/v1".into(),
            });
        }
        let mut c = LlmConfig::new(url);
        let bad = |name: &'static str, reason: String| StartupError::BadConfig { name, reason };
        let number = |name: &'static str, default: u64, min: u64, max: u64| -> Result<u64, StartupError> {
            match get(name) {
                None => Ok(default),
                Some(v) => v
                    .parse::<u64>()
                    .ok()
                    .filter(|n| (min..=max).contains(n))
                    .ok_or_else(|| bad(name, format!("{v:?} is not a whole number from {min} to {max}"))),
            }
        };
        if let Some(m) = get("CLARION_LLM_MODEL") {
            c.model = m;
        }
        c.api_key = match (get("CLARION_LLM_API_KEY"), get("CLARION_LLM_API_KEY_FILE")) {
            (Some(k), _) => Some(Secret::new(k)),
            (None, Some(path)) => {
                let text = std::fs::read_to_string(&path).map_err(|e| {
                    bad(
                        "CLARION_LLM_API_KEY_FILE",
                        format!("cannot read {path:?}: {}", e.kind()),
                    )
                })?;
                let key = text.lines().next().unwrap_or("").trim().to_owned();
                if key.is_empty() {
                    return Err(bad("CLARION_LLM_API_KEY_FILE", format!("{path:?} is empty")));
                }
                Some(Secret::new(key))
            }
            (None, None) => None,
        };
        c.plan_timeout = Duration::from_millis(number("CLARION_LLM_TIMEOUT_MS", 8000, 100, 120_000)?);
        c.answer_timeout =
            Duration::from_millis(number("CLARION_LLM_ANSWER_TIMEOUT_MS", 4000, 100, 120_000)?);
        c.max_tokens = number("CLARION_LLM_MAX_TOKENS", 600, 16, 32_000)? as u32;
        c.max_calls = number("CLARION_LLM_MAX_CALLS", 2, 0, 20)? as u32;
        c.breaker_failures = number("CLARION_LLM_BREAKER_FAILURES", 3, 1, 100)? as u32;
        c.breaker_cooldown = Duration::from_secs(number("CLARION_LLM_BREAKER_SECS", 60, 1, 86_400)?);
        if let Some(t) = get("CLARION_LLM_TEMPERATURE") {
            c.temperature = t
                .parse::<f64>()
                .ok()
                .filter(|t| (0.0..=2.0).contains(t))
                .ok_or_else(|| {
                    bad(
                        "CLARION_LLM_TEMPERATURE",
                        format!("{t:?} is not a number from 0 to 2"),
                    )
                })?;
        }
        c.response_format = match get("CLARION_LLM_RESPONSE_FORMAT").as_deref() {
            None | Some("json_schema") => ResponseFormat::JsonSchema,
            Some("json_object") => ResponseFormat::JsonObject,
            Some("none") => ResponseFormat::None,
            Some(other) => {
                return Err(bad(
                    "CLARION_LLM_RESPONSE_FORMAT",
                    format!("{other:?} is not json_schema, json_object or none"),
                ));
            }
        };
        Ok(Some(c))
    }

    /// The endpoint as it may be printed: scheme, host, port and path; never a user,
    /// password or query (the key itself travels only in a header).
    pub fn endpoint_display(&self) -> String {
        match reqwest::Url::parse(&self.url) {
            Ok(u) => format!(
                "{}://{}{}{}",
                u.scheme(),
                u.host_str().unwrap_or(""),
                u.port().map(|p| format!(":{p}")).unwrap_or_default(),
                u.path()
            ),
            Err(_) => "(unparsable URL)".into(),
        }
    }

    /// Azure OpenAI takes the key in an `api-key` header; everyone else as a bearer token.
    pub fn azure(&self) -> bool {
        reqwest::Url::parse(&self.url)
            .ok()
            .and_then(|u| u.host_str().map(|h| h.ends_with(".openai.azure.com")))
            .unwrap_or(false)
    }
}

/// `…/v1` → `…/v1/chat/completions`; a URL already ending in `/chat/completions` (an
/// Azure deployment URL with its `?api-version=`) is kept; a bare host gets
/// `/v1/chat/completions`.
fn chat_url(url: &str) -> String {
    let Ok(mut u) = reqwest::Url::parse(url) else {
        return url.to_owned();
    };
    let path = u.path().trim_end_matches('/').to_owned();
    if path.ends_with("/chat/completions") {
        return u.to_string();
    }
    let new = if path.is_empty() {
        "/v1/chat/completions".to_owned()
    } else {
        format!("{path}/chat/completions")
    };
    u.set_path(&new);
    u.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn read(pairs: &[(&str, &str)]) -> Result<Option<LlmConfig>, StartupError> {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        LlmConfig::from_lookup(&|k: &str| map.get(k).cloned())
    }

    #[test]
    fn off_without_a_url() {
        assert_eq!(read(&[("CLARION_LLM_MODEL", "x")]).unwrap(), None);
    }

    #[test]
    fn defaults_and_url_forms() {
        let c = read(&[("CLARION_LLM_URL", "http://127.0.0.1:11434/v1")])
            .unwrap()
            .unwrap();
        assert_eq!(c.url, "http://127.0.0.1:11434/v1/chat/completions");
        assert_eq!(c.plan_timeout, Duration::from_secs(8));
        assert!(c.answer_timeout < c.plan_timeout);
        assert_eq!(c.max_calls, 2);
        assert_eq!(c.response_format, ResponseFormat::JsonSchema);
        let bare = read(&[("CLARION_LLM_URL", "http://localhost:8000")])
            .unwrap()
            .unwrap();
        assert_eq!(bare.url, "http://localhost:8000/v1/chat/completions");
        let azure =
            "https://x.openai.azure.com/openai/deployments/gpt/chat/completions?api-version=2024-10-21";
        let az = read(&[("CLARION_LLM_URL", azure)]).unwrap().unwrap();
        assert_eq!(az.url, azure);
        assert!(az.azure());
        assert_eq!(
            az.endpoint_display(),
            "https://x.openai.azure.com/openai/deployments/gpt/chat/completions"
        );
    }

    #[test]
    fn the_key_is_never_printed() {
        let c = read(&[
            ("CLARION_LLM_URL", "https://user:pw@api.example.com/v1"),
            ("CLARION_LLM_API_KEY", "sk-very-secret"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(c.api_key.as_ref().unwrap().expose(), "sk-very-secret");
        let shown = format!("{c:?} {}", c.endpoint_display());
        assert!(!shown.contains("sk-very-secret"), "{shown}");
        assert!(!shown.contains("pw@"), "{}", c.endpoint_display());
    }

    #[test]
    fn key_file_and_bad_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        std::fs::write(&path, "sk-from-file\n").unwrap();
        let c = read(&[
            ("CLARION_LLM_URL", "http://h/v1"),
            ("CLARION_LLM_API_KEY_FILE", path.to_str().unwrap()),
            ("CLARION_LLM_TEMPERATURE", "0.2"),
            ("CLARION_LLM_RESPONSE_FORMAT", "json_object"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!(c.api_key.unwrap().expose(), "sk-from-file");
        assert_eq!(c.temperature, 0.2);
        assert_eq!(c.response_format, ResponseFormat::JsonObject);
        let missing = read(&[
            ("CLARION_LLM_URL", "http://h/v1"),
            ("CLARION_LLM_API_KEY_FILE", "/nonexistent/key"),
        ])
        .unwrap_err()
        .to_string();
        assert!(missing.contains("CLARION_LLM_API_KEY_FILE"), "{missing}");
        assert!(read(&[("CLARION_LLM_URL", "ftp://h")]).is_err());
        assert!(
            read(&[
                ("CLARION_LLM_URL", "http://h"),
                ("CLARION_LLM_TIMEOUT_MS", "fast")
            ])
            .is_err()
        );
        assert!(read(&[("CLARION_LLM_URL", "http://h"), ("CLARION_LLM_TEMPERATURE", "9")]).is_err());
    }
}
