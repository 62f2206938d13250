-- The clinical (wound-care) tables that questions run against. Clarion only
-- ever reads them through a read-only connection; the seed command fills them.
CREATE TABLE clinics (
    id        INTEGER PRIMARY KEY,
    name      TEXT NOT NULL UNIQUE,
    region    TEXT NOT NULL,
    care_setting TEXT NOT NULL   -- hospital_outpatient | community | long_term_care
);

CREATE TABLE clinicians (
    id         INTEGER PRIMARY KEY,
    clinic_id  INTEGER NOT NULL REFERENCES clinics (id),
    name       TEXT    NOT NULL,
    discipline TEXT    NOT NULL  -- wound_nurse | physician | podiatrist | vascular_surgeon
);

CREATE TABLE patients (
    id          INTEGER PRIMARY KEY,
    clinic_id   INTEGER NOT NULL REFERENCES clinics (id),
    mrn         TEXT    NOT NULL UNIQUE,
    full_name   TEXT    NOT NULL,
    sex         TEXT    NOT NULL, -- female | male
    birth_date  TEXT    NOT NULL, -- ISO date
    diabetes    BOOLEAN NOT NULL,
    smoker      BOOLEAN NOT NULL,
    mobility    TEXT    NOT NULL, -- independent | assisted | wheelchair | bedbound
    bmi         REAL    NOT NULL
);

CREATE TABLE wounds (
    id                INTEGER PRIMARY KEY,
    patient_id        INTEGER NOT NULL REFERENCES patients (id),
    clinic_id         INTEGER NOT NULL REFERENCES clinics (id),
    etiology          TEXT    NOT NULL, -- pressure_injury | diabetic_foot_ulcer | venous_leg_ulcer | arterial_leg_ulcer | surgical | skin_tear | burn | trauma
    location          TEXT    NOT NULL, -- sacrum | heel | ankle | lower_leg | foot | toe | hip | abdomen | arm | back | ...
    stage             TEXT,             -- pressure injuries only: stage_1..stage_4 | unstageable | deep_tissue
    depth             TEXT    NOT NULL, -- superficial | partial_thickness | full_thickness
    onset_date        TEXT    NOT NULL,
    healed_date       TEXT,             -- NULL while open
    status            TEXT    NOT NULL, -- open | healed | amputated
    infected          BOOLEAN NOT NULL, -- ever had a clinically diagnosed infection
    initial_area_cm2  REAL    NOT NULL
);

CREATE TABLE assessments (
    id              INTEGER PRIMARY KEY,
    wound_id        INTEGER NOT NULL REFERENCES wounds (id),
    clinician_id    INTEGER NOT NULL REFERENCES clinicians (id),
    assessed_on     TEXT    NOT NULL,
    length_cm       REAL    NOT NULL,
    width_cm        REAL    NOT NULL,
    depth_cm        REAL    NOT NULL,
    area_cm2        REAL    NOT NULL,
    pain_score      INTEGER NOT NULL, -- 0..10
    exudate         TEXT    NOT NULL, -- none | low | moderate | high
    tissue_type     TEXT    NOT NULL, -- epithelial | granulation | slough | necrotic
    infection_signs BOOLEAN NOT NULL
);

CREATE INDEX wounds_patient ON wounds (patient_id);
CREATE INDEX wounds_clinic ON wounds (clinic_id);
CREATE INDEX assessments_wound ON assessments (wound_id, assessed_on);
CREATE INDEX assessments_date ON assessments (assessed_on);
CREATE INDEX patients_clinic ON patients (clinic_id);
