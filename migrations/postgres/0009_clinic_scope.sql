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

-- Verified questions (issue 16, part 2): an administrator's answered question, with the
-- clarifications it was answered with (`definition_json`: resolutions and context) and
-- its plan, under a name and the phrasings it should match (`phrasings_json`, a JSON
-- array of normalised texts). A new question that matches is answered by this
-- definition, asks nothing, and still applies the asker's clinic scope. Retired ones
-- stay for the record (`retired_at`); `use_count` counts the questions answered by it.
CREATE TABLE verified_questions (
    id              BIGSERIAL   PRIMARY KEY,
    name            TEXT        NOT NULL,
    question        TEXT        NOT NULL,
    phrasings_json  TEXT        NOT NULL,
    definition_json TEXT        NOT NULL,
    plan_json       TEXT        NOT NULL,
    verified_by     BIGINT      NOT NULL REFERENCES users (id),
    created_at      TIMESTAMPTZ NOT NULL,
    retired_at      TIMESTAMPTZ,
    use_count       BIGINT NOT NULL DEFAULT 0
);
