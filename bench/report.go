package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"
)

type report struct {
	opts    options
	started time.Time
	engines []*engineResult
	notes   []string
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

func (r *report) write(path string) error {
	var b strings.Builder
	o := r.opts
	b.WriteString("# Benchmarks\n\nWritten by the load harness (`go run ./bench`); rerunning it rewrites this file. Targets are issue 9's.\n\n")
	fmt.Fprintf(&b, "## Machine\n\n- `nproc`: %d\n- memory: %s\n- Go: %s\n- date: %s\n- wrk: %s\n\n", runtime.NumCPU(), memTotal(), runtime.Version(),
		r.started.UTC().Format(time.RFC3339), wrkVersion())
	fmt.Fprintf(&b, "## Command\n\n```sh\ngo run ./bench --subscribers %d --engines %s --duration %s\n```\n\n", o.subscribers, strings.Join(o.engines, ","), o.duration)
	b.WriteString("Each scenario drives real HTTP on loopback from a Go client for the duration (latency in an HDR-style histogram, 1% buckets); " +
		"`wrk -t2 -c16` adds its own throughput figure when installed. The ceiling is a bare `net/http` JSON handler measured in the same run. " +
		"The service runs with `SUBPROV_RATE_LIMITS=0` so the figures measure the service, not its per-key limits.\n\n")
	for _, e := range r.engines {
		fmt.Fprintf(&b, "## %s, %d subscribers\n\n", e.engine, o.subscribers)
		if e.genTime > 0 {
			fmt.Fprintf(&b, "- `subprov gen`: %s\n", e.genTime.Round(100*time.Millisecond))
		} else {
			b.WriteString("- `subprov gen`: database reused from an earlier run\n")
		}
		fmt.Fprintf(&b, "- `serve` start to `/readyz` 200: %s (target ≤ 1 s)\n", ms(e.ready))
		fmt.Fprintf(&b, "- RSS under search load: %.0f MB (target ≤ 150 MB)\n\n", float64(e.maxRSSKB)/1024)
		b.WriteString("| scenario | clients | requests | errors | p50 | p99 | req/s (Go client) | req/s (wrk) |\n|---|---|---|---|---|---|---|---|\n")
		row := func(s result) {
			w := "—"
			if s.wrkRPS > 0 {
				w = fmt.Sprintf("%.0f", s.wrkRPS)
			}
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %s | %.0f | %s |\n", s.name, s.clients, s.requests, s.errors, ms(s.p50), ms(s.p99), s.rps(), w)
		}
		for _, s := range e.scenarios {
			row(s)
		}
		row(e.ceiling)
		fmt.Fprintf(&b, "| %s | — | %d | — | %s | %s | — | — |\n\n", e.ordersToEvent.name, e.ordersToEvent.requests, ms(e.ordersToEvent.p50), ms(e.ordersToEvent.p99))
		for _, s := range e.scenarios {
			if strings.HasPrefix(s.name, "GET /partner/subscriber/me") && e.ceiling.rps() > 0 {
				fmt.Fprintf(&b, "- `/me` throughput / ceiling (Go client): %.0f%% (target ≥ 40%%)", 100*s.rps()/e.ceiling.rps())
				if s.wrkRPS > 0 && e.ceiling.wrkRPS > 0 {
					fmt.Fprintf(&b, "; with wrk: %.0f%%", 100*s.wrkRPS/e.ceiling.wrkRPS)
				}
				b.WriteString("\n")
			}
		}
		b.WriteString("\n")
	}
	for _, n := range r.notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	if extra, err := os.ReadFile("bench/NOTES.md"); err == nil {
		b.WriteString("\n" + string(extra))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func memTotal() string {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "MemTotal:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "MemTotal:"))
		}
	}
	return "unknown"
}

func wrkVersion() string {
	out, _ := exec.Command("wrk", "--version").CombinedOutput()
	if first, _, _ := strings.Cut(string(out), "\n"); strings.HasPrefix(first, "wrk") {
		return strings.TrimSpace(first)
	}
	return "not installed (Go client figures only)"
}
