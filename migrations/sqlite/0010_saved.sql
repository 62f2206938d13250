-- Saved questions (F27): a question a user saved from one of their answers, with the
-- clarifications it was answered with (as JSON text the orchestrator reads), under a
-- name they chose. Re-running one asks nothing; it is per user and scoped at run time.
CREATE TABLE saved_questions (
    id                TEXT    PRIMARY KEY,  -- 128 random bits, hex
    user_id           INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name              TEXT    NOT NULL,
    question          TEXT    NOT NULL,
    definition_json   TEXT    NOT NULL,
    plan_json         TEXT    NOT NULL,
    source_history_id TEXT,                 -- the answer it was saved from (kept if that goes)
    clarified         BOOLEAN NOT NULL DEFAULT 0,  -- the answer had clarification answers
    created_at        TEXT    NOT NULL,
    last_run_at       TEXT,
    run_count         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX saved_questions_user ON saved_questions (user_id, created_at);
CREATE INDEX saved_questions_created ON saved_questions (created_at);
