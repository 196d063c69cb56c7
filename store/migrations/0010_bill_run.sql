-- Bill run (issue 9): the run pages through a provider's platform-billed lines in id order.
-- Without this index each page read every running line of the provider through
-- subscriptions_provider_status and sorted them, so a run did work quadratic in the lines.
CREATE INDEX subscriptions_platform_billed ON subscriptions (provider_id, id) WHERE billing_owner = 'platform';
