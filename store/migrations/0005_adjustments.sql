-- Money owed or owed back between invoices: plan-change lines for the next invoice and
-- corrections below 0.50 carried into the next one. Credit notes keep what is left of them.
CREATE TABLE billing_adjustments (
    id               TEXT PRIMARY KEY,
    provider_id      TEXT NOT NULL REFERENCES providers(id),
    subscription_id  TEXT NOT NULL REFERENCES subscriptions(id),
    kind             TEXT NOT NULL,
    description      TEXT NOT NULL,
    unit_price_minor BIGINT NOT NULL DEFAULT 0,
    days             INTEGER NOT NULL DEFAULT 0,
    days_in_period   INTEGER NOT NULL DEFAULT 0,
    amount_minor     BIGINT NOT NULL,
    invoice_id       TEXT,
    consumed_at      {{timestamp}},
    created_at       {{timestamp}} NOT NULL
);
CREATE INDEX billing_adjustments_open ON billing_adjustments (subscription_id, consumed_at);
ALTER TABLE credit_notes ADD COLUMN remaining_minor BIGINT NOT NULL DEFAULT 0;
