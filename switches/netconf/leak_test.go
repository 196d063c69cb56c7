package netconf_test

import (
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
	var n int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if n = runtime.NumGoroutine(); n <= before {
			return
		}
	}
	buf := make([]byte, 1<<20)
	t.Fatalf("%d goroutines after three lost sessions, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
}
