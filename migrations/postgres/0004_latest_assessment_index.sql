-- A wound's latest (or first) assessment is read as
--   SELECT … FROM assessments WHERE wound_id = $1 ORDER BY assessed_on DESC, id DESC LIMIT 1
-- for every latest_* attribute (latest area, latest pain, improving, worsening …).
-- This index is that order, and carries the measured columns so the read never visits
-- the table; it replaces (wound_id, assessed_on), of which it is a superset.
-- SQLite needs no counterpart: its (wound_id, assessed_on) index already ends in the
-- rowid (`id`), and SQLite walks it backwards for DESC, DESC.
CREATE INDEX assessments_wound_latest ON assessments (wound_id, assessed_on DESC, id DESC)
    INCLUDE (area_cm2, pain_score, length_cm, width_cm, depth_cm, exudate, tissue_type, infection_signs);
DROP INDEX IF EXISTS assessments_wound;
