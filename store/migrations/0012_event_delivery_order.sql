-- Webhook events are put in delivery order when the provider's flusher first sees them, not
-- when they are recorded: allocating seq in the recording transaction locked the provider row
-- until commit, so every order of a provider (and the flusher) queued behind the one before.
-- seq is now 0 until the flusher, holding the provider's lease, numbers the committed events
-- after the provider's highest seq, in recording order (rec). An event whose transaction
-- commits late therefore goes out after the ones already numbered: delivery follows commit
-- order, so an event never overtakes one it was caused by.
-- rec: recording order (PostgreSQL: an identity; SQLite: the provider's highest rec + 1, exact
-- under its single writer). Existing SQLite rows take their seq.
ALTER TABLE events ADD COLUMN rec {{serial}};
UPDATE events SET rec = seq WHERE rec IS NULL;
CREATE INDEX events_provider_rec ON events (provider_id, rec);
