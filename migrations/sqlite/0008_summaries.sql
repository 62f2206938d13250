-- Summaries Clarion keeps of the clinical data (pre-aggregation; see server/src/sql/summary.rs
-- and server/src/warehouse/summary.rs): each wound's latest and first assessment, a copy
-- of the row a "latest pain score" / "initial area" sub-select picks (ordered by
-- assessed_on, then id). Refreshed by Clarion from the data version in summary_state
-- (row count and largest id of assessments); read by the renderer only when current.
-- No foreign keys: a summary is a cache of the clinical rows, never a reason to refuse
-- a change to them.
CREATE TABLE wound_latest_assessment (
    wound_id        INTEGER PRIMARY KEY,
    assessment_id   INTEGER NOT NULL,
    assessed_on     TEXT    NOT NULL,
    length_cm       REAL    NOT NULL,
    width_cm        REAL    NOT NULL,
    depth_cm        REAL    NOT NULL,
    area_cm2        REAL    NOT NULL,
    pain_score      INTEGER NOT NULL,
    exudate         TEXT    NOT NULL,
    tissue_type     TEXT    NOT NULL,
    infection_signs BOOLEAN NOT NULL
);

CREATE TABLE wound_first_assessment (
    wound_id        INTEGER PRIMARY KEY,
    assessment_id   INTEGER NOT NULL,
    assessed_on     TEXT    NOT NULL,
    length_cm       REAL    NOT NULL,
    width_cm        REAL    NOT NULL,
    depth_cm        REAL    NOT NULL,
    area_cm2        REAL    NOT NULL,
    pain_score      INTEGER NOT NULL,
    exudate         TEXT    NOT NULL,
    tissue_type     TEXT    NOT NULL,
    infection_signs BOOLEAN NOT NULL
);

-- The data version each summary was built at.
CREATE TABLE summary_state (
    name         TEXT PRIMARY KEY,
    row_count    INTEGER NOT NULL,
    max_id       INTEGER NOT NULL,
    refreshed_at TEXT    NOT NULL
);

-- A clinician's assessments (clinicians.assessment_count, "clinicians with fewer than N
-- assessments in 2025", "never recorded …"): `server introspect --indexes` found no index
-- serving it, so each clinician's count read every assessment (3–4 s at the demo size).
CREATE INDEX assessments_clinician ON assessments (clinician_id, assessed_on);
