package store

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// The switch inventory: one row per access switch, by a unique name the ports refer to. The
// password is stored as sealed by the caller; the store never sees it in clear.

const switchColumns = `id, name, driver, address, username, secret, host_key, model, version, created_at, updated_at`

func scanSwitch(row interface{ Scan(...any) error }) (*subprov.Switch, error) {
	var s subprov.Switch
	if err := row.Scan(&s.ID, &s.Name, &s.Driver, &s.Address, &s.Username, &s.Secret, &s.HostKey, &s.Model, &s.Version,
		&s.CreatedAt, &s.UpdatedAt); err != nil {
		return nil, err
	}
	s.CreatedAt, s.UpdatedAt = s.CreatedAt.UTC(), s.UpdatedAt.UTC()
	return &s, nil
}

// Switches lists every switch by name.
func Switches(ctx context.Context, q Querier) ([]*subprov.Switch, error) {
	return sqltext.QueryAll(ctx, q, "switches", scanSwitch, `SELECT `+switchColumns+` FROM switches ORDER BY name, id`)
}

// SwitchByID reads one switch; an unknown id wraps subprov.ErrNotFound.
func SwitchByID(ctx context.Context, q Querier, id string) (*subprov.Switch, error) {
	s, err := scanSwitch(q.QueryRow(ctx, `SELECT `+switchColumns+` FROM switches WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("switch %s: %w", id, err)
	}
	return s, nil
}

// SwitchByName reads the switch a port names; an unknown name wraps subprov.ErrNotFound.
func SwitchByName(ctx context.Context, q Querier, name string) (*subprov.Switch, error) {
	s, err := scanSwitch(q.QueryRow(ctx, `SELECT `+switchColumns+` FROM switches WHERE name = ?`, name))
	if err != nil {
		return nil, fmt.Errorf("switch %q: %w", name, err)
	}
	return s, nil
}

// InsertSwitch creates a switch (version 1); a name already taken is subprov.ErrDuplicate.
func (tx *Tx) InsertSwitch(ctx context.Context, s *subprov.Switch, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO switches (id, name, driver, address, username, secret, host_key, model, version, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)`, s.ID, s.Name, s.Driver, s.Address, s.Username, s.Secret, s.HostKey, s.Model, now.UTC(), now.UTC())
	if err != nil {
		return fmt.Errorf("insert switch %q: %w", s.Name, err)
	}
	return nil
}

// UpdateSwitch overwrites a switch's fields by id and moves its version on; a name another
// switch has is subprov.ErrDuplicate.
func (tx *Tx) UpdateSwitch(ctx context.Context, s *subprov.Switch, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE switches SET name = ?, driver = ?, address = ?, username = ?, secret = ?, host_key = ?, model = ?,
		version = version + 1, updated_at = ? WHERE id = ?`, s.Name, s.Driver, s.Address, s.Username, s.Secret, s.HostKey, s.Model, now.UTC(), s.ID)
	if err != nil {
		return fmt.Errorf("update switch %q: %w", s.Name, err)
	}
	return nil
}

// LockSwitch reads a switch inside tx, locking its row until tx ends.
func (tx *Tx) LockSwitch(ctx context.Context, id string) (*subprov.Switch, error) {
	s, err := scanSwitch(tx.QueryRow(ctx, `SELECT `+switchColumns+` FROM switches WHERE id = ?`+tx.d.ForUpdate(), id))
	if err != nil {
		return nil, fmt.Errorf("switch %s: %w", id, err)
	}
	return s, nil
}

// EnsureSwitch creates the row of a switch a port names for the first time, with the default
// driver and no address or credentials; a switch already there is left as it is.
func (tx *Tx) EnsureSwitch(ctx context.Context, name string, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO switches (id, name, version, created_at, updated_at) VALUES (?, ?, 1, ?, ?)
		ON CONFLICT (name) DO NOTHING`, NewID(), name, now.UTC(), now.UTC())
	if err != nil {
		return fmt.Errorf("switch %q: %w", name, err)
	}
	return nil
}

// ResealSwitchSecret replaces a switch's sealed password with the same password sealed anew
// (a key rotation) when it is still the one read (old); the version does not move, as
// nothing an operator sees changed. It reports whether it replaced it.
func (tx *Tx) ResealSwitchSecret(ctx context.Context, id, old, sealed string) (bool, error) {
	res, err := tx.Exec(ctx, `UPDATE switches SET secret = ? WHERE id = ? AND secret = ?`, sealed, id, old)
	if err != nil {
		return false, fmt.Errorf("reseal switch %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("reseal switch %s: %w", id, err)
	}
	return n > 0, nil
}

// SwitchPortStates counts, per switch name, its ports and the ones marked unconverged: of
// every building, or with providerID only of the buildings that provider covers.
func SwitchPortStates(ctx context.Context, q Querier, providerID string) (map[string][2]int, error) {
	scope, args := "", []any{}
	if providerID != "" {
		scope, args = ` WHERE p.building_id IN (SELECT building_id FROM building_providers WHERE provider_id = ?)`, []any{providerID}
	}
	rows, err := q.Query(ctx, `SELECT p.switch_name, COUNT(*), SUM(CASE WHEN ps.unconverged THEN 1 ELSE 0 END)
		FROM ports p LEFT JOIN port_states ps ON ps.port_id = p.id`+scope+` GROUP BY p.switch_name`, args...)
	if err != nil {
		return nil, fmt.Errorf("switch port states: %w", err)
	}
	defer rows.Close()
	out := map[string][2]int{}
	for rows.Next() {
		var name string
		var ports, unconverged int
		if err := rows.Scan(&name, &ports, &unconverged); err != nil {
			return nil, fmt.Errorf("switch port states: %w", err)
		}
		out[name] = [2]int{ports, unconverged}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("switch port states: %w", err)
	}
	return out, nil
}

// SwitchProviders lists the providers covering a building one of the switch's ports is in:
// whose operators see the switch.
func SwitchProviders(ctx context.Context, q Querier, name string) ([]string, error) {
	return sqltext.Strings(ctx, q, "providers of switch "+name, `SELECT DISTINCT bp.provider_id FROM ports p JOIN building_providers bp ON bp.building_id = p.building_id
		WHERE p.switch_name = ? ORDER BY bp.provider_id`, name)
}
