-- Reconciliation (docs/network.md): every switch is read port by port on a schedule and
-- compared with what its lines say. reconciled_at is when the switch's last reconciliation
-- was queued, so the sweep queues one per switch when it falls due.
ALTER TABLE switches ADD COLUMN reconciled_at {{timestamp}};
-- What the last reconciliation found on a port: the fields that differ from its desired
-- setting ('' when none), and whether a line billed as ACTIVE sits on a port not in service.
ALTER TABLE port_states ADD COLUMN drift TEXT NOT NULL DEFAULT '';
ALTER TABLE port_states ADD COLUMN billing_risk {{bool}} NOT NULL DEFAULT FALSE;
-- A provider that opts in has a drifted port converged back to its desired setting at once.
ALTER TABLE providers ADD COLUMN auto_repair {{bool}} NOT NULL DEFAULT FALSE;
