package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
)

// Port states: what each port should be doing and how far its switch has caught up. The
// provisioning package decides the desired setting; this file only keeps it.

const portStateColumns = `port_id, mode, vlan, download_mbps, upload_mbps, mac_address, version, converged_version,
	failed_version, failure, unconverged, updated_at`

func scanPortState(row interface{ Scan(...any) error }) (*subprov.PortConvergence, error) {
	var c subprov.PortConvergence
	w := &c.Want
	err := row.Scan(&c.PortID, &w.Mode, &w.VLAN, &w.DownloadMbps, &w.UploadMbps, &w.MAC, &c.Version, &c.ConvergedVersion,
		&c.FailedVersion, &c.Failure, &c.Unconverged, &c.UpdatedAt)
	if err != nil {
		return nil, err
	}
	c.UpdatedAt = c.UpdatedAt.UTC()
	return &c, nil
}

// PortHolders returns the lines that hold a port (every line on it not yet deprovisioned), with
// their plan's bandwidth, oldest first, as tx sees them.
func (tx *Tx) PortHolders(ctx context.Context, portID string) ([]subprov.PortHolder, error) {
	return portHolders(ctx, tx, portID)
}

// PortHolders is Tx.PortHolders outside a transaction.
func (s *Store) PortHolders(ctx context.Context, portID string) ([]subprov.PortHolder, error) {
	return portHolders(ctx, s.R(), portID)
}

// The reads of a port's lines go through subscriptions_port (port_id, created_at, id).
const (
	portHoldersQuery = `SELECT ` + subscriptionColumns + `, v.download_mbps, v.upload_mbps, pr.sandbox
		FROM subscriptions s JOIN plan_versions v ON v.id = s.plan_version_id JOIN providers pr ON pr.id = s.provider_id
		WHERE s.port_id = ? AND s.deprovisioned_at IS NULL ORDER BY s.created_at, s.id`
	latestLineOnPortQuery = `SELECT ` + subscriptionColumns + ` FROM subscriptions s WHERE s.port_id = ?
		ORDER BY s.created_at DESC, s.id DESC LIMIT 1`
)

func portHolders(ctx context.Context, q Querier, portID string) ([]subprov.PortHolder, error) {
	rows, err := q.Query(ctx, portHoldersQuery, portID)
	if err != nil {
		return nil, fmt.Errorf("lines on port %s: %w", portID, err)
	}
	defer rows.Close()
	var out []subprov.PortHolder
	for rows.Next() {
		var r subscriptionRow
		var h subprov.PortHolder
		if err := rows.Scan(append(r.dest(), &h.DownloadMbps, &h.UploadMbps, &h.Sandbox)...); err != nil {
			return nil, fmt.Errorf("lines on port %s: %w", portID, err)
		}
		h.Line = r.value()
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("lines on port %s: %w", portID, err)
	}
	return out, nil
}

// LatestLineOnPort returns the newest line ever on a port (to name its provider and
// subscriber on an operator ticket about the port); none wraps subprov.ErrNotFound.
func (s *Store) LatestLineOnPort(ctx context.Context, portID string) (*subprov.Subscription, error) {
	var r subscriptionRow
	err := s.R().QueryRow(ctx, latestLineOnPortQuery, portID).Scan(r.dest()...)
	if err != nil {
		return nil, fmt.Errorf("latest line on port %s: %w", portID, err)
	}
	return r.value(), nil
}

// SetPortWant records a port's desired setting inside tx, locking its row: the version goes up
// by one when the setting differs from the one kept (changed true), and stays when it is the
// same. It returns the version the port must reach.
func (tx *Tx) SetPortWant(ctx context.Context, portID string, want subprov.PortSetting, now time.Time) (version int64, changed bool, err error) {
	cur, err := scanPortState(tx.QueryRow(ctx, `SELECT `+portStateColumns+` FROM port_states WHERE port_id = ?`+tx.d.ForUpdate(), portID))
	switch {
	case errors.Is(err, subprov.ErrNotFound):
		_, err = tx.Exec(ctx, `INSERT INTO port_states (port_id, mode, vlan, download_mbps, upload_mbps, mac_address, version, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, 1, ?)`, portID, want.Mode, want.VLAN, want.DownloadMbps, want.UploadMbps, want.MAC, now.UTC())
		if err != nil {
			return 0, false, fmt.Errorf("port %s desired state: %w", portID, err)
		}
		return 1, true, nil
	case err != nil:
		return 0, false, fmt.Errorf("port %s desired state: %w", portID, err)
	case cur.Want == want:
		return cur.Version, false, nil
	}
	_, err = tx.Exec(ctx, `UPDATE port_states SET mode = ?, vlan = ?, download_mbps = ?, upload_mbps = ?, mac_address = ?,
		version = version + 1, updated_at = ? WHERE port_id = ?`, want.Mode, want.VLAN, want.DownloadMbps, want.UploadMbps, want.MAC, now.UTC(), portID)
	if err != nil {
		return 0, false, fmt.Errorf("port %s desired state: %w", portID, err)
	}
	return cur.Version + 1, true, nil
}

// PortConvergence returns a port's desired setting and convergence as last committed; a port
// with none wraps subprov.ErrNotFound.
func (s *Store) PortConvergence(ctx context.Context, portID string) (*subprov.PortConvergence, error) {
	c, err := scanPortState(s.R().QueryRow(ctx, `SELECT `+portStateColumns+` FROM port_states WHERE port_id = ?`, portID))
	if err != nil {
		return nil, fmt.Errorf("port %s state: %w", portID, err)
	}
	return c, nil
}

// LeasePort takes the port's convergence lease for token until until, unless another token
// holds a lease that has not run out at now: then ok is false. With the lease it returns the
// desired setting to write, as the statement that took the lease left it. A port with no
// desired setting wraps subprov.ErrNotFound.
func (s *Store) LeasePort(ctx context.Context, portID, token string, until, now time.Time) (c *subprov.PortConvergence, ok bool, err error) {
	err = s.WriteOne(ctx, func(q Execer) (err error) {
		c, err = scanPortState(q.QueryRow(ctx, `UPDATE port_states SET lease_token = ?, lease_until = ?
			WHERE port_id = ? AND (lease_token = '' OR lease_token = ? OR lease_until IS NULL OR lease_until < ?)
			RETURNING `+portStateColumns, token, until.UTC(), portID, token, now.UTC()))
		return err
	})
	if errors.Is(err, subprov.ErrNotFound) {
		// Held by another, or no desired setting at all: say which.
		var one int
		err = s.R().QueryRow(ctx, `SELECT 1 FROM port_states WHERE port_id = ?`, portID).Scan(&one)
	} else {
		ok = err == nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("lease port %s: %w", portID, err)
	}
	return c, ok, nil
}

// FinishConverge records the outcome of token's attempt at version (failure "" for confirmed)
// and gives the lease back; it returns the port's state after, whose Version tells whether the
// desired setting moved on meanwhile.
func (s *Store) FinishConverge(ctx context.Context, portID, token string, version int64, failure string, now time.Time) (*subprov.PortConvergence, error) {
	// A port confirmed in its current desired setting has no drift left, and one confirmed in
	// service is no billing risk: what the last reconciliation found there no longer holds.
	q := `UPDATE port_states SET converged_version = CASE WHEN converged_version > ? THEN converged_version ELSE ? END,
		unconverged = CASE WHEN version = ? THEN FALSE ELSE unconverged END,
		drift = CASE WHEN version = ? THEN '' ELSE drift END,
		billing_risk = CASE WHEN version = ? AND mode = 'service' THEN FALSE ELSE billing_risk END,
		lease_token = '', lease_until = NULL
		WHERE port_id = ? AND lease_token = ?`
	args := []any{version, version, version, version, version, portID, token}
	if failure != "" {
		q = `UPDATE port_states SET failed_version = ?, failure = ?, lease_token = '', lease_until = NULL
			WHERE port_id = ? AND lease_token = ?`
		args = []any{version, failure, portID, token}
	}
	var c *subprov.PortConvergence
	err := s.WriteOne(ctx, func(w Execer) (err error) {
		c, err = scanPortState(w.QueryRow(ctx, q+` RETURNING `+portStateColumns, args...))
		return err
	})
	if errors.Is(err, subprov.ErrNotFound) {
		// The lease ran out and another converger took it: nothing is recorded, and the
		// port's state is as that one keeps it.
		c, err = scanPortState(s.R().QueryRow(ctx, `SELECT `+portStateColumns+` FROM port_states WHERE port_id = ?`, portID))
	}
	if err != nil {
		return nil, fmt.Errorf("finish converging port %s: %w", portID, err)
	}
	return c, nil
}

// ReleasePort gives back token's lease on a port without recording an outcome: the attempt
// never reached the switch.
func (s *Store) ReleasePort(ctx context.Context, portID, token string) error {
	err := s.WriteOne(ctx, func(q Execer) error {
		_, err := q.Exec(ctx, `UPDATE port_states SET lease_token = '', lease_until = NULL WHERE port_id = ? AND lease_token = ?`, portID, token)
		return err
	})
	if err != nil {
		return fmt.Errorf("release port %s: %w", portID, err)
	}
	return nil
}

// MarkUnconverged flags a port whose switch has not confirmed its desired setting; flagged is
// true only for the transaction that flipped the flag, so the caller opens one ticket per port.
func (tx *Tx) MarkUnconverged(ctx context.Context, portID string, now time.Time) (flagged bool, err error) {
	res, err := tx.Exec(ctx, `UPDATE port_states SET unconverged = TRUE, updated_at = ?
		WHERE port_id = ? AND NOT unconverged AND converged_version < version`, now.UTC(), portID)
	if err != nil {
		return false, fmt.Errorf("mark port %s unconverged: %w", portID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("mark port %s unconverged: %w", portID, err)
	}
	return n > 0, nil
}
