-- The operator console's sessions (docs/console.md): kept on the server so that every request
-- reads its session with its operator, and disabling the operator, a password change or a
-- second-factor reset (each moves the operator's token generation on) ends it at once on every
-- process. The cookie's value is never stored, only its SHA-256; the CSRF token every form of
-- the session carries is stored as it is sent, useless without the cookie.
CREATE TABLE console_sessions (
    id_hash          TEXT PRIMARY KEY,
    operator_id      TEXT NOT NULL REFERENCES operators(id),
    token_generation BIGINT NOT NULL,
    csrf_token       TEXT NOT NULL,
    created_at       {{timestamp}} NOT NULL,
    last_seen_at     {{timestamp}} NOT NULL
);
CREATE INDEX console_sessions_operator ON console_sessions (operator_id);
