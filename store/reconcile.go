package store

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// Reconciliation: which switches are due, which ports of a switch have a desired setting, and
// what the last reconciliation found on each. The provisioning package judges; this file keeps.

// ReconciledPort is a port of a switch with a desired setting, as a reconciliation reads it:
// Leased is true while a converger holds the port.
type ReconciledPort struct {
	Name string
	subprov.PortConvergence
	Leased bool
}

// ClaimDueSwitches marks the switches whose last reconciliation was queued before due (or
// never) as queued at now, and returns their names: the caller queues one reconciliation each
// in the same transaction, so a switch is queued once per interval however many sweeps run.
func (tx *Tx) ClaimDueSwitches(ctx context.Context, due, now time.Time) ([]string, error) {
	return sqltext.Strings(ctx, tx, "due switches", `UPDATE switches SET reconciled_at = ? WHERE reconciled_at IS NULL OR reconciled_at <= ? RETURNING name`, now.UTC(), due.UTC())
}

// PortsToReconcile returns the ports of a switch that have a desired setting, by name, those
// named after after only ("": all).
func (s *Store) PortsToReconcile(ctx context.Context, switchName, after string, now time.Time) ([]ReconciledPort, error) {
	return sqltext.QueryAll(ctx, s.R(), "ports of switch "+switchName, func(r interface{ Scan(...any) error }) (ReconciledPort, error) {
		var p ReconciledPort
		var leased int
		w := &p.Want
		err := r.Scan(&p.Name, &p.PortID, &w.Mode, &w.VLAN, &w.DownloadMbps, &w.UploadMbps, &w.MAC, &p.Version, &p.ConvergedVersion,
			&p.FailedVersion, &p.Failure, &p.Unconverged, &p.UpdatedAt, &leased)
		p.Leased = leased > 0
		return p, err
	}, `SELECT p.port_name, ps.port_id, ps.mode, ps.vlan, ps.download_mbps, ps.upload_mbps, ps.mac_address, ps.version,
		ps.converged_version, ps.failed_version, ps.failure, ps.unconverged, ps.updated_at,
		CASE WHEN ps.lease_token <> '' AND ps.lease_until > ? THEN 1 ELSE 0 END
		FROM ports p JOIN port_states ps ON ps.port_id = p.id WHERE p.switch_name = ? AND p.port_name > ?
		ORDER BY p.port_name`, now.UTC(), switchName, after)
}

// SetPortFound records what a reconciliation found on a port: the fields that differ from its
// desired setting ("" when none) and whether a billed line sits on it out of service.
func (s *Store) SetPortFound(ctx context.Context, portID, drift string, billingRisk bool) error {
	return s.WriteOne(ctx, func(q Execer) error {
		if _, err := q.Exec(ctx, `UPDATE port_states SET drift = ?, billing_risk = ? WHERE port_id = ?`, drift, billingRisk, portID); err != nil {
			return fmt.Errorf("record what port %s reads: %w", portID, err)
		}
		return nil
	})
}

// BillingRisks counts, per switch, the ports whose last reconciliation found a line billed as
// ACTIVE on a port not in service.
func (s *Store) BillingRisks(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	if err := countGroups(ctx, s.R(), out, `SELECT p.switch_name, COUNT(*) FROM port_states ps JOIN ports p ON p.id = ps.port_id
		WHERE ps.billing_risk GROUP BY p.switch_name`); err != nil {
		return nil, fmt.Errorf("billing risks: %w", err)
	}
	return out, nil
}

// NotePortTicket appends a line to the internal note of the port's open operator ticket (none
// open: nothing changes).
func (tx *Tx) NotePortTicket(ctx context.Context, portID, note string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE tickets SET internal_note = internal_note || ? || ?, updated_at = ?, version = version + 1
		WHERE port_id = ? AND kind = 'operator' AND status NOT IN ('solved', 'closed')`, "\n", note, now.UTC(), portID)
	if err != nil {
		return fmt.Errorf("note on the ticket of port %s: %w", portID, err)
	}
	return nil
}
