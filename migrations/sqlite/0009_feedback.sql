-- Feedback and the whole history (issue 15, points 3 and 7; issue 16's verified-question
-- feedback).
--
-- History keeps every question, not only answered ones: `status` is 'answered' (the
-- existing rows), 'refused' (Clarion declined: a data change, another subject, too
-- little understood) or 'failed' (time limit, fault), with `message` the text the user
-- saw. Refused and failed rows have no plan, SQL or thread (empty texts, NULL thread).
-- `verified_id` is the verified question that answered it, if any (Analytics shows each
-- verified question's feedback). `success_counted`: this answer's preferences were
-- already counted as successful once (a thumbs-up or a follow-up asked on it), so a
-- second signal never counts twice.
ALTER TABLE query_history ADD COLUMN status TEXT NOT NULL DEFAULT 'answered'
    CHECK (status IN ('answered', 'refused', 'failed'));
ALTER TABLE query_history ADD COLUMN message TEXT;
ALTER TABLE query_history ADD COLUMN verified_id INTEGER REFERENCES verified_questions (id);
ALTER TABLE query_history ADD COLUMN success_counted BOOLEAN NOT NULL DEFAULT 0;
CREATE INDEX query_history_user_status ON query_history (user_id, status, created_at);

-- Thumbs up / down on an answer, one row per user and answer (a later vote replaces
-- the earlier). A reason and a comment only with thumbs down.
CREATE TABLE answer_feedback (
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    history_id TEXT    NOT NULL REFERENCES query_history (id) ON DELETE CASCADE,
    rating     TEXT    NOT NULL CHECK (rating IN ('up', 'down')),
    reason     TEXT    CHECK (reason IN ('wrong_cohort', 'wrong_numbers', 'too_many_questions', 'other')),
    comment    TEXT,
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    PRIMARY KEY (user_id, history_id),
    CHECK (rating = 'down' OR (reason IS NULL AND comment IS NULL))
);
CREATE INDEX answer_feedback_updated ON answer_feedback (updated_at);

-- "Was this question helpful?" on a clarification round, one row per user and round.
-- No foreign key to the round: rounds are purged after their retention, their
-- feedback stays for Analytics.
CREATE TABLE clarification_feedback (
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    round_id   TEXT    NOT NULL,
    helpful    BOOLEAN NOT NULL,
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    PRIMARY KEY (user_id, round_id)
);
CREATE INDEX clarification_feedback_updated ON clarification_feedback (updated_at);
