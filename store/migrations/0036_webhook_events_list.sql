-- The operations surface lists webhook events newest first, every provider's or one
-- provider's, a page at a time after the last event's (created_at, id). Without these the
-- list would sort the whole events table for every page. Each costs one index insert per
-- event recorded.
CREATE INDEX events_listed ON events (created_at, id);
CREATE INDEX events_provider_listed ON events (provider_id, created_at, id);
