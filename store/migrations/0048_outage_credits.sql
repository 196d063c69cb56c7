-- compatible-with: 46
-- Outage credits (docs/billing.md): a provider's policy credits every outage of a billed
-- line's port longer than outage_credit_min_hours hours (NULL: no policy).
ALTER TABLE providers ADD COLUMN outage_credit_min_hours DOUBLE PRECISION;
-- The outages credited, one row per line and outage, written in the transaction of the credit
-- note: the key is what makes a re-run, or two processes at once, credit an outage only once.
CREATE TABLE outage_credits (
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
    outage_id       TEXT NOT NULL,
    provider_id     TEXT NOT NULL REFERENCES providers(id),
    credit_note_id  TEXT NOT NULL REFERENCES credit_notes(id),
    started_at      {{timestamp}} NOT NULL,
    resolved_at     {{timestamp}} NOT NULL,
    created_at      {{timestamp}} NOT NULL,
    PRIMARY KEY (subscription_id, outage_id)
);
