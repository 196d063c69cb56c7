-- compatible-with: 48
-- Issue 40: each process remembers the two reads made on every request of their kind, an API
-- key with its provider and a portal login's account record, and forgot them all whenever
-- anything anywhere was written, so under a steady flow of orders the records were forgotten
-- before they were read again. The rows those reads show now say which of them they change:
-- triggers append the login, subscriber or provider a change concerns to cache_invalidations,
-- and each process reads what was appended since its last look (every 10 ms, and at once after
-- its own commits) and forgets only the records it names. Only the columns the remembered reads
-- show fire the triggers (a line's workflow state, a provider's sequence counters, an API key's
-- last use do not). A release before this one run on the database fires them too.
-- The log's order: on SQLite its key, written by the one writer in commit order; on PostgreSQL
-- the transaction id of the writer (a reader takes what its previous snapshot did not see).
-- Each process deletes what every process has read (rows older than a minute); a release before
-- this one deletes nothing, so while only such a release runs (a rollback) the table grows.
{{sqlite}}CREATE TABLE cache_invalidations (
{{sqlite}}    seq  INTEGER PRIMARY KEY AUTOINCREMENT,
{{sqlite}}    kind TEXT NOT NULL,
{{sqlite}}    id   TEXT NOT NULL
{{sqlite}});
{{postgres}}CREATE TABLE cache_invalidations (
{{postgres}}    xid  xid8 NOT NULL DEFAULT pg_current_xact_id(),
{{postgres}}    kind TEXT NOT NULL,
{{postgres}}    id   TEXT NOT NULL
{{postgres}});
{{postgres}}CREATE INDEX cache_invalidations_xid ON cache_invalidations (xid);
{{postgres}}CREATE FUNCTION cache_invalidations_follow() RETURNS trigger LANGUAGE plpgsql AS $$
{{postgres}}DECLARE
{{postgres}}    was TEXT := CASE WHEN TG_OP <> 'INSERT' THEN to_jsonb(OLD) ->> TG_ARGV[1] END;
{{postgres}}    became TEXT := CASE WHEN TG_OP <> 'DELETE' THEN to_jsonb(NEW) ->> TG_ARGV[1] END;
{{postgres}}BEGIN
{{postgres}}    IF was IS NOT NULL THEN
{{postgres}}        INSERT INTO cache_invalidations (kind, id) VALUES (TG_ARGV[0], was);
{{postgres}}    END IF;
{{postgres}}    IF became IS NOT NULL AND became IS DISTINCT FROM was THEN
{{postgres}}        INSERT INTO cache_invalidations (kind, id) VALUES (TG_ARGV[0], became);
{{postgres}}    END IF;
{{postgres}}    RETURN NULL;
{{postgres}}END $$;
-- A login: what its record shows of it, and its checkout sessions.
{{sqlite}}CREATE TRIGGER cache_invalidations_accounts_update AFTER UPDATE OF id, email, provider_id, subscriber_id, authorized_user_id, password_hash, token_generation ON accounts BEGIN INSERT INTO cache_invalidations (kind, id) VALUES ('account', OLD.id); END;
{{sqlite}}CREATE TRIGGER cache_invalidations_accounts_delete AFTER DELETE ON accounts BEGIN INSERT INTO cache_invalidations (kind, id) VALUES ('account', OLD.id); END;
{{sqlite}}CREATE TRIGGER cache_invalidations_sessions_insert AFTER INSERT ON checkout_sessions WHEN NEW.account_id IS NOT NULL BEGIN INSERT INTO cache_invalidations (kind, id) VALUES ('account', NEW.account_id); END;
{{sqlite}}CREATE TRIGGER cache_invalidations_sessions_update AFTER UPDATE ON checkout_sessions WHEN OLD.account_id IS NOT NULL OR NEW.account_id IS NOT NULL BEGIN INSERT INTO cache_invalidations (kind, id) SELECT 'account', OLD.account_id WHERE OLD.account_id IS NOT NULL UNION SELECT 'account', NEW.account_id WHERE NEW.account_id IS NOT NULL; END;
{{sqlite}}CREATE TRIGGER cache_invalidations_sessions_delete AFTER DELETE ON checkout_sessions WHEN OLD.account_id IS NOT NULL BEGIN INSERT INTO cache_invalidations (kind, id) VALUES ('account', OLD.account_id); END;
{{postgres}}CREATE TRIGGER cache_invalidations_accounts AFTER UPDATE OF id, email, provider_id, subscriber_id, authorized_user_id, password_hash, token_generation OR DELETE ON accounts
{{postgres}}    FOR EACH ROW EXECUTE FUNCTION cache_invalidations_follow('account', 'id');
{{postgres}}CREATE TRIGGER cache_invalidations_sessions AFTER INSERT OR UPDATE OR DELETE ON checkout_sessions
{{postgres}}    FOR EACH ROW EXECUTE FUNCTION cache_invalidations_follow('account', 'account_id');
-- A subscriber: its customer number, its holder's name and e-mail, its lines.
{{sqlite}}CREATE TRIGGER cache_invalidations_subscribers_update AFTER UPDATE OF id, provider_id, customer_number ON subscribers BEGIN INSERT INTO cache_invalidations (kind, id) VALUES ('subscriber', OLD.id); END;
{{sqlite}}CREATE TRIGGER cache_invalidations_subscribers_delete AFTER DELETE ON subscribers BEGIN INSERT INTO cache_invalidations (kind, id) VALUES ('subscriber', OLD.id); END;
{{sqlite}}CREATE TRIGGER cache_invalidations_contacts_insert AFTER INSERT ON contacts WHEN NEW.role = 'holder' BEGIN INSERT INTO cache_invalidations (kind, id) VALUES ('subscriber', NEW.subscriber_id); END;
{{sqlite}}CREATE TRIGGER cache_invalidations_contacts_update AFTER UPDATE OF subscriber_id, role, firstname, lastname, email ON contacts WHEN OLD.role = 'holder' OR NEW.role = 'holder' BEGIN INSERT INTO cache_invalidations (kind, id) SELECT 'subscriber', OLD.subscriber_id UNION SELECT 'subscriber', NEW.subscriber_id; END;
{{sqlite}}CREATE TRIGGER cache_invalidations_contacts_delete AFTER DELETE ON contacts WHEN OLD.role = 'holder' BEGIN INSERT INTO cache_invalidations (kind, id) VALUES ('subscriber', OLD.subscriber_id); END;
{{sqlite}}CREATE TRIGGER cache_invalidations_lines_insert AFTER INSERT ON subscriptions WHEN NEW.subscriber_id IS NOT NULL BEGIN INSERT INTO cache_invalidations (kind, id) VALUES ('subscriber', NEW.subscriber_id); END;
{{sqlite}}CREATE TRIGGER cache_invalidations_lines_update AFTER UPDATE OF id, provider_id, subscriber_id, plan_version_id, building_id, unit_id, status, billing_owner, billing_day, started_at, canceled_at, ended_at, created_at ON subscriptions
{{sqlite}}    WHEN (OLD.subscriber_id IS NOT NULL OR NEW.subscriber_id IS NOT NULL) AND (OLD.id IS NOT NEW.id OR OLD.provider_id IS NOT NEW.provider_id OR OLD.subscriber_id IS NOT NEW.subscriber_id
{{sqlite}}        OR OLD.plan_version_id IS NOT NEW.plan_version_id OR OLD.building_id IS NOT NEW.building_id OR OLD.unit_id IS NOT NEW.unit_id OR OLD.status IS NOT NEW.status
{{sqlite}}        OR OLD.billing_owner IS NOT NEW.billing_owner OR OLD.billing_day IS NOT NEW.billing_day OR OLD.started_at IS NOT NEW.started_at
{{sqlite}}        OR OLD.canceled_at IS NOT NEW.canceled_at OR OLD.ended_at IS NOT NEW.ended_at OR OLD.created_at IS NOT NEW.created_at)
{{sqlite}}    BEGIN INSERT INTO cache_invalidations (kind, id) SELECT 'subscriber', OLD.subscriber_id WHERE OLD.subscriber_id IS NOT NULL UNION SELECT 'subscriber', NEW.subscriber_id WHERE NEW.subscriber_id IS NOT NULL; END;
{{sqlite}}CREATE TRIGGER cache_invalidations_lines_delete AFTER DELETE ON subscriptions WHEN OLD.subscriber_id IS NOT NULL BEGIN INSERT INTO cache_invalidations (kind, id) VALUES ('subscriber', OLD.subscriber_id); END;
{{postgres}}CREATE TRIGGER cache_invalidations_subscribers AFTER UPDATE OF id, provider_id, customer_number OR DELETE ON subscribers
{{postgres}}    FOR EACH ROW EXECUTE FUNCTION cache_invalidations_follow('subscriber', 'id');
{{postgres}}CREATE TRIGGER cache_invalidations_contacts_insert AFTER INSERT ON contacts FOR EACH ROW WHEN (NEW.role = 'holder')
{{postgres}}    EXECUTE FUNCTION cache_invalidations_follow('subscriber', 'subscriber_id');
{{postgres}}CREATE TRIGGER cache_invalidations_contacts_update AFTER UPDATE OF subscriber_id, role, firstname, lastname, email ON contacts FOR EACH ROW
{{postgres}}    WHEN (OLD.role = 'holder' OR NEW.role = 'holder') EXECUTE FUNCTION cache_invalidations_follow('subscriber', 'subscriber_id');
{{postgres}}CREATE TRIGGER cache_invalidations_contacts_delete AFTER DELETE ON contacts FOR EACH ROW WHEN (OLD.role = 'holder')
{{postgres}}    EXECUTE FUNCTION cache_invalidations_follow('subscriber', 'subscriber_id');
{{postgres}}CREATE TRIGGER cache_invalidations_lines_insert_delete AFTER INSERT OR DELETE ON subscriptions
{{postgres}}    FOR EACH ROW EXECUTE FUNCTION cache_invalidations_follow('subscriber', 'subscriber_id');
{{postgres}}CREATE TRIGGER cache_invalidations_lines_update AFTER UPDATE OF id, provider_id, subscriber_id, plan_version_id, building_id, unit_id, status, billing_owner, billing_day, started_at, canceled_at, ended_at, created_at ON subscriptions
{{postgres}}    FOR EACH ROW WHEN (OLD.id IS DISTINCT FROM NEW.id OR OLD.provider_id IS DISTINCT FROM NEW.provider_id OR OLD.subscriber_id IS DISTINCT FROM NEW.subscriber_id
{{postgres}}        OR OLD.plan_version_id IS DISTINCT FROM NEW.plan_version_id OR OLD.building_id IS DISTINCT FROM NEW.building_id OR OLD.unit_id IS DISTINCT FROM NEW.unit_id
{{postgres}}        OR OLD.status IS DISTINCT FROM NEW.status OR OLD.billing_owner IS DISTINCT FROM NEW.billing_owner OR OLD.billing_day IS DISTINCT FROM NEW.billing_day
{{postgres}}        OR OLD.started_at IS DISTINCT FROM NEW.started_at OR OLD.canceled_at IS DISTINCT FROM NEW.canceled_at OR OLD.ended_at IS DISTINCT FROM NEW.ended_at
{{postgres}}        OR OLD.created_at IS DISTINCT FROM NEW.created_at)
{{postgres}}    EXECUTE FUNCTION cache_invalidations_follow('subscriber', 'subscriber_id');
-- A provider: what its API keys and its logins' records show of it (the columns the store reads
-- a provider with), its keys, its plans' names, prices and speeds. Every record of the provider
-- is forgotten: such changes are rare.
{{sqlite}}CREATE TRIGGER cache_invalidations_providers_update AFTER UPDATE OF id, name, time_zone, currency, tax_rate_bp, sandbox, webhook_secret, webhook_url, checkout_url, service_provider_document_id, sms_configured, booking_window_days, support_group, brand_color, payment_processor, processor_account_id, created_at, default_language, auto_repair, outage_credit_min_hours, version ON providers BEGIN INSERT INTO cache_invalidations (kind, id) VALUES ('provider', OLD.id); END;
{{sqlite}}CREATE TRIGGER cache_invalidations_providers_delete AFTER DELETE ON providers BEGIN INSERT INTO cache_invalidations (kind, id) VALUES ('provider', OLD.id); END;
{{sqlite}}CREATE TRIGGER cache_invalidations_keys_update AFTER UPDATE OF id, provider_id, prefix, key_hash, features, revoked_at ON api_keys BEGIN INSERT INTO cache_invalidations (kind, id) SELECT 'provider', OLD.provider_id UNION SELECT 'provider', NEW.provider_id; END;
{{sqlite}}CREATE TRIGGER cache_invalidations_keys_delete AFTER DELETE ON api_keys BEGIN INSERT INTO cache_invalidations (kind, id) VALUES ('provider', OLD.provider_id); END;
{{sqlite}}CREATE TRIGGER cache_invalidations_plans_update AFTER UPDATE OF id, provider_id, name ON plans BEGIN INSERT INTO cache_invalidations (kind, id) SELECT 'provider', OLD.provider_id UNION SELECT 'provider', NEW.provider_id; END;
{{sqlite}}CREATE TRIGGER cache_invalidations_plans_delete AFTER DELETE ON plans BEGIN INSERT INTO cache_invalidations (kind, id) VALUES ('provider', OLD.provider_id); END;
{{sqlite}}CREATE TRIGGER cache_invalidations_versions_update AFTER UPDATE OF id, plan_id, provider_id, monthly_price_minor, download_mbps, upload_mbps ON plan_versions BEGIN INSERT INTO cache_invalidations (kind, id) SELECT 'provider', OLD.provider_id UNION SELECT 'provider', NEW.provider_id; END;
{{sqlite}}CREATE TRIGGER cache_invalidations_versions_delete AFTER DELETE ON plan_versions BEGIN INSERT INTO cache_invalidations (kind, id) VALUES ('provider', OLD.provider_id); END;
{{postgres}}CREATE TRIGGER cache_invalidations_providers AFTER UPDATE OF id, name, time_zone, currency, tax_rate_bp, sandbox, webhook_secret, webhook_url, checkout_url, service_provider_document_id, sms_configured, booking_window_days, support_group, brand_color, payment_processor, processor_account_id, created_at, default_language, auto_repair, outage_credit_min_hours, version OR DELETE ON providers
{{postgres}}    FOR EACH ROW EXECUTE FUNCTION cache_invalidations_follow('provider', 'id');
{{postgres}}CREATE TRIGGER cache_invalidations_keys AFTER UPDATE OF id, provider_id, prefix, key_hash, features, revoked_at OR DELETE ON api_keys
{{postgres}}    FOR EACH ROW EXECUTE FUNCTION cache_invalidations_follow('provider', 'provider_id');
{{postgres}}CREATE TRIGGER cache_invalidations_plans AFTER UPDATE OF id, provider_id, name OR DELETE ON plans
{{postgres}}    FOR EACH ROW EXECUTE FUNCTION cache_invalidations_follow('provider', 'provider_id');
{{postgres}}CREATE TRIGGER cache_invalidations_versions AFTER UPDATE OF id, plan_id, provider_id, monthly_price_minor, download_mbps, upload_mbps OR DELETE ON plan_versions
{{postgres}}    FOR EACH ROW EXECUTE FUNCTION cache_invalidations_follow('provider', 'provider_id');
