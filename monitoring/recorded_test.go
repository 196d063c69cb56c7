package monitoring_test

import (
	"context"
	"testing"
	"time"

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/monitoring"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

var now = time.Date(2026, 12, 10, 12, 0, 0, 0, time.UTC)

// recordedPort loads the demo and returns its first port with a line, on mtl-king-sw1.
func recordedPort(t *testing.T, s *store.Store) (switches.Port, string) {
	t.Helper()
	ctx := context.Background()
	f, err := fixture.Parse(fixture.DemoJSON)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.LoadAtCost(ctx, s, f, now, identity.TestPasswordCost); err != nil {
		t.Fatal(err)
	}
	ports, err := s.PortsToSample(ctx, "mtl-king-sw1")
	if err != nil || len(ports) == 0 {
		t.Fatalf("ports: %v, %v", ports, err)
	}
	return switches.Port{Switch: "mtl-king-sw1", Name: ports[0].Name}, ports[0].PortID
}

// A month is the provider's: in Toronto November runs from 04:00 UTC on 1 November (still
// summer time, UTC-4) to 05:00 UTC on 1 December (UTC-5), and the hours either side of those
// edges belong to the months either side. Gigabytes are 10^9 bytes, rounded to two decimals.
func TestRecordedMonthlyUsageInTheProvidersZone(t *testing.T) {
	t.Parallel()
	toronto, err := time.LoadLocation("America/Toronto")
	if err != nil {
		t.Fatal(err)
	}
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		port, portID := recordedPort(t, s)
		utc := func(m time.Month, d, h int) time.Time { return time.Date(2026, m, d, h, 0, 0, 0, time.UTC) }
		err := s.InTx(ctx, func(tx *store.Tx) error {
			for _, b := range []struct {
				hour     time.Time
				down, up uint64
			}{
				{utc(11, 1, 3), 7e9, 1e9},                 // 23:00 on 31 October in Toronto
				{utc(11, 1, 4), 1_234_567_890, 5_000_000}, // midnight on 1 November
				{utc(11, 15, 12), 2e9, 1e9},
				{utc(12, 1, 4), 10_000_000, 4_990_000}, // 23:00 on 30 November
				{utc(12, 1, 5), 3e9, 2e9},              // midnight on 1 December
			} {
				if err := tx.AddPortTraffic(ctx, portID, b.hour, b.down, b.up); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		src := monitoring.Recorded{Store: s}
		for _, tt := range []struct {
			month    time.Time
			down, up float64
		}{
			{time.Date(2026, 10, 1, 0, 0, 0, 0, toronto), 7, 1},
			{time.Date(2026, 11, 1, 0, 0, 0, 0, toronto), 3.24, 1.01}, // 3.244567890 GB, 1.009990 GB
			{time.Date(2026, 12, 1, 0, 0, 0, 0, toronto), 3, 2},
			{time.Date(2027, 1, 1, 0, 0, 0, 0, toronto), 0, 0},
			// The same hours in UTC months: November takes 1 November 03:00 and not 1 December 04:00.
			{time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), 10.23, 2.01},
		} {
			down, up, err := src.MonthlyUsage(ctx, port, tt.month)
			if err != nil || down != tt.down || up != tt.up {
				t.Errorf("%s (%s): %v/%v GB, %v; want %v/%v", tt.month.Format("2006-01"), tt.month.Location(), down, up, err, tt.down, tt.up)
			}
		}
	})
}

// Events are the recorded outages; the link state is the last reading's, unknown before one.
func TestRecordedEventsAndLink(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		port, portID := recordedPort(t, s)
		src := monitoring.Recorded{Store: s}
		if l, err := src.Link(ctx, port, now); err != nil || l.State != monitoring.LinkUnknown || l.SampledAt != nil {
			t.Fatalf("link of a port never sampled: %+v, %v", l, err)
		}
		down := now.Add(-2 * time.Hour)
		err := s.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.PutPortReading(ctx, store.PortReading{PortID: portID, SampledAt: down, LinkUp: false}, nil); err != nil {
				return err
			}
			if err := tx.OpenPortOutage(ctx, portID, now.AddDate(0, 0, -40)); err != nil {
				return err
			}
			if err := tx.ResolvePortOutage(ctx, portID, now.AddDate(0, 0, -39)); err != nil {
				return err
			}
			return tx.OpenPortOutage(ctx, portID, down)
		})
		if err != nil {
			t.Fatal(err)
		}
		l, err := src.Link(ctx, port, now)
		if err != nil || l.State != monitoring.LinkDown || l.SampledAt == nil || !l.SampledAt.Equal(down) {
			t.Fatalf("link %+v, %v; want down at %s", l, err, down)
		}
		evs, err := src.Events(ctx, port, now.AddDate(0, 0, -30), now)
		if err != nil || len(evs) != 1 || !evs[0].StartedAt.Equal(down) || evs[0].ResolvedAt != nil || evs[0].ID == "" {
			t.Fatalf("events of the last 30 days: %+v, %v; want the ongoing outage alone", evs, err)
		}
		if evs, _ := src.Events(ctx, port, now.AddDate(0, 0, -90), now); len(evs) != 2 {
			t.Fatalf("events of the last 90 days: %+v, want both", evs)
		}
	})
}

type constant struct{ gb float64 }

func (c constant) MonthlyUsage(context.Context, switches.Port, time.Time) (float64, float64, error) {
	return c.gb, c.gb, nil
}
func (c constant) Events(context.Context, switches.Port, time.Time, time.Time) ([]monitoring.Event, error) {
	return nil, nil
}
func (c constant) Link(context.Context, switches.Port, time.Time) (monitoring.Link, error) {
	return monitoring.Link{State: monitoring.LinkUp}, nil
}

// A port reads the source of its switch's driver: the row's, else the default.
func TestByDriver(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		port, _ := recordedPort(t, s)
		month := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
		for _, tt := range []struct {
			name, row, def string
			port           switches.Port
			want           float64
		}{
			{"the row names the sim", "sim", "linuxbridge", port, 1},
			{"the row names linuxbridge", "linuxbridge", "sim", port, 2},
			{"the row names none: the default sim", "", "sim", port, 1},
			{"the row names none: the default netconf", "", "netconf", port, 2},
			{"no row: the default", "", "netconf", switches.Port{Switch: "no-such-switch", Name: "p1"}, 2},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if _, err := rawdb.Writer(s).ExecContext(ctx, s.Dialect.Rebind(`UPDATE switches SET driver = ? WHERE name = 'mtl-king-sw1'`), tt.row); err != nil {
					t.Fatal(err)
				}
				src := monitoring.ByDriver{Store: s, Default: tt.def, Sim: constant{1}, Recorded: constant{2}}
				if got, _, err := src.MonthlyUsage(ctx, tt.port, month); err != nil || got != tt.want {
					t.Errorf("read %v, %v; want the source giving %v", got, err, tt.want)
				}
			})
		}
	})
}
