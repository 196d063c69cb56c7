package counters_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/counters"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// portCounters answers each port's counters from a map; a port not in it is unavailable.
type portCounters struct {
	mu sync.Mutex
	c  map[string]switches.Counters
}

func (p *portCounters) Counters(_ context.Context, port switches.Port) (switches.Counters, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.c[port.Name]
	if !ok {
		return c, switches.ErrUnavailable
	}
	return c, nil
}

type queued struct{ args []jobs.Args }

func (q *queued) Enqueue(_ context.Context, _ *store.Tx, a jobs.Args) error {
	q.args = append(q.args, a)
	return nil
}

// A sampling records every port that answers, and a port that does not answer fails the
// sampling without stopping the others; its traffic is counted by the next sampling it
// answers, from its last reading. The sweep queues one sampling per due switch not on the sim.
func TestSample(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
		f, err := fixture.Parse(fixture.DemoJSON)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fixture.LoadAtCost(ctx, st, f, t0, identity.TestPasswordCost); err != nil {
			t.Fatal(err)
		}
		const sw = "mtl-king-sw1"
		var ports []store.SampledPort
		for _, name := range []string{"ge-0/0/12", "ge-0/0/13"} {
			var id string
			if err := st.R().QueryRow(ctx, `SELECT id FROM ports WHERE switch_name = ? AND port_name = ?`, sw, name).Scan(&id); err != nil {
				t.Fatal(err)
			}
			ports = append(ports, store.SampledPort{PortID: id, Name: name})
		}
		ports[0].InService = true // b is not: suspended, say
		a, b := ports[0].Name, ports[1].Name
		clk := clock.NewManual(t0)
		reader := &portCounters{c: map[string]switches.Counters{
			a: {LinkUp: true, InOctets: 100, OutOctets: 1000},
			b: {LinkUp: true, InOctets: 200, OutOctets: 2000},
		}}
		q := &queued{}
		svc := &counters.Service{Store: st, Clock: clk, Switches: reader, Jobs: q, Default: "sim"}
		if _, err := svc.SamplePorts(ctx, sw, ports); err != nil {
			t.Fatal(err)
		}

		clk.Set(t0.Add(5 * time.Minute))
		reader.c[a] = switches.Counters{LinkUp: true, InOctets: 150, OutOctets: 1500}
		delete(reader.c, b) // b does not answer
		got, err := svc.SamplePorts(ctx, sw, ports)
		if !errors.Is(err, switches.ErrUnavailable) {
			t.Fatalf("sampling with %s not answering: %v, want its failure", b, err)
		}
		if i := slices.IndexFunc(got, func(p counters.PortSampled) bool { return p.Port == a }); i < 0 || got[i].Step.Download != 500 || got[i].Step.Upload != 50 {
			t.Fatalf("%s in a sampling where %s failed: %+v", a, b, got)
		}

		clk.Set(t0.Add(10 * time.Minute))
		reader.c[b] = switches.Counters{LinkUp: true, InOctets: 260, OutOctets: 2700}
		if _, err := svc.SamplePorts(ctx, sw, ports); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			port     string
			down, up int64
		}{{a, 500, 50}, {b, 700, 60}} {
			down, up, err := st.PortTraffic(ctx, sw, tt.port, t0, t0.Add(time.Hour))
			if err != nil || down != tt.down || up != tt.up {
				t.Errorf("%s recorded %d/%d, %v; want %d/%d", tt.port, down, up, err, tt.down, tt.up)
			}
		}
		// A sampling at a time already sampled adds nothing.
		if got, err := svc.SamplePorts(ctx, sw, ports); err != nil || !got[0].Stale {
			t.Errorf("a second sampling at the same time: %+v, %v; want stale", got, err)
		}

		// Both links go down: an outage of a, in service; b's is no outage of a service.
		clk.Set(t0.Add(12 * time.Minute))
		reader.c[a] = switches.Counters{InOctets: 150, OutOctets: 1500}
		reader.c[b] = switches.Counters{InOctets: 260, OutOctets: 2700}
		if _, err := svc.SamplePorts(ctx, sw, ports); err != nil {
			t.Fatal(err)
		}
		for port, want := range map[string]int{a: 1, b: 0} {
			if outs, err := st.PortOutages(ctx, sw, port, t0, t0.Add(time.Hour)); err != nil || len(outs) != want {
				t.Errorf("outages of %s: %+v, %v; want %d", port, outs, err, want)
			}
		}

		// The demo's switches name the sim: none is due; one that names linuxbridge is.
		if err := svc.Sweep(ctx); err != nil || len(q.args) != 0 {
			t.Fatalf("sweep over sim switches queued %v, %v", q.args, err)
		}
		if _, err := rawdb.Writer(st).ExecContext(ctx, `UPDATE switches SET driver = 'linuxbridge' WHERE name = 'mtl-king-sw1'`); err != nil {
			t.Fatal(err)
		}
		if err := svc.Sweep(ctx); err != nil || len(q.args) != 1 || q.args[0] != (jobs.SampleSwitch{Switch: sw}) {
			t.Fatalf("sweep queued %v, %v; want one sampling of %s", q.args, err, sw)
		}
		clk.Set(t0.Add(16 * time.Minute))
		if err := svc.Sweep(ctx); err != nil || len(q.args) != 1 {
			t.Fatalf("a sweep within the interval queued %v, %v", q.args, err)
		}
		clk.Set(t0.Add(17 * time.Minute))
		if err := svc.Sweep(ctx); err != nil || len(q.args) != 2 {
			t.Fatalf("a sweep once due queued %v, %v", q.args, err)
		}
	})
}
