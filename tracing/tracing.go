// Package tracing is subprov's OpenTelemetry tracing: the spans of requests, jobs, SQL
// transactions and calls to other systems, exported over OTLP when the standard OTEL_*
// variables ask for it (Open), and a no-op otherwise.
//
// The spans go to OpenTelemetry's process-wide tracer provider, as instrumentation does by
// convention: the process installs its provider once at start (Use), and until it does, or
// when tracing is off, every span is OpenTelemetry's no-op span. Each span carries the
// request id (subprov.request_id) of the request whose work it is, also in the jobs and
// webhook deliveries that request caused.
package tracing

import (
	"context"
	"encoding/json"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName names subprov's spans' instrumentation scope.
const ScopeName = "github.com/subprov/subprov"

// RequestIDKey is the attribute every span carries: the X-Request-Id of the request whose work
// the span is.
const RequestIDKey = attribute.Key("subprov.request_id")

// enabled is whether a provider that records spans is installed (Use): when it is not, the
// seams skip even the work of carrying a trace context along (Enabled).
var enabled atomic.Bool

// Use makes tp the process's tracer provider and returns the function that puts the previous
// one back (tests; a process installs its provider once).
func Use(tp trace.TracerProvider) (restore func()) {
	prev, prevOn := otel.GetTracerProvider(), enabled.Load()
	otel.SetTracerProvider(tp)
	enabled.Store(true)
	return func() {
		otel.SetTracerProvider(prev)
		enabled.Store(prevOn)
	}
}

// Enabled reports whether spans are recorded in this process.
func Enabled() bool { return enabled.Load() }

type requestIDKey struct{}

// WithRequestID is ctx carrying the request id that the spans started in it carry.
func WithRequestID(ctx context.Context, id string) context.Context {
	if id == "" {
		return ctx
	}
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestID is the request id ctx carries for the spans, "" when none.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// Start starts a span named name as a child of ctx's span, carrying ctx's request id and
// attrs. End it with End.
func Start(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return start(ctx, name, kind, nil, attrs)
}

func start(ctx context.Context, name string, kind trace.SpanKind, links []trace.Link, attrs []attribute.KeyValue) (context.Context, trace.Span) {
	if id := RequestID(ctx); id != "" {
		attrs = append(attrs, RequestIDKey.String(id))
	}
	return otel.GetTracerProvider().Tracer(ScopeName).Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...),
		trace.WithLinks(links...))
}

// StartFrom starts a span of work done on behalf of o, the origin of what it works on (a
// webhook delivery of an event recorded in o's trace), whoever runs it and whenever. When
// ctx's span is already in o's trace (the work runs inside it, as a job that trace enqueued),
// the span is a child of ctx's, as Start makes it. Otherwise it continues o's trace with o's
// request id, and links to ctx's span, with ctx's request id, so the work that ran it (an
// operator's replay, a flush) still leads to it. A zero origin is Start.
func StartFrom(ctx context.Context, o Origin, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	caller := trace.SpanContextFromContext(ctx)
	from := o.Context(ctx)
	sc := trace.SpanContextFromContext(from)
	if o.IsZero() || !sc.IsValid() || sc.TraceID() == caller.TraceID() {
		return start(ctx, name, kind, nil, attrs)
	}
	var links []trace.Link
	if caller.IsValid() {
		l := trace.Link{SpanContext: caller}
		if id := RequestID(ctx); id != "" {
			l.Attributes = []attribute.KeyValue{RequestIDKey.String(id)}
		}
		links = append(links, l)
	}
	return start(from, name, kind, links, attrs)
}

// End ends span, marking it failed with err when err is not nil.
func End(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// traceContext is W3C Trace Context: the traceparent and tracestate of incoming requests and
// of the origins kept with jobs.
var traceContext = propagation.TraceContext{}

// FromHeaders is ctx continuing the trace an incoming request's traceparent names, if any.
func FromHeaders(ctx context.Context, h propagation.HeaderCarrier) context.Context {
	return traceContext.Extract(ctx, h)
}

// Origin is where a piece of deferred work came from: the span that asked for it (W3C
// traceparent and tracestate) and the request id. It travels with a job, in its metadata, so
// the job's span continues the trace of the request that enqueued it, in whatever process
// runs it; and with a webhook event, on its row (Text), so that every delivery attempt of the
// event continues the trace of the work that recorded it (StartFrom).
type Origin struct {
	TraceParent string `json:"traceparent,omitempty"`
	TraceState  string `json:"tracestate,omitempty"`
	RequestID   string `json:"request_id,omitempty"`
}

// OriginOf is the origin of work asked for in ctx; zero when tracing is off or ctx has no span.
func OriginOf(ctx context.Context) Origin {
	if !Enabled() || !trace.SpanContextFromContext(ctx).IsValid() {
		return Origin{}
	}
	c := propagation.MapCarrier{}
	traceContext.Inject(ctx, c)
	return Origin{TraceParent: c["traceparent"], TraceState: c["tracestate"], RequestID: RequestID(ctx)}
}

// IsZero reports whether o names no span.
func (o Origin) IsZero() bool { return o.TraceParent == "" }

// Context is ctx continuing o's trace, with o's request id.
func (o Origin) Context(ctx context.Context) context.Context {
	if o.IsZero() {
		return ctx
	}
	ctx = traceContext.Extract(ctx, propagation.MapCarrier{"traceparent": o.TraceParent, "tracestate": o.TraceState})
	return WithRequestID(ctx, o.RequestID)
}

// Text is o as a text column keeps it (the trace an event was recorded in): a JSON object of
// its traceparent, tracestate and request id, and "" for the zero origin, so that nothing is
// stored when tracing is off.
func (o Origin) Text() string {
	if o.IsZero() {
		return ""
	}
	b, err := json.Marshal(o)
	if err != nil {
		return "" // strings always encode
	}
	return string(b)
}

// ParseOrigin reads an origin Text wrote; zero when s is "" or does not parse (a trace is
// never a reason for work to fail).
func ParseOrigin(s string) Origin {
	var o Origin
	if s == "" || json.Unmarshal([]byte(s), &o) != nil {
		return Origin{}
	}
	return o
}

// originKey is the key of a job's origin in its metadata object.
const originKey = "trace"

// AddOrigin returns the JSON object metadata with o added under "trace" (metadata "" or
// "null" is an empty object). Other keys are kept.
func AddOrigin(metadata []byte, o Origin) ([]byte, error) {
	m := map[string]json.RawMessage{}
	if len(metadata) > 0 {
		if err := json.Unmarshal(metadata, &m); err != nil {
			return nil, err
		}
		if m == nil {
			m = map[string]json.RawMessage{}
		}
	}
	b, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	m[originKey] = b
	return json.Marshal(m)
}

// OriginIn reads the origin AddOrigin put in metadata; zero when there is none or it does
// not parse (a trace is never a reason for work to fail).
func OriginIn(metadata []byte) Origin {
	var m struct {
		Trace Origin `json:"trace"`
	}
	if len(metadata) == 0 || json.Unmarshal(metadata, &m) != nil {
		return Origin{}
	}
	return m.Trace
}
