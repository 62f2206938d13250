-- Analytics' suggestion-pill figures (issue 15, point 8).
--
-- `query_history.suggestions_shown`: how many follow-up pills an answer showed (the
-- Ask page shows at most three); NULL for answers stored before this column existed,
-- which the pill figures leave out instead of counting as none.
-- `messages.from_suggestion`: the user's question was sent by clicking one of those
-- pills (the Ask page says so in its request's `via`), not typed.
ALTER TABLE query_history ADD COLUMN suggestions_shown INTEGER;
ALTER TABLE messages ADD COLUMN from_suggestion BOOLEAN NOT NULL DEFAULT 0;
CREATE INDEX messages_from_suggestion ON messages (from_suggestion, created_at);
CREATE INDEX query_history_created ON query_history (created_at);
