package sandbox_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/servicetest"
	"github.com/subprov/subprov/store"
)

// receiver records the X-Webhook-Id of every delivery it gets.
type receiver struct {
	mu  sync.Mutex
	ids []string
	srv *httptest.Server
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.ids = append(r.ids, req.Header.Get("X-Webhook-Id"))
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.ids...)
}

// record records n ping events for provider id, in one transaction.
func record(t *testing.T, e *servicetest.Env, id string, n int) []string {
	t.Helper()
	ctx := context.Background()
	p := e.Provider(t, id)
	var ids []string
	err := e.Store.InTx(ctx, func(tx *store.Tx) error {
		for range n {
			ev, err := e.Events.RecordForSending(ctx, tx, p, subprov.EventSandboxPing, map[string]any{"message": "test"})
			if err != nil {
				return err
			}
			ids = append(ids, ev.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return ids
}

// listEventsLimit: 0 is the default of 20, 1 to 100 as asked, 101 to 200 clamped to 100,
// anything else refused before anything is read.
func listEventsLimit(t *testing.T, e *servicetest.Env) {
	ids := record(t, e, servicetest.Sandbox, 110)
	record(t, e, servicetest.Northwind, 1)
	tests := []struct {
		name  string
		limit int
		want  int
		code  string
	}{
		{"zero is the default", 0, 20, ""},
		{"one", 1, 1, ""},
		{"the maximum", 100, 100, ""},
		{"above the maximum is clamped", 101, 100, ""},
		{"the largest accepted", 200, 100, ""},
		{"above the accepted range is refused", 201, 0, "invalid/validation_error"},
		{"negative is refused", -1, 0, "invalid/validation_error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Sandbox.ListEvents(context.Background(), subprov.Everything, tt.limit)
			if servicetest.Code(err) != tt.code || len(got) != tt.want {
				t.Fatalf("ListEvents(%d) = %d events, %v; want %d, %q", tt.limit, len(got), err, tt.want, tt.code)
			}
			for _, ev := range got {
				if ev.ProviderID != servicetest.Sandbox {
					t.Fatalf("another provider's event listed: %+v", ev.Event)
				}
			}
			if tt.want > 1 && (got[0].ID != ids[len(ids)-1] || got[1].ID != ids[len(ids)-2]) {
				t.Fatalf("not newest first: %s, %s", got[0].ID, got[1].ID)
			}
		})
	}
}

// TestSetWebhookURL: a refused receiver is a validation error on webhook_url that saves and
// records nothing; an accepted one is saved and pinged once, synchronously.
func TestSetWebhookURL(t *testing.T) {
	servicetest.Each(t, func(t *testing.T, e *servicetest.Env) {
		ctx := context.Background()
		rcv := newReceiver(t)
		for _, url := range []string{"", "ftp://127.0.0.1/hook", "http://example.com/hook", "https://10.0.0.5/hook", "https://169.254.169.254/latest"} {
			_, _, err := e.Sandbox.SetWebhookURL(ctx, subprov.Everything, url)
			if ee, _ := subprov.AsError(err); servicetest.Code(err) != "invalid/validation_error" || ee.Fields["webhook_url"] == "" {
				t.Errorf("SetWebhookURL(%q) = %v, want a validation error on webhook_url", url, err)
			}
		}
		if p := e.Provider(t, servicetest.Sandbox); p.WebhookURL != "" {
			t.Fatalf("a refused URL was saved: %q", p.WebhookURL)
		}
		if evs, err := e.Sandbox.ListEvents(ctx, subprov.Everything, 0); err != nil || len(evs) != 0 {
			t.Fatalf("a refused URL recorded %d pings (%v)", len(evs), err)
		}
		p, d, err := e.Sandbox.SetWebhookURL(ctx, subprov.Everything, rcv.srv.URL+"/hook")
		if err != nil {
			t.Fatal(err)
		}
		if p.WebhookURL != rcv.srv.URL+"/hook" || e.Provider(t, servicetest.Sandbox).WebhookURL != p.WebhookURL {
			t.Fatalf("the receiver was not saved: %q", p.WebhookURL)
		}
		if d.Event.Type != subprov.EventSandboxPing || !d.Attempt.Delivered || d.Attempt.StatusCode != 200 {
			t.Fatalf("ping %+v, attempt %+v", d.Event, d.Attempt)
		}
		if got := rcv.got(); len(got) != 1 || got[0] != d.Event.ID {
			t.Fatalf("the receiver got %v, want the ping %s once", got, d.Event.ID)
		}
	})
}

// replay: the sandbox provider's own event is sent again, once, to the receiver set now;
// another provider's event is as unknown as a made-up id; with no receiver set it is a conflict.
func replay(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	own := record(t, e, servicetest.Sandbox, 1)[0]
	other := record(t, e, servicetest.Northwind, 1)[0]
	if _, err := e.Sandbox.Replay(ctx, &subprov.Operator{Role: subprov.RoleAdmin}, own); servicetest.Code(err) != "conflict/no_webhook_url" {
		t.Fatalf("replay with no receiver: %v", err)
	}
	rcv := newReceiver(t)
	if _, _, err := e.Sandbox.SetWebhookURL(ctx, subprov.Everything, rcv.srv.URL); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, id, code string
	}{
		{"the sandbox provider's event", own, ""},
		{"another provider's event is not found", other, "not_found/not_found"},
		{"an unknown event is not found", "5b0c0000-0000-4000-8000-000000000000", "not_found/not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := e.Sandbox.Replay(ctx, &subprov.Operator{Role: subprov.RoleAdmin}, tt.id)
			if servicetest.Code(err) != tt.code {
				t.Fatalf("Replay = %v, want %q", err, tt.code)
			}
			if err == nil && (d.Event.ID != tt.id || !d.Attempt.Delivered) {
				t.Fatalf("replayed %s, attempt %+v", d.Event.ID, d.Attempt)
			}
		})
	}
	if got := rcv.got(); len(got) != 2 || got[1] != own {
		t.Fatalf("the receiver got %v: want the ping, then %s once", got, own)
	}
}

// TestEvents runs the listing and replay rules on one store per engine (the store is the
// costly part); replay reads its own events by id, so the listing's many events do not disturb it.
func TestEvents(t *testing.T) {
	servicetest.EachRules(t,
		servicetest.Rule{Name: "ListEventsLimit", Test: listEventsLimit},
		servicetest.Rule{Name: "Replay", Test: replay},
	)
}
