-- Clarion's own tables, part 2: sign-in state (sessions, API tokens, failed
-- sign-ins) and the clarification loop (threads, messages, rounds, answers,
-- preferences, history, audit). Every row belongs to one user.
--
-- The application passes the clock in; no statement reads the time itself.

CREATE TABLE sessions (
    token_hash TEXT        PRIMARY KEY,  -- SHA-256 of the cookie's secret; the secret is never stored
    user_id    BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX sessions_user ON sessions (user_id);
CREATE INDEX sessions_expires ON sessions (expires_at);

CREATE TABLE api_tokens (
    id           BIGSERIAL   PRIMARY KEY,
    user_id      BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT        NOT NULL,
    token_hash   TEXT        NOT NULL UNIQUE,  -- SHA-256 of the secret
    prefix       TEXT        NOT NULL,         -- first characters, to tell tokens apart
    created_at   TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ
);
CREATE INDEX api_tokens_user ON api_tokens (user_id);

CREATE TABLE login_failures (
    id        BIGSERIAL   PRIMARY KEY,
    username  TEXT        NOT NULL,
    ip        TEXT        NOT NULL,
    failed_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX login_failures_key ON login_failures (username, ip, failed_at);
CREATE INDEX login_failures_at ON login_failures (failed_at);

CREATE TABLE threads (
    id         TEXT        PRIMARY KEY,  -- 128 random bits, hex
    user_id    BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    title      TEXT        NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX threads_user ON threads (user_id, updated_at);

CREATE TABLE messages (
    id           BIGSERIAL   PRIMARY KEY,
    thread_id    TEXT        NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    role         TEXT        NOT NULL CHECK (role IN ('user', 'assistant')),
    body         TEXT        NOT NULL,
    payload_json TEXT,
    created_at   TIMESTAMPTZ NOT NULL
);
CREATE INDEX messages_thread ON messages (thread_id, id);

CREATE TABLE clarification_rounds (
    id                     TEXT        PRIMARY KEY,  -- 128 random bits, hex
    user_id                BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    thread_id              TEXT        NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    question               TEXT        NOT NULL,
    round_number           INTEGER     NOT NULL CHECK (round_number >= 1),
    previous_round_id      TEXT        REFERENCES clarification_rounds (id) ON DELETE SET NULL,
    understanding_json     TEXT        NOT NULL,
    questions_json         TEXT        NOT NULL,
    asked_ambiguities_json TEXT        NOT NULL,  -- JSON array of ambiguity ids
    status                 TEXT        NOT NULL
                                       CHECK (status IN ('pending', 'answered', 'expired', 'abandoned')),
    created_at             TIMESTAMPTZ NOT NULL,
    expires_at             TIMESTAMPTZ NOT NULL,
    closed_at              TIMESTAMPTZ
);
CREATE INDEX clarification_rounds_user ON clarification_rounds (user_id, created_at);
CREATE INDEX clarification_rounds_thread ON clarification_rounds (thread_id, created_at);
CREATE INDEX clarification_rounds_pending ON clarification_rounds (status, expires_at);

CREATE TABLE clarification_answers (
    id           BIGSERIAL   PRIMARY KEY,
    round_id     TEXT        NOT NULL REFERENCES clarification_rounds (id) ON DELETE CASCADE,
    user_id      BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    ambiguity_id TEXT        NOT NULL,
    kind         TEXT        NOT NULL CHECK (kind IN ('option', 'custom', 'dont_know')),
    option_id    TEXT,
    custom_json  TEXT,
    remember     BOOLEAN     NOT NULL DEFAULT FALSE,
    created_at   TIMESTAMPTZ NOT NULL,
    UNIQUE (round_id, ambiguity_id)
);
CREATE INDEX clarification_answers_ambiguity ON clarification_answers (ambiguity_id);

CREATE TABLE preferences (
    id           BIGSERIAL   PRIMARY KEY,
    user_id      BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    signature    TEXT        NOT NULL,  -- which ambiguity, independent of wording
    choice_key   TEXT        NOT NULL,  -- 'option:<id>' or 'custom:<json>': one row per choice
    option_id    TEXT,
    custom_json  TEXT,
    label        TEXT        NOT NULL,
    use_count    BIGINT      NOT NULL DEFAULT 0,
    successes    BIGINT      NOT NULL DEFAULT 0,
    remembered   BOOLEAN     NOT NULL DEFAULT FALSE,
    created_at   TIMESTAMPTZ NOT NULL,
    last_used_at TIMESTAMPTZ NOT NULL,
    CHECK ((option_id IS NULL) <> (custom_json IS NULL)),
    UNIQUE (user_id, signature, choice_key)
);

CREATE TABLE query_history (
    id                  TEXT        PRIMARY KEY,  -- 128 random bits, hex
    user_id             BIGINT      NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    thread_id           TEXT        REFERENCES threads (id) ON DELETE SET NULL,
    question            TEXT        NOT NULL,
    plan_json           TEXT        NOT NULL,
    sql_text            TEXT        NOT NULL,
    clarifications_json TEXT        NOT NULL,
    assumptions_json    TEXT        NOT NULL,
    row_count           BIGINT      NOT NULL,
    duration_ms         BIGINT      NOT NULL,
    created_at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX query_history_user ON query_history (user_id, created_at);

-- Who ran which SQL. The bound values are deliberately absent: only their count.
CREATE TABLE audit_log (
    id          BIGSERIAL   PRIMARY KEY,
    user_id     BIGINT      REFERENCES users (id),  -- NULL: the command line
    at          TIMESTAMPTZ NOT NULL,
    sql_text    TEXT        NOT NULL,
    param_count BIGINT      NOT NULL,
    row_count   BIGINT      NOT NULL,
    duration_ms BIGINT      NOT NULL,
    outcome     TEXT        NOT NULL CHECK (outcome IN ('ok', 'error', 'timeout'))
);
CREATE INDEX audit_log_at ON audit_log (at);
CREATE INDEX audit_log_user ON audit_log (user_id, at);
