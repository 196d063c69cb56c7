-- compatible-with: 48
-- The operations surface's list filtered by workflow state read the subscribers in id order
-- until enough had a line in that state, in proportion to how rare the state is. A line is in
-- `provisioning` while its port is being written (its job retrying while the switch does not
-- answer), so a list of them (what an operator looks at when orders seem stuck) read every
-- subscriber of the scope for an empty page or nearly: at 1,000,000 subscribers over ten
-- providers, the list over every provider took 5.1 s on SQLite and 1.3 s on PostgreSQL with
-- 8 clients. Those lines get a partial index of their own, as the lines whose provisioning
-- failed have (0051): it holds the lines being provisioned at the moment, a handful.
CREATE INDEX subscriptions_provisioning ON subscriptions (subscriber_id, provider_id) WHERE workflow_state = 'provisioning';
