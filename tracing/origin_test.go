package tracing_test

import (
	"context"
	"encoding/json"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/subprov/subprov/tracing"
)

// TestOriginRidesInJobMetadata: the origin a job is queued with is added to its metadata
// beside what is there, and read back into a context that continues the trace with the
// request id; off, there is no origin to add.
func TestOriginRidesInJobMetadata(t *testing.T) {
	if !tracing.OriginOf(context.Background()).IsZero() {
		t.Fatal("an origin without a span")
	}
	defer tracing.Use(sdktrace.NewTracerProvider())()
	ctx, span := tracing.Start(tracing.WithRequestID(context.Background(), "req-origin"), "test", trace.SpanKindInternal)
	defer span.End()
	o := tracing.OriginOf(ctx)
	cases := []struct {
		rule, metadata string
		keeps          string // a key of metadata still there
	}{
		{"into no metadata", "", ""},
		{"into an empty object", "{}", ""},
		{"into null", "null", ""},
		{"beside other keys", `{"output":{"n":1}}`, "output"},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			md, err := tracing.AddOrigin([]byte(tc.metadata), o)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(md, &m); err != nil {
				t.Fatalf("metadata %s: %v", md, err)
			}
			if _, ok := m[tc.keeps]; tc.keeps != "" && !ok {
				t.Fatalf("metadata %s lost %q", md, tc.keeps)
			}
			got := tracing.OriginIn(md)
			if got != o {
				t.Fatalf("origin read back %+v, want %+v", got, o)
			}
			jctx := got.Context(context.Background())
			if sc := trace.SpanContextFromContext(jctx); sc.TraceID() != span.SpanContext().TraceID() || sc.SpanID() != span.SpanContext().SpanID() {
				t.Fatalf("job context continues %v, want %v", sc, span.SpanContext())
			}
			if tracing.RequestID(jctx) != "req-origin" {
				t.Fatalf("job context request id %q", tracing.RequestID(jctx))
			}
		})
	}
	if _, err := tracing.AddOrigin([]byte("[1]"), o); err == nil {
		t.Fatal("metadata that is no object accepted")
	}
	if !tracing.OriginIn([]byte("not json")).IsZero() {
		t.Fatal("an origin read from garbage")
	}
}

// TestOriginAsText: an origin is kept as text and read back whole; the zero origin is no text
// (nothing stored with tracing off), and text that does not parse is no origin.
func TestOriginAsText(t *testing.T) {
	if got := (tracing.Origin{}).Text(); got != "" {
		t.Fatalf("zero origin as %q, want nothing", got)
	}
	o := tracing.Origin{TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceState: "k=v", RequestID: "req-1"}
	if got := tracing.ParseOrigin(o.Text()); got != o {
		t.Fatalf("read back %+v, want %+v", got, o)
	}
	for _, s := range []string{"", "not json", "[1]"} {
		if !tracing.ParseOrigin(s).IsZero() {
			t.Errorf("an origin read from %q", s)
		}
	}
}

// TestStartFromContinuesTheOrigin: work done for an origin (a webhook delivery of an event) is
// a span in the origin's trace with its request id. When the work runs inside that trace
// already (a job the trace enqueued) it is a child of the running span; when it runs in
// another trace (an operator's replay) it is a child of the origin's span and links to the
// running one with its request id; with no origin it is an ordinary child.
func TestStartFromContinuesTheOrigin(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	defer tracing.Use(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))()
	recordCtx, recording := tracing.Start(tracing.WithRequestID(context.Background(), "req-order"), "recording", trace.SpanKindInternal)
	o := tracing.OriginOf(recordCtx)
	jobCtx, job := tracing.Start(recordCtx, "job", trace.SpanKindConsumer)
	replayCtx, replay := tracing.Start(tracing.WithRequestID(context.Background(), "req-replay"), "replay", trace.SpanKindServer)
	cases := []struct {
		rule      string
		ctx       context.Context
		origin    tracing.Origin
		parent    trace.SpanContext
		requestID string
		linked    trace.SpanContext // invalid: no link
	}{
		{"run inside the origin's trace: a child of the running span", jobCtx, o, job.SpanContext(), "req-order", trace.SpanContext{}},
		{"run in another trace: a child of the origin, linked to the running span", replayCtx, o, recording.SpanContext(), "req-order", replay.SpanContext()},
		{"run in no trace: a child of the origin", context.Background(), o, recording.SpanContext(), "req-order", trace.SpanContext{}},
		{"no origin: a child of the running span", replayCtx, tracing.Origin{}, replay.SpanContext(), "req-replay", trace.SpanContext{}},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			_, span := tracing.StartFrom(tc.ctx, tc.origin, "work", trace.SpanKindClient)
			span.End()
			got := rec.Ended()[len(rec.Ended())-1]
			if got.Parent().TraceID() != tc.parent.TraceID() || got.Parent().SpanID() != tc.parent.SpanID() {
				t.Errorf("parent %s/%s, want %s/%s", got.Parent().TraceID(), got.Parent().SpanID(), tc.parent.TraceID(), tc.parent.SpanID())
			}
			if id := attr(got, tracing.RequestIDKey); id != tc.requestID {
				t.Errorf("request id %q, want %q", id, tc.requestID)
			}
			switch links := got.Links(); {
			case !tc.linked.IsValid() && len(links) != 0:
				t.Errorf("links %v, want none", links)
			case tc.linked.IsValid() && (len(links) != 1 || links[0].SpanContext.SpanID() != tc.linked.SpanID() ||
				len(links[0].Attributes) != 1 || links[0].Attributes[0] != tracing.RequestIDKey.String("req-replay")):
				t.Errorf("links %+v, want one to %s with the replay's request id", links, tc.linked.SpanID())
			}
		})
	}
}
