-- A code that verified a session no longer counts against the resend limits (agent.IssueCode):
-- they stop someone flooding a customer with codes nobody reads out, not an agent who
-- verifies the same customer on several calls. consumed_at cannot tell the two apart: a code
-- retired by a newer one, or whose checks ran out, is consumed too.
ALTER TABLE verification_codes ADD COLUMN verified_at {{timestamp}};
