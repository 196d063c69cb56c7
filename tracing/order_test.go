package tracing_test

import (
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

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/tracing"
)

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

// receiver is a webhook receiver on loopback that notes the id of each event type it receives
// for a subscription.
type receiver struct {
	mu  sync.Mutex
	ids map[string]string // "subscription id/type" -> event id
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
	r.ids[ev.Data.SubscriptionID+"/"+ev.Type] = ev.ID
}

func (r *receiver) event(subID, typ string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.ids[subID+"/"+typ]
}

// TestOneOrderIsOneTrace: an order placed over HTTP is one trace, read from the exporter,
// from the request through the port.provision job it enqueued (in another goroutine, picked
// up from the queue) and that job's switch write to the delivery of the webhook the job
// recorded, every span carrying the request's id; a caller's traceparent is continued.
func TestOneOrderIsOneTrace(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(tracing.Use(tp))
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
				headers := apptest.Key(fixture.DemoStoreKey)
				headers["X-Request-Id"] = requestID
				if tc.caller {
					headers["traceparent"] = fmt.Sprintf("00-%s-%s-01", callerTrace, callerSpan)
				}
				res := s.Do(apptest.Request{Method: "POST", Path: "/partner/provisioning/provider-initiated", Headers: headers,
					Body: map[string]any{"plan_version_id": "pv100000-0000-4000-8000-000000000500", "location_hash": locations[i],
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
