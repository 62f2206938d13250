-- An answer's rows as they were shown (the ResultTable JSON, at most the row cap),
-- so opening a thread shows what was seen without running anything again.
-- NULL for answers recorded before this column existed.
ALTER TABLE query_history ADD COLUMN result_json TEXT;
CREATE INDEX query_history_thread ON query_history (thread_id, created_at);
