-- Marketplace checkout: a session can be cancelled, and is found by its account for GET /me.
ALTER TABLE checkout_sessions ADD COLUMN cancelled_at {{timestamp}};
