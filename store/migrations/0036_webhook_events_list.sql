-- The operations surface lists webhook events newest first, every provider's or one
-- provider's, a page at a time after the last event's (created_at, rec, id): rec orders the
-- events of one instant as they were recorded. Without these the
-- list would sort the whole events table for every page. Each costs one index insert per
-- event recorded.
CREATE INDEX events_listed ON events (created_at, rec, id);
CREATE INDEX events_provider_listed ON events (provider_id, created_at, rec, id);
