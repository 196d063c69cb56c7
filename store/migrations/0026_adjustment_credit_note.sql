-- A plan-change line netted against a cancellation's credit note for the unused days is used
-- by that note, not by an invoice: the note is named, so withdrawing the cancellation (the
-- note voided before any money went back) puts the line back for the next invoice.
ALTER TABLE billing_adjustments ADD COLUMN credit_note_id TEXT;
