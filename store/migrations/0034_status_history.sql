-- Each status a line has had: one row when it is created and one for every status change,
-- written in the transaction of the change, with the reason it was given ('' for none). The
-- operations surface shows it as the line's history. Lines that existed before this table
-- start with their status at the time of this migration, dated when they were created.
CREATE TABLE subscription_status_history (
    id              TEXT PRIMARY KEY,
    subscription_id TEXT NOT NULL REFERENCES subscriptions(id),
    status          TEXT NOT NULL,
    reason          TEXT NOT NULL DEFAULT '',
    at              {{timestamp}} NOT NULL
);
CREATE INDEX subscription_status_history_line ON subscription_status_history (subscription_id, at);
INSERT INTO subscription_status_history (id, subscription_id, status, reason, at)
    SELECT 'initial-' || id, id, status, '', created_at FROM subscriptions;
