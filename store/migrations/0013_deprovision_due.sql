-- Issue 9: the deprovision sweep runs every second and looks for cancelled lines whose end has
-- passed and that are neither deprovisioned nor queued. Through subscriptions_ended it read
-- every ended line ever (at 1M subscribers 80,000 rows and 25,000 page reads a second, a sixth
-- of a core in the background of every request). The partial index holds only the lines still
-- waiting, so the sweep is one short range scan however many lines have ended before.
DROP INDEX subscriptions_ended;
CREATE INDEX subscriptions_deprovision_due ON subscriptions (ended_at)
    WHERE ended_at IS NOT NULL AND deprovisioned_at IS NULL AND deprovision_queued_at IS NULL;
