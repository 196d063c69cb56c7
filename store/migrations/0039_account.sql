-- The rest of a subscriber's account (docs/portal.md, The person's own settings): each portal
-- login's own choices, its second factor, and the links to its personal-data export.

-- A person's choices: a row only once they chose something. language NULL means the
-- provider's default; the notifications govern only the optional mails.
CREATE TABLE account_preferences (
    account_id     TEXT PRIMARY KEY REFERENCES accounts(id),
    language       TEXT,
    notify_billing {{bool}} NOT NULL DEFAULT TRUE,
    notify_service {{bool}} NOT NULL DEFAULT TRUE,
    updated_at     {{timestamp}} NOT NULL
);

-- A login's second factor, as an operator's (0031): the key sealed with the service secret,
-- whether it is on, the last time step a code was accepted for (each code is accepted once),
-- and the recovery codes as hashes, each used once.
ALTER TABLE accounts ADD COLUMN totp_secret TEXT;
ALTER TABLE accounts ADD COLUMN totp_enabled {{bool}} NOT NULL DEFAULT FALSE;
ALTER TABLE accounts ADD COLUMN totp_last_step BIGINT NOT NULL DEFAULT 0;
CREATE TABLE account_recovery_codes (
    account_id TEXT NOT NULL REFERENCES accounts(id),
    code_hash  TEXT NOT NULL,
    used_at    {{timestamp}},
    PRIMARY KEY (account_id, code_hash)
);
