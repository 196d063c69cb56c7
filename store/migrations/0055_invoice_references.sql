-- compatible-with: 48
-- Issue 40: on PostgreSQL an invoice's foreign keys to its line and its subscriber checked each
-- invoice by locking the parent row (SELECT … FOR KEY SHARE), and a row lock is written into
-- the row: every invoice of the monthly bill run dirtied a page of the lines' table and one of
-- the subscribers', which the server then wrote back and logged (a full page after each
-- checkpoint). At a million subscribers the two checks were a quarter of the bill run. They are
-- now checks of each statement's rows at once, without locks: the invoices a statement inserts
-- name existing lines and subscribers (one anti-join over the statement's new rows), an update
-- that changes an invoice's line or subscriber is checked row by row, and deleting an invoiced
-- line or subscriber, or changing its id, is refused. Errors carry the foreign-key violation's
-- code, as before. What the keys also did and these do not: a line deleted by one transaction
-- while another inserts its invoice (the lock's part), a delete committed after a REPEATABLE
-- READ inserter's snapshot, and TRUNCATE … CASCADE, which no longer reaches the invoices. None
-- of these happens: nothing deletes or truncates lines or subscribers (a privacy deletion
-- clears a subscriber's personal fields and keeps the row). SQLite's foreign-key checks read
-- the parent's index and write nothing; its keys stay. A release before this one runs on the
-- schema: its writes fire the same triggers.
{{postgres}}ALTER TABLE invoices DROP CONSTRAINT invoices_subscriber_id_fkey, DROP CONSTRAINT invoices_subscription_id_fkey;
{{postgres}}CREATE FUNCTION inserted_invoices_name_existing_rows() RETURNS trigger LANGUAGE plpgsql AS $$
{{postgres}}BEGIN
{{postgres}}    IF EXISTS (SELECT 1 FROM written w WHERE NOT EXISTS (SELECT 1 FROM subscriptions s WHERE s.id = w.subscription_id)
{{postgres}}            OR (w.subscriber_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM subscribers s WHERE s.id = w.subscriber_id))) THEN
{{postgres}}        RAISE EXCEPTION 'an invoice names a line or subscriber that does not exist' USING ERRCODE = 'foreign_key_violation';
{{postgres}}    END IF;
{{postgres}}    RETURN NULL;
{{postgres}}END $$;
{{postgres}}CREATE TRIGGER invoices_inserted_name_existing_rows AFTER INSERT ON invoices REFERENCING NEW TABLE AS written
{{postgres}}    FOR EACH STATEMENT EXECUTE FUNCTION inserted_invoices_name_existing_rows();
{{postgres}}CREATE FUNCTION updated_invoice_names_existing_rows() RETURNS trigger LANGUAGE plpgsql AS $$
{{postgres}}BEGIN
{{postgres}}    IF NOT EXISTS (SELECT 1 FROM subscriptions WHERE id = NEW.subscription_id)
{{postgres}}            OR (NEW.subscriber_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM subscribers WHERE id = NEW.subscriber_id)) THEN
{{postgres}}        RAISE EXCEPTION 'an invoice names a line or subscriber that does not exist' USING ERRCODE = 'foreign_key_violation';
{{postgres}}    END IF;
{{postgres}}    RETURN NULL;
{{postgres}}END $$;
{{postgres}}CREATE TRIGGER invoices_updated_name_existing_rows AFTER UPDATE OF subscriber_id, subscription_id ON invoices FOR EACH ROW
{{postgres}}    WHEN (OLD.subscriber_id IS DISTINCT FROM NEW.subscriber_id OR OLD.subscription_id IS DISTINCT FROM NEW.subscription_id)
{{postgres}}    EXECUTE FUNCTION updated_invoice_names_existing_rows();
{{postgres}}CREATE FUNCTION invoiced_rows_stay() RETURNS trigger LANGUAGE plpgsql AS $$
{{postgres}}BEGIN
{{postgres}}    IF (TG_TABLE_NAME = 'subscriptions' AND EXISTS (SELECT 1 FROM gone g JOIN invoices i ON i.subscription_id = g.id))
{{postgres}}            OR (TG_TABLE_NAME = 'subscribers' AND EXISTS (SELECT 1 FROM gone g JOIN invoices i ON i.subscriber_id = g.id)) THEN
{{postgres}}        RAISE EXCEPTION 'invoices name a row deleted from %', TG_TABLE_NAME USING ERRCODE = 'foreign_key_violation';
{{postgres}}    END IF;
{{postgres}}    RETURN NULL;
{{postgres}}END $$;
{{postgres}}CREATE TRIGGER subscriptions_invoiced_stay AFTER DELETE ON subscriptions REFERENCING OLD TABLE AS gone
{{postgres}}    FOR EACH STATEMENT EXECUTE FUNCTION invoiced_rows_stay();
{{postgres}}CREATE TRIGGER subscribers_invoiced_stay AFTER DELETE ON subscribers REFERENCING OLD TABLE AS gone
{{postgres}}    FOR EACH STATEMENT EXECUTE FUNCTION invoiced_rows_stay();
{{postgres}}CREATE FUNCTION invoiced_ids_stay() RETURNS trigger LANGUAGE plpgsql AS $$
{{postgres}}BEGIN
{{postgres}}    IF EXISTS (SELECT 1 FROM invoices WHERE (TG_TABLE_NAME = 'subscriptions' AND subscription_id = OLD.id)
{{postgres}}            OR (TG_TABLE_NAME = 'subscribers' AND subscriber_id = OLD.id)) THEN
{{postgres}}        RAISE EXCEPTION 'invoices name the % row whose id changes', TG_TABLE_NAME USING ERRCODE = 'foreign_key_violation';
{{postgres}}    END IF;
{{postgres}}    RETURN NULL;
{{postgres}}END $$;
{{postgres}}CREATE TRIGGER subscriptions_invoiced_ids_stay AFTER UPDATE OF id ON subscriptions FOR EACH ROW
{{postgres}}    WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION invoiced_ids_stay();
{{postgres}}CREATE TRIGGER subscribers_invoiced_ids_stay AFTER UPDATE OF id ON subscribers FOR EACH ROW
{{postgres}}    WHEN (OLD.id IS DISTINCT FROM NEW.id) EXECUTE FUNCTION invoiced_ids_stay();
