-- compatible-with: 48
-- The operations surface's list of a provider's subscribers reads a page in id order. Without
-- an index of the provider's subscribers by id, a page read the subscribers of every provider
-- before it (the primary key, the provider checked row by row): at 100,000 subscribers over
-- ten providers, the last provider's first page read 90,000 rows. A list filtered by status
-- read the provider's subscribers in id order until enough had a line in that status; the
-- lines' index by provider and status (subscriptions_provider_status) now ends with the
-- subscriber, so such a page reads its subscribers' lines in order. The index still serves
-- the overview's count of lines by status, which it was for. The lines whose provisioning
-- failed, which the overview counts and the console lists, were found by reading every line;
-- they have a partial index of their own, small on a healthy network.
CREATE INDEX subscribers_provider ON subscribers (provider_id, id);
DROP INDEX subscriptions_provider_status;
CREATE INDEX subscriptions_provider_status ON subscriptions (provider_id, status, subscriber_id);
CREATE INDEX subscriptions_provisioning_failed ON subscriptions (subscriber_id, provider_id) WHERE workflow_state = 'provisioning_failed';
