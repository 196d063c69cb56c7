package tracing_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/events"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/tracing"
)

// recordSpans makes the process record its spans, until t ends, and returns the recorder.
func recordSpans(t *testing.T) *tracetest.SpanRecorder {
	rec := tracetest.NewSpanRecorder()
	t.Cleanup(tracing.Use(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))))
	return rec
}

// spans are ended spans by id.
type spans map[trace.SpanID]sdktrace.ReadOnlySpan

// traceOf is the ended spans of trace id.
func traceOf(rec *tracetest.SpanRecorder, id trace.TraceID) spans {
	out := spans{}
	for _, s := range rec.Ended() {
		if s.SpanContext().TraceID() == id {
			out[s.SpanContext().SpanID()] = s
		}
	}
	return out
}

// allOf is every ended span.
func allOf(rec *tracetest.SpanRecorder) spans {
	out := spans{}
	for _, s := range rec.Ended() {
		out[s.SpanContext().SpanID()] = s
	}
	return out
}

// find returns the spans named name whose attribute key is value (any value when value is "").
func (ss spans) find(name string, key attribute.Key, value string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range ss {
		if s.Name() == name && (key == "" || attr(s, key) == value) {
			out = append(out, s)
		}
	}
	return out
}

// descends reports whether s is anc or has anc among its ancestors in ss.
func (ss spans) descends(s, anc sdktrace.ReadOnlySpan) bool {
	for s != nil {
		if s.SpanContext().SpanID() == anc.SpanContext().SpanID() {
			return true
		}
		s = ss[s.Parent().SpanID()]
	}
	return false
}

func attr(s sdktrace.ReadOnlySpan, k attribute.Key) string {
	for _, kv := range s.Attributes() {
		if kv.Key == k {
			return kv.Value.String()
		}
	}
	return ""
}

// receiver is a webhook receiver on loopback that notes the id of each event type it accepts
// for a subscription. It refuses (503) the first refuse events of type refuseType it is sent.
type receiver struct {
	mu         sync.Mutex
	ids        map[string]string // "subscription id/type" -> event id
	refuseType string
	refuse     int
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var ev struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Data struct {
			SubscriptionID string `json:"subscription_id"`
		} `json:"data"`
	}
	body, _ := io.ReadAll(req.Body)
	_ = json.Unmarshal(body, &ev)
	r.mu.Lock()
	defer r.mu.Unlock()
	if ev.Type == r.refuseType && r.refuse > 0 {
		r.refuse--
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	r.ids[ev.Data.SubscriptionID+"/"+ev.Type] = ev.ID
}

func (r *receiver) event(subID, typ string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ids[subID+"/"+typ]
}

// order places an order for the demo store at location over HTTP, with X-Request-Id
// requestID and the traceparent header when not "", and returns its line and the request's
// span.
func order(t *testing.T, s *apptest.Service, rec *tracetest.SpanRecorder, requestID, traceparent, location string) (string, sdktrace.ReadOnlySpan) {
	t.Helper()
	headers := apptest.Key(fixture.DemoStoreKey)
	headers["X-Request-Id"] = requestID
	if traceparent != "" {
		headers["traceparent"] = traceparent
	}
	res := s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/provider-initiated", Headers: headers,
		Body: map[string]any{"plan_version_id": "pv100000-0000-4000-8000-000000000500", "location_hash": location,
			"subscriber": map[string]any{"firstname": "Amélie", "lastname": "Roy", "email": "amelie.roy@example.ca", "phonenumber": "+1 514 555 0101"}}})
	subID, _ := res.JSON["subscription_id"].(string)
	if res.Status != http.StatusOK || subID == "" {
		t.Fatalf("order: %d %s", res.Status, res.Raw)
	}
	// The span ends as the handler returns, just after the answer is written.
	var request sdktrace.ReadOnlySpan
	apptest.Eventually(t, 5*time.Second, "the request's span", func() bool {
		for _, sp := range rec.Ended() {
			if sp.SpanKind() == trace.SpanKindServer && attr(sp, tracing.RequestIDKey) == requestID {
				request = sp
			}
		}
		return request != nil
	})
	return subID, request
}

// TestOneOrderIsOneTrace: an order placed over HTTP is one trace, read from the exporter,
// from the request through the port.provision job it enqueued (in another goroutine, picked
// up from the queue) and that job's switch write to the delivery of the webhook the job
// recorded, every span carrying the request's id; a caller's traceparent is continued.
func TestOneOrderIsOneTrace(t *testing.T) {
	rec := recordSpans(t)
	cases := []struct {
		name   string
		caller bool // the request has a traceparent header
	}{
		{"a new trace", false},
		{"the caller's trace continued", true},
	}
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		// The engines run at once: each has a caller trace of its own.
		callerTrace, _ := trace.TraceIDFromHex(fmt.Sprintf("4bf92f3577b34da6a3ce929d0e0e47%02x", int(s.Store.Dialect)))
		callerSpan, _ := trace.SpanIDFromHex("00f067aa0ba902b7")
		hook := &receiver{ids: map[string]string{}}
		srv := httptest.NewServer(hook)
		t.Cleanup(srv.Close)
		if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`UPDATE providers SET webhook_url = ? WHERE id = ?`), srv.URL, fixture.DemoProviderID); err != nil {
			t.Fatal(err)
		}
		// The demo building's two free ports take one order each.
		locations := []string{fixture.DemoLocationHash, "lh_7f3a9c1206"}
		for i, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				requestID := fmt.Sprintf("order-trace-%s-%d", s.Store.Dialect, i)
				traceparent := ""
				if tc.caller {
					traceparent = fmt.Sprintf("00-%s-%s-01", callerTrace, callerSpan)
				}
				subID, request := order(t, s, rec, requestID, traceparent, locations[i])
				if request.Name() != "POST /partner/provisioning/provider-initiated" || attr(request, "http.response.status_code") != "200" {
					t.Errorf("request span %q, status %s", request.Name(), attr(request, "http.response.status_code"))
				}
				if tc.caller && (request.SpanContext().TraceID() != callerTrace || request.Parent().SpanID() != callerSpan) {
					t.Errorf("request span in trace %s under %s, want the caller's %s under %s",
						request.SpanContext().TraceID(), request.Parent().SpanID(), callerTrace, callerSpan)
				}
				if !tc.caller && request.Parent().IsValid() {
					t.Errorf("request span has parent %s, want a new trace", request.Parent().SpanID())
				}
				// The job records provisioning.completed after its switch write: once that
				// event's delivery has ended, every span of the order has.
				var deliver sdktrace.ReadOnlySpan
				apptest.Eventually(t, 15*time.Second, "the delivery of provisioning.completed", func() bool {
					if ev := hook.event(subID, "provisioning.completed"); ev != "" {
						if d := allOf(rec).find("webhook.deliver", "subprov.event_id", ev); len(d) == 1 {
							deliver = d[0]
						}
					}
					return deliver != nil
				})
				ss := traceOf(rec, request.SpanContext().TraceID())
				jobs, writes, txs := ss.find("job port.provision", "", ""), ss.find("switch.write", "", ""), ss.find("sql.tx", "", "")
				if len(jobs) != 1 || len(writes) == 0 {
					t.Fatalf("the request's trace has %d port.provision jobs and %d switch writes, want 1 and some: the job is not in it",
						len(jobs), len(writes))
				}
				job, write := jobs[0], writes[0]
				rules := []struct {
					rule string
					ok   bool
				}{
					{"the job is a child of the request that enqueued it", job.Parent().SpanID() == request.SpanContext().SpanID()},
					{"the switch write is the job's", ss.descends(write, job)},
					{"the webhook delivery is in the order's trace", ss[deliver.SpanContext().SpanID()] != nil},
					{"the webhook delivery is the job's", ss.descends(deliver, job)},
					{"the request wrote in an SQL transaction span", len(txs) > 0 && ss.descends(txs[0], request)},
				}
				for _, r := range rules {
					if !r.ok {
						t.Errorf("%s: no", r.rule)
					}
				}
				for _, sp := range []sdktrace.ReadOnlySpan{request, job, write, deliver} {
					if got := attr(sp, tracing.RequestIDKey); got != requestID {
						t.Errorf("span %s: %s %q, want %q", sp.Name(), tracing.RequestIDKey, got, requestID)
					}
				}
			})
		}
	})
}

// TestEveryDeliveryContinuesTheEventsTrace: a webhook event keeps the trace it was recorded in,
// so every attempt to deliver it is in the order's trace, under the job that recorded it and
// with the order's request id, whichever process makes it and however late: an event recorded
// by a service that delivered nothing and stopped is delivered by the next one on its
// database; a receiver that refuses the first attempt gets the retry, and both are in the
// trace; an operator's replay is in it as well. The trace is never shown by the operations
// routes.
func TestEveryDeliveryContinuesTheEventsTrace(t *testing.T) {
	rec := recordSpans(t)
	cases := []struct {
		rule    string
		restart bool // the recording service delivers nothing and stops; another one delivers
		refused int  // attempts the receiver refuses before it accepts
	}{
		{"delivered by the next service on the database", true, 0},
		{"a retry after a refused attempt", false, 1},
		{"a retry by the next service on the database", true, 1},
	}
	for i, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			t.Parallel()
			testdb.EachMigrated(t, testdb.AppSchema, func(t *testing.T, u string) {
				s := apptest.Start(t, u)
				hook := &receiver{ids: map[string]string{}, refuseType: subprov.EventProvisioningCompleted, refuse: tc.refused}
				srv := httptest.NewServer(hook)
				t.Cleanup(srv.Close)
				if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`UPDATE providers SET webhook_url = ? WHERE id = ?`), srv.URL, fixture.DemoProviderID); err != nil {
					t.Fatal(err)
				}
				if tc.restart && tc.refused == 0 {
					// An answered request means the service has started its dispatcher: stop it, so
					// this service records events and delivers none.
					if res := s.Do(apptest.Request{Method: "GET", Path: "/healthz"}); res.Status != http.StatusOK {
						t.Fatalf("healthz: %d", res.Status)
					}
					s.Webhooks.Stop(context.Background())
				}
				requestID := fmt.Sprintf("event-trace-%s-%d", s.Store.Dialect, i)
				subID, request := order(t, s, rec, requestID, "", fixture.DemoLocationHash)
				var eventID string
				apptest.Eventually(t, 15*time.Second, "provisioning.completed recorded", func() bool {
					err := rawdb.Writer(s.Store).QueryRow(s.Store.Dialect.Rebind(`SELECT id FROM events WHERE subscription_id = ? AND type = ?`),
						subID, subprov.EventProvisioningCompleted).Scan(&eventID)
					return err == nil
				})
				attempts := func() []sdktrace.ReadOnlySpan { return allOf(rec).find("webhook.deliver", "subprov.event_id", eventID) }
				if tc.refused > 0 {
					apptest.Eventually(t, 15*time.Second, "the refused attempts", func() bool { return len(attempts()) == tc.refused })
				}
				if tc.restart {
					if err := s.Shutdown(); err != nil {
						t.Fatal(err)
					}
					if n := len(attempts()); n != tc.refused {
						t.Fatalf("%d attempts before the restart, want %d", n, tc.refused)
					}
					s = apptest.Start(t, u)
				}
				if tc.refused > 0 {
					s.DevClock.Advance(events.RetryDelay(tc.refused) + time.Second)
				}
				apptest.Eventually(t, 15*time.Second, "the delivery", func() bool { return hook.event(subID, subprov.EventProvisioningCompleted) != "" })
				ss := traceOf(rec, request.SpanContext().TraceID())
				jobs := ss.find("job port.provision", "", "")
				if len(jobs) != 1 {
					t.Fatalf("the order's trace has %d port.provision jobs, want 1", len(jobs))
				}
				// The receiver answers before the attempt's span ends: wait for the span too.
				apptest.Eventually(t, 15*time.Second, "the delivery's span", func() bool { return len(attempts()) >= tc.refused+1 })
				all := attempts()
				if len(all) != tc.refused+1 {
					t.Fatalf("%d delivery attempts, want %d", len(all), tc.refused+1)
				}
				for _, d := range all {
					if ss[d.SpanContext().SpanID()] == nil || !ss.descends(d, jobs[0]) {
						t.Errorf("delivery attempt (delivered %s) in trace %s, want the order's %s under its job",
							attr(d, "subprov.webhook.delivered"), d.SpanContext().TraceID(), request.SpanContext().TraceID())
					}
					if got := attr(d, tracing.RequestIDKey); got != requestID {
						t.Errorf("delivery attempt: %s %q, want %q", tracing.RequestIDKey, got, requestID)
					}
				}
				// An operator's replay is an attempt in the order's trace too, linked to the
				// replay's request.
				replayID := requestID + "-replay"
				headers := s.Operator()
				headers["X-Request-Id"] = replayID
				if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/webhook-events/" + eventID + "/replay", Headers: headers}); res.Status != http.StatusAccepted {
					t.Fatalf("replay: %d %s", res.Status, res.Raw)
				}
				var replay, replayed sdktrace.ReadOnlySpan
				apptest.Eventually(t, 15*time.Second, "the replay's spans", func() bool {
					for _, sp := range rec.Ended() {
						if sp.SpanKind() == trace.SpanKindServer && attr(sp, tracing.RequestIDKey) == replayID {
							replay = sp
						}
					}
					if all := attempts(); len(all) == tc.refused+2 {
						replayed = all[0]
						for _, a := range all {
							if a.EndTime().After(replayed.EndTime()) {
								replayed = a
							}
						}
					}
					return replay != nil && replayed != nil
				})
				ss = traceOf(rec, request.SpanContext().TraceID())
				if links := replayed.Links(); ss[replayed.SpanContext().SpanID()] == nil || attr(replayed, tracing.RequestIDKey) != requestID ||
					len(links) != 1 || links[0].SpanContext.SpanID() != replay.SpanContext().SpanID() {
					t.Errorf("replay attempt in trace %s with request id %q and links %v, want the order's, %q, linked to the replay request %s",
						replayed.SpanContext().TraceID(), attr(replayed, tracing.RequestIDKey), links, requestID, replay.SpanContext().SpanID())
				}
				// The operations routes never show the trace the event keeps.
				for _, path := range []string{"/api/v1/webhook-events/" + eventID, "/api/v1/webhook-events?provider_id=" + fixture.DemoProviderID} {
					res := s.Do(apptest.Request{Method: "GET", Path: path, Headers: s.Operator()})
					if res.Status != http.StatusOK || bytes.Contains(res.Raw, []byte(request.SpanContext().TraceID().String())) {
						t.Errorf("GET %s: %d, shows the trace: %s", path, res.Status, res.Raw)
					}
				}
			})
		})
	}
}
