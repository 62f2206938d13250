-- Hardening: sign-in limits per address (across usernames), an idle timeout
-- for sessions, and API tokens that can expire.

CREATE INDEX login_failures_ip ON login_failures (ip, failed_at);

-- When the session last served a request (NULL: not since sign-in).
ALTER TABLE sessions ADD COLUMN last_seen_at TIMESTAMPTZ;

-- After this the token stops working (NULL: until revoked or the password changes).
ALTER TABLE api_tokens ADD COLUMN expires_at TIMESTAMPTZ;
