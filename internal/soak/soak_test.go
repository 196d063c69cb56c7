// Package soak drives a bounded mixed load against the real subprov binary on loopback and
// fails on any error answer or on growth of memory or goroutines. It runs only when given a
// duration:
//
//	go test ./internal/soak -run TestSoak -soak.duration=5m -timeout 10m
package soak

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/proctest"
	"github.com/subprov/subprov/internal/testdb"
)

var (
	duration = flag.Duration("soak.duration", 0, "how long to drive load (0: skip the soak)")
	rate     = flag.Int("soak.rate", 40, "requests per second, spread over the operations")
	engine   = flag.String("soak.engine", "sqlite", "database engine: sqlite or postgres")
)

// Growth tolerances between the first and the last third of the run (after warm-up): the
// median of the last third may exceed the first third's by at most this much.
const (
	rssGrowthFactor   = 1.25     // 25 %
	rssGrowthSlack    = 24 << 20 // plus 24 MiB (page cache and pools settling)
	goroutineGrowth   = 15       // goroutines (in-flight requests and jobs come and go)
	suites            = 300      // suites to order into; later orders replay earlier ones
	keys              = 16       // API keys; requests take them in turn (per-key rate limits)
	clients           = 4        // concurrent clients
	warmupFraction    = 0.1      // share of the run not judged for growth
	sampleInterval    = time.Second
	maxErrorsReported = 10
)

// TestSoak: orders, GET /me, agent search, serviceability check, autocomplete and suites at a
// fixed rate for the given duration; every answer must be 2xx, and neither RSS nor goroutines
// may grow between the first and the last third.
func TestSoak(t *testing.T) {
	if *duration <= 0 {
		t.Skip("set -soak.duration (for example 5m) to run the soak")
	}
	bin := proctest.Build(t)
	w := proctest.NewWorld(suites, keys)
	p := proctest.NewProcess(t, bin, testdb.URL(t, *engine), w.Write(t))
	p.Start()
	ctx := context.Background()
	c := &proctest.Client{HTTP: &http.Client{Timeout: 10 * time.Second}}
	me, err := c.Login(ctx, p.URL, "/partner/subscriber/auth/login", w.Subscriber[0], w.Subscriber[1])
	if err != nil {
		t.Fatal(err)
	}
	ops := operations(p.URL, w, me)

	var (
		mu     sync.Mutex
		counts = map[string]int{}
		errs   []string
		wg     sync.WaitGroup
	)
	work := make(chan int)
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range work {
				op := ops[n%len(ops)]
				method, path, header, body := op.request(n / len(ops))
				res, err := c.Do(ctx, method, path, header, body)
				mu.Lock()
				counts[op.name]++
				switch {
				case err != nil:
					errs = append(errs, fmt.Sprintf("%s: %v", op.name, err))
				case res.Status < 200 || res.Status > 299:
					errs = append(errs, fmt.Sprintf("%s: %s", op.name, res))
				}
				mu.Unlock()
			}
		}()
	}
	samples := make(chan []sample, 1)
	stop := make(chan struct{})
	go func() { samples <- sampleMetrics(t, c, p.URL, stop) }()

	tick := time.NewTicker(time.Second / time.Duration(*rate))
	end := time.Now().Add(*duration)
	for n := 0; time.Now().Before(end); n++ {
		<-tick.C
		work <- n
	}
	tick.Stop()
	close(work)
	wg.Wait()
	close(stop)
	got := <-samples

	t.Logf("requests by operation: %v", counts)
	if len(errs) > 0 {
		t.Errorf("%d error answers, first: %s", len(errs), strings.Join(errs[:min(len(errs), maxErrorsReported)], "\n  "))
	}
	checkGrowth(t, got)
}

// operation is one kind of request; request builds its n-th instance.
type operation struct {
	name    string
	request func(n int) (method, url string, header map[string]string, body any)
}

func operations(base string, w *proctest.World, me map[string]string) []operation {
	get := func(path string, header map[string]string) (string, string, map[string]string, any) {
		return "GET", base + path, header, nil
	}
	return []operation{
		{"order", func(n int) (string, string, map[string]string, any) {
			return "POST", base + "/partner/provisioning/provider-initiated", w.Key(n), w.Order(n % suites)
		}},
		{"me", func(int) (string, string, map[string]string, any) { return get("/partner/subscriber/me", me) }},
		{"agent search", func(n int) (string, string, map[string]string, any) {
			return get("/partner/agent/customers/search?q="+url.QueryEscape(fmt.Sprintf("crash%d", n%suites)), w.Key(n))
		}},
		{"serviceability check", func(n int) (string, string, map[string]string, any) {
			return "POST", base + "/partner/serviceability/check", w.Key(n), map[string]string{"address": w.Street + ", Montréal QC H3C 2B5"}
		}},
		{"autocomplete", func(n int) (string, string, map[string]string, any) {
			return get("/partner/serviceability/autocomplete?q="+url.QueryEscape("500 Rue Cr"), w.Key(n))
		}},
		{"me", func(int) (string, string, map[string]string, any) { return get("/partner/subscriber/me", me) }},
		{"suites", func(n int) (string, string, map[string]string, any) {
			return get("/partner/serviceability/units?building_id="+w.BuildingID, w.Key(n))
		}},
		{"agent search", func(n int) (string, string, map[string]string, any) {
			return get("/partner/agent/customers/search?q=ada.crash", w.Key(n))
		}},
	}
}

// sample is one reading of the process's size.
type sample struct {
	rss, goroutines float64
}

// sampleMetrics reads /metrics every second until stop closes.
func sampleMetrics(t *testing.T, c *proctest.Client, base string, stop <-chan struct{}) []sample {
	var out []sample
	tick := time.NewTicker(sampleInterval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return out
		case <-tick.C:
		}
		res, err := c.Do(context.Background(), "GET", base+"/metrics", nil, nil)
		if err != nil || res.Status != http.StatusOK {
			t.Errorf("metrics: %v %v", res, err)
			continue
		}
		m := parseMetrics(res.Body)
		out = append(out, sample{rss: m["process_resident_memory_bytes"], goroutines: m["go_goroutines"]})
	}
}

// parseMetrics reads the unlabelled samples of a Prometheus text exposition.
func parseMetrics(b []byte) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || strings.HasPrefix(name, "#") || strings.Contains(name, "{") {
			continue
		}
		if v, err := strconv.ParseFloat(value, 64); err == nil {
			out[name] = v
		}
	}
	return out
}

// checkGrowth compares the medians of the first and the last third after warm-up.
func checkGrowth(t *testing.T, samples []sample) {
	t.Helper()
	samples = samples[int(float64(len(samples))*warmupFraction):]
	if len(samples) < 6 {
		t.Fatalf("only %d samples after warm-up: run longer", len(samples))
	}
	third := len(samples) / 3
	first, last := samples[:third], samples[len(samples)-third:]
	median := func(s []sample, f func(sample) float64) float64 {
		v := make([]float64, len(s))
		for i := range s {
			v[i] = f(s[i])
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	rss := func(s sample) float64 { return s.rss }
	gor := func(s sample) float64 { return s.goroutines }
	r0, r1 := median(first, rss), median(last, rss)
	g0, g1 := median(first, gor), median(last, gor)
	t.Logf("RSS %.1f MiB -> %.1f MiB, goroutines %.0f -> %.0f (medians of the first and last third, %d samples)",
		r0/(1<<20), r1/(1<<20), g0, g1, len(samples))
	if r0 == 0 || g0 == 0 {
		t.Fatal("/metrics lacks process_resident_memory_bytes or go_goroutines")
	}
	if r1 > r0*rssGrowthFactor+rssGrowthSlack {
		t.Errorf("RSS grew from %.1f MiB to %.1f MiB (tolerance x%.2f + %d MiB)", r0/(1<<20), r1/(1<<20), rssGrowthFactor, rssGrowthSlack>>20)
	}
	if g1 > g0+goroutineGrowth {
		t.Errorf("goroutines grew from %.0f to %.0f (tolerance +%d)", g0, g1, goroutineGrowth)
	}
}
