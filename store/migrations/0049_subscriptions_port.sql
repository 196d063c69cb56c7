-- compatible-with: 46
-- The lines on a switch port, read by every order, plan change and convergence of the port
-- (the lines that decide its setting) and by the operators' tickets about it (its newest
-- line): without this index each read went through all of the provider's lines.
CREATE INDEX subscriptions_port ON subscriptions (port_id, created_at, id);
