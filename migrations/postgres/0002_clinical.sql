-- The clinical (wound-care) tables that questions run against. Clarion only
-- ever reads them through a read-only transaction; the seed command fills them.
CREATE TABLE clinics (
    id           BIGINT PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    region       TEXT NOT NULL,
    care_setting TEXT NOT NULL
);

CREATE TABLE clinicians (
    id         BIGINT PRIMARY KEY,
    clinic_id  BIGINT NOT NULL REFERENCES clinics (id),
    name       TEXT   NOT NULL,
    discipline TEXT   NOT NULL
);

CREATE TABLE patients (
    id          BIGINT PRIMARY KEY,
    clinic_id   BIGINT  NOT NULL REFERENCES clinics (id),
    mrn         TEXT    NOT NULL UNIQUE,
    full_name   TEXT    NOT NULL,
    sex         TEXT    NOT NULL,
    birth_date  DATE    NOT NULL,
    diabetes    BOOLEAN NOT NULL,
    smoker      BOOLEAN NOT NULL,
    mobility    TEXT    NOT NULL,
    bmi         DOUBLE PRECISION NOT NULL
);

CREATE TABLE wounds (
    id                BIGINT PRIMARY KEY,
    patient_id        BIGINT  NOT NULL REFERENCES patients (id),
    clinic_id         BIGINT  NOT NULL REFERENCES clinics (id),
    etiology          TEXT    NOT NULL,
    location          TEXT    NOT NULL,
    stage             TEXT,
    depth             TEXT    NOT NULL,
    onset_date        DATE    NOT NULL,
    healed_date       DATE,
    status            TEXT    NOT NULL,
    infected          BOOLEAN NOT NULL,
    initial_area_cm2  DOUBLE PRECISION NOT NULL
);

CREATE TABLE assessments (
    id              BIGINT PRIMARY KEY,
    wound_id        BIGINT  NOT NULL REFERENCES wounds (id),
    clinician_id    BIGINT  NOT NULL REFERENCES clinicians (id),
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

CREATE INDEX wounds_patient ON wounds (patient_id);
CREATE INDEX wounds_clinic ON wounds (clinic_id);
CREATE INDEX assessments_wound ON assessments (wound_id, assessed_on);
CREATE INDEX assessments_date ON assessments (assessed_on);
CREATE INDEX patients_clinic ON patients (clinic_id);
