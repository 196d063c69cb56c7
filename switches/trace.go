package switches

import (
	"context"
	"fmt"
	"io"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/subprov/subprov/tracing"
)

// traced is a raw driver whose every call to the switch is a span, "switch.read",
// "switch.write" or "switch.counters", naming the driver, switch and port (and, for a write, the mode written).
// Confirmed wraps every raw driver in it, so each driver is traced alike.
type traced struct{ raw Raw }

func (t traced) Name() string { return t.raw.Name() }

func (t traced) Provisional(p Port) bool {
	pr, ok := t.raw.(Provisional)
	return ok && pr.Provisional(p)
}

func (t traced) Close() error {
	if c, ok := t.raw.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (t traced) Read(ctx context.Context, p Port) (s State, err error) {
	if !tracing.Enabled() {
		return t.raw.Read(ctx, p)
	}
	ctx, span := t.start(ctx, "switch.read", p)
	defer func() { tracing.End(span, err) }()
	return t.raw.Read(ctx, p)
}

func (t traced) Write(ctx context.Context, p Port, want State) (err error) {
	if !tracing.Enabled() {
		return t.raw.Write(ctx, p, want)
	}
	ctx, span := t.start(ctx, "switch.write", p, attribute.String("subprov.switch.mode", string(want.Mode)))
	defer func() { tracing.End(span, err) }()
	return t.raw.Write(ctx, p, want)
}

// Counters reads the raw driver's counters, when it reads any, as a "switch.counters" span.
func (t traced) Counters(ctx context.Context, p Port) (c Counters, err error) {
	cr, ok := t.raw.(CounterReader)
	if !ok {
		return Counters{}, fmt.Errorf("driver %s: %w", t.raw.Name(), ErrNoCounters)
	}
	if !tracing.Enabled() {
		return cr.Counters(ctx, p)
	}
	ctx, span := t.start(ctx, "switch.counters", p)
	defer func() { tracing.End(span, err) }()
	return cr.Counters(ctx, p)
}

func (t traced) start(ctx context.Context, name string, p Port, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	attrs = append(attrs, attribute.String("subprov.switch.driver", t.raw.Name()),
		attribute.String("subprov.switch", p.Switch), attribute.String("subprov.switch.port", p.Name))
	return tracing.Start(ctx, name, trace.SpanKindClient, attrs...)
}
