-- The holder's own payments and AutoPay switch (docs/billing.md, AutoPay and pay now).

-- A line whose holder turned AutoPay off: its invoices are issued with nothing scheduled and
-- mailed with a pay link.
ALTER TABLE subscriptions ADD COLUMN autopay_off {{bool}} NOT NULL DEFAULT FALSE;

-- How many of an invoice's attempts (charge_attempts counts them all, for the next attempt's
-- idempotency key) the holder made by paying now: dunning counts only AutoPay's.
ALTER TABLE invoices ADD COLUMN pay_now_attempts INTEGER NOT NULL DEFAULT 0;
