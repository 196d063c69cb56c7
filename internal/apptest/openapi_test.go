package apptest

import (
	"net/http"
	"strings"
	"testing"
)

// TestContractCheck: the check finds each kind of difference between an answer and the
// document, and passes what the document allows.
func TestContractCheck(t *testing.T) {
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	htmlHeader := http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	tests := []struct {
		name         string
		method, path string
		status       int
		header       http.Header
		body         string
		want         string // "" when the answer matches
	}{
		{"a matching answer", "GET", "/healthz", 200, jsonHeader, `{"status":"ok"}`, ""},
		{"a missing required field", "GET", "/healthz", 200, jsonHeader, `{}`, `missing required "status"`},
		{"a wrong type", "GET", "/healthz", 200, jsonHeader, `{"status":1}`, "want type string"},
		{"a status the document leaves out", "GET", "/healthz", 418, jsonHeader, `{}`, "status 418 is not in the document"},
		{"a method the document leaves out", "DELETE", "/healthz", 200, jsonHeader, `{}`, "lists no DELETE"},
		{"a 405 at a documented path", "DELETE", "/healthz", 405, jsonHeader, `{}`, ""},
		{"a path the document does not list", "GET", "/nowhere", 404, jsonHeader, `{}`, ""},
		{"a content type the document does not list", "GET", "/healthz", 200, htmlHeader, `<p>ok</p>`, `content type "text/html"`},
		{"a page checked for its content type only", "GET", "/docs", 200, htmlHeader, `<p>anything</p>`, ""},
		{"a literal segment wins over a parameter", "POST", "/partner/location/details", 401, jsonHeader, `{"detail":"x"}`, ""},
		{"a query string is not part of the path", "GET", "/healthz?x=1", 200, jsonHeader, `{"status":"ok"}`, ""},
		{"an agent error without its request id", "GET", "/partner/agent/customers/search", 401, jsonHeader,
			`{"error":{"code":"unauthorized","message":"x"}}`, `missing required "request_id"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			problems := checkAgainstContract(tt.method, tt.path, tt.status, tt.header, []byte(tt.body))
			got := strings.Join(problems, "\n")
			if tt.want == "" && got != "" {
				t.Fatalf("want no problem, got %s", got)
			}
			if !strings.Contains(got, tt.want) {
				t.Fatalf("want a problem with %q, got %q", tt.want, got)
			}
		})
	}
}
