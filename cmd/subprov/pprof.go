package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"
)

// startPprof serves net/http/pprof on addr (SUBPROV_PPROF_ADDR, loopback only) for profiling
// a running process under load. Its own mux: the profiles never appear on the API listener.
// Block and mutex profiling are switched on with it (a waiting goroutine sampled per 100 µs
// waited, one mutex contention in 10), so waits on the database pool show up.
func startPprof(addr string, log *slog.Logger) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("SUBPROV_PPROF_ADDR: %w", err)
	}
	runtime.SetBlockProfileRate(100_000)
	runtime.SetMutexProfileFraction(10)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // lives as long as the process
	log.Warn("pprof listening (profiling only)", "url", "http://"+ln.Addr().String()+"/debug/pprof/")
	return nil
}
