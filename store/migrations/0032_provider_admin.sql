-- Providers, API keys and webhook secrets on the operations surface (docs/operations.md):
-- a provider is edited under a version; a rotated webhook secret is still accepted inbound,
-- by its hash, until its expiry; an API key has a name and the time it was last used (kept
-- in memory and written in batches, not on every request).
ALTER TABLE providers ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE providers ADD COLUMN previous_webhook_secret_hash TEXT;
ALTER TABLE providers ADD COLUMN previous_webhook_secret_expires_at {{timestamp}};
CREATE INDEX providers_previous_webhook_secret ON providers (previous_webhook_secret_hash);
ALTER TABLE api_keys ADD COLUMN name TEXT NOT NULL DEFAULT '';
ALTER TABLE api_keys ADD COLUMN last_used_at {{timestamp}};
