-- Billing: AutoPay attempts and dunning on invoices, and the reason a line is suspended.
ALTER TABLE invoices ADD COLUMN charge_attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE invoices ADD COLUMN next_charge_at {{timestamp}};
ALTER TABLE invoices ADD COLUMN charge_queued_at {{timestamp}};
CREATE INDEX invoices_due_charges ON invoices (status, next_charge_at);
ALTER TABLE subscriptions ADD COLUMN suspended_for TEXT NOT NULL DEFAULT '';
