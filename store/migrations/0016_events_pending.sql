-- Issue 9: the webhook flusher reads a provider's pending events in seq order (DueEvents, the
-- head of HoldQueuedEvents) and the events still to number (seq 0). Through
-- events_provider_seq those reads stepped over every event the provider ever had delivered,
-- one table row each, to reach the few still pending: the cost of each batch grew with the
-- provider's history (11 ms at 6,500 delivered events on PostgreSQL), and a provider's
-- deliveries are one batch after another. The partial index holds only the pending
-- production events, so each read is a short range however many were delivered before.
CREATE INDEX events_pending ON events (provider_id, seq, rec) WHERE delivery_state = 'pending' AND sandbox = FALSE;
