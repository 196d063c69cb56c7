-- An operator's second factor (docs/operations.md): its key, sealed with the service secret
-- (never in clear), whether it is confirmed and on, and the last time step a code was accepted
-- for, so that each code signs in once. Recovery codes are kept as hashes, each used once.
ALTER TABLE operators ADD COLUMN totp_secret TEXT;
ALTER TABLE operators ADD COLUMN totp_enabled {{bool}} NOT NULL DEFAULT FALSE;
ALTER TABLE operators ADD COLUMN totp_last_step BIGINT NOT NULL DEFAULT 0;
CREATE TABLE operator_recovery_codes (
    operator_id TEXT NOT NULL REFERENCES operators(id),
    code_hash   TEXT NOT NULL,
    used_at     {{timestamp}},
    PRIMARY KEY (operator_id, code_hash)
);
CREATE INDEX operators_provider ON operators (provider_id, email);
