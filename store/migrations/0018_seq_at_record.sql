-- Issue 9: on SQLite a pending production event is numbered (seq) when it is recorded, not by
-- the webhook flusher: recording transactions commit one at a time there, so the provider's
-- highest seq + 1 is commit order, and the flusher can send an event the moment it commits
-- instead of first taking the writer to number it (Dialect.seqAtRecord). The events an earlier
-- version left unnumbered are numbered here, in recording order after the provider's highest
-- seq, as its flusher would have; an event recorded from now on follows them. PostgreSQL keeps
-- numbering in the flusher: nothing to do there.
{{sqlite}}CREATE TEMP TABLE event_numbers (id TEXT PRIMARY KEY, seq INTEGER NOT NULL);
{{sqlite}}INSERT INTO event_numbers (id, seq)
{{sqlite}}    SELECT e.id, (SELECT MAX(m.seq) FROM events m WHERE m.provider_id = e.provider_id)
{{sqlite}}        + ROW_NUMBER() OVER (PARTITION BY e.provider_id ORDER BY e.rec)
{{sqlite}}    FROM events e WHERE e.delivery_state = 'pending' AND e.sandbox = FALSE AND e.seq = 0;
{{sqlite}}UPDATE events SET seq = (SELECT n.seq FROM event_numbers n WHERE n.id = events.id) WHERE id IN (SELECT id FROM event_numbers);
{{sqlite}}DROP TABLE event_numbers;
