-- Dunning of invoices the holder pays (AutoPay off) by their due date (docs/billing.md,
-- AutoPay on and off): when the next step is due and how many were taken.
ALTER TABLE invoices ADD COLUMN remind_at {{timestamp}};
ALTER TABLE invoices ADD COLUMN reminders INTEGER NOT NULL DEFAULT 0;
CREATE INDEX invoices_remind_at ON invoices (remind_at) WHERE remind_at IS NOT NULL;
