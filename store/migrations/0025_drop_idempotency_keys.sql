-- The agent plan change no longer replays an answer for an Idempotency-Key (docs/agent.md: an
-- Idempotency-Key is planned and not shipped; a second apply the same day is 409
-- plan_change_limit with or without one). That replay was this table's only reader and
-- writer; what it holds answers nothing any more.
DROP TABLE idempotency_keys;
