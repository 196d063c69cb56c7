package store_test

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// The counters' keeping: which ports and switches a sampling reads, the last reading taken
// only over the one it follows, the hourly series summed over a range, and the outages.
func TestPortCounters(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f, err := fixture.Parse(fixture.DemoJSON)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fixture.LoadAtCost(ctx, s, f, now, identity.TestPasswordCost); err != nil {
			t.Fatal(err)
		}
		const sw = "mtl-king-sw1"
		ports, err := s.PortsToSample(ctx, sw)
		if err != nil || len(ports) == 0 {
			t.Fatalf("ports to sample on %s: %v, %v", sw, ports, err)
		}
		held := testdb.Strings(t, s.R().Query, `SELECT DISTINCT p.port_name FROM ports p JOIN subscriptions s ON s.port_id = p.id
			WHERE p.switch_name = ? AND s.deprovisioned_at IS NULL ORDER BY p.port_name`, sw)
		if len(ports) != len(held) {
			t.Fatalf("ports to sample %v, want the held %v", ports, held)
		}
		for i, p := range ports {
			if p.Name != held[i] || p.PortID == "" {
				t.Fatalf("port to sample %+v, want %s", p, held[i])
			}
		}
		port := ports[0]
		// The demo's line on it is ACTIVE, with no desired setting kept: in service, unshaped.
		if !port.InService || port.DownloadMbps != 0 {
			t.Fatalf("port to sample %+v, want in service", port)
		}
		if _, err := rawdb.Writer(s).ExecContext(ctx, s.Dialect.Rebind(`INSERT INTO port_states (port_id, mode, vlan, download_mbps, upload_mbps,
			mac_address, version, updated_at) VALUES (?, 'suspended', 2001, 500, 100, '', 1, ?)`), port.PortID, now); err != nil {
			t.Fatal(err)
		}
		if ports, err := s.PortsToSample(ctx, sw); err != nil || ports[0].InService || ports[0].DownloadMbps != 0 {
			t.Fatalf("a suspended port to sample: %+v, %v; want out of service", ports, err)
		}
		if _, err := rawdb.Writer(s).ExecContext(ctx, `UPDATE port_states SET mode = 'service'`); err != nil {
			t.Fatal(err)
		}
		if ports, err := s.PortsToSample(ctx, sw); err != nil || !ports[0].InService || ports[0].DownloadMbps != 500 || ports[0].UploadMbps != 100 {
			t.Fatalf("a port in service to sample: %+v, %v; want its plan's 500/100", ports, err)
		}

		claim := func(at time.Time, def string) []string {
			t.Helper()
			var names []string
			if err := s.InTx(ctx, func(tx *store.Tx) (err error) {
				names, err = tx.ClaimDueSamplings(ctx, at.Add(-5*time.Minute), at, def)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return names
		}
		// The demo's switches name the sim; a switch naming none has the default driver.
		if got := claim(now, "linuxbridge"); len(got) != 0 {
			t.Fatalf("switches on the sim claimed for sampling: %v", got)
		}
		if _, err := rawdb.Writer(s).ExecContext(ctx, `UPDATE switches SET driver = ''`); err != nil {
			t.Fatal(err)
		}
		if got := claim(now, "sim"); len(got) != 0 {
			t.Fatalf("switches on the default sim claimed for sampling: %v", got)
		}
		all := testdb.Strings(t, s.R().Query, `SELECT name FROM switches`)
		if got := claim(now, "linuxbridge"); len(got) != len(all) {
			t.Fatalf("claimed %v with the default driver linuxbridge, want all of %v", got, all)
		}
		if got := claim(now.Add(4*time.Minute), "linuxbridge"); len(got) != 0 {
			t.Fatalf("claimed again within the interval: %v", got)
		}
		if _, err := rawdb.Writer(s).ExecContext(ctx, s.Dialect.Rebind(`UPDATE switches SET driver = 'sim' WHERE name <> ?`), sw); err != nil {
			t.Fatal(err)
		}
		if got := claim(now.Add(5*time.Minute), "linuxbridge"); len(got) != 1 || got[0] != sw {
			t.Fatalf("claimed %v once due, want only %s (the others name the sim)", got, sw)
		}

		put := func(r store.PortReading, prev *time.Time) bool {
			t.Helper()
			var ok bool
			if err := s.InTx(ctx, func(tx *store.Tx) (err error) {
				ok, err = tx.PutPortReading(ctx, r, prev)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			return ok
		}
		if _, err := s.LastPortReading(ctx, sw, port.Name); !errors.Is(err, subprov.ErrNotFound) {
			t.Fatalf("reading of a port never sampled: %v", err)
		}
		t1 := now.Add(123456 * time.Microsecond)
		first := store.PortReading{PortID: port.PortID, SampledAt: t1, InOctets: math.MaxUint64 - 5, OutOctets: 1 << 63, LinkUp: true}
		if !put(first, nil) {
			t.Fatal("first reading not kept")
		}
		if put(store.PortReading{PortID: port.PortID, SampledAt: t1.Add(time.Minute)}, nil) {
			t.Fatal("a second first reading replaced the first")
		}
		if got, err := s.LastPortReading(ctx, sw, port.Name); err != nil || *got != first {
			t.Fatalf("last reading %+v, %v; want %+v", got, err, first)
		}
		second := store.PortReading{PortID: port.PortID, SampledAt: t1.Add(5 * time.Minute), InOctets: 7, OutOctets: 9, LinkUp: false}
		stale := t1.Add(-time.Minute)
		if put(second, &stale) {
			t.Fatal("a reading over one that is not the last was kept")
		}
		if !put(second, &t1) {
			t.Fatal("a reading over the last was not kept")
		}
		err = s.InTx(ctx, func(tx *store.Tx) error {
			if got, err := tx.PortReading(ctx, port.PortID); err != nil || *got != second {
				t.Errorf("reading in a transaction %+v, %v; want %+v", got, err, second)
			}
			hour := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
			for _, b := range []struct {
				h        time.Time
				down, up uint64
			}{{hour, 100, 10}, {hour, 50, 5}, {hour.Add(time.Hour), 1000, 1}, {hour.Add(2 * time.Hour), 1 << 40, 0}} {
				if err := tx.AddPortTraffic(ctx, port.PortID, b.h, b.down, b.up); err != nil {
					return err
				}
			}
			if err := tx.OpenPortOutage(ctx, port.PortID, hour.Add(10*time.Minute)); err != nil {
				return err
			}
			if err := tx.OpenPortOutage(ctx, port.PortID, hour.Add(20*time.Minute)); err != nil { // one open at a time
				return err
			}
			if err := tx.ResolvePortOutage(ctx, port.PortID, hour.Add(30*time.Minute)); err != nil {
				return err
			}
			return tx.OpenPortOutage(ctx, port.PortID, hour.Add(3*time.Hour))
		})
		if err != nil {
			t.Fatal(err)
		}
		hour := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
		for _, tt := range []struct {
			from, to time.Time
			down, up int64
		}{
			{hour, hour.Add(time.Hour), 150, 15},
			{hour, hour.Add(2 * time.Hour), 1150, 16},
			{hour.Add(time.Hour), hour.Add(3 * time.Hour), 1000 + 1<<40, 1},
			{hour.Add(-time.Hour), hour, 0, 0},
		} {
			if down, up, err := s.PortTraffic(ctx, sw, port.Name, tt.from, tt.to); err != nil || down != tt.down || up != tt.up {
				t.Errorf("traffic %s-%s: %d/%d, %v; want %d/%d", tt.from, tt.to, down, up, err, tt.down, tt.up)
			}
		}
		if down, _, _ := s.PortTraffic(ctx, sw, "no-such-port", hour, hour.Add(24*time.Hour)); down != 0 {
			t.Errorf("traffic of another port: %d", down)
		}
		outs, err := s.PortOutages(ctx, sw, port.Name, hour, hour.Add(24*time.Hour))
		if err != nil || len(outs) != 2 {
			t.Fatalf("outages %+v, %v; want two", outs, err)
		}
		if o := outs[0]; !o.StartedAt.Equal(hour.Add(10*time.Minute)) || o.ResolvedAt == nil || !o.ResolvedAt.Equal(hour.Add(30*time.Minute)) || o.ID == "" {
			t.Errorf("first outage %+v", o)
		}
		if o := outs[1]; !o.StartedAt.Equal(hour.Add(3*time.Hour)) || o.ResolvedAt != nil {
			t.Errorf("ongoing outage %+v", o)
		}
		if outs, _ := s.PortOutages(ctx, sw, port.Name, hour.Add(time.Hour), hour.Add(2*time.Hour)); len(outs) != 0 {
			t.Errorf("outages of an hour between them: %+v", outs)
		}
		if outs, _ := s.PortOutages(ctx, sw, port.Name, hour.Add(20*time.Minute), hour.Add(25*time.Minute)); len(outs) != 1 {
			t.Errorf("an outage under way in the period is listed: %+v", outs)
		}
	})
}
