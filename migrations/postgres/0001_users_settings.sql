-- Clarion's own tables: users and their settings.
CREATE TABLE users (
    id            BIGSERIAL PRIMARY KEY,
    username      TEXT        NOT NULL UNIQUE,
    display_name  TEXT        NOT NULL,
    role          TEXT        NOT NULL CHECK (role IN ('clinician', 'admin')),
    password_hash TEXT        NOT NULL,
    created_at    TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE user_settings (
    user_id             BIGINT      PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    skip_clarifications BOOLEAN     NOT NULL DEFAULT FALSE,
    sensitivity         TEXT        NOT NULL DEFAULT 'balanced'
                                    CHECK (sensitivity IN ('fewer', 'balanced', 'more')),
    updated_at          TIMESTAMPTZ NOT NULL DEFAULT now()
);
