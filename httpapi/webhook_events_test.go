package httpapi_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/store"
)

func webhookEvent(t *testing.T, s *apptest.Service, op map[string]string, id string) map[string]any {
	t.Helper()
	res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/webhook-events/" + id, Headers: op})
	if res.Status != 200 {
		t.Fatalf("GET event %s: %d %s", id, res.Status, res.Raw)
	}
	return res.JSON
}

func replay(s *apptest.Service, op map[string]string, id string) *apptest.Response {
	return s.Do(apptest.Request{Method: "POST", Path: "/api/v1/webhook-events/" + id + "/replay", Headers: op})
}

func eventIDs(res *apptest.Response) []string {
	var out []string
	list, _ := res.JSON["events"].([]any)
	for _, e := range list {
		out = append(out, e.(map[string]any)["id"].(string))
	}
	return out
}

func TestWebhookEventsListAndDetail(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := newHook(t, s, fixture.DemoWebhookSecret)
		first := s.RecordEvent(t, northwind, marieLine)
		second := s.RecordEvent(t, northwind, marieLine)
		apptest.Eventually(t, 15*time.Second, "both delivered and recorded", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM events WHERE id IN (?, ?) AND delivery_state = 'delivered'`, first, second) == 2
		})
		maple := s.RecordEvent(t, mapleProvider, marieLine) // Maple has no receiver: kept, not sent
		op := s.Operator()

		res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/webhook-events?provider_id=" + northwind + "&limit=1", Headers: op})
		if res.Status != 200 || fmt.Sprint(eventIDs(res)) != fmt.Sprint([]string{second}) || res.JSON["next_cursor"] == nil {
			t.Fatalf("first page: %d %s", res.Status, res.Raw)
		}
		ev := res.JSON["events"].([]any)[0].(map[string]any)
		last, _ := ev["last_attempt"].(map[string]any)
		if ev["status"] != "delivered" || ev["attempts"] != 1.0 || ev["provider_id"] != northwind || ev["type"] != "subscription.updated" ||
			last["status_code"] != 200.0 || last["error"] != nil {
			t.Errorf("listed event: %s", res.Raw)
		}
		next := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/webhook-events?provider_id=" + northwind + "&limit=1&cursor=" + res.JSON["next_cursor"].(string), Headers: op})
		if ids := eventIDs(next); next.Status != 200 || len(ids) != 1 || ids[0] != first {
			t.Errorf("second page: %d %s", next.Status, next.Raw)
		}

		for _, tt := range []struct {
			name, query string
			status      int
			has, hasNot []string
		}{
			{"every provider", "", 200, []string{first, second, maple}, nil},
			{"one provider", "?provider_id=" + mapleProvider, 200, []string{maple}, []string{first, second}},
			{"no endpoint", "?status=no_endpoint", 200, []string{maple}, []string{first}},
			{"delivered", "?status=delivered&type=subscription.updated", 200, []string{first, second}, []string{maple}},
			{"another type", "?type=subscription.activated", 200, nil, []string{first, maple}},
			{"failed", "?status=failed", 200, nil, []string{first, maple}},
			{"an unknown status", "?status=lost", 422, nil, nil},
			{"a bad limit", "?limit=0", 422, nil, nil},
			{"a bad cursor", "?cursor=nope", 422, nil, nil},
		} {
			res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/webhook-events" + tt.query, Headers: op})
			if res.Status != tt.status {
				t.Errorf("%s: %d %s", tt.name, res.Status, res.Raw)
				continue
			}
			ids := map[string]bool{}
			for _, id := range eventIDs(res) {
				ids[id] = true
			}
			for _, id := range tt.has {
				if !ids[id] {
					t.Errorf("%s: %s missing: %s", tt.name, id, res.Raw)
				}
			}
			for _, id := range tt.hasNot {
				if ids[id] {
					t.Errorf("%s: %s listed", tt.name, id)
				}
			}
		}

		// The detail adds the body sent and every attempt.
		d := webhookEvent(t, s, op, first)
		payload, _ := d["payload"].(map[string]any)
		history, _ := d["attempt_history"].([]any)
		if payload["id"] != first || payload["type"] != "subscription.updated" || len(history) != 1 ||
			history[0].(map[string]any)["url"] != h.srv.URL || history[0].(map[string]any)["status_code"] != 200.0 {
			t.Errorf("detail: %v", d)
		}
		if d := webhookEvent(t, s, op, maple); d["status"] != "no_endpoint" || d["last_attempt"] != nil || len(d["attempt_history"].([]any)) != 0 {
			t.Errorf("an event never sent: %v", d)
		}

		// Scope: a provider's operator sees its provider's events only.
		mapleOp := s.OperatorAs(subprov.RoleViewer, mapleProvider)
		for _, q := range []string{"", "?provider_id=" + northwind} {
			res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/webhook-events" + q, Headers: mapleOp})
			ids := eventIDs(res)
			if res.Status != 200 || (q == "" && (len(ids) != 1 || ids[0] != maple)) || (q != "" && len(ids) != 0) {
				t.Errorf("Maple's list%s: %d %s", q, res.Status, res.Raw)
			}
		}
		theirs := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/webhook-events/" + first, Headers: mapleOp})
		none := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/webhook-events/" + store.NewID(), Headers: mapleOp})
		if theirs.Status != 404 || none.Status != 404 || withoutRequestIDs(theirs.Raw) != withoutRequestIDs(none.Raw) {
			t.Errorf("another provider's event: %d %s, an unknown one: %d %s", theirs.Status, theirs.Raw, none.Status, none.Raw)
		}
	})
}

func TestWebhookEventReplay(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		h := newHook(t, s, fixture.DemoWebhookSecret)
		delivered := s.RecordEvent(t, northwind, marieLine)
		apptest.Eventually(t, 15*time.Second, "delivered", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM events WHERE id = ? AND delivery_state = 'delivered'`, delivered) == 1
		})
		op := s.Operator()
		support := s.OperatorAs(subprov.RoleSupport, northwind)

		// A role that does not replay is refused, and nothing is sent.
		for _, role := range []subprov.Role{subprov.RoleViewer, subprov.RoleBilling, subprov.RoleInstaller} {
			if res := replay(s, s.OperatorAs(role, northwind), delivered); res.Status != 403 {
				t.Errorf("replay as %s: %d %s", role, res.Status, res.Raw)
			}
		}
		if n := len(h.all()); n != 1 {
			t.Fatalf("receiver got %d deliveries, want 1", n)
		}

		// A replay is one more delivery of the same event, same id, recorded and audited.
		res := replay(s, support, delivered)
		if res.Status != 202 || res.JSON["id"] != delivered || res.JSON["status"] != "delivered" || res.JSON["attempts"] != 2.0 ||
			len(res.JSON["attempt_history"].([]any)) != 2 {
			t.Fatalf("replay: %d %s", res.Status, res.Raw)
		}
		got := h.all()
		if len(got) != 2 || got[1]["id"] != delivered || h.bad != 0 {
			t.Fatalf("receiver got %v (bad signatures or ids %d)", got, h.bad)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'webhook_event.replayed' AND subject_id = ? AND provider_id = ?`, delivered, northwind); n != 1 {
			t.Errorf("%d audit entries for the replay, want 1", n)
		}
		audit := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?object_id=" + delivered, Headers: op})
		if es, _ := audit.JSON["entries"].([]any); len(es) != 1 || es[0].(map[string]any)["action"] != "webhook_event.replayed" ||
			es[0].(map[string]any)["actor"].(map[string]any)["email"] != "support.8d0c7f2e-1a3b-4c5d-9e6f-000000000001@ops.test" {
			t.Errorf("audit: %s", audit.Raw)
		}

		// A failing receiver: the attempt is recorded, the event keeps its status.
		h.setAnswer(503)
		res = replay(s, op, delivered)
		last, _ := res.JSON["last_attempt"].(map[string]any)
		if res.Status != 202 || res.JSON["status"] != "delivered" || res.JSON["attempts"] != 3.0 || last["status_code"] != 503.0 || last["error"] == nil {
			t.Errorf("failed replay: %d %s", res.Status, res.Raw)
		}

		// A failed event a receiver accepts is delivered.
		h.setAnswer(0)
		failed := s.RecordEvent(t, northwind, marieLine)
		apptest.Eventually(t, 15*time.Second, "delivered", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM events WHERE id = ? AND delivery_state = 'delivered'`, failed) == 1
		})
		if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`UPDATE events SET delivery_state = 'failed' WHERE id = ?`), failed); err != nil {
			t.Fatal(err)
		}
		if res := replay(s, op, failed); res.Status != 202 || res.JSON["status"] != "delivered" {
			t.Errorf("replay of a failed event: %d %s", res.Status, res.Raw)
		}

		// A pending event (its receiver failing) stays in its queue whatever the replay gets.
		h.setAnswer(503)
		pending := s.RecordEvent(t, northwind, marieLine)
		apptest.Eventually(t, 15*time.Second, "first attempt failed", func() bool {
			return count(t, s, `SELECT COUNT(*) FROM events WHERE id = ? AND attempts = 1`, pending) == 1
		})
		h.setAnswer(0)
		if res := replay(s, op, pending); res.Status != 202 || res.JSON["status"] != "pending" || res.JSON["attempts"] != 2.0 {
			t.Errorf("replay of a pending event: %d %s", res.Status, res.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM events WHERE id = ? AND next_attempt_at IS NOT NULL`, pending); n != 1 {
			t.Error("the replay dropped the pending event's retry schedule")
		}

		// A provider without a receiver: 409 and nothing sent; another provider's event and an
		// unknown one: the same 404.
		maple := s.RecordEvent(t, mapleProvider, marieLine)
		before := len(h.all())
		if res := replay(s, op, maple); res.Status != 409 {
			t.Errorf("replay without a receiver: %d %s", res.Status, res.Raw)
		}
		mapleOp := s.OperatorAs(subprov.RoleSupport, mapleProvider)
		theirs, none := replay(s, mapleOp, delivered), replay(s, mapleOp, store.NewID())
		if theirs.Status != 404 || withoutRequestIDs(theirs.Raw) != withoutRequestIDs(none.Raw) {
			t.Errorf("replay of another provider's event: %d %s | %s", theirs.Status, theirs.Raw, none.Raw)
		}
		if n := len(h.all()); n != before {
			t.Errorf("refused replays sent %d deliveries", n-before)
		}
	})
}

// TestWebhookEventReplaySandbox: the sandbox provider's events replay through the same route,
// as the sandbox's own replay sends them: one attempt to the sandbox receiver, the event taking
// its outcome.
func TestWebhookEventReplaySandbox(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		rcv := newReceiver(t, sandboxSecret)
		rcv.setAnswer(500)
		res := sandboxWebhook(t, s, op, rcv.srv.URL+"/hook")
		ping, _ := res.JSON["ping"].(map[string]any)
		if res.Status != 200 || ping["delivered"] != false {
			t.Fatalf("webhook-config: %d %s", res.Status, res.Raw)
		}
		id := ping["event_id"].(string)
		if d := webhookEvent(t, s, op, id); d["status"] != "failed" || d["provider_id"] != sandboxProvider {
			t.Fatalf("the failed ping: %v", d)
		}
		rcv.setAnswer(0)
		res = replay(s, s.OperatorAs(subprov.RoleSupport, ""), id)
		if res.Status != 202 || res.JSON["status"] != "delivered" || res.JSON["attempts"] != 2.0 {
			t.Errorf("sandbox replay: %d %s", res.Status, res.Raw)
		}
		if got := rcv.all(); len(got) != 2 || got[1]["id"] != id || rcv.bad != 0 {
			t.Errorf("receiver got %v (bad %d)", got, rcv.bad)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'webhook_event.replayed' AND subject_id = ?`, id); n != 1 {
			t.Errorf("%d audit entries, want 1", n)
		}
		// The sandbox's own replay route is audited the same way.
		if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/sandbox/webhook-events/" + id + "/replay", Headers: op}); res.Status != 200 {
			t.Errorf("sandbox route replay: %d %s", res.Status, res.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'webhook_event.replayed' AND subject_id = ?`, id); n != 2 {
			t.Errorf("%d audit entries, want 2", n)
		}
	})
}
