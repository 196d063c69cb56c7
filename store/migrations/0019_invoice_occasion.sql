-- An invoice is unique per line, period, kind and occasion. The occasion is '' for first and
-- recurring invoices, so a bill run that runs twice, or a first invoice issued twice, still
-- invoices once; a final invoice names the cancellation it settles and a reactivation invoice
-- the reactivation it bills, so each cancellation and each reactivation of a month gets its
-- own invoice (the second reactivation of a line in a month used to be dropped by the old
-- UNIQUE (subscription_id, period, kind) while its cancellation's refund still went out).
--
-- PostgreSQL swaps the constraint. SQLite cannot drop a table's UNIQUE constraint, so the
-- table is rebuilt. invoice_lines, credit_notes and charges refer to it and foreign keys are on
-- (a transaction cannot turn them off), so the checks are deferred to the commit: dropping the
-- table counts every row that referred to it as a violation, and putting each invoice back
-- under the same id counts its rows as satisfied again, so the commit finds none.
{{postgres}}ALTER TABLE invoices ADD COLUMN occasion TEXT NOT NULL DEFAULT '';
{{postgres}}ALTER TABLE invoices DROP CONSTRAINT invoices_subscription_id_period_kind_key;
{{postgres}}ALTER TABLE invoices ADD CONSTRAINT invoices_once_per_occasion UNIQUE (subscription_id, period, kind, occasion);
{{sqlite}}PRAGMA defer_foreign_keys = ON;
{{sqlite}}CREATE TEMP TABLE invoices_before_0019 AS SELECT id, provider_id, subscriber_id, subscription_id, number, customer_number,
{{sqlite}}    invoice_date, period, kind, status, net_minor, tax_minor, total_minor, currency, due_date, paid_at, payment_intent,
{{sqlite}}    created_at, charge_attempts, next_charge_at, charge_queued_at FROM invoices;
{{sqlite}}DROP TABLE invoices;
{{sqlite}}CREATE TABLE invoices (
{{sqlite}}    id               TEXT PRIMARY KEY,
{{sqlite}}    provider_id      TEXT NOT NULL REFERENCES providers(id),
{{sqlite}}    subscriber_id    TEXT REFERENCES subscribers(id),
{{sqlite}}    subscription_id  TEXT NOT NULL REFERENCES subscriptions(id),
{{sqlite}}    number           TEXT NOT NULL,
{{sqlite}}    customer_number  TEXT,
{{sqlite}}    invoice_date     TEXT NOT NULL,
{{sqlite}}    period           TEXT NOT NULL,
{{sqlite}}    kind             TEXT NOT NULL,
{{sqlite}}    status           TEXT NOT NULL,
{{sqlite}}    net_minor        BIGINT NOT NULL,
{{sqlite}}    tax_minor        BIGINT NOT NULL,
{{sqlite}}    total_minor      BIGINT NOT NULL,
{{sqlite}}    currency         TEXT NOT NULL,
{{sqlite}}    due_date         TEXT,
{{sqlite}}    paid_at          {{timestamp}},
{{sqlite}}    payment_intent   TEXT,
{{sqlite}}    created_at       {{timestamp}} NOT NULL,
{{sqlite}}    charge_attempts  INTEGER NOT NULL DEFAULT 0,
{{sqlite}}    next_charge_at   {{timestamp}},
{{sqlite}}    charge_queued_at {{timestamp}},
{{sqlite}}    occasion         TEXT NOT NULL DEFAULT '',
{{sqlite}}    UNIQUE (subscription_id, period, kind, occasion),
{{sqlite}}    UNIQUE (provider_id, number)
{{sqlite}});
{{sqlite}}INSERT INTO invoices (id, provider_id, subscriber_id, subscription_id, number, customer_number, invoice_date, period, kind,
{{sqlite}}    status, net_minor, tax_minor, total_minor, currency, due_date, paid_at, payment_intent, created_at, charge_attempts,
{{sqlite}}    next_charge_at, charge_queued_at)
{{sqlite}}    SELECT id, provider_id, subscriber_id, subscription_id, number, customer_number, invoice_date, period, kind,
{{sqlite}}    status, net_minor, tax_minor, total_minor, currency, due_date, paid_at, payment_intent, created_at, charge_attempts,
{{sqlite}}    next_charge_at, charge_queued_at FROM invoices_before_0019 ORDER BY id;
{{sqlite}}DROP TABLE invoices_before_0019;
{{sqlite}}CREATE INDEX invoices_subscriber ON invoices (subscriber_id, invoice_date);
{{sqlite}}CREATE INDEX invoices_due_charges ON invoices (status, next_charge_at);
{{sqlite}}PRAGMA defer_foreign_keys = OFF;
