-- Credit notes are read by their invoice: what an invoice has left to credit, and the notes an
-- operator's invoice page lists.
CREATE INDEX credit_notes_invoice ON credit_notes (invoice_id, created_at);
