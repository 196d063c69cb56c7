-- The operations surface (docs/operations.md): operators carry a role and a scope (a provider,
-- or NULL for every provider), can be disabled, are edited under a version, and end every token
-- issued before a password change, a disabling or a second-factor reset by moving their token
-- generation on, as a subscriber login does.
ALTER TABLE operators ADD COLUMN role TEXT NOT NULL DEFAULT 'admin';
ALTER TABLE operators ADD COLUMN provider_id TEXT REFERENCES providers(id);
ALTER TABLE operators ADD COLUMN disabled_at {{timestamp}};
ALTER TABLE operators ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE operators ADD COLUMN token_generation INTEGER NOT NULL DEFAULT 0;

-- The audit log names its actor, its object and the request it came from, and records each
-- changed field as [before, after]. Entries are appended only: triggers refuse every UPDATE
-- and DELETE, on both engines, whoever runs them.
ALTER TABLE audit_log ADD COLUMN actor_type TEXT NOT NULL DEFAULT 'system';
ALTER TABLE audit_log ADD COLUMN actor_id TEXT;
ALTER TABLE audit_log ADD COLUMN actor_email TEXT;
ALTER TABLE audit_log ADD COLUMN object_type TEXT NOT NULL DEFAULT '';
ALTER TABLE audit_log ADD COLUMN request_id TEXT;
ALTER TABLE audit_log ADD COLUMN ip TEXT;
ALTER TABLE audit_log ADD COLUMN reason TEXT;
ALTER TABLE audit_log ADD COLUMN changes TEXT NOT NULL DEFAULT '{}';
CREATE INDEX audit_log_order ON audit_log (created_at, id);
CREATE INDEX audit_log_actor ON audit_log (actor_id, created_at);
CREATE INDEX audit_log_provider ON audit_log (provider_id, created_at);
{{postgres}}CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'audit_log is append-only'; END $$;
{{postgres}}CREATE TRIGGER audit_log_no_update BEFORE UPDATE OR DELETE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
{{sqlite}}CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
{{sqlite}}CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
