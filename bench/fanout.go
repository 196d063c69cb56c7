package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/events"
	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

// The fan-out scenario measures webhook delivery to many slow receivers. It runs on a database
// of its own (generated with --fanout-providers providers and a few subscribers each, dropped
// afterwards) and gives every provider a receiver of its own on loopback, each on its own port
// as separate receivers would be, that takes --fanout-delay to answer.
//
// The harness records the events the way a `serve --no-workers` replica does: in its own
// transactions, through the service's events.Recorder, each with its webhooks.flush job; the
// measured `serve` runs those jobs and delivers. The events are offered open-loop at
// --fanout-rate in all, round-robin over the providers, recorded in one transaction per 10 ms
// tick. Each carries its provider's sequence number and the instant it was due, so the
// receivers check the order per provider and time the lag (due → first received) without
// asking the harness.
//
// Two phases of --fanout-duration each: every receiver answering; then provider 1's receiver
// hanging for 10 s on each request (the service's attempt timeout), where the others' lag
// must stay as it was.

// fanoutType is the type of the events the scenario records.
const fanoutType = "bench.fanout"

// fanPhase is one phase's figures.
type fanPhase struct {
	name       string
	duration   time.Duration
	offered    int64 // events recorded
	inWindow   int64 // events first received while the phase offered (the delivery rate)
	delivered  int64 // events first received by the end of the drain, the hanging receiver's excepted
	expected   int64 // events offered to the receivers that answer
	lag        *hist // due → first received, the hanging receiver's excepted
	hung       bool  // a receiver hung during the phase
	hungGot    int64 // the hanging receiver's events received (it never answers in time)
	outOfOrder int64 // events first received after a later one of their provider
	repeats    int64 // events received again (delivery is at least once)
	rssKB      [3]int64
	cpu        *cpuUse // from the phase's start to the end of its drain; nil: not known
}

func (p fanPhase) rate() float64 { return float64(p.inWindow) / p.duration.Seconds() }

// fanHooks are the providers' receivers and what they saw.
type fanHooks struct {
	delay time.Duration
	hung  atomic.Int32 // provider whose receiver hangs (0: none)

	mu         sync.Mutex
	last       map[int]int64          // provider → highest sequence number received
	seen       map[int]map[int64]bool // provider → sequence numbers received
	lag        *hist
	window     time.Time // first receipts before it count as delivered while offered
	inWindow   int64
	delivered  int64
	hungGot    int64
	outOfOrder int64
	repeats    int64
	servers    []*http.Server
}

func newFanHooks(delay time.Duration) *fanHooks {
	return &fanHooks{delay: delay, last: map[int]int64{}, seen: map[int]map[int64]bool{}, lag: newHist()}
}

func (h *fanHooks) reset(windowEnd time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lag, h.window = newHist(), windowEnd
	h.inWindow, h.delivered, h.hungGot, h.outOfOrder, h.repeats = 0, 0, 0, 0, 0
}

// fanBody is the part of an event's body the receivers read.
type fanBody struct {
	Data struct {
		Seq int64 `json:"bench_seq"`
		Due int64 `json:"bench_due_unix_nano"` // when the event was due, Unix nanoseconds
	} `json:"data"`
}

func (h *fanHooks) handler(provider int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		got := time.Now()
		var b fanBody
		raw, err := io.ReadAll(r.Body)
		if err == nil {
			err = json.Unmarshal(raw, &b)
		}
		if err != nil || b.Data.Seq == 0 {
			http.Error(w, "not a fan-out event", http.StatusBadRequest)
			return
		}
		hung := int(h.hung.Load()) == provider
		h.mu.Lock()
		switch last := h.last[provider]; {
		case h.seen[provider][b.Data.Seq]:
			h.repeats++
		case b.Data.Seq < last:
			h.outOfOrder++ // a later event of its provider came first
		default:
			h.last[provider] = b.Data.Seq
		}
		if !h.seen[provider][b.Data.Seq] {
			if h.seen[provider] == nil {
				h.seen[provider] = map[int64]bool{}
			}
			h.seen[provider][b.Data.Seq] = true
			switch {
			case hung:
				h.hungGot++
			default:
				h.delivered++
				if got.Before(h.window) {
					h.inWindow++
				}
				h.lag.record(got.Sub(time.Unix(0, b.Data.Due)))
			}
		}
		h.mu.Unlock()
		wait := h.delay
		if hung {
			wait = events.AttemptTimeout
		}
		select {
		case <-time.After(wait):
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// startFanHooks starts one receiver per provider and points each provider's webhook_url at it.
func startFanHooks(ctx context.Context, st *store.Store, providers int, delay time.Duration) (*fanHooks, error) {
	h := newFanHooks(delay)
	tx, err := rawdb.Writer(st).BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback() //nolint:errcheck
	for p := 1; p <= providers; p++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			h.close()
			return nil, err
		}
		srv := &http.Server{Handler: h.handler(p), ReadHeaderTimeout: 10 * time.Second}
		h.servers = append(h.servers, srv)
		go srv.Serve(ln) //nolint:errcheck
		if _, err := tx.ExecContext(ctx, st.Dialect.Rebind(`UPDATE providers SET webhook_url = ? WHERE id = ?`),
			"http://"+ln.Addr().String()+"/hook", gen.ProviderID(p)); err != nil {
			h.close()
			return nil, fmt.Errorf("point provider %d's webhooks at its receiver: %w", p, err)
		}
	}
	if err := tx.Commit(); err != nil {
		h.close()
		return nil, err
	}
	return h, nil
}

func (h *fanHooks) close() {
	for _, s := range h.servers {
		s.Close()
	}
}

// fanOut runs the fan-out scenario on a database of its own and removes it afterwards.
func fanOut(ctx context.Context, o options, bin, engine string) (phases []fanPhase, err error) {
	dbURL, drop, err := fanoutDatabase(ctx, o, bin, engine)
	if err != nil {
		return nil, err
	}
	defer func() {
		if dropErr := drop(); dropErr != nil {
			err = errors.Join(err, fmt.Errorf("drop the fan-out database: %w", dropErr))
		}
	}()
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	hooks, err := startFanHooks(ctx, st, o.fanProviders, o.fanDelay)
	if err != nil {
		return nil, err
	}
	defer hooks.close()
	srv, _, err := startServe(ctx, o, bin, engine+"-fanout", dbURL)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	if err := settle(ctx, dbURL); err != nil {
		return nil, err
	}
	src, err := newFanSource(ctx, st, o.fanProviders)
	if err != nil {
		return nil, err
	}
	meter, err := newCPUMeter(srv.cmd.Process.Pid, dbURL)
	if err != nil {
		return nil, err
	}
	defer meter.close()
	for _, ph := range []struct {
		name string
		hung int
	}{
		{fmt.Sprintf("%d receivers answering in %s", o.fanProviders, o.fanDelay), 0},
		{"provider 1's receiver hanging (10 s a request), the others as before", 1},
	} {
		hooks.hung.Store(int32(ph.hung))
		var res fanPhase
		cpu := meter.around(ctx, func() {
			res, err = src.phase(ctx, hooks, srv.cmd.Process.Pid, ph.name, o.fanRate, o.fanDuration, ph.hung)
		})
		res.cpu = cpu
		if err != nil {
			return phases, fmt.Errorf("%s: %w", ph.name, err)
		}
		logf("%s: fan-out, %s: %d offered, %.0f delivered/s while offered, lag p50 %s p99 %s, %d out of order",
			engine, ph.name, res.offered, res.rate(), res.lag.quantile(0.5), res.lag.quantile(0.99), res.outOfOrder)
		phases = append(phases, res)
	}
	return phases, nil
}

// fanSource records the scenario's events as a replica without workers does.
type fanSource struct {
	st        *store.Store
	rec       *events.Recorder
	providers []*subprov.Provider
	next      int64 // events recorded so far
}

func newFanSource(ctx context.Context, st *store.Store, n int) (*fanSource, error) {
	// Insert-only, as a replica's: River checks that the kind inserted is registered, but this
	// client never works a job (the measured serve does).
	q, err := jobs.New(st, jobs.Handlers{FlushWebhooks: func(context.Context, jobs.FlushWebhooks) error {
		return errors.New("the harness does not deliver webhooks")
	}}, jobs.Options{})
	if err != nil {
		return nil, err
	}
	src := &fanSource{st: st, rec: &events.Recorder{Jobs: q, Clock: clock.Real{}}}
	for p := 1; p <= n; p++ {
		prov, err := st.Provider(ctx, gen.ProviderID(p))
		if err != nil {
			return nil, fmt.Errorf("provider %d: %w", p, err)
		}
		src.providers = append(src.providers, prov)
	}
	return src, nil
}

// phase offers events at rate for d, then waits (up to 30 s) for the answering receivers to
// get every one, sampling the RSS of serve (servePID) throughout.
func (s *fanSource) phase(ctx context.Context, hooks *fanHooks, servePID int, name string, rate float64, d time.Duration, hung int) (fanPhase, error) {
	res := fanPhase{name: name, duration: d, hung: hung != 0, rssKB: [3]int64{rssKB(servePID), 0, 0}}
	start := time.Now()
	hooks.reset(start.Add(d))
	n := int64(rate * d.Seconds())
	first, P := s.next, int64(len(s.providers))
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	var rssMax atomic.Int64
	stopRSS := sampleRSS(servePID, 250*time.Millisecond, &rssMax)
	defer stopRSS()
	due := func(i int64) time.Time {
		return start.Add(time.Duration(float64(i-first) / rate * float64(time.Second)))
	}
	for s.next < first+n {
		end, now := s.next, time.Now() // record the events due by now
		for end < first+n && !due(end).After(now) {
			end++
		}
		err := s.st.InTx(ctx, func(tx *store.Tx) error {
			for i := s.next; i < end; i++ {
				p := s.providers[i%P]
				extra := map[string]any{"bench_seq": i/P + 1, "bench_due_unix_nano": due(i).UnixNano()}
				if _, err := s.rec.Record(ctx, tx, p, fanoutType, nil, extra); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("record events: %w", err)
		}
		for ; s.next < end; s.next++ {
			if int(s.next%P)+1 != hung {
				res.expected++
			}
		}
		select {
		case <-ctx.Done():
			return res, ctx.Err()
		case <-tick.C:
		}
	}
	res.offered = n
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		hooks.mu.Lock()
		done := hooks.delivered >= res.expected
		hooks.mu.Unlock()
		if done {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	hooks.mu.Lock()
	res.inWindow, res.delivered, res.lag = hooks.inWindow, hooks.delivered, hooks.lag
	res.hungGot, res.outOfOrder, res.repeats = hooks.hungGot, hooks.outOfOrder, hooks.repeats
	hooks.mu.Unlock()
	res.rssKB[1], res.rssKB[2] = rssMax.Load(), rssKB(servePID)
	if res.delivered < res.expected {
		return res, fmt.Errorf("%d of %d events reached the answering receivers within 30 s of the offer's end", res.delivered, res.expected)
	}
	return res, nil
}

// fanoutDatabase creates the scenario's database, generated with --fanout-providers providers,
// and returns its URL and how to drop it.
func fanoutDatabase(ctx context.Context, o options, bin, engine string) (dbURL string, drop func() error, err error) {
	switch engine {
	case "sqlite":
		path := filepath.Join(o.dir, "fanout.db")
		removeSQLite(path)
		dbURL = "sqlite://" + path
		drop = func() error { removeSQLite(path); return nil }
	case "postgres":
		name := "subprov_bench_fanout"
		if o.pgDB != "" {
			name = o.pgDB + "_fanout"
		}
		if dbURL, err = createPostgres(ctx, o.pgURL, name); err != nil {
			return "", nil, err
		}
		drop = func() error { return dropPostgres(context.WithoutCancel(ctx), o.pgURL, name) }
	default:
		return "", nil, fmt.Errorf("unknown engine %q", engine)
	}
	logf("%s: fan-out: generating %d providers", engine, o.fanProviders)
	cmd := subprovCmd(ctx, bin, dbURL, "gen", "--providers", strconv.Itoa(o.fanProviders), "--subscribers", "5", "--quiet")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		drop() //nolint:errcheck
		return "", nil, fmt.Errorf("fan-out: gen: %w", err)
	}
	return dbURL, drop, nil
}
