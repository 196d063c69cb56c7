-- A line changes plan once per calendar day, and whose calendar depends on the surface: the
-- partner endpoint counts UTC days, the agent the provider's (docs/provisioning.md,
-- Plan change). A change through either counts against the other, each in its own calendar, so the
-- check reads created_at within the caller's day under the subscription's row lock. changed_on
-- is now the day in the calendar of the surface that made the change, named by time_zone; a
-- UTC day and a provider's day may share a date without being the same day, so the unique
-- constraint on (subscription_id, changed_on) becomes one per (subscription_id, time_zone,
-- changed_on), which keeps two racing calls of one calendar to one row. Earlier rows were all
-- counted in UTC. SQLite cannot drop a table constraint: the table is rebuilt there. The check
-- by created_at reads the new index's subscription_id prefix (a line has a change a day at most).
{{sqlite}}CREATE TABLE plan_changes_by_calendar (
{{sqlite}}    id                   TEXT PRIMARY KEY,
{{sqlite}}    subscription_id      TEXT NOT NULL REFERENCES subscriptions(id),
{{sqlite}}    from_plan_version_id TEXT NOT NULL,
{{sqlite}}    to_plan_version_id   TEXT NOT NULL,
{{sqlite}}    changed_on           TEXT NOT NULL,
{{sqlite}}    time_zone            TEXT NOT NULL DEFAULT 'UTC',
{{sqlite}}    actor                TEXT NOT NULL,
{{sqlite}}    created_at           {{timestamp}} NOT NULL
{{sqlite}});
{{sqlite}}INSERT INTO plan_changes_by_calendar (id, subscription_id, from_plan_version_id, to_plan_version_id, changed_on, time_zone, actor, created_at)
{{sqlite}}    SELECT id, subscription_id, from_plan_version_id, to_plan_version_id, changed_on, 'UTC', actor, created_at FROM plan_changes;
{{sqlite}}DROP TABLE plan_changes;
{{sqlite}}ALTER TABLE plan_changes_by_calendar RENAME TO plan_changes;
{{postgres}}ALTER TABLE plan_changes ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC';
{{postgres}}ALTER TABLE plan_changes DROP CONSTRAINT plan_changes_subscription_id_changed_on_key;
CREATE UNIQUE INDEX plan_changes_one_a_day ON plan_changes (subscription_id, time_zone, changed_on);
