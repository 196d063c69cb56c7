package httpapi

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
)

// healthJSON is the answer of the health and readiness checks; Detail only when not ready.
type healthJSON struct {
	Detail string `json:"detail,omitempty"`
	Status string `json:"status"`
}

// handleHealthz answers while the process runs.
func (s *server) handleHealthz(w http.ResponseWriter, r *http.Request) error {
	api.JSON(w, http.StatusOK, healthJSON{Status: "ok"})
	return nil
}

// handleReadyz answers 200 once the database is reachable and fully migrated.
func (s *server) handleReadyz(w http.ResponseWriter, r *http.Request) error {
	if err := s.Ready(r.Context()); err != nil {
		s.Log.Warn("not ready", "err", err)
		api.JSON(w, http.StatusServiceUnavailable, healthJSON{Status: "unavailable", Detail: "database unreachable or not migrated"})
		return nil
	}
	api.JSON(w, http.StatusOK, healthJSON{Status: "ready"})
	return nil
}

// handleMetrics serves Prometheus metrics.
func (s *server) handleMetrics(w http.ResponseWriter, r *http.Request) error {
	if s.Registry == nil {
		return subprov.NotFound("Metrics")
	}
	promhttp.HandlerFor(s.Registry, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	return nil
}
