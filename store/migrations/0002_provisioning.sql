-- Provisioning engine: how a provider takes payments, ordered webhook delivery, and the
-- state a line's port is in.

-- payment_processor: builtin (the fake processor), stripe (a connected account), or none
-- (billing_owner platform is refused with billing_not_available).
ALTER TABLE providers ADD COLUMN payment_processor TEXT NOT NULL DEFAULT 'builtin';
ALTER TABLE providers ADD COLUMN processor_account_id TEXT NOT NULL DEFAULT '';
ALTER TABLE providers ADD COLUMN event_seq BIGINT NOT NULL DEFAULT 0;

-- Events are delivered per provider in seq order.
ALTER TABLE events ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
CREATE INDEX events_provider_seq ON events (provider_id, seq);

-- One webhook flusher per provider at a time; a crashed flusher's lease simply expires.
CREATE TABLE webhook_leases (
    provider_id TEXT PRIMARY KEY REFERENCES providers(id),
    holder      TEXT NOT NULL,
    lease_until {{timestamp}} NOT NULL
);

ALTER TABLE subscriptions ADD COLUMN provisioning_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE subscriptions ADD COLUMN vlan INTEGER NOT NULL DEFAULT 0;
