-- A suite and the port wired to it are one place, and a line holds it from its order until the
-- deprovisioner has reset the port after its end (a cancelled line keeps service until
-- ended_at). Until now location_key was the port for a direct line and the suite for a suite
-- line, and subscriptions_live_location held only pending, active and suspended lines, so a
-- direct order could take the port of a suite served by a home_drop line (and the reverse), and
-- anyone could order a port whose cancelled line was still in service: the new line's port was
-- reconfigured at once and reset under it at the old line's end.
--
-- location_key becomes the suite, or the port when it belongs to no suite (store.LocationKey),
-- and one unique index covers every line that holds its place (store's holdsPlace). It also
-- makes subscriptions_live_line (subscriber, plan version, location of a line not cancelled)
-- redundant: no two such lines can share a location any more. Dropping it saves every order an
-- index write.
--
-- Existing data may already hold a place twice (the orders this fixes). Such lines are kept as
-- they are, nobody's service is touched: the line that keeps the place is a live one before a
-- cancelled one, then the oldest; each other line of the place gets a key of its own,
-- 'double-booked:' || id, so the index can be built. An operator finds them by that prefix.
DROP INDEX subscriptions_live_location;
DROP INDEX subscriptions_live_line;
CREATE TEMP TABLE double_booked AS
    SELECT id FROM (
        SELECT id, ROW_NUMBER() OVER (PARTITION BY COALESCE(unit_id, port_id, location_key)
            ORDER BY CASE WHEN status = 'CANCELLED' THEN 1 ELSE 0 END, created_at, id) AS n
        FROM subscriptions
        WHERE status IN ('PENDING_INSTALL', 'ACTIVE', 'SUSPENDED') OR (status = 'CANCELLED' AND deprovisioned_at IS NULL)
    ) holders WHERE n > 1;
UPDATE subscriptions SET location_key = CASE WHEN id IN (SELECT id FROM double_booked) THEN 'double-booked:' || id
        ELSE COALESCE(unit_id, port_id, location_key) END
    WHERE location_key <> COALESCE(unit_id, port_id, location_key) OR id IN (SELECT id FROM double_booked);
DROP TABLE double_booked;
CREATE UNIQUE INDEX subscriptions_location_holder ON subscriptions (location_key)
    WHERE status IN ('PENDING_INSTALL', 'ACTIVE', 'SUSPENDED') OR (status = 'CANCELLED' AND deprovisioned_at IS NULL);
