package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// Interface counters: the last raw reading of each sampled port, the hourly traffic series and
// the link-down periods (outages). The counters package computes what a reading adds; this
// file keeps it. Octet counters are unsigned 64-bit and kept as their two's-complement BIGINT.

// PortReading is the last raw counter reading of a port.
type PortReading struct {
	PortID              string
	SampledAt           time.Time
	InOctets, OutOctets uint64
	LinkUp              bool
}

// SampledPort is a port a sampling reads: one that a line holds (not yet deprovisioned),
// whether it is in service (its desired setting's mode; a port without one, set up before
// desired settings were kept, is in service when a line on it is ACTIVE), and the bandwidth its
// desired setting shapes it to (0 when none, or not in service).
type SampledPort struct {
	PortID, Name             string
	InService                bool
	DownloadMbps, UploadMbps int
}

// PortOutage is a period a port's link was down; ResolvedAt is nil while it lasts.
type PortOutage struct {
	ID         string
	StartedAt  time.Time
	ResolvedAt *time.Time
}

// ClaimDueSamplings marks the switches whose counters a sampling should read (every driver
// but the sim; a switch that names none has defaultDriver) and whose last sampling was queued
// before due (or never) as queued at now, and returns their names: the caller queues one
// sampling each in the same transaction.
func (tx *Tx) ClaimDueSamplings(ctx context.Context, due, now time.Time, defaultDriver string) ([]string, error) {
	return sqltext.Strings(ctx, tx, "switches due a sampling", `UPDATE switches SET sampled_at = ? WHERE (sampled_at IS NULL OR sampled_at <= ?)
		AND (CASE WHEN driver = '' THEN ? ELSE driver END) <> 'sim' RETURNING name`, now.UTC(), due.UTC(), defaultDriver)
}

// PortsToSample returns the ports of a switch that lines hold, by name.
func (s *Store) PortsToSample(ctx context.Context, switchName string) ([]SampledPort, error) {
	return sqltext.QueryAll(ctx, s.R(), "ports to sample on switch "+switchName, func(r interface{ Scan(...any) error }) (SampledPort, error) {
		var p SampledPort
		var mode string
		err := r.Scan(&p.PortID, &p.Name, &mode, &p.DownloadMbps, &p.UploadMbps)
		p.InService = mode == "service"
		return p, err
	}, portsToSampleQuery, switchName)
}

// portsToSampleQuery looks up each port's lines through subscriptions_port.
const portsToSampleQuery = `SELECT p.id, p.port_name, COALESCE(ps.mode, CASE WHEN EXISTS (SELECT 1 FROM subscriptions s WHERE s.port_id = p.id
		AND s.deprovisioned_at IS NULL AND s.status = 'ACTIVE') THEN 'service' ELSE '' END), CASE WHEN ps.mode = 'service' THEN ps.download_mbps ELSE 0 END,
		CASE WHEN ps.mode = 'service' THEN ps.upload_mbps ELSE 0 END
		FROM ports p LEFT JOIN port_states ps ON ps.port_id = p.id WHERE p.switch_name = ?
		AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.port_id = p.id AND s.deprovisioned_at IS NULL) ORDER BY p.port_name`

func scanReading(row interface{ Scan(...any) error }) (*PortReading, error) {
	var r PortReading
	var in, out int64
	if err := row.Scan(&r.PortID, &r.SampledAt, &in, &out, &r.LinkUp); err != nil {
		return nil, err
	}
	r.SampledAt, r.InOctets, r.OutOctets = r.SampledAt.UTC(), uint64(in), uint64(out)
	return &r, nil
}

// PortReading returns the last reading of a port as tx sees it; none wraps subprov.ErrNotFound.
func (tx *Tx) PortReading(ctx context.Context, portID string) (*PortReading, error) {
	r, err := scanReading(tx.QueryRow(ctx, `SELECT port_id, sampled_at, in_octets, out_octets, link_up FROM port_readings WHERE port_id = ?`, portID))
	if err != nil {
		return nil, fmt.Errorf("last reading of port %s: %w", portID, err)
	}
	return r, nil
}

// PutPortReading makes r the port's last reading, provided the last one is still prev's (nil:
// none yet). It reports false, changing nothing, when another sampling got there first, so a
// difference is never counted twice.
func (tx *Tx) PutPortReading(ctx context.Context, r PortReading, prev *time.Time) (bool, error) {
	var res sql.Result
	var err error
	if prev == nil {
		res, err = tx.Exec(ctx, `INSERT INTO port_readings (port_id, sampled_at, in_octets, out_octets, link_up) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (port_id) DO NOTHING`, r.PortID, r.SampledAt.UTC(), int64(r.InOctets), int64(r.OutOctets), r.LinkUp)
	} else {
		res, err = tx.Exec(ctx, `UPDATE port_readings SET sampled_at = ?, in_octets = ?, out_octets = ?, link_up = ? WHERE port_id = ? AND sampled_at = ?`,
			r.SampledAt.UTC(), int64(r.InOctets), int64(r.OutOctets), r.LinkUp, r.PortID, prev.UTC())
	}
	if err != nil {
		return false, fmt.Errorf("reading of port %s: %w", r.PortID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("reading of port %s: %w", r.PortID, err)
	}
	return n == 1, nil
}

// AddPortTraffic adds bytes to a port's hour (hour is the start of a UTC hour).
func (tx *Tx) AddPortTraffic(ctx context.Context, portID string, hour time.Time, download, upload uint64) error {
	_, err := tx.Exec(ctx, `INSERT INTO port_traffic (port_id, hour, download_bytes, upload_bytes) VALUES (?, ?, ?, ?)
		ON CONFLICT (port_id, hour) DO UPDATE SET download_bytes = port_traffic.download_bytes + excluded.download_bytes,
		upload_bytes = port_traffic.upload_bytes + excluded.upload_bytes`, portID, hour.UTC(), int64(download), int64(upload))
	if err != nil {
		return fmt.Errorf("traffic of port %s at %s: %w", portID, hour.UTC().Format(time.RFC3339), err)
	}
	return nil
}

// OpenPortOutage records the port's link down from at; one already open is left as it is.
func (tx *Tx) OpenPortOutage(ctx context.Context, portID string, at time.Time) error {
	if _, err := tx.Exec(ctx, `INSERT INTO port_outages (id, port_id, started_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
		NewID(), portID, at.UTC()); err != nil {
		return fmt.Errorf("outage of port %s: %w", portID, err)
	}
	return nil
}

// ResolvePortOutage ends the port's open outage at at (none open: nothing changes).
func (tx *Tx) ResolvePortOutage(ctx context.Context, portID string, at time.Time) error {
	if _, err := tx.Exec(ctx, `UPDATE port_outages SET resolved_at = ? WHERE port_id = ? AND resolved_at IS NULL`, at.UTC(), portID); err != nil {
		return fmt.Errorf("end outage of port %s: %w", portID, err)
	}
	return nil
}

// PortTraffic sums a port's traffic over the hours from from (inclusive) to to (exclusive).
func (s *Store) PortTraffic(ctx context.Context, switchName, portName string, from, to time.Time) (download, upload int64, err error) {
	err = s.R().QueryRow(ctx, `SELECT COALESCE(SUM(t.download_bytes), 0), COALESCE(SUM(t.upload_bytes), 0)
		FROM port_traffic t JOIN ports p ON p.id = t.port_id
		WHERE p.switch_name = ? AND p.port_name = ? AND t.hour >= ? AND t.hour < ?`, switchName, portName, from.UTC(), to.UTC()).Scan(&download, &upload)
	if err != nil {
		return 0, 0, fmt.Errorf("traffic of port %s/%s: %w", switchName, portName, err)
	}
	return download, upload, nil
}

// PortOutages lists a port's outages that overlap since..until (started before until, not
// resolved before since), oldest first.
func (s *Store) PortOutages(ctx context.Context, switchName, portName string, since, until time.Time) ([]PortOutage, error) {
	return sqltext.QueryAll(ctx, s.R(), "outages of port "+switchName+"/"+portName, func(r interface{ Scan(...any) error }) (PortOutage, error) {
		var o PortOutage
		var resolved sql.NullTime
		if err := r.Scan(&o.ID, &o.StartedAt, &resolved); err != nil {
			return o, err
		}
		o.StartedAt = o.StartedAt.UTC()
		if resolved.Valid {
			t := resolved.Time.UTC()
			o.ResolvedAt = &t
		}
		return o, nil
	}, `SELECT o.id, o.started_at, o.resolved_at FROM port_outages o JOIN ports p ON p.id = o.port_id
		WHERE p.switch_name = ? AND p.port_name = ? AND o.started_at < ? AND (o.resolved_at IS NULL OR o.resolved_at >= ?)
		ORDER BY o.started_at, o.id`, switchName, portName, until.UTC(), since.UTC())
}

// LastPortReading returns the last reading of a port; a port never sampled wraps
// subprov.ErrNotFound.
func (s *Store) LastPortReading(ctx context.Context, switchName, portName string) (*PortReading, error) {
	r, err := scanReading(s.R().QueryRow(ctx, `SELECT r.port_id, r.sampled_at, r.in_octets, r.out_octets, r.link_up
		FROM port_readings r JOIN ports p ON p.id = r.port_id WHERE p.switch_name = ? AND p.port_name = ?`, switchName, portName))
	if err != nil && !errors.Is(err, subprov.ErrNotFound) {
		return nil, fmt.Errorf("last reading of port %s/%s: %w", switchName, portName, err)
	}
	if err != nil {
		return nil, fmt.Errorf("port %s/%s was never sampled: %w", switchName, portName, err)
	}
	return r, nil
}
