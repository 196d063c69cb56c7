package events_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/events"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// delivery is one request a receiver saw.
type delivery struct {
	ID    string
	Body  []byte
	SigOK bool
	Hdr   http.Header
}

// receiver is a real HTTP webhook receiver on 127.0.0.1. It checks each signature by
// recomputing the HMAC itself and keeps the requests in arrival order.
type receiver struct {
	secret string
	srv    *httptest.Server
	// status answers a request for event id, the n-th time that id arrives (1-based).
	status func(id string, n int) int
	delay  time.Duration

	mu    sync.Mutex
	got   []delivery
	count map[string]int
}

func newReceiver(t *testing.T, secret string, status func(id string, n int) int) *receiver {
	t.Helper()
	r := &receiver{secret: secret, status: status, count: map[string]int{}}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		m := hmac.New(sha256.New, []byte(r.secret))
		m.Write(body)
		want := "sha256=" + hex.EncodeToString(m.Sum(nil))
		id := req.Header.Get("X-Webhook-Id")
		if r.delay > 0 {
			time.Sleep(r.delay)
		}
		r.mu.Lock()
		r.count[id]++
		n := r.count[id]
		r.got = append(r.got, delivery{ID: id, Body: body, SigOK: hmac.Equal([]byte(want), []byte(req.Header.Get("X-Webhook-Signature"))), Hdr: req.Header.Clone()})
		r.mu.Unlock()
		code := http.StatusOK
		if r.status != nil {
			code = r.status(id, n)
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) URL() string { return r.srv.URL + "/hook" }

func (r *receiver) deliveries() []delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]delivery(nil), r.got...)
}

func (r *receiver) ids() []string {
	var out []string
	for _, d := range r.deliveries() {
		out = append(out, d.ID)
	}
	return out
}

// env is one provider on a fresh store with a recorder and a deliverer on a fake clock. The
// job client only inserts (nothing works jobs) unless a test builds its own.
type env struct {
	s     *store.Store
	clock *clock.Manual
	jobs  *jobs.Client
	rec   *events.Recorder
	del   *events.Deliverer
	p     *subprov.Provider
}

func newEnv(t *testing.T, s *store.Store, webhookURL string, sandbox bool) *env {
	t.Helper()
	ctx := context.Background()
	if err := jobs.Migrate(ctx, s); err != nil {
		t.Fatal(err)
	}
	// Insert only (no worker runs here), but River checks the kind is known.
	noop := func(context.Context, jobs.FlushWebhooks) error { return nil }
	jc, err := jobs.New(s, jobs.Handlers{FlushWebhooks: noop, SendSandbox: func(context.Context, jobs.SendSandboxEvent) error { return nil }}, jobs.Options{})
	if err != nil {
		t.Fatal(err)
	}
	clk := clock.NewManual(t0)
	e := &env{s: s, clock: clk, jobs: jc,
		rec: &events.Recorder{Jobs: jc, Clock: clk},
		del: &events.Deliverer{Store: s, Jobs: jc, Clock: clk, Log: slog.New(slog.DiscardHandler)},
	}
	e.p = addProvider(t, s, "prov-1", webhookURL, sandbox)
	return e
}

func addProvider(t *testing.T, s *store.Store, id, webhookURL string, sandbox bool) *subprov.Provider {
	t.Helper()
	p := &subprov.Provider{ID: id, Name: id, TimeZone: "UTC", Currency: "CAD", Sandbox: sandbox,
		WebhookSecret: "whsec-" + id, WebhookURL: webhookURL}
	err := s.InTx(context.Background(), func(tx *store.Tx) error {
		return tx.UpsertProvider(context.Background(), p, "hash-"+id, "", t0)
	})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var sub1 = &subprov.Subscription{ID: "sub-1", Status: subprov.StatusActive, ExternalSubscriptionID: "ext-1"}

// record records events of the given types in one transaction.
func (e *env) record(t *testing.T, types ...string) []*subprov.Event {
	t.Helper()
	var out []*subprov.Event
	err := e.s.InTx(context.Background(), func(tx *store.Tx) error {
		out = nil // InTx may run fn again
		for _, typ := range types {
			ev, err := e.rec.Record(context.Background(), tx, e.p, typ, sub1, nil)
			if err != nil {
				return err
			}
			out = append(out, ev)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (e *env) flush(t *testing.T) {
	t.Helper()
	if err := e.del.Flush(context.Background(), jobs.FlushWebhooks{ProviderID: e.p.ID}); err != nil {
		t.Fatal(err)
	}
}

func (e *env) event(t *testing.T, id string) *subprov.WebhookEvent {
	t.Helper()
	ev, err := e.s.Event(context.Background(), e.p.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func (e *env) attempts(t *testing.T, id string) []*subprov.WebhookAttempt {
	t.Helper()
	as, err := e.s.WebhookAttempts(context.Background(), e.p.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return as
}

// attemptedAt records a failed attempt of the event at the given time, as an earlier run
// would have.
func (e *env) attemptedAt(t *testing.T, id string, at time.Time) {
	t.Helper()
	err := e.s.InTx(context.Background(), func(tx *store.Tx) error {
		a := &subprov.WebhookAttempt{ID: store.NewID(), EventID: id, URL: e.p.WebhookURL, StatusCode: http.StatusServiceUnavailable, AttemptedAt: at}
		if err := tx.InsertWebhookAttempt(context.Background(), e.p.ID, a); err != nil {
			return err
		}
		_, err := tx.Exec(context.Background(), `UPDATE events SET attempts = attempts + 1 WHERE id = ?`, id)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) jobCount(t *testing.T) int { return e.jobsOfKind(t, jobs.FlushWebhooks{}.Kind()) }

func (e *env) jobsOfKind(t *testing.T, kind string) int {
	t.Helper()
	var n int
	if err := e.s.R().QueryRow(context.Background(), `SELECT COUNT(*) FROM river_job WHERE kind = ?`, kind).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func idsOf(evs []*subprov.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

func equal(a, b []string) bool { return strings.Join(a, ",") == strings.Join(b, ",") }

func TestFlushDeliversInSeqOrderSigned(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		rcv := newReceiver(t, "whsec-prov-1", nil)
		e := newEnv(t, s, rcv.URL(), false)
		first := e.record(t, subprov.EventSubscriptionActivated, subprov.EventProvisioningCompleted)
		e.clock.Set(t0.Add(2 * time.Second))
		second := e.record(t, subprov.EventProvisioningFailed)
		want := idsOf(append(first, second...))
		if n := e.jobCount(t); n != 3 {
			t.Fatalf("flush jobs enqueued = %d, want one per pending event", n)
		}

		e.flush(t)
		got := rcv.deliveries()
		if !equal(rcv.ids(), want) {
			t.Fatalf("delivered %v, want %v in seq order", rcv.ids(), want)
		}
		for i, d := range got {
			ev := e.event(t, want[i])
			if !d.SigOK {
				t.Errorf("event %d: signature %q does not verify", i, d.Hdr.Get("X-Webhook-Signature"))
			}
			if string(d.Body) != string(ev.Payload) {
				t.Errorf("event %d: body %s, want the stored payload %s", i, d.Body, ev.Payload)
			}
			if ct, ua := d.Hdr.Get("Content-Type"), d.Hdr.Get("User-Agent"); ct != "application/json" || ua != "subprov-webhooks" {
				t.Errorf("event %d: Content-Type %q, User-Agent %q", i, ct, ua)
			}
			if ev.DeliveryState != subprov.WebhookDelivered || ev.Attempts != 1 || ev.Seq != int64(i+1) {
				t.Errorf("event %d: state %s, attempts %d, seq %d; want delivered, 1, %d", i, ev.DeliveryState, ev.Attempts, ev.Seq, i+1)
			}
			as := e.attempts(t, ev.ID)
			if len(as) != 1 || as[0].StatusCode != 200 || as[0].Error != "" || as[0].URL != rcv.URL() {
				t.Errorf("event %d: attempts %+v, want one 200 to %s", i, as, rcv.URL())
			}
		}

		// The body is the documented envelope.
		var b struct {
			ID         string         `json:"id"`
			Type       string         `json:"type"`
			ProviderID string         `json:"provider_id"`
			Data       map[string]any `json:"data"`
		}
		if err := json.Unmarshal(got[2].Body, &b); err != nil {
			t.Fatal(err)
		}
		var raw map[string]json.RawMessage
		_ = json.Unmarshal(got[2].Body, &raw)
		if b.ID != want[2] || b.Type != subprov.EventProvisioningFailed || b.ProviderID != "prov-1" ||
			string(raw["created_at"]) != `"`+t0.Add(2*time.Second).Format(time.RFC3339)+`"` {
			t.Errorf("envelope = %s", got[2].Body)
		}
		if b.Data["subscription_id"] != "sub-1" || b.Data["external_subscription_id"] != "ext-1" || b.Data["status"] != "ACTIVE" {
			t.Errorf("data = %v", b.Data)
		}

		// Idempotent: a second run sends nothing already delivered.
		e.flush(t)
		if n := len(rcv.deliveries()); n != 3 {
			t.Fatalf("second flush sent again: %d deliveries", n)
		}
	})
}

func TestFailedAttemptStopsFlushAndRetriesInOrder(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		calls := 0
		rcv := newReceiver(t, "whsec-prov-1", func(string, int) int {
			calls++
			if calls == 1 {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		e := newEnv(t, s, rcv.URL(), false)
		evs := e.record(t, subprov.EventSubscriptionActivated, subprov.EventProvisioningCompleted)
		e1, e2 := evs[0].ID, evs[1].ID

		e.flush(t)
		if !equal(rcv.ids(), []string{e1}) {
			t.Fatalf("first flush sent %v, want only the first event (the second waits behind it)", rcv.ids())
		}
		as := e.attempts(t, e1)
		if len(as) != 1 || as[0].StatusCode != 500 || !strings.Contains(as[0].Error, "500") {
			t.Fatalf("attempts = %+v, want one failed 500", as)
		}
		r1 := e.event(t, e1)
		if r1.DeliveryState != subprov.WebhookPending || r1.Attempts != 1 || r1.NextAttemptAt == nil ||
			!r1.NextAttemptAt.After(t0) || r1.NextAttemptAt.After(t0.Add(60*time.Second)) {
			t.Fatalf("after failure: state %s, attempts %d, next %v; want pending, retry within 60 s of %v",
				r1.DeliveryState, r1.Attempts, r1.NextAttemptAt, t0)
		}
		if r2 := e.event(t, e2); r2.Attempts != 0 || r2.NextAttemptAt == nil || !r2.NextAttemptAt.Equal(*r1.NextAttemptAt) {
			t.Fatalf("second event: attempts %d, next %v; want held until %v", r2.Attempts, r2.NextAttemptAt, r1.NextAttemptAt)
		}
		if ids, err := s.ProvidersWithDueEvents(context.Background(), e.clock.Now(), time.Now(), 10); err != nil || len(ids) != 0 {
			t.Fatalf("sweep would wake %v (%v); want nothing due before the retry", ids, err)
		}

		// Not due yet: nothing is sent.
		e.clock.Set(t0.Add(10 * time.Second))
		e.flush(t)
		if n := len(rcv.deliveries()); n != 1 {
			t.Fatalf("flush before the retry time sent %d", n)
		}

		e.clock.Set(r1.NextAttemptAt.Add(time.Second))
		e.flush(t)
		if !equal(rcv.ids(), []string{e1, e1, e2}) {
			t.Fatalf("delivered %v, want first, first again, then second", rcv.ids())
		}
		for _, id := range []string{e1, e2} {
			if r := e.event(t, id); r.DeliveryState != subprov.WebhookDelivered {
				t.Errorf("event %s: %s, want delivered", id, r.DeliveryState)
			}
		}
		if as := e.attempts(t, e1); len(as) != 2 || as[1].StatusCode != 200 {
			t.Fatalf("first event attempts = %+v, want 500 then 200", as)
		}
	})
}

func TestEventFailingForThreeDaysIsGivenUp(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		var bad string
		rcv := newReceiver(t, "whsec-prov-1", func(id string, _ int) int {
			if id == bad {
				return http.StatusServiceUnavailable
			}
			return http.StatusOK
		})
		e := newEnv(t, s, rcv.URL(), false)
		evs := e.record(t, subprov.EventSubscriptionActivated, subprov.EventProvisioningCompleted)
		bad = evs[0].ID

		e.flush(t) // fails, retry scheduled
		e.clock.Set(t0.Add(events.RetryFor - time.Minute))
		e.flush(t) // still inside the window: retried again
		if r := e.event(t, bad); r.DeliveryState != subprov.WebhookPending || r.Attempts != 2 {
			t.Fatalf("inside 3 days: %s after %d attempts, want pending after 2", r.DeliveryState, r.Attempts)
		}
		e.clock.Set(t0.Add(events.RetryFor + time.Minute))
		e.flush(t)
		if r := e.event(t, bad); r.DeliveryState != subprov.WebhookFailed || r.NextAttemptAt != nil || r.Attempts != 3 {
			t.Fatalf("after 3 days: %s, next %v, attempts %d; want failed, none, 3", r.DeliveryState, r.NextAttemptAt, r.Attempts)
		}
		if r := e.event(t, evs[1].ID); r.DeliveryState != subprov.WebhookDelivered {
			t.Fatalf("the event behind the given-up one is %s, want delivered", r.DeliveryState)
		}
		if !equal(rcv.ids(), []string{bad, bad, bad, evs[1].ID}) {
			t.Fatalf("delivered %v", rcv.ids())
		}
		if as := e.attempts(t, bad); len(as) != 3 {
			t.Fatalf("%d attempts recorded, want every one (3)", len(as))
		}
	})
}

// TestEventHeldBehindAFailingOneGetsItsOwnRetries: the 3 days of retries run from an event's
// first attempt. An event that waited behind a failing one until that one was given up is
// retried when its own first attempt fails, however old it is, and delivered on the retry.
func TestEventHeldBehindAFailingOneGetsItsOwnRetries(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		var head, held string
		rcv := newReceiver(t, "whsec-prov-1", func(id string, n int) int {
			if id == head || (id == held && n == 1) {
				return http.StatusServiceUnavailable
			}
			return http.StatusOK
		})
		e := newEnv(t, s, rcv.URL(), false)
		evs := e.record(t, subprov.EventSubscriptionPendingInstall, subprov.EventSubscriptionActivated)
		head, held = evs[0].ID, evs[1].ID

		e.flush(t) // the head fails; the other waits behind it
		e.clock.Set(t0.Add(events.RetryFor + time.Minute))
		e.flush(t) // the head is given up; the held event's first attempt fails
		if r := e.event(t, head); r.DeliveryState != subprov.WebhookFailed {
			t.Fatalf("head after 3 days: %s, want failed", r.DeliveryState)
		}
		r := e.event(t, held)
		if r.DeliveryState != subprov.WebhookPending || r.Attempts != 1 || r.NextAttemptAt == nil {
			t.Fatalf("held event after its first attempt failed: %s after %d attempts, next %v; want pending with a retry",
				r.DeliveryState, r.Attempts, r.NextAttemptAt)
		}
		if d := r.NextAttemptAt.Sub(e.clock.Now()); d > time.Minute {
			t.Fatalf("first retry in %s, want within 60 s", d)
		}
		e.clock.Set(r.NextAttemptAt.Add(time.Second))
		e.flush(t)
		if r := e.event(t, held); r.DeliveryState != subprov.WebhookDelivered {
			t.Fatalf("held event after its retry: %s, want delivered", r.DeliveryState)
		}
		if !equal(rcv.ids(), []string{head, head, held, held}) {
			t.Fatalf("delivered %v, want the head twice, then the held event twice", rcv.ids())
		}
	})
}

// TestFailureAnywhereInARunKeepsTheOrder: a run of more events than a batch, whose sends
// overlap the read of the next batch, keeps strict order and sends nothing twice whichever
// event fails: early in a batch, its last, the first of the batch read ahead, the very last;
// retried later, or given up (the run then goes on past it).
func TestFailureAnywhereInARunKeepsTheOrder(t *testing.T) {
	t.Parallel()
	const n = 120 // more than two batches of 50
	tests := []struct {
		name    string
		failing int  // 1-based position of the event whose first attempt fails
		givenUp bool // the failing event's first attempt was at t0 and the run starts after RetryFor: the failure gives it up
	}{
		{"early in the first batch, retried", 3, false},
		{"the first batch's last, retried", 50, false},
		{"the first of the batch read ahead, retried", 51, false},
		{"the very last, retried", n, false},
		{"the first of the batch read ahead, given up", 51, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testdb.EachStore(t, func(t *testing.T, s *store.Store) {
				var bad string
				rcv := newReceiver(t, "whsec-prov-1", func(id string, n int) int {
					if id == bad && n == 1 {
						return http.StatusServiceUnavailable
					}
					return http.StatusOK
				})
				e := newEnv(t, s, rcv.URL(), false)
				types := make([]string, n)
				for i := range types {
					types[i] = subprov.EventProvisioningCompleted
				}
				ids := idsOf(e.record(t, types...))
				bad = ids[tt.failing-1]
				if tt.givenUp {
					e.attemptedAt(t, bad, t0)
					e.clock.Set(t0.Add(events.RetryFor + time.Minute))
				}

				e.flush(t)
				want := ids[:tt.failing]
				if tt.givenUp {
					want = ids
				}
				if !equal(rcv.ids(), want) {
					t.Fatalf("first run sent %d events, want the first %d in order", len(rcv.ids()), len(want))
				}
				if tt.givenUp {
					if r := e.event(t, bad); r.DeliveryState != subprov.WebhookFailed {
						t.Fatalf("the failing event is %s, want failed", r.DeliveryState)
					}
					return
				}
				r := e.event(t, bad)
				if r.DeliveryState != subprov.WebhookPending || r.NextAttemptAt == nil {
					t.Fatalf("the failing event is %s, next %v; want pending with a retry", r.DeliveryState, r.NextAttemptAt)
				}
				e.clock.Set(r.NextAttemptAt.Add(time.Second))
				e.flush(t)
				if want := append(append([]string(nil), ids[:tt.failing]...), ids[tt.failing-1:]...); !equal(rcv.ids(), want) {
					t.Fatalf("after the retry: %d sends, want %d: the first %d, the failed one again, then the rest in order",
						len(rcv.ids()), len(want), tt.failing)
				}
				for _, id := range ids {
					if r := e.event(t, id); r.DeliveryState != subprov.WebhookDelivered {
						t.Fatalf("event %s is %s, want delivered", id, r.DeliveryState)
					}
				}
			})
		})
	}
}

// TestAttemptsFollowTheProvidersCurrentURL: events go to the provider's webhook_url as it is
// when their attempt starts (once the run's read of it is older than providerFresh, here
// zero), not as it was when the run began, nor when they were recorded.
func TestAttemptsFollowTheProvidersCurrentURL(t *testing.T) {
	// Not parallel: it changes how long every deliverer of the package trusts its read.
	t.Cleanup(events.SetProviderFresh(0))
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		var e *env
		var first *receiver
		second := newReceiver(t, "whsec-prov-1", nil)
		first = newReceiver(t, "whsec-prov-1", func(_ string, _ int) int {
			if len(first.deliveries()) == 4 { // answering the 4th: the provider moves
				moved := *e.p
				moved.WebhookURL = second.URL()
				if err := s.InTx(context.Background(), func(tx *store.Tx) error {
					return tx.UpsertProvider(context.Background(), &moved, "hash-prov-1", "", t0)
				}); err != nil {
					t.Error(err)
				}
			}
			return http.StatusOK
		})
		e = newEnv(t, s, first.URL(), false)
		types := make([]string, 10) // one batch
		for i := range types {
			types[i] = subprov.EventProvisioningCompleted
		}
		ids := idsOf(e.record(t, types...))
		e.flush(t)
		if !equal(first.ids(), ids[:4]) || !equal(second.ids(), ids[4:]) {
			t.Fatalf("the first URL got %d events, the second %d; want 4 (until the change), then 6", len(first.ids()), len(second.ids()))
		}
	})
}

func TestRetryDelay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n    int
		want time.Duration
	}{
		{1, 30 * time.Second}, {2, time.Minute}, {3, 2 * time.Minute}, {4, 4 * time.Minute},
		{9, 128 * time.Minute}, {10, 256 * time.Minute}, {11, 6 * time.Hour}, {1000, 6 * time.Hour}, {0, 30 * time.Second},
	}
	for _, tt := range tests {
		if got := events.RetryDelay(tt.n); got != tt.want {
			t.Errorf("RetryDelay(%d) = %v, want %v", tt.n, got, tt.want)
		}
	}
}

func TestRecordStates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		url       string
		sandbox   bool
		wantState string
		wantNext  bool
		wantJobs  int
	}{
		{"production with endpoint", "https://hooks.example.com/x", false, subprov.WebhookPending, true, 1},
		{"no webhook_url", "", false, subprov.WebhookNoEndpoint, false, 0},
		{"sandbox gets one send job, no retry schedule", "https://hooks.example.com/x", true, subprov.WebhookPending, false, 1},
		{"sandbox without endpoint", "", true, subprov.WebhookNoEndpoint, false, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testdb.EachStore(t, func(t *testing.T, s *store.Store) {
				e := newEnv(t, s, tt.url, tt.sandbox)
				ev := e.record(t, subprov.EventSubscriptionPendingInstall)[0]
				r := e.event(t, ev.ID)
				if r.DeliveryState != tt.wantState || (r.NextAttemptAt != nil) != tt.wantNext || r.Sandbox != tt.sandbox {
					t.Errorf("state %s, next %v, sandbox %v; want %s, next set %v, sandbox %v",
						r.DeliveryState, r.NextAttemptAt, r.Sandbox, tt.wantState, tt.wantNext, tt.sandbox)
				}
				if n := e.jobCount(t) + e.jobsOfKind(t, jobs.SendSandboxEvent{}.Kind()); n != tt.wantJobs {
					t.Errorf("delivery jobs = %d, want %d", n, tt.wantJobs)
				}
				// Tracing is off in these tests: no trace is kept with the event.
				var trace sql.NullString
				if err := rawdb.Writer(s).QueryRow(s.Dialect.Rebind(`SELECT trace FROM events WHERE id = ?`), ev.ID).Scan(&trace); err != nil {
					t.Fatal(err)
				}
				if trace.Valid || r.Trace != "" {
					t.Errorf("trace %q (read %q) recorded with tracing off, want NULL", trace.String, r.Trace)
				}
			})
		})
	}
}

func TestRecordWithoutSubscription(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		e := newEnv(t, s, "", true)
		var ev *subprov.Event
		err := s.InTx(context.Background(), func(tx *store.Tx) error {
			var err error
			ev, err = e.rec.Record(context.Background(), tx, e.p, subprov.EventSandboxPing, nil, map[string]any{"message": "a & b", "status": "ok"})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		var b struct{ Data map[string]any }
		if err := json.Unmarshal(ev.Payload, &b); err != nil {
			t.Fatal(err)
		}
		if v, ok := b.Data["subscription_id"]; !ok || v != nil {
			t.Errorf("subscription_id = %v (present %v), want null", v, ok)
		}
		if b.Data["status"] != "ok" || b.Data["message"] != "a & b" || !strings.Contains(string(ev.Payload), "a & b") {
			t.Errorf("payload = %s", ev.Payload)
		}
	})
}

func TestRolledBackTransactionLeavesNoEventAndNoJob(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		e := newEnv(t, s, "https://hooks.example.com/x", false)
		boom := errors.New("the state change failed")
		err := s.InTx(context.Background(), func(tx *store.Tx) error {
			if _, err := e.rec.Record(context.Background(), tx, e.p, subprov.EventSubscriptionActivated, sub1, nil); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatal(err)
		}
		list, err := events.List(context.Background(), s, e.p.ID, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 0 || e.jobCount(t) != 0 {
			t.Fatalf("after rollback: %d events, %d jobs; want none", len(list), e.jobCount(t))
		}
		// Nothing of it is left to number: the next committed event is 1. SQLite numbers it
		// as it records it (its recording transactions commit one at a time); on PostgreSQL
		// it is 0 until the flusher puts it in delivery order.
		ev := e.record(t, subprov.EventSubscriptionActivated)[0]
		wantNumbered := 0
		if s.Dialect == store.Postgres {
			if r := e.event(t, ev.ID); r.Seq != 0 {
				t.Fatalf("seq before the flusher numbered it = %d, want 0", r.Seq)
			}
			wantNumbered = 1
		}
		if n, err := s.SequenceEvents(context.Background(), e.p.ID, 10); err != nil || n != wantNumbered {
			t.Fatalf("the flusher numbered %d (%v), want %d", n, err, wantNumbered)
		}
		if r := e.event(t, ev.ID); r.Seq != 1 {
			t.Fatalf("seq = %d, want 1", r.Seq)
		}
	})
}

func TestConcurrentFlushesNeverDeliverTwice(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		rcv := newReceiver(t, "whsec-prov-1", nil)
		rcv.delay = 20 * time.Millisecond // keep flushes overlapping
		e := newEnv(t, s, rcv.URL(), false)
		want := idsOf(e.record(t, "a.1", "a.2", "a.3", "a.4", "a.5"))

		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() {
				errs <- e.del.Flush(context.Background(), jobs.FlushWebhooks{ProviderID: e.p.ID})
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
		e.flush(t) // whatever a turned-away flush left (none expected) goes now
		if !equal(rcv.ids(), want) {
			t.Fatalf("delivered %v, want each of %v exactly once, in order", rcv.ids(), want)
		}
	})
}

func TestRedirectIsNotFollowed(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		var followed sync.Mutex
		hitOther := false
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/other" {
				followed.Lock()
				hitOther = true
				followed.Unlock()
				return
			}
			http.Redirect(w, r, "/other", http.StatusFound)
		}))
		defer srv.Close()
		e := newEnv(t, s, srv.URL+"/hook", false)
		ev := e.record(t, subprov.EventSubscriptionActivated)[0]
		e.flush(t)
		followed.Lock()
		defer followed.Unlock()
		if hitOther {
			t.Fatal("the redirect was followed")
		}
		as := e.attempts(t, ev.ID)
		if len(as) != 1 || as[0].StatusCode != http.StatusFound || !strings.Contains(as[0].Error, "redirects are not followed") {
			t.Fatalf("attempts = %+v, want one failed 302", as)
		}
		if r := e.event(t, ev.ID); r.DeliveryState != subprov.WebhookPending || r.NextAttemptAt == nil {
			t.Fatalf("event %s, want pending with a retry", r.DeliveryState)
		}
	})
}

// TestSafeClientRefusesInternalAddresses dials IP literals in refused networks. The refusal
// comes from the dialer's Control hook, which runs before connect(2): reaching it proves no
// packet left the host, and a bug would show as a timeout here instead of a quick refusal.
func TestSafeClientRefusesInternalAddresses(t *testing.T) {
	t.Parallel()
	c := events.SafeClient(time.Second)
	for _, u := range []string{
		"http://10.0.0.1/", "http://169.254.169.254/latest/meta-data/", "http://192.168.1.1:8080/",
		"http://172.16.5.4/", "http://100.64.0.1/", "http://0.0.0.0/", "http://[fd00::1]/", "http://[fe80::1]/",
		"http://[::ffff:10.0.0.1]/", "http://224.0.0.1/",
	} {
		start := time.Now()
		resp, err := c.Get(u)
		if err == nil {
			resp.Body.Close()
			t.Errorf("GET %s succeeded", u)
			continue
		}
		if !errors.Is(err, events.ErrAddressRefused) || !strings.Contains(err.Error(), "refused") {
			t.Errorf("GET %s: %v, want an address refusal", u, err)
		}
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("GET %s took %v: the refusal must come before any connection attempt", u, d)
		}
	}
	// Loopback is allowed: sandbox receivers run there.
	rcv := newReceiver(t, "x", nil)
	resp, err := c.Post(rcv.URL(), "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatalf("loopback receiver: %v", err)
	}
	resp.Body.Close()
}

func TestSafeClientRefusalIsRecordedAsAttempt(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		e := newEnv(t, s, "https://10.1.2.3/hook", false)
		ev := e.record(t, subprov.EventSubscriptionActivated)[0]
		e.flush(t)
		as := e.attempts(t, ev.ID)
		if len(as) != 1 || as[0].StatusCode != 0 || !strings.Contains(as[0].Error, "private") {
			t.Fatalf("attempts = %+v, want one refusal without a status", as)
		}
	})
}

func TestCheckWebhookURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url string
		ok  bool
	}{
		{"https://hooks.example.com/subprov", true},
		{"https://hooks.example.com:8443/x?y=1", true},
		{"https://93.184.216.34/hook", true},
		{"http://localhost/hook", true},
		{"http://localhost:3000/hook", true},
		{"http://127.0.0.1:9", true},
		{"http://127.0.0.1:9/hook", true},
		{"https://localhost/hook", true},
		{"http://example.com/hook", false},
		{"http://10.1.2.3/hook", false},
		{"http://[::1]/hook", false},
		{"https://10.1.2.3/hook", false},
		{"https://169.254.169.254/latest", false},
		{"https://192.168.0.10/", false},
		{"https://[fd12::1]/", false},
		{"https://[fe80::1%25eth0]/", false},
		{"https://100.64.1.1/", false},
		{"https://0.0.0.0/", false},
		{"https://167772161/", false},
		{"https://0x0a.0.0.1/", false},
		{"https://127.0.0.1:0/", false},
		{"ftp://hooks.example.com/x", false},
		{"javascript:alert(1)", false},
		{"https://", false},
		{"hooks.example.com/x", false},
		{"not a url at all", false},
		{"%%%", false},
		{"", false},
	}
	for _, tt := range tests {
		err := events.CheckWebhookURL(tt.url)
		if (err == nil) != tt.ok {
			t.Errorf("CheckWebhookURL(%q) = %v, want ok %v", tt.url, err, tt.ok)
		}
		if err != nil && !errors.Is(err, events.ErrBadWebhookURL) {
			t.Errorf("CheckWebhookURL(%q) = %v, want it to wrap ErrBadWebhookURL", tt.url, err)
		}
	}
}

func TestSendOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		status    int
		wantState string
	}{
		{"receiver accepts", http.StatusNoContent, subprov.WebhookDelivered},
		{"receiver fails: no retry", http.StatusInternalServerError, subprov.WebhookFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testdb.EachStore(t, func(t *testing.T, s *store.Store) {
				rcv := newReceiver(t, "whsec-prov-1", func(string, int) int { return tt.status })
				e := newEnv(t, s, rcv.URL(), true)
				ev := e.record(t, subprov.EventCheckoutSessionCompleted)[0]
				att, err := e.del.SendOnce(context.Background(), ev, rcv.URL(), e.p.WebhookSecret)
				if err != nil {
					t.Fatal(err)
				}
				if att.StatusCode != tt.status || att.Delivered != (tt.status < 300) {
					t.Fatalf("attempt = %+v", att)
				}
				// Flushes and time passing must not send a sandbox event again.
				e.clock.Set(t0.Add(time.Hour))
				e.flush(t)
				if err := e.del.Sweep(context.Background()); err != nil {
					t.Fatal(err)
				}
				if n := len(rcv.deliveries()); n != 1 || !rcv.deliveries()[0].SigOK {
					t.Fatalf("receiver saw %d requests, want exactly one, signed", n)
				}
				if as := e.attempts(t, ev.ID); len(as) != 1 || as[0].StatusCode != tt.status {
					t.Fatalf("attempts = %+v, want exactly one", as)
				}
				if r := e.event(t, ev.ID); r.DeliveryState != tt.wantState || r.NextAttemptAt != nil || r.Attempts != 1 {
					t.Fatalf("event %s, next %v, attempts %d; want %s, no retry, 1", r.DeliveryState, r.NextAttemptAt, r.Attempts, tt.wantState)
				}
				if e.jobCount(t) != 0 {
					t.Fatal("a sandbox event enqueued a flush")
				}
			})
		})
	}
}

func TestSendOnceRefusesBadURLWithoutTraffic(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		e := newEnv(t, s, "", true)
		ev := e.record(t, subprov.EventSandboxPing)[0]
		att, err := e.del.SendOnce(context.Background(), ev, "http://169.254.169.254/", "x")
		if err != nil {
			t.Fatal(err)
		}
		if att.Delivered || att.StatusCode != 0 || !strings.Contains(att.Error, "https://") {
			t.Fatalf("attempt = %+v, want a refusal explaining the allowed URLs", att)
		}
		if r := e.event(t, ev.ID); r.DeliveryState != subprov.WebhookFailed {
			t.Fatalf("event %s, want failed", r.DeliveryState)
		}
	})
}

func TestSweepEnqueuesOnlyDueProviders(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		e := newEnv(t, s, "https://hooks.example.com/x", false)
		addProvider(t, s, "prov-idle", "https://hooks.example.com/y", false)
		e.record(t, subprov.EventSubscriptionActivated)
		before := e.jobCount(t)
		if err := e.del.Sweep(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := e.jobCount(t); got != before+1 {
			t.Fatalf("jobs %d -> %d; want one more", before, got)
		}
		ids, err := s.ProvidersWithDueEvents(context.Background(), e.clock.Now(), time.Now(), 10)
		if err != nil || !equal(ids, []string{"prov-1"}) {
			t.Fatalf("due providers = %v (%v), want only prov-1", ids, err)
		}
	})
}

func TestListNewestFirst(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		e := newEnv(t, s, "", true)
		evs := e.record(t, "t.1", "t.2", "t.3")
		got, err := events.List(context.Background(), s, e.p.ID, 2)
		if err != nil {
			t.Fatal(err)
		}
		if !equal(idsOf(got), []string{evs[2].ID, evs[1].ID}) {
			t.Fatalf("List = %v", idsOf(got))
		}
		other, err := events.List(context.Background(), s, "prov-other", 10)
		if err != nil || len(other) != 0 {
			t.Fatalf("another provider sees %d events (%v)", len(other), err)
		}
		if _, err := events.List(context.Background(), s, e.p.ID, 0); err == nil {
			t.Fatal("limit 0 accepted")
		}
	})
}

// TestFlushJobEndToEnd records an event with a real job client and lets River run the
// webhooks.flush job it enqueued.
func TestFlushJobEndToEnd(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rcv := newReceiver(t, "whsec-prov-1", nil)
		e := newEnv(t, s, rcv.URL(), false)
		d := &events.Deliverer{Store: s, Clock: e.clock}
		jc, err := jobs.New(s, jobs.Handlers{FlushWebhooks: d.Flush}, jobs.Options{Work: true, PollInterval: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		d.Jobs = jc
		if err := jc.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer jc.Stop(context.Background())
		rec := &events.Recorder{Jobs: jc, Clock: e.clock}
		var ev *subprov.Event
		err = s.InTx(ctx, func(tx *store.Tx) error {
			ev, err = rec.Record(ctx, tx, e.p, subprov.EventSubscriptionActivated, sub1, nil)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(15 * time.Second)
		for time.Now().Before(deadline) {
			if r := e.event(t, ev.ID); r.DeliveryState == subprov.WebhookDelivered {
				if !equal(rcv.ids(), []string{ev.ID}) || !rcv.deliveries()[0].SigOK {
					t.Fatalf("receiver saw %v", rcv.ids())
				}
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("event not delivered by the job; receiver saw %v", rcv.ids())
	})
}

// TestDispatcherDeliversOnCommitInOrder: with the dispatcher running, a committed event is
// delivered without any job, at once; events recorded by concurrent writers arrive exactly
// once each, every writer's events in the order it recorded them, and the receiver's order is
// the seq order the flusher gave.
func TestDispatcherDeliversOnCommitInOrder(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		rcv := newReceiver(t, "whsec-prov-1", nil)
		e := newEnv(t, s, rcv.URL(), false)
		e.del.Start(ctx)
		defer e.del.Stop(ctx)
		e.rec.Wake = e.del.Wake

		const writers, perWriter = 4, 15
		var wg sync.WaitGroup
		recorded := make([][]string, writers)
		for w := range writers {
			wg.Go(func() {
				for i := range perWriter {
					err := s.InTx(ctx, func(tx *store.Tx) error {
						ev, err := e.rec.Record(ctx, tx, e.p, fmt.Sprintf("w%d.%d", w, i), sub1, nil)
						if err == nil {
							recorded[w] = append(recorded[w], ev.ID)
						}
						return err
					})
					if err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		deadline := time.Now().Add(10 * time.Second)
		for len(rcv.ids()) < writers*perWriter && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		got := rcv.ids()
		if len(got) != writers*perWriter {
			t.Fatalf("received %d events, want %d", len(got), writers*perWriter)
		}
		pos := map[string]int{}
		for i, id := range got {
			if _, dup := pos[id]; dup {
				t.Fatalf("event %s delivered twice", id)
			}
			pos[id] = i
		}
		for w, ids := range recorded {
			for i := 1; i < len(ids); i++ {
				if pos[ids[i]] < pos[ids[i-1]] {
					t.Fatalf("writer %d: event %d arrived before event %d", w, i, i-1)
				}
			}
		}
		// Settled: every event delivered, numbered in arrival order, one attempt each.
		for time.Now().Before(deadline) {
			if e.event(t, got[len(got)-1]).DeliveryState == subprov.WebhookDelivered {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		for i, id := range got {
			r := e.event(t, id)
			if r.DeliveryState != subprov.WebhookDelivered || r.Seq != int64(i+1) || r.Attempts != 1 || len(e.attempts(t, id)) != 1 {
				t.Fatalf("event %d: %s, seq %d, %d attempts; want delivered, seq %d, one attempt", i, r.DeliveryState, r.Seq, r.Attempts, i+1)
			}
		}
		if n := e.jobCount(t); n != 0 {
			t.Fatalf("%d flush jobs enqueued; the dispatcher needs none", n)
		}
	})
}

// TestLateCommitIsDeliveredAfterWhatWasAlreadyNumbered: an event whose transaction commits
// after a later-recorded one was delivered goes out next, numbered after it, never skipped.
// Only PostgreSQL runs two recording transactions at once.
func TestLateCommitIsDeliveredAfterWhatWasAlreadyNumbered(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		if s.Dialect != store.Postgres {
			t.Skip("SQLite's single writer commits recording transactions one at a time")
		}
		ctx := context.Background()
		rcv := newReceiver(t, "whsec-prov-1", nil)
		e := newEnv(t, s, rcv.URL(), false)
		recorded, release := make(chan string), make(chan struct{})
		done := make(chan error, 1)
		go func() {
			done <- s.InTx(ctx, func(tx *store.Tx) error {
				ev, err := e.rec.Record(ctx, tx, e.p, "late", sub1, nil)
				if err != nil {
					return err
				}
				recorded <- ev.ID
				<-release
				return nil
			})
		}()
		late := <-recorded
		later := e.record(t, "later")[0].ID // recorded second, committed first
		e.flush(t)
		if !equal(rcv.ids(), []string{later}) {
			t.Fatalf("receiver saw %v, want only the committed event", rcv.ids())
		}
		close(release)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		e.flush(t)
		if !equal(rcv.ids(), []string{later, late}) {
			t.Fatalf("receiver saw %v, want the late commit second", rcv.ids())
		}
		if a, b := e.event(t, later), e.event(t, late); a.Seq != 1 || b.Seq != 2 {
			t.Fatalf("seq %d and %d, want 1 and 2 (delivery order)", a.Seq, b.Seq)
		}
	})
}

// Events committed while a batch is being sent (numbered as recorded on SQLite, by the
// transaction that records the batch on PostgreSQL) are delivered next by the same flush, in
// commit order, each once.
func TestEventsCommittedDuringABatchFollowIt(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		var e *env
		var during []string
		var recErr error
		rcv := newReceiver(t, "whsec-prov-1", func(id string, n int) int {
			if len(during) == 0 && recErr == nil { // the first delivery: two more commits, one at a time
				for _, typ := range []string{"b.1", "b.2"} {
					if recErr != nil {
						break
					}
					recErr = s.InTx(context.Background(), func(tx *store.Tx) error {
						ev, err := e.rec.Record(context.Background(), tx, e.p, typ, sub1, nil)
						if err == nil {
							during = append(during, ev.ID)
						}
						return err
					})
				}
			}
			return http.StatusOK
		})
		e = newEnv(t, s, rcv.URL(), false)
		first := idsOf(e.record(t, "a.1", "a.2"))
		e.flush(t)
		if recErr != nil {
			t.Fatal(recErr)
		}
		want := append(first, during...)
		if len(want) != 4 || !equal(rcv.ids(), want) {
			t.Fatalf("delivered %v, want %v: the batch, then what committed while it was sent", rcv.ids(), want)
		}
		for i, id := range want {
			if ev := e.event(t, id); ev.Seq != int64(i+1) || ev.DeliveryState != subprov.WebhookDelivered {
				t.Errorf("event %d: seq %d, %s; want seq %d, delivered", i, ev.Seq, ev.DeliveryState, i+1)
			}
		}
	})
}

// holdEventWrites keeps every transaction that writes the provider's events waiting until
// release is called: on SQLite it holds the store's one writer with a transaction of its own,
// on PostgreSQL it locks the provider's event rows. Reads go on. It may run on a receiver's
// goroutine, so it reports a failure instead of ending the test.
func holdEventWrites(s *store.Store, providerID string) (release func() error, err error) {
	ctx := context.Background()
	if s.Dialect == store.Postgres {
		tx, err := rawdb.Writer(s).BeginTx(ctx, nil)
		if err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, `SELECT id FROM events WHERE provider_id = $1 FOR UPDATE`, providerID); err != nil {
			_ = tx.Rollback()
			return nil, err
		}
		return tx.Rollback, nil
	}
	held, done := make(chan struct{}), make(chan struct{})
	var once sync.Once
	errc := make(chan error, 1)
	go func() {
		errc <- s.InTx(ctx, func(*store.Tx) error {
			once.Do(func() { close(held) })
			<-done
			return nil
		})
	}()
	select {
	case <-held:
	case err := <-errc:
		return nil, fmt.Errorf("hold the writer: %w", err)
	}
	return func() error { close(done); return <-errc }, nil
}

// TestDeliveriesGoOnWhileTheirRecordingWaits: the flusher records deliveries behind its sends,
// so a slow write (held here) does not hold back the receiver's next events, up to
// MaxUnsettled delivered and not yet recorded; once the write goes through, every event is
// recorded delivered, once, in order.
func TestDeliveriesGoOnWhileTheirRecordingWaits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		events    int
		whileHeld int // deliveries the receiver gets while their recording waits
	}{
		{"fewer than the bound", 120, 120},
		{"more than the bound", events.MaxUnsettled + 30, events.MaxUnsettled},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			testdb.EachStore(t, func(t *testing.T, s *store.Store) {
				var e *env
				var release func() error
				var holdErr error
				var holdOnce sync.Once
				held := make(chan struct{})
				rcv := newReceiver(t, "whsec-prov-1", func(string, int) int {
					// The first delivery: from now on the provider's event writes wait.
					holdOnce.Do(func() {
						release, holdErr = holdEventWrites(s, e.p.ID)
						close(held)
					})
					return http.StatusOK
				})
				e = newEnv(t, s, rcv.URL(), false)
				types := make([]string, tt.events)
				for i := range types {
					types[i] = fmt.Sprintf("t.%d", i)
				}
				recorded := idsOf(e.record(t, types...))
				flushed := make(chan error, 1)
				go func() {
					flushed <- e.del.Flush(context.Background(), jobs.FlushWebhooks{ProviderID: e.p.ID})
				}()
				select {
				case <-held:
				case err := <-flushed:
					t.Fatalf("the flush ended before its first delivery: %v", err)
				}
				if holdErr != nil {
					t.Fatal(holdErr)
				}
				deadline := time.Now().Add(10 * time.Second)
				for len(rcv.ids()) < tt.whileHeld && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				time.Sleep(100 * time.Millisecond) // room for a delivery beyond the bound
				if got := len(rcv.ids()); got != tt.whileHeld {
					t.Errorf("the receiver got %d events while their recording waited, want %d", got, tt.whileHeld)
				}
				if n := countDelivered(t, s, e.p.ID); n != 0 {
					t.Errorf("%d events recorded delivered while writes were held, want 0", n)
				}
				if err := release(); err != nil {
					t.Fatal(err)
				}
				if err := <-flushed; err != nil {
					t.Fatal(err)
				}
				if !equal(rcv.ids(), recorded) {
					t.Fatalf("delivered %d events, want the %d recorded, each once, in order", len(rcv.ids()), len(recorded))
				}
				for i, id := range recorded {
					if ev := e.event(t, id); ev.DeliveryState != subprov.WebhookDelivered || ev.Seq != int64(i+1) || ev.Attempts != 1 {
						t.Fatalf("event %d: %s, seq %d, %d attempts; want delivered, seq %d, one attempt", i, ev.DeliveryState, ev.Seq, ev.Attempts, i+1)
					}
				}
			})
		})
	}
}

func countDelivered(t *testing.T, s *store.Store, providerID string) int {
	t.Helper()
	var n int
	err := s.R().QueryRow(context.Background(), `SELECT COUNT(*) FROM events WHERE provider_id = ? AND delivery_state = 'delivered'`, providerID).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
