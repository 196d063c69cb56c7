-- What each switch port should be doing, decided from the lines that hold it and written in
-- the same transaction as the line's change, and how far the switch has caught up. Every
-- switch write converges a port to this row: one converger per port at a time (the lease),
-- reading the row when it runs, so no interleaving of line changes leaves a port behind.
CREATE TABLE port_states (
    port_id           TEXT PRIMARY KEY REFERENCES ports(id),
    mode              TEXT NOT NULL,
    vlan              INTEGER NOT NULL DEFAULT 0,
    download_mbps     INTEGER NOT NULL DEFAULT 0,
    upload_mbps       INTEGER NOT NULL DEFAULT 0,
    mac_address       TEXT NOT NULL DEFAULT '',
    -- version counts changes of the desired state; converged_version is the last one the
    -- switch confirmed, failed_version the last one an attempt failed at (with failure).
    version           BIGINT NOT NULL,
    converged_version BIGINT NOT NULL DEFAULT 0,
    failed_version    BIGINT NOT NULL DEFAULT 0,
    failure           TEXT NOT NULL DEFAULT '',
    -- unconverged: the convergence job ran out of retries; an operator ticket is open.
    unconverged       {{bool}} NOT NULL DEFAULT FALSE,
    lease_token       TEXT NOT NULL DEFAULT '',
    lease_until       {{timestamp}},
    updated_at        {{timestamp}} NOT NULL
);
