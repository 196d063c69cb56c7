package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/store"
)

// engineResult is one engine's run.
type engineResult struct {
	engine        string
	genTime       time.Duration // 0: database reused
	ready         time.Duration
	maxRSSKB      int64
	scenarios     []result
	ceiling       result
	ordersToEvent result // latency from order response to provisioning.completed received
	bill          billResult
}

// queryKinds are one agent search of each kind, from generated subscriber 0's rows.
func queryKinds(ctx context.Context, dbURL string) ([][2]string, error) {
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var first, last, email, phone, number, street, unit string
	err = st.DB.QueryRowContext(ctx, st.Dialect.Rebind(`SELECT c.firstname, c.lastname, c.email, c.phonenumber, s.customer_number,
			b.street, u.unit_number
		FROM subscribers s JOIN contacts c ON c.subscriber_id = s.id JOIN subscriptions l ON l.subscriber_id = s.id
		JOIN buildings b ON b.id = l.building_id JOIN units u ON u.id = l.unit_id WHERE s.id = ?`), gen.SubscriberID(1, 0)).
		Scan(&first, &last, &email, &phone, &number, &street, &unit)
	if err != nil {
		return nil, fmt.Errorf("read generated subscriber: %w", err)
	}
	return [][2]string{{"name", first + " " + last}, {"e-mail", email}, {"phone digits", store.DigitsOnly(phone)},
		{"customer number", number}, {"address", street}, {"unit", unit + " " + street}}, nil
}

func measure(ctx context.Context, o options, bin, engine, dbURL, ceilingURL string) (*engineResult, error) {
	var kinds [][2]string
	if o.runs("search") {
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
	if o.runs("me") {
		if err := measureMe(o, srv, res, engine, ceilingURL); err != nil {
			return nil, err
		}
	}
	if o.runs("orders") {
		orders, toEvent, err := placeOrders(ctx, o, srv, dbURL)
		if err != nil {
			return nil, err
		}
		res.scenarios = append(res.scenarios, orders)
		res.ordersToEvent = toEvent
		logf("%s: orders %.0f/s p99 %s, to provisioning.completed p99 %s", engine, orders.rps(), orders.p99, toEvent.p99)
	}
	return res, nil
}

// measureSearch runs agent search, each kind with 1 and 8 clients, sampling RSS throughout.
func measureSearch(o options, srv *server, res *engineResult, kinds [][2]string, key http.Header) {
	engine := res.engine
	stopRSS := make(chan struct{})
	var rssWG sync.WaitGroup
	rssWG.Add(1)
	go func() {
		defer rssWG.Done()
		for {
			if kb := rssKB(srv.cmd.Process.Pid); kb > res.maxRSSKB {
				res.maxRSSKB = kb
			}
			select {
			case <-stopRSS:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	for _, k := range kinds {
		u := srv.base + "/partner/agent/customers/search?limit=10&q=" + url.QueryEscape(k[1])
		for _, clients := range []int{1, 8} {
			r := load(clients, o.duration, func(c *http.Client, _ int64) (bool, error) { return true, get(c, u, key) })
			r.name = "agent search: " + k[0]
			res.scenarios = append(res.scenarios, r)
			logf("%s: %s ×%d: p50 %s p99 %s %.0f/s", engine, r.name, clients, r.p50, r.p99, r.rps())
		}
	}
	close(stopRSS)
	rssWG.Wait()
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
		err := st.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM river_job WHERE state IN ('available', 'running')`).Scan(&busy)
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

// freePorts are the generated vacant first-line ports no earlier run took, at most o.orders.
func freePorts(ctx context.Context, dbURL string, o options) ([]string, error) {
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	rows, err := st.DB.QueryContext(ctx, `SELECT p.location_hash FROM ports p JOIN subscriptions s ON s.port_id = p.id
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
	for _, h := range gen.VacantPorts(1, o.subscribers) {
		if !taken[h] && len(out) < o.orders {
			out = append(out, h)
		}
	}
	return out, rows.Err()
}

// placeOrders places provider-initiated direct-route orders on free first-line ports (sim
// switch) from 8 clients and times, through a webhook receiver on loopback, each order's
// provisioning.completed event.
func placeOrders(ctx context.Context, o options, srv *server, dbURL string) (result, result, error) {
	ports, err := freePorts(ctx, dbURL, o)
	if err != nil {
		return result{}, result{}, err
	}
	var mu sync.Mutex
	placed := map[string]time.Time{}
	early := map[string]time.Time{} // events that beat the order's response
	delivered := newHist()
	hook := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev struct {
			Type string         `json:"type"`
			Data map[string]any `json:"data"`
		}
		body, _ := io.ReadAll(r.Body)
		if json.Unmarshal(body, &ev) == nil && ev.Type == "provisioning.completed" {
			id, _ := ev.Data["subscription_id"].(string)
			mu.Lock()
			if t, ok := placed[id]; ok {
				delivered.record(time.Since(t))
			} else {
				early[id] = time.Now()
			}
			mu.Unlock()
		}
		w.WriteHeader(200)
	})}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return result{}, result{}, err
	}
	go hook.Serve(ln) //nolint:errcheck
	defer hook.Close()
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return result{}, result{}, err
	}
	_, err = st.DB.ExecContext(ctx, st.Dialect.Rebind(`UPDATE providers SET webhook_url = ? WHERE id = ?`), "http://"+ln.Addr().String()+"/hook", gen.ProviderID(1))
	st.Close()
	if err != nil {
		return result{}, result{}, err
	}
	r := load(8, time.Hour, func(c *http.Client, i int64) (bool, error) {
		if int(i) >= len(ports) {
			return false, nil
		}
		body, _ := json.Marshal(map[string]any{"plan_version_id": gen.PlanVersionID(1, 1), "location_hash": ports[i],
			"subscriber": map[string]any{"firstname": "Bench", "lastname": fmt.Sprintf("Order%d", i), "email": fmt.Sprintf("bench.order%d@example.ca", i),
				"phonenumber": "+1 514-555-0100"}})
		req, _ := http.NewRequest("POST", srv.base+"/partner/provisioning/provider-initiated", bytes.NewReader(body))
		req.Header.Set("X-API-Key", gen.StoreKey(1, int(i)%gen.StoreKeys)) // orders spread across the provider's keys
		req.Header.Set("Content-Type", "application/json")
		res, err := c.Do(req)
		if err != nil {
			return true, err
		}
		defer res.Body.Close()
		out, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 {
			return true, fmt.Errorf("order: %d %s", res.StatusCode, out)
		}
		var got struct {
			SubscriptionID string `json:"subscription_id"`
		}
		json.Unmarshal(out, &got) //nolint:errcheck
		now := time.Now()
		mu.Lock()
		placed[got.SubscriptionID] = now
		if t, ok := early[got.SubscriptionID]; ok {
			delivered.record(max(0, t.Sub(now)))
		}
		mu.Unlock()
		return true, nil
	})
	r.name = "provider-initiated order (direct, sim switch)"
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		mu.Lock()
		n := delivered.n
		mu.Unlock()
		if n >= r.requests-r.errors {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	ev := result{name: "order → provisioning.completed delivered", requests: delivered.n, p50: delivered.quantile(0.5), p99: delivered.quantile(0.99),
		elapsed: r.elapsed}
	return r, ev, nil
}
