package store

import (
	"context"
	"fmt"
	"time"
)

// SimPortState is one port of the built-in simulated switch as the sim driver last wrote it.
// The table is the sim's "hardware": it is kept in the database so a port switched on by one
// process (or before a restart) reads the same in every other, as a real switch would.
type SimPortState struct {
	Switch, Port, State            string
	VLAN, DownloadMbps, UploadMbps int
	MAC                            string
}

// SimPort returns a simulated port's state; a port never written wraps ErrNoRows.
func (s *Store) SimPort(ctx context.Context, switchName, portName string) (*SimPortState, error) {
	return simPort(ctx, s.R(), switchName, portName)
}

// SimPort returns a simulated port's state inside the transaction, so the sim can check and
// write a port atomically (the different-device check must see what it overwrites).
func (tx *Tx) SimPort(ctx context.Context, switchName, portName string) (*SimPortState, error) {
	return simPort(ctx, tx, switchName, portName)
}

func simPort(ctx context.Context, q Querier, switchName, portName string) (*SimPortState, error) {
	p := SimPortState{Switch: switchName, Port: portName}
	err := q.QueryRow(ctx, `SELECT state, vlan, download_mbps, upload_mbps, mac_address FROM sim_ports
		WHERE switch_name = ? AND port_name = ?`, switchName, portName).
		Scan(&p.State, &p.VLAN, &p.DownloadMbps, &p.UploadMbps, &p.MAC)
	if err != nil {
		// ErrNoRows stays visible through %w: the sim reads an absent port as never configured.
		return nil, fmt.Errorf("sim port %s/%s: %w", switchName, portName, err)
	}
	return &p, nil
}

// PutSimPort stores a simulated port's whole state, replacing what was there.
func (tx *Tx) PutSimPort(ctx context.Context, p SimPortState, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO sim_ports (switch_name, port_name, state, vlan, download_mbps, upload_mbps, mac_address, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (switch_name, port_name) DO UPDATE SET state = excluded.state, vlan = excluded.vlan,
			download_mbps = excluded.download_mbps, upload_mbps = excluded.upload_mbps,
			mac_address = excluded.mac_address, updated_at = excluded.updated_at`,
		p.Switch, p.Port, p.State, p.VLAN, p.DownloadMbps, p.UploadMbps, p.MAC, now.UTC())
	if err != nil {
		return fmt.Errorf("write sim port %s/%s: %w", p.Switch, p.Port, err)
	}
	return nil
}
