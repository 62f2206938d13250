-- A change counter of the clinical tables (see server/src/warehouse/answer_cache.rs): every
-- statement that inserts, updates, deletes or truncates rows of one of them adds one to
-- `clinical_version.version`, in the same transaction as the change. An answer's rows are
-- reused only while this number is the one they were read at, and only while the trigger
-- is in place and enabled ALWAYS on every clinical table (checked on every read of the
-- number; ALWAYS so that logical replication and `session_replication_role = replica`
-- writes count too). Clarion itself never writes these tables.
CREATE TABLE clinical_version (
    id      INTEGER PRIMARY KEY CHECK (id = 1),
    version BIGINT  NOT NULL
);
INSERT INTO clinical_version (id, version) VALUES (1, 0);

-- SECURITY DEFINER: whoever may write a clinical table may count its change, without a
-- privilege on clinical_version of their own. The search path is fixed at creation.
CREATE FUNCTION clinical_version_bump() RETURNS trigger
LANGUAGE plpgsql SECURITY DEFINER SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE clinical_version SET version = version + 1 WHERE id = 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER clinical_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON clinics
    FOR EACH STATEMENT EXECUTE FUNCTION clinical_version_bump();
CREATE TRIGGER clinical_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON clinicians
    FOR EACH STATEMENT EXECUTE FUNCTION clinical_version_bump();
CREATE TRIGGER clinical_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON patients
    FOR EACH STATEMENT EXECUTE FUNCTION clinical_version_bump();
CREATE TRIGGER clinical_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON wounds
    FOR EACH STATEMENT EXECUTE FUNCTION clinical_version_bump();
CREATE TRIGGER clinical_version_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON assessments
    FOR EACH STATEMENT EXECUTE FUNCTION clinical_version_bump();
ALTER TABLE clinics ENABLE ALWAYS TRIGGER clinical_version_bump;
ALTER TABLE clinicians ENABLE ALWAYS TRIGGER clinical_version_bump;
ALTER TABLE patients ENABLE ALWAYS TRIGGER clinical_version_bump;
ALTER TABLE wounds ENABLE ALWAYS TRIGGER clinical_version_bump;
ALTER TABLE assessments ENABLE ALWAYS TRIGGER clinical_version_bump;
