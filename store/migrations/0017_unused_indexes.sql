-- Issue 9: three indexes no statement reads, written by every order. Agent search finds a
-- customer by phone digits and by a retired customer number through its own index
-- (customer_search_terms, since 0007), and the events of a provider are listed and delivered
-- in seq order (events_provider_seq, events_pending), never by created_at. Each index still
-- took an insert per new subscriber or event in the single SQLite writer's transactions (on
-- PostgreSQL, the backends' index pages and WAL), and subprov gen built the two on subscribers
-- over every row. The columns stay: phone_digits and legacy_customer_number are still written.
DROP INDEX subscribers_phone;
DROP INDEX subscribers_legacy;
DROP INDEX events_provider_created;
