-- The trace an event was recorded in, when tracing was on (NULL otherwise): its W3C
-- traceparent, tracestate and request id, so that each delivery attempt continues that trace
-- in whichever process makes it (docs/monitoring.md, Tracing). Internal: no route or export
-- shows it.
ALTER TABLE events ADD COLUMN trace TEXT;
