package tracing_test

import (
	"context"
	"encoding/json"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
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
