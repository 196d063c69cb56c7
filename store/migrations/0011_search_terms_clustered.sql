-- Issue 9: on SQLite the agent search index becomes a clustered (WITHOUT ROWID) table. As a
-- rowid table it was stored twice, as the rows and as the index of its primary key; now the
-- primary key is the table: a quarter less space at 1M subscribers, one B-tree less to write
-- per term (subprov gen's search-index step 16.9 s -> 10.7 s at 200,000 subscribers), and a
-- prefix search reads the key alone. PostgreSQL has no rowid tables: nothing to do there.
{{sqlite}}CREATE TABLE customer_search_terms_clustered (
{{sqlite}}    provider_id   TEXT NOT NULL,
{{sqlite}}    term          TEXT NOT NULL,
{{sqlite}}    subscriber_id TEXT NOT NULL,
{{sqlite}}    PRIMARY KEY (provider_id, term, subscriber_id)
{{sqlite}}) WITHOUT ROWID;
{{sqlite}}INSERT INTO customer_search_terms_clustered (provider_id, term, subscriber_id)
{{sqlite}}    SELECT provider_id, term, subscriber_id FROM customer_search_terms ORDER BY provider_id, term, subscriber_id;
{{sqlite}}DROP TABLE customer_search_terms;
{{sqlite}}ALTER TABLE customer_search_terms_clustered RENAME TO customer_search_terms;
{{sqlite}}CREATE INDEX customer_search_terms_subscriber ON customer_search_terms (subscriber_id, term);
