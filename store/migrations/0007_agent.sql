-- Support-agent API (issue 7).

-- Customer search index: normalized terms (lower-case ASCII letters and digits) per
-- subscriber, looked up by prefix range on (provider_id, term). The store rewrites a
-- subscriber's terms in every transaction that writes its subscriber, contact or subscription
-- rows, so search never scans the customer tables.
CREATE TABLE customer_search_terms (
    provider_id   TEXT NOT NULL,
    term          TEXT {{bytewise}} NOT NULL,
    subscriber_id TEXT NOT NULL,
    PRIMARY KEY (provider_id, term, subscriber_id)
);
CREATE INDEX customer_search_terms_subscriber ON customer_search_terms (subscriber_id, term);

-- Verification codes remember the API key that asked, for per-key resend limits.
ALTER TABLE verification_codes ADD COLUMN api_key_id TEXT NOT NULL DEFAULT '';
CREATE INDEX verification_codes_key ON verification_codes (api_key_id, created_at);
CREATE INDEX notes_subscriber ON notes (subscriber_id, created_at);
