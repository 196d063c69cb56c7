package httpapi_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/switches"
)

// scheduledCounters is a switch driver whose ports read the counters scheduled for the
// service's clock time, so every sampling at one time, the sweep's job or the test's own,
// reads the same. Everything else is the sim's.
type scheduledCounters struct {
	switches.Driver
	clock interface{ Now() time.Time }
	mu    sync.Mutex
	plan  map[string][]scheduled // by port name, in time order
}

type scheduled struct {
	from time.Time
	c    switches.Counters
}

func (f *scheduledCounters) Name() string { return "scheduled" }

func (f *scheduledCounters) Counters(_ context.Context, p switches.Port) (switches.Counters, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clock.Now()
	var got *switches.Counters
	for i := range f.plan[p.Name] {
		if s := f.plan[p.Name][i]; !s.from.After(now) {
			got = &s.c
		}
	}
	if got == nil {
		return switches.Counters{}, fmt.Errorf("%w: port %s has no counters yet", switches.ErrUnavailable, p.Name)
	}
	return *got, nil
}

// Usage and outages of a port on a switch that is not the sim come from its sampled counters:
// the month's download is what the switch sent out of the port, its upload what it received,
// in 10^9-byte gigabytes; a sample finding the link down opens an outage that the portal's
// status history and the agent's network health show, and the next finding it up ends it.
//
// The service runs without workers: no sweep moves the lines on as the test moves the clock,
// and only the test's own samplings read the switch.
func TestUsageAndOutagesFromSampledCounters(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 21, 15, 0, 0, 0, time.UTC)
		s.DevClock.Set(t0.Add(-time.Minute)) // the port has no counters yet: samplings fail
		var port string
		if err := s.Store.R().QueryRow(ctx, `SELECT p.port_name FROM subscriptions s JOIN ports p ON p.id = s.port_id WHERE s.id = ?`, marieLine).Scan(&port); err != nil {
			t.Fatal(err)
		}
		const down1, up1, down2 = 3_456_789_012, 1_234_567_890, 50_000_000
		sim, ok := switches.AsSim(s.Switches)
		if !ok {
			t.Fatal("no sim")
		}
		fake := &scheduledCounters{Driver: sim, clock: s.Clock, plan: map[string][]scheduled{port: {
			{t0, switches.Counters{LinkUp: true, InOctets: 1000, OutOctets: 2000}},
			{t0.Add(5 * time.Minute), switches.Counters{LinkUp: true, InOctets: 1000 + up1, OutOctets: 2000 + down1}},
			{t0.Add(10 * time.Minute), switches.Counters{LinkUp: false, InOctets: 1000 + up1, OutOctets: 2000 + down1}},
			{t0.Add(20 * time.Minute), switches.Counters{LinkUp: true, InOctets: 1000 + up1, OutOctets: 2000 + down1 + down2}},
		}}}
		s.Switches.Register("scheduled", func(switches.Target) (switches.Driver, error) { return fake, nil })
		if _, err := rawdb.Writer(s.Store).ExecContext(ctx, `UPDATE switches SET driver = 'scheduled', version = version + 1 WHERE name = 'mtl-king-sw1'`); err != nil {
			t.Fatal(err)
		}
		sample := func(at time.Time) {
			t.Helper()
			s.DevClock.Set(at)
			if _, err := s.Counters.Sample(ctx, "mtl-king-sw1"); err != nil {
				t.Fatalf("sample at %s: %v", at, err)
			}
		}
		marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		usage := func() []any {
			t.Helper()
			res := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me/usage", Headers: marie})
			if res.Status != 200 {
				t.Fatalf("usage: %d %s", res.Status, res.Raw)
			}
			return res.JSON["months"].([]any)
		}
		history := func() []any {
			t.Helper()
			res := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/status-history", Headers: marie})
			if res.Status != 200 {
				t.Fatalf("status history: %d %s", res.Status, res.Raw)
			}
			return res.JSON["events"].([]any)
		}
		health := func() map[string]any {
			t.Helper()
			// A verified session lasts minutes of the service's clock, which the test moves on.
			mh := agentHeaders(fixture.DemoAgentKey, verify(t, s, fixture.DemoAgentKey, marieID, fixture.DemoSubscriberEmail))
			res := s.Do(apptest.Request{Method: "GET", Path: "/partner/agent/customers/" + marieID + "/network-health", Headers: mh})
			if res.Status != 200 {
				t.Fatalf("network health: %d %s", res.Status, res.Raw)
			}
			return res.JSON["subscriptions"].([]any)[0].(map[string]any)
		}

		// Before any sample: no traffic (not the sim's made-up months), no outage, link unknown.
		for _, m := range usage() {
			if m := m.(map[string]any); m["download_gb"] != 0.0 || m["upload_gb"] != 0.0 {
				t.Fatalf("usage before any sample: %v", m)
			}
		}
		if evs := history(); len(evs) != 0 {
			t.Fatalf("status history before any sample: %v", evs)
		}
		if l := health()["link"].(map[string]any); l["state"] != "unknown" || l["sampled_at"] != nil {
			t.Fatalf("link before any sample: %v", l)
		}

		sample(t0)                       // the baseline
		sample(t0.Add(5 * time.Minute))  // 3.46 GB sent to Marie, 1.23 GB from her
		sample(t0.Add(10 * time.Minute)) // the link is down
		months := usage()
		nov := months[len(months)-1].(map[string]any)
		if len(months) != 11 || nov["month"] != "2026-11" || nov["download_gb"] != 3.46 || nov["upload_gb"] != 1.23 {
			t.Fatalf("usage after the transfer: %d months ending %v", len(months), nov)
		}
		if oct := months[len(months)-2].(map[string]any); oct["download_gb"] != 0.0 {
			t.Fatalf("October has traffic: %v", oct)
		}
		evs := history()
		if len(evs) != 1 {
			t.Fatalf("status history with the link down: %v", evs)
		}
		if e := evs[0].(map[string]any); e["started_at"] != "2026-11-21T15:10:00Z" || e["ongoing"] != true || e["resolved_at"] != nil {
			t.Fatalf("ongoing outage: %v", e)
		}
		line := health()
		if l := line["link"].(map[string]any); l["state"] != "down" || l["sampled_at"] != "2026-11-21T15:10:00Z" {
			t.Fatalf("link with the link down: %v", l)
		}
		if o := line["outages"].([]any); len(o) != 1 || o[0].(map[string]any)["ongoing"] != true {
			t.Fatalf("outages with the link down: %v", o)
		}

		sample(t0.Add(20 * time.Minute)) // the link is back, and 50 MB more went down it
		months = usage()
		if nov := months[len(months)-1].(map[string]any); nov["download_gb"] != 3.51 || nov["upload_gb"] != 1.23 {
			t.Fatalf("usage after 50 MB more: %v", nov)
		}
		evs = history()
		if e := evs[0].(map[string]any); len(evs) != 1 || e["ongoing"] != false || e["resolved_at"] != "2026-11-21T15:20:00Z" {
			t.Fatalf("resolved outage: %v", evs)
		}
		line = health()
		if l := line["link"].(map[string]any); l["state"] != "up" || l["sampled_at"] != "2026-11-21T15:20:00Z" {
			t.Fatalf("link back up: %v", l)
		}
		if o := line["outages"].([]any); len(o) != 1 || o[0].(map[string]any)["resolved_at"] != "2026-11-21T15:20:00Z" {
			t.Fatalf("outages with the link back: %v", o)
		}
	}, withoutWorkers)
}
