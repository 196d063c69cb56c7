-- One live line per location (port or suite): a second order for the same place loses at the
-- constraint, so concurrent orders can never both take a suite.
CREATE UNIQUE INDEX subscriptions_live_location ON subscriptions (location_key)
    WHERE status IN ('PENDING_INSTALL', 'ACTIVE', 'SUSPENDED');

-- The deprovisioner claims an ended line once, in the transaction that enqueues its job.
ALTER TABLE subscriptions ADD COLUMN deprovision_queued_at {{timestamp}};
ALTER TABLE providers ADD COLUMN ticket_seq BIGINT NOT NULL DEFAULT 0;
