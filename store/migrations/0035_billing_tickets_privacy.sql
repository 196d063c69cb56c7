-- The operations surface's billing, tickets and privacy requests (docs/operations.md).

-- Each bill run (a provider's daily billing job) is recorded: when it started, when it
-- finished (NULL while it runs, or when it stopped on an error and waits for its retry), how
-- many invoices it issued over all its attempts, and how many attempts failed.
CREATE TABLE bill_runs (
    id          TEXT PRIMARY KEY,
    provider_id TEXT NOT NULL REFERENCES providers(id),
    period      TEXT NOT NULL,
    started_at  {{timestamp}} NOT NULL,
    finished_at {{timestamp}},
    invoices    INTEGER NOT NULL DEFAULT 0,
    failed      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX bill_runs_order ON bill_runs (started_at, id);
CREATE INDEX bill_runs_provider ON bill_runs (provider_id, started_at);

-- Tickets are worked by operators: assigned, edited under a version, commented.
ALTER TABLE tickets ADD COLUMN assigned_to TEXT NOT NULL DEFAULT '';
ALTER TABLE tickets ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE tickets ADD COLUMN updated_at {{timestamp}};
CREATE INDEX tickets_order ON tickets (created_at, id);
CREATE TABLE ticket_comments (
    id         TEXT PRIMARY KEY,
    ticket_id  TEXT NOT NULL REFERENCES tickets(id),
    author     TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at {{timestamp}} NOT NULL
);
CREATE INDEX ticket_comments_ticket ON ticket_comments (ticket_id, created_at);

-- A subscriber's request that the provider delete its personal data: pending until an
-- operator approves (the data is erased) or rejects it (with a reason).
CREATE TABLE privacy_requests (
    id            TEXT PRIMARY KEY,
    provider_id   TEXT NOT NULL REFERENCES providers(id),
    subscriber_id TEXT NOT NULL REFERENCES subscribers(id),
    status        TEXT NOT NULL,
    ticket_id     TEXT REFERENCES tickets(id),
    reason        TEXT NOT NULL DEFAULT '',
    created_at    {{timestamp}} NOT NULL,
    decided_at    {{timestamp}}
);
CREATE INDEX privacy_requests_order ON privacy_requests (created_at, id);
CREATE INDEX privacy_requests_subscriber ON privacy_requests (subscriber_id);

-- Operators list invoices newest first.
CREATE INDEX invoices_order ON invoices (created_at, id);
