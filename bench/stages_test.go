package main

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/testdb"
)

// The stage breakdown reads what a running service wrote for real orders: every order placed
// through the HTTP API and delivered as a webhook is timed, its instants in the order the
// stages happen and within the test's own time, on both engines.
func TestTimeStagesOfDeliveredOrders(t *testing.T) {
	testdb.EachMigrated(t, testdb.StoreSchema, func(t *testing.T, u string) {
		ctx := context.Background()
		if _, err := gen.Run(ctx, testdb.Open(t, u), gen.Options{Subscribers: 200, Seed: 1}); err != nil {
			t.Fatalf("gen: %v", err)
		}
		svc := apptest.Start(t, u)
		hook, stop, err := receiveOrderHooks(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)

		begin := time.Now()
		ports := gen.VacantPorts(1, 200)[:3]
		for i, hash := range ports {
			id, err := placeOrder(http.DefaultClient, svc.URL, hash, int64(i))
			if err != nil {
				t.Fatal(err)
			}
			hook.placed(id, time.Now())
		}
		h, _, ids := hook.wait(int64(len(ports)), 30*time.Second)
		if h.n != int64(len(ports)) {
			t.Fatalf("%d of %d provisioning.completed webhooks arrived", h.n, len(ports))
		}
		phases := []orderPhase{{toEvent: result{requests: h.n}, ids: ids}, {ids: []string{"no-such-subscription"}}}
		if err := timeStages(ctx, u, phases); err != nil {
			t.Fatalf("timeStages: %v", err)
		}
		end := time.Now()
		for k, s := range phases[0].stages {
			if s.n != int64(len(ports)) {
				t.Errorf("stage %q: %d of %d orders timed", stageNames[k], s.n, len(ports))
			}
		}
		if n := phases[1].stages[0].n; n != 0 {
			t.Errorf("an unknown subscription: %d timed", n)
		}

		times, err := readOrderTimes(ctx, svc.App.Store)
		if err != nil {
			t.Fatal(err)
		}
		// SQLite's job times are whole milliseconds, cut rather than rounded.
		const slack = time.Millisecond
		for _, id := range ids {
			tm := times[id]
			steps := []time.Time{begin, tm.created, tm.attempted, tm.activated, tm.delivered, end}
			for i := 1; i < len(steps); i++ {
				if steps[i].Add(slack).Before(steps[i-1]) {
					t.Errorf("order %s: instant %d (%s) before instant %d (%s)", id, i, steps[i].Format(time.RFC3339Nano), i-1, steps[i-1].Format(time.RFC3339Nano))
				}
			}
		}
	})
}
