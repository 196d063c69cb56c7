package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
)

// A receiver counts each event once, in its provider's order: a repeat (delivery is at least
// once) is not a second delivery, an event first seen after a later one of its provider is out
// of order, and a hanging receiver's events stay out of the delivered count and the lag.
func TestFanHooksCountEachEventOnceInOrder(t *testing.T) {
	t.Parallel()
	type post struct {
		provider int
		seq      int64
	}
	for _, tc := range []struct {
		name                                    string
		hung                                    int
		posts                                   []post
		delivered, repeats, outOfOrder, hungGot int64
	}{
		{"in order", 0, []post{{1, 1}, {2, 1}, {1, 2}, {2, 2}}, 4, 0, 0, 0},
		{"a repeat", 0, []post{{1, 1}, {1, 2}, {1, 2}, {1, 3}}, 3, 1, 0, 0},
		{"a later event first", 0, []post{{1, 1}, {1, 3}, {1, 2}}, 3, 0, 1, 0},
		{"providers apart", 0, []post{{1, 2}, {2, 1}}, 2, 0, 0, 0},
		{"a hanging receiver", 1, []post{{1, 1}, {2, 1}, {2, 2}}, 2, 0, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newFanHooks(0)
			h.hung.Store(int32(tc.hung))
			h.reset(time.Now().Add(time.Hour))
			for _, p := range tc.posts {
				body := fmt.Sprintf(`{"data":{"bench_seq":%d,"bench_due_unix_nano":%d}}`, p.seq, time.Now().UnixNano())
				ctx, cancel := context.WithCancel(context.Background())
				if p.provider == tc.hung {
					cancel() // the service gives up on a hanging receiver; so does this test
				}
				req := httptest.NewRequestWithContext(ctx, http.MethodPost, "/hook", strings.NewReader(body))
				h.handler(p.provider)(httptest.NewRecorder(), req)
				cancel()
			}
			if h.delivered != tc.delivered || h.repeats != tc.repeats || h.outOfOrder != tc.outOfOrder || h.hungGot != tc.hungGot {
				t.Errorf("delivered %d, repeats %d, out of order %d, hanging receiver's %d; want %d, %d, %d, %d",
					h.delivered, h.repeats, h.outOfOrder, h.hungGot, tc.delivered, tc.repeats, tc.outOfOrder, tc.hungGot)
			}
			if h.lag.n != tc.delivered {
				t.Errorf("%d lags timed, want one per delivered event (%d)", h.lag.n, tc.delivered)
			}
		})
	}
}

// The scenario's event source records events as a replica without workers does, and a running
// service delivers every one to its provider's receiver, in order, on both engines.
func TestFanOutPhaseDeliversEveryEvent(t *testing.T) {
	testdb.EachMigrated(t, testdb.StoreSchema, func(t *testing.T, u string) {
		ctx := context.Background()
		const providers = 4
		st := testdb.Open(t, u)
		if _, err := gen.Run(ctx, st, gen.Options{Subscribers: 5, Providers: providers, Seed: 1}); err != nil {
			t.Fatalf("gen: %v", err)
		}
		hooks, err := startFanHooks(ctx, st, providers, 0)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(hooks.close)
		apptest.Start(t, u)
		src, err := newFanSource(ctx, st, providers)
		if err != nil {
			t.Fatal(err)
		}
		res, err := src.phase(ctx, hooks, os.Getpid(), "test", 200, time.Second, 0)
		if err != nil {
			t.Fatal(err)
		}
		if res.offered != 200 || res.delivered != 200 || res.expected != 200 || res.outOfOrder != 0 || res.lag.n != 200 {
			t.Errorf("offered %d, delivered %d of %d, %d out of order, %d lags timed; want 200 delivered in order",
				res.offered, res.delivered, res.expected, res.outOfOrder, res.lag.n)
		}
		var recorded int
		if err := rawdb.Writer(st).QueryRowContext(ctx, st.Dialect.Rebind(`SELECT COUNT(*) FROM events WHERE type = ?`), fanoutType).Scan(&recorded); err != nil {
			t.Fatal(err)
		}
		if recorded != 200 {
			t.Errorf("%d events recorded, want 200", recorded)
		}
	})
}
