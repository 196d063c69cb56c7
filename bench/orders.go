package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/store"
)

// The orders scenario has three phases over one webhook receiver on loopback:
//
//   - warm-up: the first --warmup-orders orders the process takes, offered at --order-rate like
//     the next phase. The write path meets them cold (the SQLite writer reads the upper levels
//     of every index it writes from the file), and a backlog built in those seconds takes
//     several more to drain. The start is reported as a phase of its own, so that the sustained
//     rate's latency is read apart from it.
//   - at the target rate: orders offered open-loop at --order-rate (300/s), each sent at its
//     scheduled instant whatever the earlier ones are doing, so a slow service cannot slow the
//     offer down (no coordinated omission). Latencies count from the scheduled instant. This is
//     where the order → delivered provisioning.completed p99 is read: the rate is sustained
//     only if provisioning and delivery keep up with it, not just intake.
//   - at capacity: 8 clients place orders back to back, which gives the highest intake rate.
//     Provisioning and delivery then fall behind intake, so that phase's event latency is the
//     queue behind the burst and is reported for information only.

// orderPhase is one phase's figures.
type orderPhase struct {
	intake  result      // the order requests
	toEvent result      // order sent → provisioning.completed received; elapsed runs to the last event
	ids     []string    // the subscriptions the phase's orders created
	stages  orderStages // where their time to the webhook went (timeStages), once read
	cpu     *cpuUse     // where the machine's CPU went from the first order to the last webhook; nil: not known
}

// orderHook receives the provisioning.completed webhooks and times each against its order.
type orderHook struct {
	mu    sync.Mutex
	sent  map[string]time.Time // subscription id → when its order was sent
	early map[string]time.Time // events that beat their order's response
	h     *hist
	last  time.Time // the last event received
	ids   []string  // the subscriptions ordered in this phase
}

func (k *orderHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var ev struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	body, _ := io.ReadAll(r.Body)
	if json.Unmarshal(body, &ev) == nil && ev.Type == "provisioning.completed" {
		id, _ := ev.Data["subscription_id"].(string)
		now := time.Now()
		k.mu.Lock()
		if t, ok := k.sent[id]; ok {
			k.h.record(now.Sub(t))
			delete(k.sent, id)
		} else {
			k.early[id] = now
		}
		k.last = now
		k.mu.Unlock()
	}
	w.WriteHeader(200)
}

// placed notes an order's subscription id and when it was sent.
func (k *orderHook) placed(id string, sent time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.ids = append(k.ids, id)
	if t, ok := k.early[id]; ok {
		k.h.record(t.Sub(sent))
		delete(k.early, id)
		return
	}
	k.sent[id] = sent
}

// phase starts a new phase: a fresh histogram, nothing outstanding.
func (k *orderHook) phase() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.sent, k.early, k.h, k.ids = map[string]time.Time{}, map[string]time.Time{}, newHist(), nil
}

// wait returns once want events arrived or after timeout, with the histogram, the last
// arrival and the phase's subscriptions.
func (k *orderHook) wait(want int64, timeout time.Duration) (*hist, time.Time, []string) {
	deadline := time.Now().Add(timeout)
	for {
		k.mu.Lock()
		n, h, last, ids := k.h.n, k.h, k.last, k.ids
		k.mu.Unlock()
		if n >= want || time.Now().After(deadline) {
			return h, last, ids
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// receiveOrderHooks starts the webhook receiver on loopback and makes it generated provider
// 1's webhook URL; stop shuts it down.
func receiveOrderHooks(ctx context.Context, dbURL string) (hook *orderHook, stop func(), err error) {
	hook = &orderHook{}
	hook.phase()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	hs := &http.Server{Handler: hook}
	go hs.Serve(ln) //nolint:errcheck
	st, err := store.Open(ctx, dbURL)
	if err == nil {
		_, err = rawdb.Writer(st).ExecContext(ctx, st.Dialect.Rebind(`UPDATE providers SET webhook_url = ? WHERE id = ?`), "http://"+ln.Addr().String()+"/hook", gen.ProviderID(1))
		st.Close()
	}
	if err != nil {
		hs.Close()
		return nil, nil, fmt.Errorf("point the webhooks at the receiver: %w", err)
	}
	return hook, func() { hs.Close() }, nil
}

// placeOrders runs the phases of the orders scenario on free first-line ports (sim switch):
// the warm-up takes --warmup-orders of them (at most a quarter), the two measured phases half
// each of --orders more. It returns the phases in the order run, without the warm-up when
// there is none.
func placeOrders(ctx context.Context, o options, srv *server, dbURL string) (phases []orderPhase, err error) {
	ports, err := freePorts(ctx, dbURL, o)
	if err != nil {
		return nil, err
	}
	if len(ports) < 2 {
		return nil, fmt.Errorf("only %d free ports left: generate again or use --scratch", len(ports))
	}
	warm := ports[:min(o.warmup, len(ports)/4)]
	ports = ports[len(warm):]
	ports = ports[:min(len(ports), o.orders)]
	hook, stop, err := receiveOrderHooks(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer stop()
	meter, err := newCPUMeter(srv.cmd.Process.Pid, dbURL)
	if err != nil {
		return nil, err
	}
	defer meter.close()
	half := len(ports) / 2
	order := func(ports []string) func(c *http.Client, i int64, sent time.Time) error {
		return func(c *http.Client, i int64, sent time.Time) error {
			id, err := placeOrder(c, srv.base, ports[i], i)
			if err == nil {
				hook.placed(id, sent)
			}
			return err
		}
	}
	// phase runs one phase from a fresh count of the webhooks: measure places its orders, and
	// the phase ends once their webhooks arrived (or after 30 s, which the CPU figures then
	// include).
	phase := func(name, event string, measure func() result) orderPhase {
		hook.phase()
		var ph orderPhase
		var last time.Time
		ph.cpu = meter.around(ctx, func() {
			intake := measure()
			intake.name = name
			var h *hist
			h, last, ph.ids = hook.wait(intake.requests-intake.errors, 30*time.Second)
			ph.intake = intake
			ph.toEvent = result{name: event, requests: h.n, p50: h.quantile(0.5), p99: h.quantile(0.99), elapsed: intake.elapsed}
		})
		if !last.IsZero() {
			ph.toEvent.elapsed = last.Sub(ph.intake.started)
		}
		return ph
	}

	rate := o.orderRate
	if len(warm) > 0 {
		phases = append(phases, phase(
			fmt.Sprintf("provider-initiated order (direct, sim switch), warm-up: the first %d the process takes, offered at %.0f/s", len(warm), rate),
			fmt.Sprintf("order → provisioning.completed delivered, warm-up (first %d orders)", len(warm)),
			func() result { return pacedLoad(rate, len(warm), order(warm)) }))
	}
	phases = append(phases, phase(
		fmt.Sprintf("provider-initiated order (direct, sim switch), offered at %.0f/s", rate),
		fmt.Sprintf("order → provisioning.completed delivered, at %.0f/s", rate),
		func() result { return pacedLoad(rate, half, order(ports[:half])) }))
	rest := ports[half:]
	phases = append(phases, phase(
		"provider-initiated order (direct, sim switch), at capacity",
		"order → provisioning.completed delivered, at capacity (queued behind the burst)",
		func() result {
			place := order(rest)
			return load(8, time.Hour, func(c *http.Client, i int64) (bool, error) {
				if int(i) >= len(rest) {
					return false, nil
				}
				return true, place(c, i, time.Now())
			})
		}))
	return phases, nil
}

// placeOrder places order i on the port at hash, on one of the provider's store keys in turn,
// and returns the new line's id.
func placeOrder(c *http.Client, base, hash string, i int64) (string, error) {
	body, _ := json.Marshal(map[string]any{"plan_version_id": gen.PlanVersionID(1, 1), "location_hash": hash,
		"subscriber": map[string]any{"firstname": "Bench", "lastname": fmt.Sprintf("Order%d", i), "email": fmt.Sprintf("bench.order%d.%s@example.ca", i, hash),
			"phonenumber": "+1 514-555-0100"}})
	req, _ := http.NewRequest("POST", base+"/partner/provisioning/provider-initiated", bytes.NewReader(body))
	req.Header.Set("X-API-Key", gen.StoreKey(1, int(i)%gen.StoreKeys)) // orders spread across the provider's keys
	req.Header.Set("Content-Type", "application/json")
	out, err := send(c, req)
	if err != nil {
		return "", err
	}
	var got struct {
		SubscriptionID string `json:"subscription_id"`
	}
	if err := json.Unmarshal(out, &got); err != nil || got.SubscriptionID == "" {
		return "", fmt.Errorf("order: no subscription_id in %s", out)
	}
	return got.SubscriptionID, nil
}

// pacedLoad sends n requests open-loop at rate per second: request i is due at start + i/rate
// and is sent then, however many earlier ones are still waiting for their answers. Latency
// counts from the due instant, so a stall shows in full instead of slowing the offer.
func pacedLoad(rate float64, n int, do func(c *http.Client, i int64, due time.Time) error) result {
	client, closeClient := loadClient(256)
	defer closeClient()
	var errs errorCount
	var mu sync.Mutex
	h := newHist()
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < n; i++ {
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		time.Sleep(time.Until(due))
		wg.Add(1)
		go func(i int64) {
			defer wg.Done()
			err := do(client, i, due)
			d := time.Since(due)
			errs.note(err)
			mu.Lock()
			h.record(d)
			mu.Unlock()
		}(int64(i))
	}
	wg.Wait()
	r := h.summary(start, &errs)
	r.offered = rate
	return r
}
