package switches_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

func TestSimPorts(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	service := switches.SimPortState{Switch: "sw-a", Port: "ge-0/0/12", State: "service", VLAN: 2417,
		DownloadMbps: 500, UploadMbps: 100, MAC: "aa:bb:cc:dd:ee:ff"}
	captive := switches.SimPortState{Switch: "sw-a", Port: "ge-0/0/12", State: "captive", VLAN: 999}
	other := switches.SimPortState{Switch: "sw-b", Port: "ge-0/0/12", State: "suspended", VLAN: 2001,
		DownloadMbps: 50, UploadMbps: 10}

	tests := []struct {
		name   string
		writes []switches.SimPortState
		read   [2]string // switch, port
		want   *switches.SimPortState
	}{
		{"a port never written is no rows", nil, [2]string{"sw-a", "ge-0/0/12"}, nil},
		{"a write reads back whole", []switches.SimPortState{service}, [2]string{"sw-a", "ge-0/0/12"}, &service},
		{"a second write replaces the first", []switches.SimPortState{service, captive}, [2]string{"sw-a", "ge-0/0/12"}, &captive},
		{"the same port name on another switch is another port", []switches.SimPortState{service, other}, [2]string{"sw-a", "ge-0/0/12"}, &service},
		{"the other switch keeps its own port", []switches.SimPortState{service, other}, [2]string{"sw-b", "ge-0/0/12"}, &other},
	}
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				// Each case gets its own switch names so cases do not see each other's rows.
				prefix := string(rune('a'+i)) + "-"
				for _, w := range tt.writes {
					w.Switch = prefix + w.Switch
					if err := s.InTx(ctx, func(tx *store.Tx) error { return switches.PutSimPort(ctx, tx, w, at) }); err != nil {
						t.Fatalf("PutSimPort: %v", err)
					}
				}
				got, err := switches.ReadSimPort(ctx, s.R(), prefix+tt.read[0], tt.read[1])
				if tt.want == nil {
					if !errors.Is(err, subprov.ErrNotFound) {
						t.Fatalf("SimPort = %+v, %v; want subprov.ErrNotFound", got, err)
					}
					return
				}
				if err != nil {
					t.Fatalf("SimPort: %v", err)
				}
				want := *tt.want
				want.Switch = prefix + want.Switch
				if *got != want {
					t.Fatalf("SimPort = %+v, want %+v", *got, want)
				}
				// The transaction's read sees the same row.
				var inTx *switches.SimPortState
				if err := s.InTx(ctx, func(tx *store.Tx) error {
					var err error
					inTx, err = switches.ReadSimPort(ctx, tx, want.Switch, want.Port)
					return err
				}); err != nil {
					t.Fatalf("tx.SimPort: %v", err)
				}
				if *inTx != want {
					t.Fatalf("tx.SimPort = %+v, want %+v", *inTx, want)
				}
			})
		}
	})
}

func TestPutSimPortStampsUpdatedAt(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		p := switches.SimPortState{Switch: "sw-a", Port: "1", State: "captive", VLAN: 999}
		for _, at := range []time.Time{
			time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC),
			time.Date(2026, 3, 2, 9, 0, 0, 0, time.FixedZone("EST", -5*3600)),
		} {
			if err := s.InTx(ctx, func(tx *store.Tx) error { return switches.PutSimPort(ctx, tx, p, at) }); err != nil {
				t.Fatal(err)
			}
			var got time.Time
			if err := s.R().QueryRow(ctx, `SELECT updated_at FROM sim_ports WHERE switch_name = ? AND port_name = ?`, "sw-a", "1").Scan(&got); err != nil {
				t.Fatal(err)
			}
			if !got.Equal(at) {
				t.Fatalf("updated_at = %v, want %v", got, at)
			}
		}
	})
}

// TestPutSimPortUnlessBound: the sim's write refuses, in its own statement, to put a port
// serving one device in service for another (or for none), and changes nothing then; every
// other write replaces the port's state.
func TestPutSimPortUnlessBound(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	port := func(state, mac string) switches.SimPortState {
		return switches.SimPortState{Switch: "sw-a", Port: "ge-0/0/7", State: state, VLAN: 2417, DownloadMbps: 500, UploadMbps: 100, MAC: mac}
	}
	const a, b = "aa:aa:aa:aa:aa:aa", "bb:bb:bb:bb:bb:bb"
	tests := []struct {
		name       string
		before     *switches.SimPortState // nil: never written
		write      switches.SimPortState
		written    bool
		boundTo    string
		wantOnPort switches.SimPortState
	}{
		{"a port never written takes the write", nil, port("service", a), true, "", port("service", a)},
		{"the same device again is written", ptr(port("service", a)), port("service", a), true, "", port("service", a)},
		{"another device on a bound port is refused", ptr(port("service", a)), port("service", b), false, a, port("service", a)},
		{"no binding over a bound port is refused", ptr(port("service", a)), port("service", ""), false, a, port("service", a)},
		{"a port in service without binding takes a device", ptr(port("service", "")), port("service", b), true, "", port("service", b)},
		{"a suspended port takes another device", ptr(port("suspended", a)), port("service", b), true, "", port("service", b)},
		{"a bound port can be reset", ptr(port("service", a)), port("captive", ""), true, "", port("captive", "")},
	}
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				sw := string(rune('a'+i)) + "-sw" // each case its own switch
				if tt.before != nil {
					before := *tt.before
					before.Switch = sw
					if err := s.InTx(ctx, func(tx *store.Tx) error { return switches.PutSimPort(ctx, tx, before, at) }); err != nil {
						t.Fatal(err)
					}
				}
				w := tt.write
				w.Switch = sw
				written, boundTo, err := switches.PutSimPortUnlessBound(ctx, s, w, "service", at.Add(time.Minute))
				if err != nil || written != tt.written || boundTo != tt.boundTo {
					t.Fatalf("PutSimPortUnlessBound = %v, %q, %v; want %v, %q", written, boundTo, err, tt.written, tt.boundTo)
				}
				got, err := switches.ReadSimPort(ctx, s.R(), sw, w.Port)
				want := tt.wantOnPort
				want.Switch = sw
				if err != nil || *got != want {
					t.Fatalf("port after = %+v, %v; want %+v", got, err, want)
				}
			})
		}
		t.Run("of devices racing for a port one binds", func(t *testing.T) {
			var wins atomic.Int32
			var winner atomic.Value
			var wg sync.WaitGroup
			for i := 0; i < 8; i++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					p := port("service", fmt.Sprintf("cc:cc:cc:cc:cc:%02x", i))
					p.Switch = "race"
					written, _, err := switches.PutSimPortUnlessBound(ctx, s, p, "service", at)
					if err != nil {
						t.Error(err)
					}
					if written {
						wins.Add(1)
						winner.Store(p.MAC)
					}
				}()
			}
			wg.Wait()
			if n := wins.Load(); n != 1 {
				t.Fatalf("%d devices bound the port, want 1", n)
			}
			if got, err := switches.ReadSimPort(ctx, s.R(), "race", "ge-0/0/7"); err != nil || got.MAC != winner.Load() {
				t.Fatalf("port after the race = %+v, %v; want the winner's MAC %v", got, err, winner.Load())
			}
		})
	})
}

func ptr[T any](v T) *T { return &v }
