package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/search"
	"github.com/subprov/subprov/store"
)

// engineResult is one engine's run.
type engineResult struct {
	engine    string
	genTime   time.Duration // 0: database reused
	ready     time.Duration
	maxRSSKB  int64
	scenarios []result
	ceiling   result
	orders    []orderPhase // the warm-up (if any) and at --order-rate, then at capacity
	bill      billResult
	crash     *crashResult // the bill run with a crash; nil: not run
	fanout    []fanPhase   // the fan-out scenario's phases
	storage   *storageUse  // the generated database's bytes by table; nil: not measured
}

// queryKinds are one agent search of each kind, from generated subscriber 0's rows.
func queryKinds(ctx context.Context, dbURL string) ([][2]string, error) {
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var first, last, email, phone, number, street, unit string
	err = rawdb.Writer(st).QueryRowContext(ctx, st.Dialect.Rebind(`SELECT c.firstname, c.lastname, c.email, c.phonenumber, s.customer_number,
			b.street, u.unit_number
		FROM subscribers s JOIN contacts c ON c.subscriber_id = s.id JOIN subscriptions l ON l.subscriber_id = s.id
		JOIN buildings b ON b.id = l.building_id JOIN units u ON u.id = l.unit_id WHERE s.id = ?`), gen.SubscriberID(1, 0)).
		Scan(&first, &last, &email, &phone, &number, &street, &unit)
	if err != nil {
		return nil, fmt.Errorf("read generated subscriber: %w", err)
	}
	return [][2]string{{"name", first + " " + last}, {"e-mail", email}, {"phone digits", search.DigitsOnly(phone)},
		{"customer number", number}, {"address", street}, {"unit", unit + " " + street}}, nil
}

func measure(ctx context.Context, o options, bin, engine, dbURL, ceilingURL string) (*engineResult, error) {
	var kinds [][2]string
	if o.runs("search") || o.runs("mix") || o.runs("ops") {
		var err error
		if kinds, err = queryKinds(ctx, dbURL); err != nil {
			return nil, err
		}
	}
	srv, ready, err := startServe(ctx, o, bin, engine, dbURL)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	res := &engineResult{engine: engine, ready: ready}
	logf("%s: ready in %s", engine, ready)
	if err := settle(ctx, dbURL); err != nil {
		return nil, err
	}
	key := http.Header{"X-Api-Key": {gen.AgentKey(1)}}

	if o.runs("search") {
		measureSearch(o, srv, res, kinds, key)
	}
	if o.runs("ops") {
		if err := measureOps(ctx, o, bin, dbURL, srv, res, kinds); err != nil {
			return nil, fmt.Errorf("operations surface: %w", err)
		}
	}
	if o.runs("me") {
		if err := measureMe(o, srv, res, engine, ceilingURL); err != nil {
			return nil, err
		}
	}
	if o.runs("orders") {
		phases, err := placeOrders(ctx, o, srv, dbURL)
		if err != nil {
			return nil, err
		}
		if err := timeStages(ctx, dbURL, phases); err != nil {
			return nil, fmt.Errorf("order stages: %w", err)
		}
		res.orders = phases
		for _, ph := range res.orders {
			res.scenarios = append(res.scenarios, ph.intake)
			logf("%s: %s: %.0f/s p99 %s; to provisioning.completed p50 %s p99 %s, %.0f events/s", engine, ph.intake.name,
				ph.intake.rps(), ph.intake.p99, ph.toEvent.p50, ph.toEvent.p99, ph.toEvent.rps())
		}
	}
	if o.runs("mix") {
		if err := measureMix(ctx, o, srv, res, dbURL, kinds[0][1], key); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// searchURL is agent search's URL for q on the service at base, a page of 10.
func searchURL(base, q string) string {
	return base + "/partner/agent/customers/search?limit=10&q=" + url.QueryEscape(q)
}

// measureSearch runs agent search, each kind with 1 and 8 clients, sampling RSS throughout.
func measureSearch(o options, srv *server, res *engineResult, kinds [][2]string, key http.Header) {
	engine := res.engine
	var maxRSS atomic.Int64
	stopRSS := sampleRSS(srv.cmd.Process.Pid, 50*time.Millisecond, &maxRSS)
	for _, k := range kinds {
		u := searchURL(srv.base, k[1])
		for _, clients := range []int{1, 8} {
			r := load(clients, o.duration, func(c *http.Client, _ int64) (bool, error) { return true, get(c, u, key) })
			r.name = "agent search: " + k[0]
			res.scenarios = append(res.scenarios, r)
			logf("%s: %s ×%d: p50 %s p99 %s %.0f/s", engine, r.name, clients, r.p50, r.p99, r.rps())
		}
	}
	stopRSS()
	res.maxRSSKB = maxRSS.Load()
}

// measureMe runs GET /partner/subscriber/me with a JWT, next to the bare handler in the same run.
func measureMe(o options, srv *server, res *engineResult, engine, ceilingURL string) error {
	tok, err := subscriberToken(0)
	if err != nil {
		return err
	}
	auth := http.Header{"Authorization": {"Bearer " + tok}}
	me := load(8, o.duration, func(c *http.Client, _ int64) (bool, error) {
		return true, get(c, srv.base+"/partner/subscriber/me", auth)
	})
	me.name, me.wrkRPS = "GET /partner/subscriber/me", wrk(srv.base+"/partner/subscriber/me", auth, o.duration)
	res.scenarios = append(res.scenarios, me)
	res.ceiling = load(8, o.duration, func(c *http.Client, _ int64) (bool, error) { return true, get(c, ceilingURL, nil) })
	res.ceiling.name, res.ceiling.wrkRPS = "bare net/http JSON handler (ceiling)", wrk(ceilingURL, nil, o.duration)
	logf("%s: /me %.0f/s, ceiling %.0f/s", engine, me.rps(), res.ceiling.rps())
	return nil
}

// settle waits until the service's background jobs that were due at start (a sweep's bill run,
// say) have run, so the scenarios measure requests, not a job competing for the cores.
func settle(ctx context.Context, dbURL string) error {
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return err
	}
	defer st.Close()
	start, idle := time.Now(), 0
	for idle < 3 {
		var busy int
		err := rawdb.Writer(st).QueryRowContext(ctx, `SELECT COUNT(*) FROM river_job WHERE state IN ('available', 'running')`).Scan(&busy)
		if err != nil {
			return fmt.Errorf("settle: %w", err)
		}
		idle++
		if busy > 0 {
			idle = 0
			logf("waiting for %d background jobs (%s)", busy, time.Since(start).Round(time.Second))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
	return nil
}

// freePorts are the generated vacant first-line ports no earlier run took, at most
// o.orders + o.warmup.
func freePorts(ctx context.Context, dbURL string, o options) ([]string, error) {
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	rows, err := rawdb.Writer(st).QueryContext(ctx, `SELECT p.location_hash FROM ports p JOIN subscriptions s ON s.port_id = p.id
		WHERE s.source <> 'partner_api' AND p.location_hash IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("ports taken: %w", err)
	}
	defer rows.Close()
	taken := map[string]bool{}
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, err
		}
		taken[h] = true
	}
	var out []string
	for _, h := range gen.VacantPorts(1, o.perProvider()) {
		if !taken[h] && len(out) < o.orders+o.warmup {
			out = append(out, h)
		}
	}
	return out, rows.Err()
}
