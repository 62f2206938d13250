-- A change counter of the clinical tables (see server/src/warehouse/answer_cache.rs): every
-- row inserted, updated or deleted in one of them adds one to `clinical_version.version`,
-- in the same transaction as the change. An answer's rows are reused only while this
-- number is the one they were read at, and only while every trigger below is in place
-- (checked on every read of the number). Clarion itself never writes these tables; the
-- triggers count the writes of whoever loads the clinical data.
CREATE TABLE clinical_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version INTEGER NOT NULL
);
INSERT INTO clinical_version (id, version) VALUES (1, 0);

CREATE TRIGGER clinical_version_clinics_ins AFTER INSERT ON clinics
BEGIN UPDATE clinical_version SET version = version + 1 WHERE id = 1; END;
CREATE TRIGGER clinical_version_clinics_upd AFTER UPDATE ON clinics
BEGIN UPDATE clinical_version SET version = version + 1 WHERE id = 1; END;
CREATE TRIGGER clinical_version_clinics_del AFTER DELETE ON clinics
BEGIN UPDATE clinical_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER clinical_version_clinicians_ins AFTER INSERT ON clinicians
BEGIN UPDATE clinical_version SET version = version + 1 WHERE id = 1; END;
CREATE TRIGGER clinical_version_clinicians_upd AFTER UPDATE ON clinicians
BEGIN UPDATE clinical_version SET version = version + 1 WHERE id = 1; END;
CREATE TRIGGER clinical_version_clinicians_del AFTER DELETE ON clinicians
BEGIN UPDATE clinical_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER clinical_version_patients_ins AFTER INSERT ON patients
BEGIN UPDATE clinical_version SET version = version + 1 WHERE id = 1; END;
CREATE TRIGGER clinical_version_patients_upd AFTER UPDATE ON patients
BEGIN UPDATE clinical_version SET version = version + 1 WHERE id = 1; END;
CREATE TRIGGER clinical_version_patients_del AFTER DELETE ON patients
BEGIN UPDATE clinical_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER clinical_version_wounds_ins AFTER INSERT ON wounds
BEGIN UPDATE clinical_version SET version = version + 1 WHERE id = 1; END;
CREATE TRIGGER clinical_version_wounds_upd AFTER UPDATE ON wounds
BEGIN UPDATE clinical_version SET version = version + 1 WHERE id = 1; END;
CREATE TRIGGER clinical_version_wounds_del AFTER DELETE ON wounds
BEGIN UPDATE clinical_version SET version = version + 1 WHERE id = 1; END;

CREATE TRIGGER clinical_version_assessments_ins AFTER INSERT ON assessments
BEGIN UPDATE clinical_version SET version = version + 1 WHERE id = 1; END;
CREATE TRIGGER clinical_version_assessments_upd AFTER UPDATE ON assessments
BEGIN UPDATE clinical_version SET version = version + 1 WHERE id = 1; END;
CREATE TRIGGER clinical_version_assessments_del AFTER DELETE ON assessments
BEGIN UPDATE clinical_version SET version = version + 1 WHERE id = 1; END;
