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
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// fakeSwitch is a switch as a test driver sees it: healthy, dead (every operation is
// unavailable at once) or hung (every operation waits until its context ends).
type fakeSwitch struct {
	mode            atomic.Value // "ok", "dead", "hung", "refused" (credentials)
	calls, inFlight atomic.Int32
	maxInFlight     atomic.Int32
	closed          atomic.Int32 // Close calls
	target          switches.Target
	driverName      string
}

func (f *fakeSwitch) Name() string { return f.driverName }

func (f *fakeSwitch) Close() error {
	f.closed.Add(1)
	return nil
}

func (f *fakeSwitch) Read(ctx context.Context, p switches.Port) (switches.State, error) {
	return switches.State{Mode: switches.ModeOff}, f.op(ctx)
}

func (f *fakeSwitch) Converge(ctx context.Context, p switches.Port, want switches.State) error {
	return f.op(ctx)
}

func (f *fakeSwitch) op(ctx context.Context) error {
	f.calls.Add(1)
	n := f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	for {
		m := f.maxInFlight.Load()
		if n <= m || f.maxInFlight.CompareAndSwap(m, n) {
			break
		}
	}
	switch f.mode.Load() {
	case "dead":
		return switches.ErrUnavailable
	case "hung":
		<-ctx.Done()
		return ctx.Err()
	case "refused":
		return fmt.Errorf("ssh: %w", switches.ErrAuth)
	}
	return nil
}

// fleet is a router over fake switches, one per switch name, built by the drivers "a" and "b".
type fleet struct {
	r   *switches.Router
	clk *clock.Manual
	mu  sync.Mutex
	sw  map[string]*fakeSwitch // by switch name: the last driver built for it
	n   map[string]int         // drivers built per switch name
	// buildTime is how long building a driver takes (what lets operations race to build one).
	buildTime time.Duration
}

func newFleet(t *testing.T, st *store.Store, sealer *identity.Sealer) *fleet {
	f := &fleet{clk: clock.NewManual(start), sw: map[string]*fakeSwitch{}, n: map[string]int{}}
	build := func(driver string) switches.Constructor {
		return func(t switches.Target) (switches.Driver, error) {
			time.Sleep(f.buildTime)
			f.mu.Lock()
			defer f.mu.Unlock()
			fs := &fakeSwitch{target: t, driverName: driver}
			fs.mode.Store("ok")
			if old := f.sw[t.Name]; old != nil {
				fs.mode.Store(old.mode.Load())
			}
			f.sw[t.Name] = fs
			f.n[t.Name]++
			return fs, nil
		}
	}
	f.r = &switches.Router{Store: st, Sealer: sealer, Drivers: switches.Drivers{"a": build("a"), "b": build("b")}, Default: "b",
		Clock: f.clk, Limit: 2, QueueWait: 200 * time.Millisecond, Failures: 3, CoolDown: time.Minute}
	return f
}

func (f *fleet) get(name string) *fakeSwitch {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sw[name]
}

func (f *fleet) converge(ctx context.Context, sw string) error {
	return f.r.Converge(ctx, switches.Port{Switch: sw, Name: "ge-0/0/1"}, captive)
}

// Each port goes to its own switch's driver, as the switch's row names it (none named, or no
// row: the default), with the row's address and opened password; an edited row gets a new
// driver, an unchanged one keeps its driver.
func TestRouterSendsEachPortToItsSwitchsDriver(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		sealer, err := identity.NewSealer("router test secret")
		if err != nil {
			t.Fatal(err)
		}
		sealed, err := sealer.Seal(switches.PasswordPurpose("id-a"), []byte("hunter2"))
		if err != nil {
			t.Fatal(err)
		}
		rows := []*subprov.Switch{
			{ID: "id-a", Name: "sw-a", Driver: "a", Address: "10.0.0.1:830", Username: "ops", Secret: sealed, Model: "junos"},
			{ID: "id-b", Name: "sw-b", Address: "10.0.0.2"},
		}
		if err := st.InTx(ctx, func(tx *store.Tx) error {
			for _, r := range rows {
				if err := tx.InsertSwitch(ctx, r, start); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		f := newFleet(t, st, sealer)
		for _, tc := range []struct {
			sw, driver string
			target     switches.Target
		}{
			{"sw-a", "a", switches.Target{Name: "sw-a", Address: "10.0.0.1:830", Username: "ops", Password: "hunter2", Model: "junos"}},
			{"sw-b", "b", switches.Target{Name: "sw-b", Address: "10.0.0.2"}},
			{"sw-unknown", "b", switches.Target{Name: "sw-unknown"}},
		} {
			for range 2 {
				if err := f.converge(ctx, tc.sw); err != nil {
					t.Fatalf("%s: %v", tc.sw, err)
				}
			}
			got := f.get(tc.sw)
			if got == nil || got.driverName != tc.driver || got.target != tc.target || got.calls.Load() != 2 || f.n[tc.sw] != 1 {
				t.Errorf("%s: driver %+v built %d times, want driver %q for %+v once, called twice", tc.sw, got, f.n[tc.sw], tc.driver, tc.target)
			}
		}
		rows[1].Driver, rows[1].Address = "a", "10.0.0.3"
		if err := st.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateSwitch(ctx, rows[1], start) }); err != nil {
			t.Fatal(err)
		}
		if err := f.converge(ctx, "sw-b"); err != nil {
			t.Fatal(err)
		}
		if got := f.get("sw-b"); got.driverName != "a" || got.target.Address != "10.0.0.3" || f.n["sw-b"] != 2 {
			t.Errorf("after the edit sw-b runs driver %q at %q (built %d times), want a at 10.0.0.3, built again", got.driverName, got.target.Address, f.n["sw-b"])
		}
		// A password sealed under a secret the router does not have is a final credentials
		// error, not the switch unavailable, and the breaker does not count it.
		other, _ := identity.NewSealer("another secret")
		f2 := newFleet(t, st, other)
		for range 5 {
			if err := f2.converge(ctx, "sw-a"); !errors.Is(err, switches.ErrAuth) || errors.Is(err, switches.ErrUnavailable) || !switches.Final(err) {
				t.Errorf("password sealed under another secret: %v, want ErrAuth, not ErrUnavailable", err)
			}
		}
		if b := f2.r.Breaker("sw-a"); b.Failures != 0 || b.Open {
			t.Errorf("after 5 drivers that could not be built the breaker is %+v, want untouched", b)
		}
	})
}

// One dead or hung switch never delays a convergence on another: the troubled switch runs at
// most Limit operations at once (the rest fail with ErrBusy after QueueWait), and after
// Failures unavailable answers in a row its breaker fails every operation at once.
func TestRouterTroubledSwitchDoesNotDelayOthers(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		for _, tc := range []struct {
			trouble  string
			wantErr  error // what the operations beyond the switch's own failures meet
			maxCalls int32 // operations that reach the troubled switch at most
		}{
			{trouble: "dead", wantErr: switches.ErrBreakerOpen, maxCalls: 3 + 1}, // a breaker's worth, and one in the other slot
			{trouble: "hung", wantErr: switches.ErrBusy, maxCalls: 2 + 3},        // the slots, then a breaker's worth
		} {
			t.Run(tc.trouble, func(t *testing.T) {
				f := newFleet(t, st, nil)
				ctx := context.Background()
				for _, sw := range []string{"sw-bad", "sw-good"} {
					if err := f.converge(ctx, sw); err != nil {
						t.Fatal(err)
					}
				}
				f.get("sw-bad").mode.Store(tc.trouble)
				var wg sync.WaitGroup
				errs := make(chan error, 12)
				for range 12 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						octx, cancel := context.WithTimeout(ctx, time.Second)
						defer cancel()
						errs <- f.converge(octx, "sw-bad")
					}()
				}
				time.Sleep(50 * time.Millisecond) // the troubled switch is full
				for i := range 5 {
					began := time.Now()
					if err := f.converge(ctx, "sw-good"); err != nil {
						t.Fatalf("good switch: %v", err)
					}
					if took := time.Since(began); took > 100*time.Millisecond {
						t.Errorf("convergence %d on the good switch took %v while sw-bad is %s", i, took, tc.trouble)
					}
				}
				wg.Wait()
				close(errs)
				met := 0
				for err := range errs {
					if !errors.Is(err, switches.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("troubled switch answered %v", err)
					}
					if errors.Is(err, tc.wantErr) {
						met++
					}
				}
				bad := f.get("sw-bad")
				if met == 0 || bad.calls.Load()-1 > tc.maxCalls || bad.maxInFlight.Load() > 2 {
					t.Errorf("%d operations met %v; the switch saw %d (at most %d at once), want some, at most %d, at most 2 at once",
						met, tc.wantErr, bad.calls.Load()-1, bad.maxInFlight.Load(), tc.maxCalls)
				}
			})
		}
	})
}

// An open breaker lets one probe through once its cool-down ends: a switch that answers
// closes it, one still dead opens it for another cool-down.
func TestRouterBreakerProbesAfterCoolDown(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		for _, tc := range []struct {
			name      string
			recovered bool
		}{{"recovered", true}, {"still dead", false}} {
			t.Run(tc.name, func(t *testing.T) {
				f := newFleet(t, st, nil)
				ctx := context.Background()
				if err := f.converge(ctx, "sw-x"); err != nil {
					t.Fatal(err)
				}
				sw := f.get("sw-x")
				sw.mode.Store("dead")
				for range 3 {
					if err := f.converge(ctx, "sw-x"); errors.Is(err, switches.ErrBreakerOpen) || !errors.Is(err, switches.ErrUnavailable) {
						t.Fatalf("failure before the breaker opens: %v", err)
					}
				}
				if err := f.converge(ctx, "sw-x"); !errors.Is(err, switches.ErrBreakerOpen) || !f.r.Breaker("sw-x").Open {
					t.Fatalf("after 3 failures: %v, breaker %+v; want open", err, f.r.Breaker("sw-x"))
				}
				f.clk.Advance(59 * time.Second)
				if err := f.converge(ctx, "sw-x"); !errors.Is(err, switches.ErrBreakerOpen) {
					t.Fatalf("during the cool-down: %v, want the breaker open", err)
				}
				f.clk.Advance(time.Second)
				if tc.recovered {
					sw.mode.Store("ok")
				}
				calls := sw.calls.Load()
				err := f.converge(ctx, "sw-x")
				if sw.calls.Load() != calls+1 {
					t.Fatalf("after the cool-down the probe did not reach the switch (%v)", err)
				}
				if tc.recovered != (err == nil) || f.r.Breaker("sw-x").Open == tc.recovered {
					t.Fatalf("probe: %v, breaker %+v", err, f.r.Breaker("sw-x"))
				}
				if err := f.converge(ctx, "sw-x"); tc.recovered != (err == nil) || (!tc.recovered && !errors.Is(err, switches.ErrBreakerOpen)) {
					t.Errorf("after the probe: %v", err)
				}
			})
		}
	})
}

// A switch whose row changes gets a new driver; the one it replaces is closed once the
// operations still using it end, and Close closes the rest. Operations racing on a switch
// build its driver once.
func TestRouterClosesReplacedDrivers(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		row := &subprov.Switch{ID: "id-c", Name: "sw-c", Driver: "a", Address: "10.0.0.9"}
		if err := st.InTx(ctx, func(tx *store.Tx) error { return tx.InsertSwitch(ctx, row, start) }); err != nil {
			t.Fatal(err)
		}
		f := newFleet(t, st, nil)
		f.buildTime = 20 * time.Millisecond
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if err := f.converge(ctx, "sw-c"); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		if n := f.n["sw-c"]; n != 1 {
			t.Fatalf("8 operations at once built %d drivers, want 1", n)
		}
		first := f.get("sw-c")
		first.mode.Store("hung")
		octx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- f.converge(octx, "sw-c") }()
		for first.inFlight.Load() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		row.Address = "10.0.0.10"
		if err := st.InTx(ctx, func(tx *store.Tx) error { return tx.UpdateSwitch(ctx, row, start) }); err != nil {
			t.Fatal(err)
		}
		f.mu.Lock()
		f.sw["sw-c"] = nil // the next driver starts healthy
		f.mu.Unlock()
		if err := f.converge(ctx, "sw-c"); err != nil {
			t.Fatal(err)
		}
		second := f.get("sw-c")
		if second == first || first.closed.Load() != 0 {
			t.Fatalf("the replaced driver was closed %d times while an operation still ran on it", first.closed.Load())
		}
		cancel()
		<-done
		if first.closed.Load() != 1 {
			t.Errorf("the replaced driver was closed %d times once its operation ended, want once", first.closed.Load())
		}
		if err := f.r.Close(); err != nil {
			t.Fatal(err)
		}
		if second.closed.Load() != 1 || first.closed.Load() != 1 {
			t.Errorf("Close closed the current driver %d times (the replaced one %d), want once each", second.closed.Load(), first.closed.Load())
		}
		if err := f.converge(ctx, "sw-c"); !errors.Is(err, switches.ErrUnavailable) || f.n["sw-c"] != 2 {
			t.Errorf("after Close: %v, %d drivers built; want ErrUnavailable and none built", err, f.n["sw-c"])
		}
	})
}

// A refused login counts towards the breaker (each try is one more refused login), and stays
// a final credentials error; a row that does not read is the database's error, not counted.
func TestRouterCountsCredentialsNotItsOwnErrors(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		f := newFleet(t, st, nil)
		if err := f.converge(ctx, "sw-r"); err != nil {
			t.Fatal(err)
		}
		f.get("sw-r").mode.Store("refused")
		for range 3 {
			if err := f.converge(ctx, "sw-r"); !errors.Is(err, switches.ErrCredentials) || errors.Is(err, switches.ErrUnavailable) {
				t.Fatalf("refused login: %v, want ErrCredentials", err)
			}
		}
		if b := f.r.Breaker("sw-r"); !b.Open {
			t.Errorf("after 3 refused logins the breaker is %+v, want open", b)
		}

		g := newFleet(t, st, nil)
		past, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
		defer cancel()
		for range 10 {
			if err := g.converge(past, "sw-d"); err == nil || errors.Is(err, switches.ErrUnavailable) {
				t.Errorf("row read with an expired context: %v, want the database's error, not ErrUnavailable", err)
			}
		}
		if b := g.r.Breaker("sw-d"); b.Failures != 0 {
			t.Errorf("10 failed row reads counted %d breaker failures, want none", b.Failures)
		}
	})
}
