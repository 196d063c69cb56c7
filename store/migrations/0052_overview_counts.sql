-- compatible-with: 48
-- The overview counts lines by status in the operator's scope, and counting read every line of
-- the scope: ten million for a platform operator at ten million lines, on every visit to the
-- console's home page. The lines are now counted as they are written: line_counts holds a count
-- per provider, status and shard (the last character of the line's id, so that concurrent
-- writes to one provider's lines seldom wait on one row), kept by triggers on subscriptions,
-- which every release's writes fire, this one's and the previous one's. The overview adds up a
-- few rows per provider. When a line changes status, the trigger writes its two counts in the
-- order of their statuses, so two transactions moving lines of one shard between two statuses
-- in opposite directions take the rows in the same order and never deadlock on them. The
-- count of overdue invoices read every open invoice of the platform: the open invoices have a
-- partial index by provider and date.
CREATE TABLE line_counts (
    provider_id TEXT NOT NULL,
    status      TEXT NOT NULL,
    shard       TEXT NOT NULL,
    n           BIGINT NOT NULL,
    PRIMARY KEY (provider_id, status, shard)
);
{{sqlite}}CREATE TRIGGER line_counts_insert AFTER INSERT ON subscriptions BEGIN INSERT INTO line_counts (provider_id, status, shard, n) VALUES (NEW.provider_id, NEW.status, substr(NEW.id, -1), 1) ON CONFLICT (provider_id, status, shard) DO UPDATE SET n = n + 1; END;
{{sqlite}}CREATE TRIGGER line_counts_delete AFTER DELETE ON subscriptions BEGIN UPDATE line_counts SET n = n - 1 WHERE provider_id = OLD.provider_id AND status = OLD.status AND shard = substr(OLD.id, -1); END;
{{sqlite}}CREATE TRIGGER line_counts_update AFTER UPDATE OF id, provider_id, status ON subscriptions WHEN OLD.id IS NOT NEW.id OR OLD.provider_id IS NOT NEW.provider_id OR OLD.status IS NOT NEW.status BEGIN UPDATE line_counts SET n = n - 1 WHERE provider_id = OLD.provider_id AND status = OLD.status AND shard = substr(OLD.id, -1); INSERT INTO line_counts (provider_id, status, shard, n) VALUES (NEW.provider_id, NEW.status, substr(NEW.id, -1), 1) ON CONFLICT (provider_id, status, shard) DO UPDATE SET n = n + 1; END;
{{postgres}}CREATE FUNCTION line_counts_follow() RETURNS trigger LANGUAGE plpgsql AS $$
{{postgres}}DECLARE
{{postgres}}    gone BOOLEAN := TG_OP <> 'INSERT';
{{postgres}}    come BOOLEAN := TG_OP <> 'DELETE';
{{postgres}}BEGIN
{{postgres}}    IF gone AND come AND NEW.status < OLD.status THEN
{{postgres}}        INSERT INTO line_counts (provider_id, status, shard, n) VALUES (NEW.provider_id, NEW.status, right(NEW.id, 1), 1)
{{postgres}}            ON CONFLICT (provider_id, status, shard) DO UPDATE SET n = line_counts.n + 1;
{{postgres}}        come := FALSE;
{{postgres}}    END IF;
{{postgres}}    IF gone THEN
{{postgres}}        UPDATE line_counts SET n = n - 1 WHERE provider_id = OLD.provider_id AND status = OLD.status AND shard = right(OLD.id, 1);
{{postgres}}    END IF;
{{postgres}}    IF come THEN
{{postgres}}        INSERT INTO line_counts (provider_id, status, shard, n) VALUES (NEW.provider_id, NEW.status, right(NEW.id, 1), 1)
{{postgres}}            ON CONFLICT (provider_id, status, shard) DO UPDATE SET n = line_counts.n + 1;
{{postgres}}    END IF;
{{postgres}}    RETURN NULL;
{{postgres}}END $$;
{{postgres}}CREATE TRIGGER line_counts_insert_delete AFTER INSERT OR DELETE ON subscriptions FOR EACH ROW EXECUTE FUNCTION line_counts_follow();
{{postgres}}CREATE TRIGGER line_counts_update AFTER UPDATE OF id, provider_id, status ON subscriptions FOR EACH ROW
{{postgres}}    WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.provider_id IS DISTINCT FROM NEW.provider_id OR OLD.status IS DISTINCT FROM NEW.status)
{{postgres}}    EXECUTE FUNCTION line_counts_follow();
{{sqlite}}INSERT INTO line_counts (provider_id, status, shard, n) SELECT provider_id, status, substr(id, -1), COUNT(*) FROM subscriptions GROUP BY 1, 2, 3;
{{postgres}}INSERT INTO line_counts (provider_id, status, shard, n) SELECT provider_id, status, right(id, 1), COUNT(*) FROM subscriptions GROUP BY 1, 2, 3;
CREATE INDEX invoices_open ON invoices (provider_id, invoice_date) WHERE status = 'open';
