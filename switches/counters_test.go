package switches_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// counterRaw is a raw driver that reads counters: these, or its error.
type counterRaw struct {
	c   switches.Counters
	err error
}

func (c *counterRaw) Name() string { return "counting" }
func (c *counterRaw) Read(context.Context, switches.Port) (switches.State, error) {
	return switches.State{Mode: switches.ModeOff}, nil
}
func (c *counterRaw) Write(context.Context, switches.Port, switches.State) error { return nil }
func (c *counterRaw) Counters(context.Context, switches.Port) (switches.Counters, error) {
	return c.c, c.err
}

// plainRaw reads no counters.
type plainRaw struct{}

func (plainRaw) Name() string { return "plain" }
func (plainRaw) Read(context.Context, switches.Port) (switches.State, error) {
	return switches.State{Mode: switches.ModeOff}, nil
}
func (plainRaw) Write(context.Context, switches.Port, switches.State) error { return nil }

// A port's counters come from its own switch's driver, within the switch's breaker; a driver
// that reads none (the sim, a raw driver without Counters) says so with ErrNoCounters, which
// is no failure of the switch; a driver registered while the router runs is used from the
// switch's next operation.
func TestRouterCounters(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		clk := clock.NewManual(start)
		counting := &counterRaw{c: switches.Counters{LinkUp: true, InOctets: 12, OutOctets: 34}}
		drivers := switches.BuiltIn(st, &faults.Switches{}, clk)
		drivers.AddRaw("counting", func(switches.Target) (switches.Raw, error) { return counting, nil })
		drivers.AddRaw("plain", func(switches.Target) (switches.Raw, error) { return plainRaw{}, nil })
		r := &switches.Router{Store: st, Drivers: drivers, Default: "sim", Clock: clk, Failures: 2, CoolDown: time.Minute}
		err := st.InTx(ctx, func(tx *store.Tx) error {
			for _, name := range []string{"counting", "plain", "sim", "late"} {
				if err := tx.InsertSwitch(ctx, &subprov.Switch{ID: "id-" + name, Name: name, Driver: name}, start); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		port := func(sw string) switches.Port { return switches.Port{Switch: sw, Name: "ge-0/0/1"} }
		if got, err := r.Counters(ctx, port("counting")); err != nil || got != counting.c {
			t.Fatalf("counters through the counting driver: %+v, %v", got, err)
		}
		for _, sw := range []string{"plain", "sim", "no-row"} {
			if _, err := r.Counters(ctx, port(sw)); !errors.Is(err, switches.ErrNoCounters) || errors.Is(err, switches.ErrUnavailable) {
				t.Errorf("counters of a port on %s: %v, want ErrNoCounters", sw, err)
			}
		}
		for range 3 { // no failure of the switch: its breaker stays closed
			_, _ = r.Counters(ctx, port("plain"))
		}
		if b := r.Breaker("plain"); b.Open || b.Failures != 0 {
			t.Errorf("breaker of a switch without counters: %+v", b)
		}
		if _, err := r.Counters(ctx, switches.Port{Switch: "counting"}); !errors.Is(err, switches.ErrInvalid) {
			t.Errorf("counters of a port without a name: %v, want ErrInvalid", err)
		}

		counting.err = switches.ErrUnavailable
		for range 2 {
			if _, err := r.Counters(ctx, port("counting")); !errors.Is(err, switches.ErrUnavailable) {
				t.Fatalf("counters of a dead switch: %v", err)
			}
		}
		if _, err := r.Counters(ctx, port("counting")); !errors.Is(err, switches.ErrBreakerOpen) {
			t.Fatalf("counters after two failures: %v, want the breaker open", err)
		}

		// "late" names a driver the router does not have yet, then has.
		if _, err := r.Counters(ctx, port("late")); !errors.Is(err, switches.ErrUnavailable) {
			t.Fatalf("counters through a driver not registered: %v", err)
		}
		late := &counterRaw{c: switches.Counters{OutOctets: 99}}
		r.Register("late", func(switches.Target) (switches.Driver, error) { return switches.Confirmed(late), nil })
		if got, err := r.Counters(ctx, port("late")); err != nil || got != late.c {
			t.Fatalf("counters through a driver registered late: %+v, %v", got, err)
		}
	})
}
