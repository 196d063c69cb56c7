package app

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"runtime"
	"time"
)

// servePprof serves Go's /debug/pprof/ profiles on addr (SUBPROV_PPROF_ADDR, loopback only,
// checked by config) for profiling under load; off unless set. It returns the stop function.
func servePprof(addr string, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("SUBPROV_PPROF_ADDR: %w", err)
	}
	// Block and mutex profiles too: waits on the database pools show in them.
	runtime.SetBlockProfileRate(100_000)
	runtime.SetMutexProfileFraction(10)
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln) //nolint:errcheck // Close below ends it
	log.Warn("pprof endpoints are on (SUBPROV_PPROF_ADDR): for profiling only", "addr", ln.Addr().String())
	return func() { srv.Close() }, nil
}
