-- Clinic-scoped access (issue 16). An account sees every clinic (`all_clinics`, the
-- default: existing accounts keep their access) or only the clinics listed for it in
-- `user_clinics`. The clinic ids are the warehouse's `clinics.id`; the warehouse may be
-- another database, so there is no foreign key to it. The audit log records the scope a
-- statement ran under ('all', or the clinic ids '1,2'; NULL for the command line and for
-- entries written before scopes existed).
ALTER TABLE users ADD COLUMN all_clinics BOOLEAN NOT NULL DEFAULT TRUE;
CREATE TABLE user_clinics (
    user_id   BIGINT NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    clinic_id BIGINT NOT NULL,
    PRIMARY KEY (user_id, clinic_id)
);
ALTER TABLE audit_log ADD COLUMN scope TEXT;
