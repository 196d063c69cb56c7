-- compatible-with: 48
-- Issue 40: agent search reads each engine's own text index instead of a table of terms. The
-- table held a row per term (about twenty a subscriber), each with its provider's and
-- subscriber's ids, and the index of its key: 4.5 KB a subscriber on PostgreSQL and 2 KB on
-- SQLite, the largest part of the database. The terms a subscriber's row lists
-- (subscribers.search_terms) are now indexed where they stand, each behind a six-character mark
-- of its provider (the first six hex digits of the MD5 of the provider's id), so a prefix reads
-- only the provider's entries:
-- - PostgreSQL: a GIN index of the row's terms as a tsvector, through an immutable function of
--   the row; fastupdate is off, so a search never reads a list of pending entries.
-- - SQLite: an FTS5 table keeping only the subscriber's and its provider's ids (detail=none: no
--   positions), whose row a subscriber's row names (search_row). subprov registers subscriber_search_lexemes on
--   its SQLite connections.
-- Releases before this one still write the terms table and subscribers.search_text and
-- phone_digits, which this release neither writes nor reads: they stay, emptied here, until no
-- such release runs on the database. A release before this one run on it (a rollback) writes
-- terms there for the subscribers it indexes: this release, at its start, indexes those
-- subscribers again and empties the table (Store.ReindexAfterOlderRelease); on PostgreSQL the
-- index followed their rows anyway.
{{postgres}}CREATE FUNCTION subscriber_search_lexemes(provider_id TEXT, terms TEXT) RETURNS tsvector
{{postgres}}    LANGUAGE sql IMMUTABLE PARALLEL SAFE
{{postgres}}    AS $$ SELECT array_to_tsvector(string_to_array(regexp_replace(terms, '(^| )([a-z0-9])', '\1' || left(md5(provider_id), 6) || '\2', 'g'), ' ')) $$;
{{postgres}}CREATE INDEX subscribers_search ON subscribers USING gin (subscriber_search_lexemes(provider_id, search_terms)) WITH (fastupdate = off);
{{sqlite}}ALTER TABLE subscribers ADD COLUMN search_row INTEGER;
{{sqlite}}CREATE VIRTUAL TABLE customer_search USING fts5 (subscriber_id UNINDEXED, provider_id UNINDEXED, terms, content = '', contentless_delete = 1,
{{sqlite}}    contentless_unindexed = 1, detail = none, tokenize = 'ascii');
{{sqlite}}UPDATE subscribers SET search_row = rowid WHERE search_terms <> '';
{{sqlite}}INSERT INTO customer_search (rowid, subscriber_id, provider_id, terms)
{{sqlite}}    SELECT search_row, id, provider_id, subscriber_search_lexemes(provider_id, search_terms) FROM subscribers WHERE search_row IS NOT NULL ORDER BY search_row;
{{postgres}}TRUNCATE customer_search_terms;
{{sqlite}}DELETE FROM customer_search_terms;
