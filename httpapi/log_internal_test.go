package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestInternalErrorCausesReachTheServersLogger: a 500's cause, returned or panicked, is
// logged through the logger the server was given (the JSON log in production), with the
// request id, and never shown to the caller.
func TestInternalErrorCausesReachTheServersLogger(t *testing.T) {
	tests := []struct {
		name   string
		handle func(w http.ResponseWriter, r *http.Request) error
		cause  string
	}{
		{"a handler's uncoded error", func(http.ResponseWriter, *http.Request) error {
			return fmt.Errorf("read the ledger: %w", errors.New("disk on fire"))
		}, "read the ledger: disk on fire"},
		{"a handler's panic", func(http.ResponseWriter, *http.Request) error {
			panic("the switch answered nonsense")
		}, "panic: the switch answered nonsense"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logged bytes.Buffer
			s := newServer(Deps{Log: slog.New(slog.NewJSONHandler(&logged, nil))}, newMetrics(nil))
			s.mux.Handle("GET /partner/boom", s.adapt(route{method: "GET", path: "/partner/boom", handle: tt.handle}))
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", "/partner/boom", nil)
			req.Header.Set("X-Request-Id", "req-500")
			s.handler().ServeHTTP(rec, req)
			if rec.Code != http.StatusInternalServerError || strings.Contains(rec.Body.String(), tt.cause) {
				t.Fatalf("answer %d %s, want 500 without the cause", rec.Code, rec.Body.String())
			}
			var found bool
			for _, line := range bytes.Split(bytes.TrimSpace(logged.Bytes()), []byte("\n")) {
				var entry map[string]any
				if err := json.Unmarshal(line, &entry); err != nil {
					t.Fatalf("log line %q is not JSON: %v", line, err)
				}
				if entry["msg"] == "internal error" && entry["request_id"] == "req-500" && strings.HasPrefix(fmt.Sprint(entry["err"]), tt.cause) {
					found = true
				}
			}
			if !found {
				t.Fatalf("the cause %q is not in the server's log:\n%s", tt.cause, logged.String())
			}
		})
	}
}
