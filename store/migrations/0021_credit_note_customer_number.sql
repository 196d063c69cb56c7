-- A credit note keeps the customer number it was issued with, as an invoice does (docs/billing.md:
-- the number is printed on the documents, and issued documents keep the old one when it
-- changes); its PDF prints it. A note issued before this takes the number of the invoice it
-- credits, else its subscriber's current number.
ALTER TABLE credit_notes ADD COLUMN customer_number TEXT;
UPDATE credit_notes SET customer_number = COALESCE(
    (SELECT i.customer_number FROM invoices i WHERE i.id = credit_notes.invoice_id),
    (SELECT s.customer_number FROM subscribers s WHERE s.id = credit_notes.subscriber_id));
