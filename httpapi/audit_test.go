package httpapi_test

import (
	"context"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/store"
)

// An operator's action is in the audit log with who did it, from which request and address,
// and why; a provider's operator reads its own provider's entries only; the log pages with a
// cursor, and a bad limit or cursor is a 422 naming it.
func TestAuditLogThroughTheAPI(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/subscription/" + marieLine + "/cancel", Headers: op,
			Body: map[string]string{"end_date": "2030-01-31", "reason": "moving"}})
		if res.Status != 200 {
			t.Fatalf("cancel: %d %s", res.Status, res.Raw)
		}
		requestID := res.Header.Get("X-Request-Id")

		log := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?object_id=" + marieLine + "&action=subscription.cancelled", Headers: op})
		entries, _ := log.JSON["entries"].([]any)
		if log.Status != 200 || len(entries) != 1 {
			t.Fatalf("audit: %d %s, want the one cancellation", log.Status, log.Raw)
		}
		e := entries[0].(map[string]any)
		actor := e["actor"].(map[string]any)
		if actor["type"] != "operator" || actor["email"] != "ops@subprov.test" || actor["id"] == nil ||
			e["request_id"] != requestID || e["ip"] != "127.0.0.1" || e["provider_id"] != northwind || e["object_type"] != "subscription" {
			t.Errorf("entry %v, want the operator's cancellation from request %s at 127.0.0.1", e, requestID)
		}

		for _, tc := range []struct {
			name    string
			headers map[string]string
			sees    bool
		}{
			{"Northwind's support operator", s.OperatorAs(subprov.RoleSupport, northwind), true},
			{"Maple's admin", s.OperatorAs(subprov.RoleAdmin, mapleProvider), false},
			{"a platform viewer", s.OperatorAs(subprov.RoleViewer, ""), true},
		} {
			r := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?object_id=" + marieLine, Headers: tc.headers})
			got, _ := r.JSON["entries"].([]any)
			if r.Status != 200 || (len(got) > 0) != tc.sees {
				t.Errorf("%s: %d with %d entries, want sees=%v", tc.name, r.Status, len(got), tc.sees)
			}
		}
		if r := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit", Headers: s.OperatorAs(subprov.RoleInstaller, "")}); r.Status != 403 {
			t.Errorf("an installer reads the log: %d, want 403", r.Status)
		}

		// Paging: every entry once, newest first. The entries written before the first page
		// are each listed (one written meanwhile is newer than every page and may not be).
		before, err := store.QueryStrings(context.Background(), s.Store.R(), "audit entries", `SELECT id FROM audit_log`)
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		path := "/api/v1/audit?limit=1"
		for pages := 0; ; pages++ {
			r := s.Do(apptest.Request{Method: "GET", Path: path, Headers: op})
			if r.Status != 200 || pages > 500 {
				t.Fatalf("page %d: %d %s", pages, r.Status, r.Raw)
			}
			for _, x := range r.JSON["entries"].([]any) {
				id := x.(map[string]any)["id"].(string)
				if seen[id] {
					t.Fatalf("entry %s on two pages", id)
				}
				seen[id] = true
			}
			next, _ := r.JSON["next_cursor"].(string)
			if next == "" {
				break
			}
			path = "/api/v1/audit?limit=1&cursor=" + next
		}
		if len(before) < 2 {
			t.Errorf("%d entries, want at least 2: the cancellation and the logins", len(before))
		}
		for _, id := range before {
			if !seen[id] {
				t.Errorf("entry %s is on no page (paged through %d of %d)", id, len(seen), len(before))
			}
		}

		for _, q := range []string{"limit=0", "limit=201", "limit=ten", "cursor=not-a-cursor"} {
			r := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?" + q, Headers: op})
			if r.Status != 422 {
				t.Errorf("?%s: %d, want 422: %s", q, r.Status, r.Raw)
			}
		}
	})
}
