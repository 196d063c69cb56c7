package switches

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov/store"
)

// SimPortState is one port of the built-in simulated switch as the sim driver last wrote it.
// The table is the sim's "hardware": it is kept in the database so a port switched on by one
// process (or before a restart) reads the same in every other, as a real switch would.
type SimPortState struct {
	Switch, Port, State            string
	VLAN, DownloadMbps, UploadMbps int
	MAC                            string
}

// ReadSimPort returns a simulated port's state as q (the read pool, or a transaction) sees it;
// a port never written wraps subprov.ErrNotFound.
func ReadSimPort(ctx context.Context, q store.Querier, switchName, portName string) (*SimPortState, error) {
	p := SimPortState{Switch: switchName, Port: portName}
	err := q.QueryRow(ctx, `SELECT state, vlan, download_mbps, upload_mbps, mac_address FROM sim_ports
		WHERE switch_name = ? AND port_name = ?`, switchName, portName).
		Scan(&p.State, &p.VLAN, &p.DownloadMbps, &p.UploadMbps, &p.MAC)
	if err != nil {
		// subprov.ErrNotFound stays visible through %w: the sim reads an absent port as never configured.
		return nil, fmt.Errorf("sim port %s/%s: %w", switchName, portName, err)
	}
	return &p, nil
}

// PutSimPort stores a simulated port's whole state, replacing what was there.
func PutSimPort(ctx context.Context, tx *store.Tx, p SimPortState, now time.Time) error {
	_, err := putSimPort(ctx, tx, p, "", now)
	return err
}

// PutSimPortUnlessBound stores a simulated port's whole state in one statement, unless the
// port is in state bound with a device's MAC and p would put it in that state with another
// (or no) MAC: then nothing changes, written is false, and mac is the MAC the port is bound
// to, read just after ("" when that read fails or the port changed meanwhile: the refusal
// stands either way). Check and write are one statement, so two activations racing on a port
// cannot both bind their device.
func PutSimPortUnlessBound(ctx context.Context, st *store.Store, p SimPortState, bound string, now time.Time) (written bool, mac string, err error) {
	err = st.WriteOne(ctx, func(q store.Execer) (err error) {
		written, err = putSimPort(ctx, q, p, bound, now)
		return err
	})
	if err != nil || written {
		return written, "", err
	}
	if cur, err := ReadSimPort(ctx, st.R(), p.Switch, p.Port); err == nil {
		mac = cur.MAC
	}
	return false, mac, nil
}

// putSimPort upserts the port; with a bound state it leaves a port bound to another device
// as it is and reports written false.
func putSimPort(ctx context.Context, q store.Execer, p SimPortState, bound string, now time.Time) (bool, error) {
	guard := ""
	args := []any{p.Switch, p.Port, p.State, p.VLAN, p.DownloadMbps, p.UploadMbps, p.MAC, now.UTC()}
	if bound != "" {
		guard = `
		WHERE NOT (sim_ports.state = ? AND sim_ports.mac_address <> '' AND excluded.state = ? AND excluded.mac_address <> sim_ports.mac_address)`
		args = append(args, bound, bound)
	}
	res, err := q.Exec(ctx, `INSERT INTO sim_ports (switch_name, port_name, state, vlan, download_mbps, upload_mbps, mac_address, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (switch_name, port_name) DO UPDATE SET state = excluded.state, vlan = excluded.vlan,
			download_mbps = excluded.download_mbps, upload_mbps = excluded.upload_mbps,
			mac_address = excluded.mac_address, updated_at = excluded.updated_at`+guard, args...)
	if err != nil {
		return false, fmt.Errorf("write sim port %s/%s: %w", p.Switch, p.Port, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("write sim port %s/%s: %w", p.Switch, p.Port, err)
	}
	return n > 0, nil
}
