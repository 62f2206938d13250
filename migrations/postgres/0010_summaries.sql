-- Summaries Clarion keeps of the clinical data (pre-aggregation; see server/src/sql/summary.rs
-- and server/src/warehouse/summary.rs): each wound's latest and first assessment, a copy
-- of the row a "latest pain score" / "initial area" sub-select picks (ordered by
-- assessed_on, then id). Refreshed by Clarion from the data version in summary_state
-- (row count and largest id of assessments); read by the renderer only when current.
-- No foreign keys: a summary is a cache of the clinical rows, never a reason to refuse
-- a change to them.
CREATE TABLE wound_latest_assessment (
    wound_id        BIGINT PRIMARY KEY,
    assessment_id   BIGINT  NOT NULL,
    assessed_on     DATE    NOT NULL,
    length_cm       DOUBLE PRECISION NOT NULL,
    width_cm        DOUBLE PRECISION NOT NULL,
    depth_cm        DOUBLE PRECISION NOT NULL,
    area_cm2        DOUBLE PRECISION NOT NULL,
    pain_score      INTEGER NOT NULL,
    exudate         TEXT    NOT NULL,
    tissue_type     TEXT    NOT NULL,
    infection_signs BOOLEAN NOT NULL
);

CREATE TABLE wound_first_assessment (
    wound_id        BIGINT PRIMARY KEY,
    assessment_id   BIGINT  NOT NULL,
    assessed_on     DATE    NOT NULL,
    length_cm       DOUBLE PRECISION NOT NULL,
    width_cm        DOUBLE PRECISION NOT NULL,
    depth_cm        DOUBLE PRECISION NOT NULL,
    area_cm2        DOUBLE PRECISION NOT NULL,
    pain_score      INTEGER NOT NULL,
    exudate         TEXT    NOT NULL,
    tissue_type     TEXT    NOT NULL,
    infection_signs BOOLEAN NOT NULL
);

-- The data version each summary was built at.
CREATE TABLE summary_state (
    name         TEXT PRIMARY KEY,
    row_count    BIGINT  NOT NULL,
    max_id       BIGINT  NOT NULL,
    refreshed_at TEXT    NOT NULL
);

-- A clinician's assessments (clinicians.assessment_count, "clinicians with fewer than N
-- assessments in 2025", "never recorded …"): `server introspect --indexes` found no index
-- serving it, so each clinician's count read every assessment.
CREATE INDEX assessments_clinician ON assessments (clinician_id, assessed_on);

-- The warehouse reads as clarion_warehouse (0007): it may read the summaries too.
DO $$
BEGIN
    GRANT SELECT ON wound_latest_assessment, wound_first_assessment TO clarion_warehouse;
EXCEPTION WHEN OTHERS THEN
    RAISE NOTICE 'clarion_warehouse was not granted the summaries: %', SQLERRM;
END
$$;
