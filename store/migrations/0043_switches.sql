-- The switch inventory (docs/network.md): one row per access switch, naming the driver that
-- reaches it ('' = the service's default driver, SUBPROV_SWITCH_DRIVER), its management
-- address and credentials. The password is kept sealed (AES-256-GCM under a key derived from
-- the service secret), never in clear. A switch a port names for the first time gets a row
-- with the default driver; the rows of the switches the ports already name are created here.
CREATE TABLE switches (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL UNIQUE,
    driver     TEXT NOT NULL DEFAULT '',
    address    TEXT NOT NULL DEFAULT '',
    username   TEXT NOT NULL DEFAULT '',
    secret     TEXT NOT NULL DEFAULT '',
    host_key   TEXT NOT NULL DEFAULT '',
    model      TEXT NOT NULL DEFAULT '',
    version    INTEGER NOT NULL DEFAULT 1,
    created_at {{timestamp}} NOT NULL,
    updated_at {{timestamp}} NOT NULL
);
{{sqlite}}INSERT INTO switches (id, name, created_at, updated_at) SELECT lower(hex(randomblob(16))), switch_name, MIN(created_at), MIN(created_at) FROM ports GROUP BY switch_name;
{{postgres}}INSERT INTO switches (id, name, created_at, updated_at) SELECT gen_random_uuid()::text, switch_name, MIN(created_at), MIN(created_at) FROM ports GROUP BY switch_name;
-- An operator ticket about a port names it, so a port whose convergence keeps failing has one
-- open ticket, however often its retries run out.
ALTER TABLE tickets ADD COLUMN port_id TEXT;
CREATE INDEX tickets_port ON tickets (port_id) WHERE port_id IS NOT NULL;
