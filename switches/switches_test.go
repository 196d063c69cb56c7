package switches_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

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

	off       = switches.State{Mode: switches.ModeOff}
	captive   = switches.State{Mode: switches.ModeCaptive, Config: switches.Config{VLAN: switches.CaptiveVLAN}}
	serviceA  = switches.State{Mode: switches.ModeService, Config: cfgA}
	suspended = switches.State{Mode: switches.ModeSuspended, Config: cfgA}
)

// rig is one simulated switch over a store, with its fault switches and clock.
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

// put brings a fresh port into mode with the healthy switch, the way production would.
func (r *rig) put(t *testing.T, p switches.Port, mode switches.Mode) {
	t.Helper()
	ctx := context.Background()
	var err error
	switch mode {
	case switches.ModeOff:
	case switches.ModeService:
		err = r.d.Activate(ctx, p, cfgA)
	case switches.ModeSuspended:
		err = errors.Join(r.d.Activate(ctx, p, cfgA), r.d.Suspend(ctx, p))
	case switches.ModeCaptive:
		err = r.d.ResetToCaptive(ctx, p)
	case "service-no-mac":
		err = r.d.Activate(ctx, p, noMAC)
	default:
		t.Fatalf("unknown start mode %q", mode)
	}
	if err != nil {
		t.Fatalf("put %s in %s: %v", p, mode, err)
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

// updatedAt is when the sim last wrote the port, to tell "changed nothing" from "wrote the same".
func (r *rig) updatedAt(t *testing.T, p switches.Port) time.Time {
	t.Helper()
	var at time.Time
	err := r.st.R().QueryRow(context.Background(), `SELECT updated_at FROM sim_ports WHERE switch_name = ? AND port_name = ?`,
		p.Switch, p.Name).Scan(&at)
	if err != nil {
		t.Fatalf("updated_at of %s: %v", p, err)
	}
	return at
}

type op struct {
	name string
	do   func(ctx context.Context, d switches.Driver, p switches.Port) error
}

func activate(c switches.Config) op {
	return op{"activate", func(ctx context.Context, d switches.Driver, p switches.Port) error { return d.Activate(ctx, p, c) }}
}

var (
	suspend        = op{"suspend", func(ctx context.Context, d switches.Driver, p switches.Port) error { return d.Suspend(ctx, p) }}
	restore        = op{"restore", func(ctx context.Context, d switches.Driver, p switches.Port) error { return d.Restore(ctx, p) }}
	resetToCaptive = op{"reset to captive", func(ctx context.Context, d switches.Driver, p switches.Port) error { return d.ResetToCaptive(ctx, p) }}
)

func setBandwidth(down, up int) op {
	return op{"set bandwidth", func(ctx context.Context, d switches.Driver, p switches.Port) error {
		return d.SetBandwidth(ctx, p, down, up)
	}}
}

// Every operation runs twice, as a job may after a crash: both runs answer the same and the
// port ends as one run leaves it.
func TestOperations(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		from    switches.Mode
		op      op
		wantErr error
		want    switches.State
	}{
		{"activate an unconfigured port", switches.ModeOff, activate(cfgA), nil, serviceA},
		{"activate a captive port", switches.ModeCaptive, activate(cfgA), nil, serviceA},
		{"activate a suspended port", switches.ModeSuspended, activate(cfgA), nil, serviceA},
		{"activate the same config again changes nothing", switches.ModeService, activate(cfgA), nil, serviceA},
		{"activate the same device with a new plan", switches.ModeService, activate(cfgB), nil, switches.State{Mode: switches.ModeService, Config: cfgB}},
		{"activate without a MAC binding", switches.ModeOff, activate(noMAC), nil, switches.State{Mode: switches.ModeService, Config: noMAC}},
		{"activate binds a MAC on a port in service without one", "service-no-mac", activate(cfgA), nil, serviceA},
		{"activate takes any MAC spelling and binds the canonical form", switches.ModeOff,
			activate(switches.Config{VLAN: 2417, DownloadMbps: 500, UploadMbps: 100, MAC: "AA-BB-CC-DD-EE-01"}), nil, serviceA},
		{"activate over another device is port in use", switches.ModeService, activate(other), switches.ErrPortInUse, serviceA},
		{"activate without binding over a bound device is port in use", switches.ModeService, activate(noMAC), switches.ErrPortInUse, serviceA},
		{"activate on the captive VLAN is invalid", switches.ModeOff, activate(switches.Config{VLAN: switches.CaptiveVLAN, DownloadMbps: 1, UploadMbps: 1}), switches.ErrInvalid, off},
		{"activate on VLAN 0 is invalid", switches.ModeOff, activate(switches.Config{DownloadMbps: 1, UploadMbps: 1}), switches.ErrInvalid, off},
		{"activate on VLAN 4095 is invalid", switches.ModeOff, activate(switches.Config{VLAN: 4095, DownloadMbps: 1, UploadMbps: 1}), switches.ErrInvalid, off},
		{"activate without bandwidth is invalid", switches.ModeOff, activate(switches.Config{VLAN: 2001, UploadMbps: 1}), switches.ErrInvalid, off},
		{"activate with a malformed MAC is invalid", switches.ModeOff, activate(switches.Config{VLAN: 2001, DownloadMbps: 1, UploadMbps: 1, MAC: "aa:bb"}), switches.ErrInvalid, off},

		{"suspend a port in service keeps its config", switches.ModeService, suspend, nil, suspended},
		{"suspend a suspended port changes nothing", switches.ModeSuspended, suspend, nil, suspended},
		{"suspend an unconfigured port has nothing to suspend", switches.ModeOff, suspend, switches.ErrNotConfigured, off},
		{"suspend a captive port has nothing to suspend", switches.ModeCaptive, suspend, switches.ErrNotConfigured, captive},

		{"restore a suspended port brings back its config", switches.ModeSuspended, restore, nil, serviceA},
		{"restore a port in service changes nothing", switches.ModeService, restore, nil, serviceA},
		{"restore an unconfigured port has nothing to restore", switches.ModeOff, restore, switches.ErrNotConfigured, off},
		{"restore a captive port has nothing to restore", switches.ModeCaptive, restore, switches.ErrNotConfigured, captive},

		{"reset a port in service to captive", switches.ModeService, resetToCaptive, nil, captive},
		{"reset a suspended port to captive", switches.ModeSuspended, resetToCaptive, nil, captive},
		{"reset an unconfigured port to captive", switches.ModeOff, resetToCaptive, nil, captive},
		{"reset a captive port changes nothing", switches.ModeCaptive, resetToCaptive, nil, captive},

		{"set bandwidth on a port in service", switches.ModeService, setBandwidth(1000, 250), nil, switches.State{Mode: switches.ModeService, Config: cfgB}},
		{"set bandwidth on a suspended port is kept for restore", switches.ModeSuspended, setBandwidth(1000, 250), nil, switches.State{Mode: switches.ModeSuspended, Config: cfgB}},
		{"set the same bandwidth changes nothing", switches.ModeService, setBandwidth(500, 100), nil, serviceA},
		{"set bandwidth on an unconfigured port", switches.ModeOff, setBandwidth(1000, 250), switches.ErrNotConfigured, off},
		{"set bandwidth on a captive port", switches.ModeCaptive, setBandwidth(1000, 250), switches.ErrNotConfigured, captive},
		{"set zero bandwidth is invalid", switches.ModeService, setBandwidth(0, 250), switches.ErrInvalid, serviceA},
	}
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		r := newRig(t, st)
		ctx := context.Background()
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				p := switches.Port{Switch: "sw-a", Name: fmt.Sprintf("ge-0/0/%d", i)}
				r.put(t, p, tt.from)
				for run := 1; run <= 2; run++ {
					err := tt.op.do(ctx, r.d, p)
					if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
						t.Fatalf("run %d: %s = %v, want %v", run, tt.op.name, err, tt.wantErr)
					}
					if err != nil && !strings.HasPrefix(err.Error(), tt.op.name+" "+p.String()+":") {
						t.Errorf("run %d: error %q does not name the operation and port", run, err)
					}
					if got := r.read(t, p); got != tt.want {
						t.Fatalf("run %d: port reads %v, want %v", run, got, tt.want)
					}
				}
			})
		}
	})
}

func TestEmptyPortIsInvalid(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		r := newRig(t, st)
		ctx := context.Background()
		for _, p := range []switches.Port{{Switch: "sw-a"}, {Name: "ge-0/0/1"}} {
			if _, err := r.d.Read(ctx, p); !errors.Is(err, switches.ErrInvalid) {
				t.Errorf("read %+v = %v, want ErrInvalid", p, err)
			}
			if err := r.d.Activate(ctx, p, cfgA); !errors.Is(err, switches.ErrInvalid) {
				t.Errorf("activate %+v = %v, want ErrInvalid", p, err)
			}
		}
	})
}

// A write that finds the port already as intended writes nothing: the row is not even touched.
func TestRepeatedWriteTouchesNothing(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		r := newRig(t, st)
		ctx := context.Background()
		p := switches.Port{Switch: "sw-a", Name: "ge-0/0/1"}
		r.put(t, p, switches.ModeService)
		first := r.updatedAt(t, p)
		r.clk.Advance(time.Hour)
		for _, o := range []op{activate(cfgA), restore, setBandwidth(500, 100)} {
			if err := o.do(ctx, r.d, p); err != nil {
				t.Fatalf("%s: %v", o.name, err)
			}
		}
		if got := r.updatedAt(t, p); !got.Equal(first) {
			t.Fatalf("updated_at moved from %v to %v on writes that change nothing", first, got)
		}
		if err := r.d.Suspend(ctx, p); err != nil {
			t.Fatal(err)
		}
		if got := r.updatedAt(t, p); !got.Equal(r.clk.Now()) {
			t.Fatalf("a real change stamps updated_at %v, want %v", got, r.clk.Now())
		}
	})
}

// Each dev fault, for each write, from a port where the write would change something.
func TestFaults(t *testing.T) {
	t.Parallel()
	type write struct {
		op       op
		from     switches.Mode
		intended switches.State // what the healthy switch would leave
	}
	writes := []write{
		{activate(cfgA), switches.ModeCaptive, serviceA},
		{suspend, switches.ModeService, suspended},
		{restore, switches.ModeSuspended, serviceA},
		{resetToCaptive, switches.ModeService, captive},
		{setBandwidth(1000, 250), switches.ModeService, switches.State{Mode: switches.ModeService, Config: cfgB}},
	}
	startState := map[switches.Mode]switches.State{switches.ModeCaptive: captive, switches.ModeService: serviceA, switches.ModeSuspended: suspended}
	tests := []struct {
		fault string
		// wantErr for a write named op; nil means the write goes through.
		wantErr func(op string) error
	}{
		{"fail", func(string) error { return switches.ErrUnavailable }},
		{"unconfirmed", func(string) error { return switches.ErrUnconfirmed }},
		{"port_in_use", func(op string) error {
			if op == "activate" || op == "restore" {
				return switches.ErrPortInUse
			}
			return nil
		}},
		{"ok", func(string) error { return nil }},
	}
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		r := newRig(t, st)
		ctx := context.Background()
		n := 0
		for _, tt := range tests {
			for _, w := range writes {
				n++
				t.Run(tt.fault+"/"+w.op.name, func(t *testing.T) {
					p := switches.Port{Switch: "sw-f", Name: fmt.Sprintf("ge-0/0/%d", n)}
					r.f.Apply(map[string]string{"switch": "ok"})
					r.put(t, p, w.from)
					before := r.updatedAt(t, p)
					r.clk.Advance(time.Minute)
					r.f.Apply(map[string]string{"switch": tt.fault})
					defer r.f.Apply(map[string]string{"switch": "ok"})

					wantErr := tt.wantErr(w.op.name)
					err := w.op.do(ctx, r.d, p)
					if !errors.Is(err, wantErr) || (wantErr == nil) != (err == nil) {
						t.Fatalf("%s under %s = %v, want %v", w.op.name, tt.fault, err, wantErr)
					}
					// Reads work under every fault: the faults are about writes.
					got := r.read(t, p)
					if wantErr != nil {
						if want := startState[w.from]; got != want {
							t.Fatalf("port changed to %v, want it left %v", got, want)
						}
						if at := r.updatedAt(t, p); !at.Equal(before) {
							t.Fatalf("port row rewritten at %v", at)
						}
						return
					}
					if got != w.intended {
						t.Fatalf("port reads %v, want %v", got, w.intended)
					}
				})
			}
		}
	})
}

// "fail" refuses even a write that would change nothing; "unconfirmed" lets it pass, because the
// port already shows the intended state and there is no write to confirm.
func TestFaultsOnWritesThatChangeNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		fault   string
		wantErr error
	}{
		{"fail", switches.ErrUnavailable},
		{"unconfirmed", nil},
		{"port_in_use", switches.ErrPortInUse},
	}
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		r := newRig(t, st)
		ctx := context.Background()
		for i, tt := range tests {
			t.Run(tt.fault, func(t *testing.T) {
				p := switches.Port{Switch: "sw-n", Name: fmt.Sprintf("ge-0/0/%d", i)}
				r.f.Apply(map[string]string{"switch": "ok"})
				r.put(t, p, switches.ModeService)
				r.f.Apply(map[string]string{"switch": tt.fault})
				defer r.f.Apply(map[string]string{"switch": "ok"})
				err := r.d.Activate(ctx, p, cfgA)
				if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
					t.Fatalf("activate again under %s = %v, want %v", tt.fault, err, tt.wantErr)
				}
				if got := r.read(t, p); got != serviceA {
					t.Fatalf("port reads %v, want %v", got, serviceA)
				}
			})
		}
	})
}

// The port lives in the database: a new Sim over a reopened store reads what the first wrote.
func TestSimIsDurable(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		first := newRig(t, st)
		a := switches.Port{Switch: "sw-a", Name: "ge-0/0/1"}
		b := switches.Port{Switch: "sw-a", Name: "ge-0/0/2"}
		first.put(t, a, switches.ModeSuspended)
		first.put(t, b, switches.ModeCaptive)

		second := newRig(t, testdb.Open(t, st.URL))
		if got := second.read(t, a); got != suspended {
			t.Fatalf("%s reads %v in a new sim, want %v", a, got, suspended)
		}
		if got := second.read(t, b); got != captive {
			t.Fatalf("%s reads %v in a new sim, want %v", b, got, captive)
		}
		// The kept config survives too: the new sim restores what the first suspended.
		if err := second.d.Restore(ctx, a); err != nil {
			t.Fatal(err)
		}
		if got := first.read(t, a); got != serviceA {
			t.Fatalf("the first sim reads %v after the second restored, want %v", got, serviceA)
		}
	})
}

// fakeRaw is an in-memory switch that can be told to lie.
type fakeRaw struct {
	ports   map[switches.Port]switches.State
	writes  int
	lie     func(want switches.State) switches.State // what a write actually stores
	readErr error                                    // returned by reads after the first write
}

func (f *fakeRaw) Name() string { return "fake" }

func (f *fakeRaw) Read(_ context.Context, p switches.Port) (switches.State, error) {
	if f.writes > 0 && f.readErr != nil {
		return switches.State{}, f.readErr
	}
	if s, ok := f.ports[p]; ok {
		return s, nil
	}
	return off, nil
}

func (f *fakeRaw) Write(_ context.Context, p switches.Port, want switches.State) error {
	f.writes++
	if f.lie != nil {
		want = f.lie(want)
	}
	f.ports[p] = want
	return nil
}

func TestConfirmed(t *testing.T) {
	t.Parallel()
	p := switches.Port{Switch: "sw-x", Name: "1"}
	dropped := errors.New("connection reset")
	tests := []struct {
		name       string
		lie        func(switches.State) switches.State
		readErr    error
		wantErr    error
		wantWrites int
	}{
		{"an honest switch is confirmed", nil, nil, nil, 1},
		{"a switch that drops the write is unconfirmed", func(switches.State) switches.State { return off }, nil, switches.ErrUnconfirmed, 1},
		{"a switch that stores another VLAN is unconfirmed", func(s switches.State) switches.State { s.VLAN++; return s }, nil, switches.ErrUnconfirmed, 1},
		{"a switch that ignores the MAC binding is unconfirmed", func(s switches.State) switches.State { s.MAC = ""; return s }, nil, switches.ErrUnconfirmed, 1},
		{"a read-back that fails is that failure", nil, dropped, dropped, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := &fakeRaw{ports: map[switches.Port]switches.State{}, lie: tt.lie, readErr: tt.readErr}
			d := switches.Confirmed(raw)
			err := d.Activate(context.Background(), p, cfgA)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("activate = %v, want %v", err, tt.wantErr)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "activate sw-x/1:") {
				t.Errorf("error %q does not name the operation and port", err)
			}
			if raw.writes != tt.wantWrites {
				t.Fatalf("%d writes, want %d", raw.writes, tt.wantWrites)
			}
			if d.Name() != "fake" {
				t.Fatalf("Name() = %q, want the raw driver's", d.Name())
			}
		})
	}
	t.Run("a port already as intended is not written", func(t *testing.T) {
		raw := &fakeRaw{ports: map[switches.Port]switches.State{p: serviceA}}
		if err := switches.Confirmed(raw).Activate(context.Background(), p, cfgA); err != nil {
			t.Fatal(err)
		}
		if raw.writes != 0 {
			t.Fatalf("%d writes, want none", raw.writes)
		}
	})
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
		r.put(t, serving, switches.ModeService)
		r.put(t, paused, switches.ModeSuspended)
		r.put(t, portal, switches.ModeCaptive)

		feb := time.Date(2026, 2, 10, 0, 0, 0, 0, time.UTC) // any instant in the month names it
		for _, p := range []switches.Port{serving, paused} {
			for m := 1; m <= 12; m++ {
				month := time.Date(2025, time.Month(m), 1, 0, 0, 0, 0, time.UTC)
				down, up := sim.Counters(ctx, p, month)
				if down < 50 || down > 600 || up < 10 || up > 120 {
					t.Fatalf("%s in %s: %.2f GB down, %.2f GB up; want 50-600 and 10-120", p, month.Format("2006-01"), down, up)
				}
			}
		}

		d1, u1 := sim.Counters(ctx, serving, feb)
		again := newRig(t, st) // another replica, same figures
		simAgain, _ := switches.AsSim(again.d)
		if d2, u2 := simAgain.Counters(ctx, serving, time.Date(2026, 2, 28, 23, 0, 0, 0, time.UTC)); d1 != d2 || u1 != u2 {
			t.Fatalf("February reads %v/%v then %v/%v", d1, u1, d2, u2)
		}
		if d, u := sim.Counters(ctx, serving, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)); d == d1 && u == u1 {
			t.Fatal("January and February read the same")
		}
		if d, u := sim.Counters(ctx, paused, feb); d == d1 && u == u1 {
			t.Fatal("two ports read the same February")
		}

		// The month under way counts its elapsed part: March 15 12:00 is 14.5 of 31 days.
		fullMarch, _ := newRigAt(t, st, time.Date(2026, 4, 2, 0, 0, 0, 0, time.UTC)).Counters(ctx, serving, start)
		partMarch, _ := sim.Counters(ctx, serving, start)
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
			if d, u := sim.Counters(ctx, tt.p, tt.month); d != 0 || u != 0 {
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
