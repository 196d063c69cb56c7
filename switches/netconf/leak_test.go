package netconf_test

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/subprov/subprov/switches"
	"github.com/subprov/subprov/switches/netconf"
	"github.com/subprov/subprov/switches/netconf/netconftest"
)

// A session lost mid-write leaves no goroutine behind once the RPC timeout has passed: the
// library's read loop stays stoppable because the transport never fails under it.
func TestSessionLossLeavesNoGoroutine(t *testing.T) {
	srv := netconftest.Start(t)
	raw := driver(t, srv, func(c *netconf.Config) { c.OpTimeout = 2 * time.Second })
	port := switches.Port{Switch: "sw", Name: "ge-0/0/7"}
	if err := raw.Write(ctxFor(t), port, serviceA); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // the first session's goroutines wind down
	before := runtime.NumGoroutine()
	netconf.SetHook(raw, func(step string, drop func()) {
		if step == "confirmed" {
			drop()
		}
	})
	for range 3 {
		if err := raw.Write(ctxFor(t), port, serviceB); !errors.Is(err, switches.ErrUnavailable) {
			t.Fatalf("write with the session cut: %v; want ErrUnavailable", err)
		}
	}
	goroutinesBackTo(t, before, 5*time.Second, "three lost sessions")
}

// goroutinesBackTo waits up to wait for the goroutines to be no more than before, and fails t
// with them all otherwise.
func goroutinesBackTo(t *testing.T, before int, wait time.Duration, after string) {
	t.Helper()
	var n int
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if n = runtime.NumGoroutine(); n <= before {
			return
		}
	}
	buf := make([]byte, 1<<20)
	t.Fatalf("%d goroutines after %s, %d before:\n%s", n, after, before, buf[:runtime.Stack(buf, true)])
}

// A connect given up at any point (the caller's context ends during the dial, the handshake
// or the hello) leaves nothing behind: whatever the transport finishes building after the
// caller closed it is closed. Run with -race, it also shows the transport's fields are not
// written and read at once.
func TestCancelledConnectLeavesNothing(t *testing.T) {
	srv := netconftest.Start(t)
	raw := driver(t, srv, func(c *netconf.Config) { c.OpTimeout = 2 * time.Second })
	port := switches.Port{Switch: "sw", Name: "ge-0/0/8"}
	if _, err := raw.Read(ctxFor(t), port); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	before := runtime.NumGoroutine()
	for i := range 40 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i)*3*time.Millisecond)
		_, err := raw.Read(ctx, port)
		cancel()
		if err != nil && !errors.Is(err, switches.ErrUnavailable) {
			t.Fatalf("read cut after %d ms: %v; want ErrUnavailable", i*3, err)
		}
	}
	goroutinesBackTo(t, before, 10*time.Second, "40 cancelled connects")
}
