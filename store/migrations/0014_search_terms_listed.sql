-- Issue 9: each subscriber row lists its own agent search terms (space-separated), so
-- re-indexing a subscriber deletes its old terms by the index's primary key and the second
-- index of the search table, on (subscriber_id, term), goes. That index was a copy of all of
-- the table (26 million entries at 1M subscribers): the largest single step of subprov gen,
-- and a second B-tree written for every term of every order. A multi-word query's words are
-- now checked against a candidate's list (see searchPrefixes). The lists of existing
-- subscribers are read from their terms, through that index, before it is dropped.
ALTER TABLE subscribers ADD COLUMN search_terms TEXT;
{{sqlite}}UPDATE subscribers SET search_terms = (SELECT group_concat(t.term, ' ') FROM customer_search_terms t WHERE t.subscriber_id = subscribers.id);
{{postgres}}UPDATE subscribers SET search_terms = (SELECT string_agg(t.term, ' ' ORDER BY t.term) FROM customer_search_terms t WHERE t.subscriber_id = subscribers.id);
DROP INDEX customer_search_terms_subscriber;
