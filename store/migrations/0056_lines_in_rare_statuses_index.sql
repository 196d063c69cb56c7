-- compatible-with: 48
-- The operations surface's list of every provider's subscribers with a line in a status read
-- the subscribers in id order until enough had such a line, in proportion to how rare the
-- status is (a provider's list reads its lines by status from subscriptions_provider_status).
-- A line is PENDING_INSTALL until its installation and SUSPENDED while it is cut off: on a
-- running platform each holds a few lines in a hundred, so a page of them over every provider
-- read thirty subscribers or more for each one listed. At a million subscribers over a hundred
-- providers, every provider's SUSPENDED took 60.8 ms at the 99th percentile with 8 clients on
-- SQLite, 35.9 ms on PostgreSQL. Each status gets a partial index of its lines, as the lines
-- in the workflow states provisioning and provisioning_failed have (0051, 0053): small, and a
-- page reads a page's worth of it.
-- The condition is on status || '', which only the platform-wide statement writes: a
-- provider's statement (status = ?, its value bound) met the plain condition too, and with a
-- new deployment's statistics PostgreSQL read every provider's suspended lines through the
-- partial index, the provider checked on each, instead of the provider's own range of
-- subscriptions_provider_status.
CREATE INDEX subscriptions_pending_install ON subscriptions (subscriber_id) WHERE status || '' = 'PENDING_INSTALL';
CREATE INDEX subscriptions_suspended ON subscriptions (subscriber_id) WHERE status || '' = 'SUSPENDED';
