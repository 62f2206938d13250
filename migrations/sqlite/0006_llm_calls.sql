-- The optional language model (F24): one row per call, never the values sent or
-- received (model name, prompt version, tokens, latency, outcome), for the audit and
-- the administrators' Analytics page; and instance-wide settings an administrator
-- changes at runtime (`llm_enabled`).
CREATE TABLE llm_calls (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id        INTEGER REFERENCES users (id),
    at             TEXT    NOT NULL,
    model          TEXT    NOT NULL,
    prompt_version TEXT    NOT NULL,
    tokens         INTEGER,
    latency_ms     INTEGER NOT NULL,
    outcome        TEXT    NOT NULL
);
CREATE INDEX llm_calls_at ON llm_calls (at);
CREATE TABLE app_settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
