package switches_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

var (
	start = time.Date(2026, 3, 15, 12, 0, 0, 0, time.UTC)
	cfgA  = switches.Config{VLAN: 2417, DownloadMbps: 500, UploadMbps: 100, MAC: "aa:bb:cc:dd:ee:01"}
	cfgB  = switches.Config{VLAN: 2417, DownloadMbps: 1000, UploadMbps: 250, MAC: "aa:bb:cc:dd:ee:01"} // cfgA's line on a bigger plan
	other = switches.Config{VLAN: 2417, DownloadMbps: 500, UploadMbps: 100, MAC: "aa:bb:cc:dd:ee:02"}  // another device
	noMAC = switches.Config{VLAN: 2417, DownloadMbps: 500, UploadMbps: 100}

	off            = switches.State{Mode: switches.ModeOff}
	captive        = switches.State{Mode: switches.ModeCaptive, Config: switches.Config{VLAN: switches.CaptiveVLAN}}
	serviceA       = switches.State{Mode: switches.ModeService, Config: cfgA}
	serviceB       = switches.State{Mode: switches.ModeService, Config: cfgB}
	serviceNoMAC   = switches.State{Mode: switches.ModeService, Config: noMAC}
	serviceOther   = switches.State{Mode: switches.ModeService, Config: other}
	suspended      = switches.State{Mode: switches.ModeSuspended, Config: cfgA}
	suspendedB     = switches.State{Mode: switches.ModeSuspended, Config: cfgB}
	suspendedOther = switches.State{Mode: switches.ModeSuspended, Config: other}
)

// rig is one simulated switch over a store, with its own fault switches and clock.
type rig struct {
	st  *store.Store
	d   switches.Driver
	f   *faults.Switches
	clk *clock.Manual
}

func newRig(t *testing.T, st *store.Store) *rig {
	t.Helper()
	f := &faults.Switches{}
	clk := clock.NewManual(start)
	d, err := switches.Open("sim", st, f, clk)
	if err != nil {
		t.Fatal(err)
	}
	return &rig{st: st, d: d, f: f, clk: clk}
}

// put brings a port into state s with the healthy switch, the way production would; off is a
// port never written.
func (r *rig) put(t *testing.T, p switches.Port, s switches.State) {
	t.Helper()
	if err := r.d.Converge(context.Background(), p, s); err != nil {
		t.Fatalf("put %s in %v: %v", p, s, err)
	}
	if got := r.read(t, p); got != s {
		t.Fatalf("put %s in %v: reads %v", p, s, got)
	}
}

func (r *rig) read(t *testing.T, p switches.Port) switches.State {
	t.Helper()
	s, err := r.d.Read(context.Background(), p)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return s
}

// updatedAt is when the sim last wrote the port (the zero time for a port never written), to
// tell "changed nothing" from "wrote the same again".
func (r *rig) updatedAt(t *testing.T, p switches.Port) time.Time {
	t.Helper()
	var at time.Time
	err := r.st.R().QueryRow(context.Background(), `SELECT updated_at FROM sim_ports WHERE switch_name = ? AND port_name = ?`,
		p.Switch, p.Name).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, subprov.ErrNotFound) {
		return time.Time{}
	}
	if err != nil {
		t.Fatalf("updated_at of %s: %v", p, err)
	}
	return at
}

// checkErr fails t unless err is want (nil: no error); a converge's error names the port.
func checkErr(t *testing.T, what string, p switches.Port, err, want error) {
	t.Helper()
	if !errors.Is(err, want) || (want == nil) != (err == nil) {
		t.Fatalf("%s = %v, want %v", what, err, want)
	}
	if err != nil && !strings.HasPrefix(err.Error(), "converge "+p.String()+":") {
		t.Errorf("%s: error %q does not name the operation and port", what, err)
	}
}

// Every start mode to every target: the port ends in the target, except that a port serving
// one device is not put in service for another (or for none). Each converge runs twice, as a
// job may after a crash: both runs answer the same, and the second writes nothing.
func TestConverge(t *testing.T) {
	t.Parallel()
	starts := []struct {
		name string
		s    switches.State
	}{
		{"off", off},
		{"captive", captive},
		{"service", serviceA},
		{"service without binding", serviceNoMAC},
		{"suspended", suspended},
		{"service with another device", serviceOther},
	}
	targets := []struct {
		name string
		want switches.State // what is asked
		ends switches.State // what the port then reads
	}{
		{"off", off, off},
		{"captive", captive, captive},
		{"service", serviceA, serviceA},
		{"service on a new plan", serviceB, serviceB},
		{"service without binding", serviceNoMAC, serviceNoMAC},
		{"service in another spelling of the MAC", switches.State{Mode: switches.ModeService,
			Config: switches.Config{VLAN: 2417, DownloadMbps: 500, UploadMbps: 100, MAC: "AA-BB-CC-DD-EE-01"}}, serviceA},
		{"suspended", suspended, suspended},
		{"suspended on a new plan", suspendedB, suspendedB},
		{"suspended for another device", suspendedOther, suspendedOther},
	}
	// The pairs the switch refuses with ErrPortInUse, leaving the port as it was.
	refused := map[[2]string]bool{
		{"service", "service without binding"}:                                    true,
		{"service with another device", "service"}:                                true,
		{"service with another device", "service on a new plan"}:                  true,
		{"service with another device", "service without binding"}:                true,
		{"service with another device", "service in another spelling of the MAC"}: true,
	}
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		r := newRig(t, st)
		ctx := context.Background()
		i := 0
		for _, from := range starts {
			for _, to := range targets {
				i++
				t.Run(from.name+" to "+to.name, func(t *testing.T) {
					p := switches.Port{Switch: "sw-a", Name: fmt.Sprintf("ge-0/0/%d", i)}
					r.clk.Set(start)
					if from.s != off {
						r.put(t, p, from.s)
					}
					var wantErr error
					ends := to.ends
					if refused[[2]string{from.name, to.name}] {
						wantErr, ends = switches.ErrPortInUse, from.s
					}
					wrote := r.updatedAt(t, p)
					for run := 1; run <= 2; run++ {
						r.clk.Advance(time.Minute)
						err := r.d.Converge(ctx, p, to.want)
						checkErr(t, fmt.Sprintf("run %d: converge", run), p, err, wantErr)
						if got := r.read(t, p); got != ends {
							t.Fatalf("run %d: port reads %v, want %v", run, got, ends)
						}
						at := r.updatedAt(t, p)
						changes := run == 1 && wantErr == nil && ends != from.s
						if changes && !at.Equal(r.clk.Now()) {
							t.Fatalf("run %d: updated_at %v, want the write's %v", run, at, r.clk.Now())
						}
						if !changes && !at.Equal(wrote) {
							t.Fatalf("run %d: updated_at moved from %v to %v on a converge that changes nothing", run, wrote, at)
						}
						wrote = at
					}
				})
			}
		}
	})
}

// Targets no switch can take are ErrInvalid, on every validation rule, and change nothing; the
// edges of each rule are taken.
func TestConvergeInvalid(t *testing.T) {
	t.Parallel()
	svc := func(vlan, down, up int, mac string) switches.State {
		return switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: vlan, DownloadMbps: down, UploadMbps: up, MAC: mac}}
	}
	susp := func(vlan, down, up int, mac string) switches.State {
		s := svc(vlan, down, up, mac)
		s.Mode = switches.ModeSuspended
		return s
	}
	p := switches.Port{Switch: "sw-a", Name: "ge-0/0/1"}
	tests := []struct {
		name    string
		p       switches.Port
		want    switches.State
		wantErr error
	}{
		{"service on VLAN 0", p, svc(0, 500, 100, cfgA.MAC), switches.ErrInvalid},
		{"service on a negative VLAN", p, svc(-1, 500, 100, cfgA.MAC), switches.ErrInvalid},
		{"service on VLAN 4095", p, svc(4095, 500, 100, cfgA.MAC), switches.ErrInvalid},
		{"service on the captive VLAN", p, svc(switches.CaptiveVLAN, 500, 100, cfgA.MAC), switches.ErrInvalid},
		{"service without download", p, svc(2417, 0, 100, cfgA.MAC), switches.ErrInvalid},
		{"service without upload", p, svc(2417, 500, 0, cfgA.MAC), switches.ErrInvalid},
		{"service with negative bandwidth", p, svc(2417, -500, 100, cfgA.MAC), switches.ErrInvalid},
		{"service with a malformed MAC", p, svc(2417, 500, 100, "aa:bb"), switches.ErrInvalid},
		{"suspended on VLAN 0", p, susp(0, 500, 100, cfgA.MAC), switches.ErrInvalid},
		{"suspended on the captive VLAN", p, susp(switches.CaptiveVLAN, 500, 100, cfgA.MAC), switches.ErrInvalid},
		{"suspended without bandwidth", p, susp(2417, 0, 0, cfgA.MAC), switches.ErrInvalid},
		{"suspended with a malformed MAC", p, susp(2417, 500, 100, "not a mac"), switches.ErrInvalid},
		{"captive on a service VLAN", p, switches.State{Mode: switches.ModeCaptive, Config: switches.Config{VLAN: 2417}}, switches.ErrInvalid},
		{"captive without its VLAN", p, switches.State{Mode: switches.ModeCaptive}, switches.ErrInvalid},
		{"captive with bandwidth", p, switches.State{Mode: switches.ModeCaptive, Config: switches.Config{VLAN: switches.CaptiveVLAN, DownloadMbps: 1, UploadMbps: 1}}, switches.ErrInvalid},
		{"captive with a MAC", p, switches.State{Mode: switches.ModeCaptive, Config: switches.Config{VLAN: switches.CaptiveVLAN, MAC: cfgA.MAC}}, switches.ErrInvalid},
		{"off with a VLAN", p, switches.State{Mode: switches.ModeOff, Config: switches.Config{VLAN: 2417}}, switches.ErrInvalid},
		{"off with bandwidth", p, switches.State{Mode: switches.ModeOff, Config: switches.Config{DownloadMbps: 1}}, switches.ErrInvalid},
		{"off with a MAC", p, switches.State{Mode: switches.ModeOff, Config: switches.Config{MAC: cfgA.MAC}}, switches.ErrInvalid},
		{"an unknown mode", p, switches.State{Mode: "bridged", Config: cfgA}, switches.ErrInvalid},
		{"no mode", p, switches.State{Config: cfgA}, switches.ErrInvalid},
		{"a port without a name", switches.Port{Switch: "sw-a"}, serviceNoMAC, switches.ErrInvalid},
		{"a port without a switch", switches.Port{Name: "ge-0/0/1"}, serviceNoMAC, switches.ErrInvalid},
		{"a port without either", switches.Port{}, off, switches.ErrInvalid},

		{"service on VLAN 1", p, svc(1, 1, 1, ""), nil},
		{"service on VLAN 4094", p, svc(4094, 1, 1, ""), nil},
		{"service just below the captive VLAN", p, svc(switches.CaptiveVLAN-1, 1, 1, ""), nil},
		{"suspended on VLAN 4094", p, susp(4094, 1, 1, ""), nil},
	}
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		r := newRig(t, st)
		ctx := context.Background()
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				// Each case on its own switch, in service without binding, so any write shows.
				p := tt.p
				if p.Switch != "" {
					p.Switch = fmt.Sprintf("%s-%d", p.Switch, i)
				}
				r.clk.Set(start)
				if p.Switch != "" && p.Name != "" {
					r.put(t, p, serviceNoMAC)
				}
				r.clk.Advance(time.Minute)
				err := r.d.Converge(ctx, p, tt.want)
				checkErr(t, "converge", p, err, tt.wantErr)
				if tt.wantErr == nil {
					if got := r.read(t, p); got != tt.want {
						t.Fatalf("port reads %v, want %v", got, tt.want)
					}
					return
				}
				if p.Switch == "" || p.Name == "" {
					if _, err := r.d.Read(ctx, p); !errors.Is(err, switches.ErrInvalid) {
						t.Fatalf("read %+v = %v, want ErrInvalid", p, err)
					}
					var n int
					if err := st.R().QueryRow(ctx, `SELECT COUNT(*) FROM sim_ports WHERE switch_name = '' OR port_name = ''`).Scan(&n); err != nil || n != 0 {
						t.Fatalf("%d ports without a switch or name written (%v)", n, err)
					}
					return
				}
				if got := r.read(t, p); got != serviceNoMAC {
					t.Fatalf("port reads %v after an invalid converge, want it left %v", got, serviceNoMAC)
				}
				if at := r.updatedAt(t, p); !at.Equal(start) {
					t.Fatalf("port row rewritten at %v by an invalid converge", at)
				}
			})
		}
	})
}

// Each dev fault, converging to each mode, from a port the converge changes and from one that
// already shows the target. "fail" refuses every converge; "port_in_use" only those whose
// target is service; "unconfirmed" drops the write, so only a converge with nothing to write
// succeeds.
func TestFaults(t *testing.T) {
	t.Parallel()
	type conv struct {
		name     string
		from, to switches.State
	}
	converges := []conv{
		{"captive to service", captive, serviceA},
		{"service to a new plan", serviceA, serviceB},
		{"service to suspended", serviceA, suspended},
		{"suspended to service", suspended, serviceA},
		{"service to captive", serviceA, captive},
		{"service to off", serviceA, off},
		{"off to captive", off, captive},
		{"service already", serviceA, serviceA},
		{"suspended already", suspended, suspended},
		{"captive already", captive, captive},
		{"off already", off, off},
	}
	tests := []struct {
		fault   string
		wantErr func(c conv) error // nil: the converge goes through
	}{
		{"ok", func(conv) error { return nil }},
		{"fail", func(conv) error { return switches.ErrUnavailable }},
		{"port_in_use", func(c conv) error {
			if c.to.Mode == switches.ModeService {
				return switches.ErrPortInUse
			}
			return nil
		}},
		{"unconfirmed", func(c conv) error {
			if c.from != c.to {
				return switches.ErrUnconfirmed
			}
			return nil
		}},
	}
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		n := 0
		for _, tt := range tests {
			for _, c := range converges {
				n++
				t.Run(tt.fault+"/"+c.name, func(t *testing.T) {
					r := newRig(t, st)
					p := switches.Port{Switch: "sw-f", Name: fmt.Sprintf("ge-0/0/%d", n)}
					if c.from != off {
						r.put(t, p, c.from)
					}
					before := r.updatedAt(t, p)
					r.clk.Advance(time.Minute)
					r.f.Apply(map[string]string{"switch": tt.fault})

					wantErr := tt.wantErr(c)
					checkErr(t, "converge under "+tt.fault, p, r.d.Converge(ctx, p, c.to), wantErr)
					// Reads work under every fault: the faults are about writes.
					got := r.read(t, p)
					if wantErr == nil {
						if got != c.to {
							t.Fatalf("port reads %v, want %v", got, c.to)
						}
						return
					}
					if got != c.from {
						t.Fatalf("port changed to %v, want it left %v", got, c.from)
					}
					if at := r.updatedAt(t, p); !at.Equal(before) {
						t.Fatalf("port row rewritten at %v", at)
					}
				})
			}
		}
	})
}

// The port lives in the database: a new Sim over a reopened store reads what the first wrote,
// binding included, and the first sees what the second writes.
func TestSimIsDurable(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		first := newRig(t, st)
		a := switches.Port{Switch: "sw-a", Name: "ge-0/0/1"}
		b := switches.Port{Switch: "sw-a", Name: "ge-0/0/2"}
		c := switches.Port{Switch: "sw-a", Name: "ge-0/0/3"}
		first.put(t, a, suspended)
		first.put(t, b, captive)
		first.put(t, c, serviceA)

		second := newRig(t, testdb.Open(t, st.URL))
		for _, tt := range []struct {
			p    switches.Port
			want switches.State
		}{{a, suspended}, {b, captive}, {c, serviceA}} {
			if got := second.read(t, tt.p); got != tt.want {
				t.Fatalf("%s reads %v in a new sim, want %v", tt.p, got, tt.want)
			}
		}
		if err := second.d.Converge(ctx, c, serviceOther); !errors.Is(err, switches.ErrPortInUse) {
			t.Fatalf("a new sim puts another device on a bound port: %v, want ErrPortInUse", err)
		}
		if err := second.d.Converge(ctx, a, serviceA); err != nil {
			t.Fatal(err)
		}
		if got := first.read(t, a); got != serviceA {
			t.Fatalf("the first sim reads %v after the second converged, want %v", got, serviceA)
		}
	})
}

// fakeRaw is an in-memory switch that can be told to fail or lie.
type fakeRaw struct {
	ports         map[switches.Port]switches.State
	reads, writes int
	failRead      int // the read (1-based) that fails with readErr; 0: none
	readErr       error
	writeErr      error                                    // every write fails with it, storing nothing
	lie           func(want switches.State) switches.State // what a write actually stores
	written       []switches.State
}

func (f *fakeRaw) Name() string { return "fake" }

func (f *fakeRaw) Read(_ context.Context, p switches.Port) (switches.State, error) {
	f.reads++
	if f.reads == f.failRead {
		return switches.State{}, f.readErr
	}
	if s, ok := f.ports[p]; ok {
		return s, nil
	}
	return off, nil
}

func (f *fakeRaw) Write(_ context.Context, p switches.Port, want switches.State) error {
	f.writes++
	f.written = append(f.written, want)
	if f.writeErr != nil {
		return f.writeErr
	}
	if f.lie != nil {
		want = f.lie(want)
	}
	f.ports[p] = want
	return nil
}

// Confirmed over any raw driver: it validates, reads first, writes only what changes, and
// confirms the write by reading it back.
func TestConfirmed(t *testing.T) {
	t.Parallel()
	p := switches.Port{Switch: "sw-x", Name: "1"}
	dropped := errors.New("connection reset")
	refused := fmt.Errorf("switch says no: %w", switches.ErrUnavailable)
	spelled := switches.State{Mode: switches.ModeService, Config: cfgA}
	spelled.MAC = "AA:BB:CC:DD:EE:01"
	tests := []struct {
		name       string
		on         switches.State // the port before
		want       switches.State
		raw        fakeRaw
		wantErr    error
		wantReads  int
		wantWrites []switches.State
		ends       switches.State
	}{
		{"an honest switch is confirmed", off, serviceA, fakeRaw{}, nil, 2, []switches.State{serviceA}, serviceA},
		{"the MAC is written in the form read back", captive, spelled, fakeRaw{}, nil, 2, []switches.State{serviceA}, serviceA},
		{"a port already as intended is not written", suspended, suspended, fakeRaw{}, nil, 1, nil, suspended},
		{"an invalid target is neither read nor written", serviceA, switches.State{Mode: switches.ModeCaptive}, fakeRaw{}, switches.ErrInvalid, 0, nil, serviceA},
		{"a first read that fails is that failure, and nothing is written", captive, serviceA,
			fakeRaw{failRead: 1, readErr: dropped}, dropped, 1, nil, captive},
		{"a write that fails is that failure, not read back", captive, serviceA,
			fakeRaw{writeErr: refused}, switches.ErrUnavailable, 1, []switches.State{serviceA}, captive},
		{"a read-back that fails is that failure", captive, serviceA,
			fakeRaw{failRead: 2, readErr: dropped}, dropped, 2, []switches.State{serviceA}, serviceA},
		{"a switch that drops the write is unconfirmed", captive, serviceA,
			fakeRaw{lie: func(switches.State) switches.State { return captive }}, switches.ErrUnconfirmed, 2, []switches.State{serviceA}, captive},
		{"a switch that stores another VLAN is unconfirmed", off, serviceA,
			fakeRaw{lie: func(s switches.State) switches.State { s.VLAN++; return s }}, switches.ErrUnconfirmed, 2, []switches.State{serviceA},
			switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 2418, DownloadMbps: 500, UploadMbps: 100, MAC: cfgA.MAC}}},
		{"a switch that ignores the MAC binding is unconfirmed", off, serviceA,
			fakeRaw{lie: func(s switches.State) switches.State { s.MAC = ""; return s }}, switches.ErrUnconfirmed, 2, []switches.State{serviceA}, serviceNoMAC},
		{"a switch that keeps the old bandwidth is unconfirmed", serviceA, serviceB,
			fakeRaw{lie: func(s switches.State) switches.State { s.Config = cfgA; return s }}, switches.ErrUnconfirmed, 2, []switches.State{serviceB}, serviceA},
		{"a switch that does not suspend is unconfirmed", serviceA, suspended,
			fakeRaw{lie: func(s switches.State) switches.State { s.Mode = switches.ModeService; return s }}, switches.ErrUnconfirmed, 2, []switches.State{suspended}, serviceA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := tt.raw
			raw.ports = map[switches.Port]switches.State{}
			raw.ports[p] = tt.on
			d := switches.Confirmed(&raw)
			checkErr(t, "converge", p, d.Converge(context.Background(), p, tt.want), tt.wantErr)
			if raw.reads != tt.wantReads {
				t.Errorf("%d reads, want %d", raw.reads, tt.wantReads)
			}
			if fmt.Sprint(raw.written) != fmt.Sprint(tt.wantWrites) {
				t.Errorf("wrote %v, want %v", raw.written, tt.wantWrites)
			}
			if got := raw.ports[p]; got != tt.ends {
				t.Errorf("port holds %v, want %v", got, tt.ends)
			}
			if d.Name() != "fake" {
				t.Errorf("Name() = %q, want the raw driver's", d.Name())
			}
		})
	}
}

func TestConfirmedRead(t *testing.T) {
	t.Parallel()
	dropped := errors.New("connection reset")
	p := switches.Port{Switch: "sw-x", Name: "1"}
	tests := []struct {
		name      string
		p         switches.Port
		failRead  int
		want      switches.State
		wantErr   error
		wantReads int
	}{
		{"a port is read from the switch", p, 0, suspended, nil, 1},
		{"a port never configured reads off", switches.Port{Switch: "sw-x", Name: "2"}, 0, off, nil, 1},
		{"a read that fails is that failure", p, 1, switches.State{}, dropped, 1},
		{"an empty port is invalid and not read", switches.Port{Switch: "sw-x"}, 0, switches.State{}, switches.ErrInvalid, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := &fakeRaw{ports: map[switches.Port]switches.State{p: suspended}, failRead: tt.failRead, readErr: dropped}
			got, err := switches.Confirmed(raw).Read(context.Background(), tt.p)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) || got != tt.want {
				t.Fatalf("read = %v, %v; want %v, %v", got, err, tt.want, tt.wantErr)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "read "+tt.p.String()+":") {
				t.Errorf("error %q does not name the operation and port", err)
			}
			if raw.reads != tt.wantReads {
				t.Fatalf("%d reads, want %d", raw.reads, tt.wantReads)
			}
		})
	}
}

// A state and the database's port setting convert into each other field by field.
func TestStateOfSetting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s       switches.State
		setting subprov.PortSetting
	}{
		{off, subprov.PortSetting{Mode: "off"}},
		{captive, subprov.PortSetting{Mode: "captive", VLAN: 999}},
		{serviceA, subprov.PortSetting{Mode: "service", VLAN: 2417, DownloadMbps: 500, UploadMbps: 100, MAC: "aa:bb:cc:dd:ee:01"}},
		{suspendedOther, subprov.PortSetting{Mode: "suspended", VLAN: 2417, DownloadMbps: 500, UploadMbps: 100, MAC: "aa:bb:cc:dd:ee:02"}},
		{switches.State{Mode: switches.ModeService, Config: switches.Config{VLAN: 1, DownloadMbps: 2, UploadMbps: 3}},
			subprov.PortSetting{Mode: "service", VLAN: 1, DownloadMbps: 2, UploadMbps: 3}},
	}
	for _, tt := range tests {
		if got := tt.s.Setting(); got != tt.setting {
			t.Errorf("%v.Setting() = %+v, want %+v", tt.s, got, tt.setting)
		}
		if got := switches.StateOf(tt.setting); got != tt.s {
			t.Errorf("StateOf(%+v) = %v, want %v", tt.setting, got, tt.s)
		}
	}
}

func TestServiceVLAN(t *testing.T) {
	t.Parallel()
	seen := map[int]bool{}
	for sw := 0; sw < 10; sw++ {
		for port := 0; port < 48; port++ {
			p := switches.Port{Switch: fmt.Sprintf("sw-%d", sw), Name: fmt.Sprintf("ge-0/0/%d", port)}
			v := switches.ServiceVLAN(p)
			if v < 2000 || v > 3999 {
				t.Fatalf("ServiceVLAN(%s) = %d, want 2000-3999", p, v)
			}
			if again := switches.ServiceVLAN(switches.Port{Switch: p.Switch, Name: p.Name}); again != v {
				t.Fatalf("ServiceVLAN(%s) = %d then %d", p, v, again)
			}
			seen[v] = true
		}
	}
	// 480 ports over 2000 VLANs: a hash that spreads them leaves few collisions.
	if len(seen) < 400 {
		t.Fatalf("480 ports share only %d VLANs", len(seen))
	}
	// Pinned so a change of hash, which would move every live line's VLAN, fails loudly.
	if got := switches.ServiceVLAN(switches.Port{Switch: "sw-a", Name: "ge-0/0/12"}); got != pinnedVLAN {
		t.Fatalf("ServiceVLAN(sw-a/ge-0/0/12) = %d, want %d", got, pinnedVLAN)
	}
	// The separator keeps a switch and port name from running into each other.
	if switches.ServiceVLAN(switches.Port{Switch: "a/b", Name: "c"}) == switches.ServiceVLAN(switches.Port{Switch: "a", Name: "b/c"}) {
		t.Fatal("a/b + c and a + b/c share a VLAN")
	}
}

const pinnedVLAN = 3429

func TestOpen(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		for _, name := range []string{"", "sim"} {
			d, err := switches.Open(name, st, &faults.Switches{}, clock.NewManual(start))
			if err != nil {
				t.Fatalf("Open(%q): %v", name, err)
			}
			if d.Name() != "sim" {
				t.Fatalf("Open(%q).Name() = %q", name, d.Name())
			}
			if _, ok := switches.AsSim(d); !ok {
				t.Fatalf("AsSim(Open(%q)) is not the sim", name)
			}
		}
		if _, err := switches.Open("cisco", st, nil, clock.NewManual(start)); err == nil {
			t.Fatal("Open(cisco) succeeded; only sim is built in")
		}
		if _, ok := switches.AsSim(switches.Confirmed(&fakeRaw{})); ok {
			t.Fatal("AsSim of another driver says sim")
		}
	})
}

func TestCounters(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		r := newRig(t, st)
		sim, _ := switches.AsSim(r.d)
		ctx := context.Background()
		serving := switches.Port{Switch: "sw-a", Name: "ge-0/0/1"}
		paused := switches.Port{Switch: "sw-a", Name: "ge-0/0/2"}
		portal := switches.Port{Switch: "sw-a", Name: "ge-0/0/3"}
		never := switches.Port{Switch: "sw-a", Name: "ge-0/0/4"}
		r.put(t, serving, serviceA)
		r.put(t, paused, suspended)
		r.put(t, portal, captive)

		feb := time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC) // any instant in the month names it
		for _, p := range []switches.Port{serving, paused} {
			for m := 1; m <= 12; m++ {
				month := time.Date(2025, time.Month(m), 1, 0, 0, 0, 0, time.UTC)
				down, up := sim.MonthlyUsage(ctx, p, month)
				if down < 50 || down > 600 || up < 10 || up > 120 {
					t.Fatalf("%s in %s: %.2f GB down, %.2f GB up; want 50-600 and 10-120", p, month.Format("2006-01"), down, up)
				}
			}
		}

		d1, u1 := sim.MonthlyUsage(ctx, serving, feb)
		again := newRig(t, st) // another replica, same figures
		simAgain, _ := switches.AsSim(again.d)
		if d2, u2 := simAgain.MonthlyUsage(ctx, serving, time.Date(2026, 2, 28, 23, 0, 0, 0, time.UTC)); d1 != d2 || u1 != u2 {
			t.Fatalf("February reads %v/%v then %v/%v", d1, u1, d2, u2)
		}
		if d, u := sim.MonthlyUsage(ctx, serving, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); d == d1 && u == u1 {
			t.Fatal("January and February read the same")
		}
		if d, u := sim.MonthlyUsage(ctx, paused, feb); d == d1 && u == u1 {
			t.Fatal("two ports read the same February")
		}

		// The month under way counts its elapsed part: March 15 12:00 is 14.5 of 31 days.
		fullMarch, _ := newRigAt(t, st, time.Date(2026, 4, 2, 0, 0, 0, 0, time.UTC)).MonthlyUsage(ctx, serving, start)
		partMarch, _ := sim.MonthlyUsage(ctx, serving, start)
		if want := fullMarch * 14.5 / 31; partMarch < want-0.02 || partMarch > want+0.02 {
			t.Fatalf("March to date reads %.2f GB, want about %.2f of the month's %.2f", partMarch, want, fullMarch)
		}

		for _, tt := range []struct {
			name  string
			p     switches.Port
			month time.Time
		}{
			{"a captive port", portal, feb},
			{"a port never configured", never, feb},
			{"a month still to come", serving, time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)},
		} {
			if d, u := sim.MonthlyUsage(ctx, tt.p, tt.month); d != 0 || u != 0 {
				t.Errorf("%s reads %v/%v, want zero", tt.name, d, u)
			}
		}
	})
}

func newRigAt(t *testing.T, st *store.Store, now time.Time) *switches.Sim {
	t.Helper()
	r := newRig(t, st)
	r.clk.Set(now)
	sim, _ := switches.AsSim(r.d)
	return sim
}
