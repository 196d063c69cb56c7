package events

import (
	"context"
	"net/url"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/subprov/subprov/tracing"
)

// origins are the traces this process's events were recorded in, kept until its dispatcher
// delivers them so each delivery's span continues the trace of the work that caused the
// event (tracing is on only). It is memory, not storage: an event another process delivers,
// or one delivered after a restart, starts a trace of its own. At most maxOrigins are kept;
// past that, those older than originsKept go, so events delivered elsewhere cannot pile up.
type origins struct {
	mu sync.Mutex
	m  map[string]origin
}

type origin struct {
	o  tracing.Origin
	at time.Time
}

const (
	maxOrigins  = 10000
	originsKept = 10 * time.Minute
)

// TraceFrom keeps the trace the event was recorded in for its delivery (Recorder.Trace).
func (d *Deliverer) TraceFrom(eventID string, o tracing.Origin) {
	d.origins.mu.Lock()
	defer d.origins.mu.Unlock()
	if d.origins.m == nil {
		d.origins.m = map[string]origin{}
	}
	now := time.Now()
	if len(d.origins.m) >= maxOrigins {
		for id, e := range d.origins.m {
			if now.Sub(e.at) > originsKept {
				delete(d.origins.m, id)
			}
		}
		if len(d.origins.m) >= maxOrigins {
			clear(d.origins.m)
		}
	}
	d.origins.m[eventID] = origin{o: o, at: now}
}

// tracedFrom is ctx continuing the trace the event was recorded in, when this process kept
// it (and forgetting it: an event is delivered once).
func (d *Deliverer) tracedFrom(ctx context.Context, eventID string) context.Context {
	if !tracing.Enabled() {
		return ctx
	}
	d.origins.mu.Lock()
	e, ok := d.origins.m[eventID]
	delete(d.origins.m, eventID)
	d.origins.mu.Unlock()
	if !ok {
		return ctx
	}
	return e.o.Context(ctx)
}

// send is one delivery attempt (post); with tracing on it is a span, "webhook.deliver", naming
// the event, the receiver's host and its answer.
func (d *Deliverer) send(ctx context.Context, target, secret, eventID string, payload []byte) Attempt {
	if !tracing.Enabled() {
		return d.post(ctx, target, secret, eventID, payload)
	}
	attrs := []attribute.KeyValue{attribute.String("subprov.event_id", eventID)}
	if u, err := url.Parse(target); err == nil {
		attrs = append(attrs, attribute.String("server.address", u.Hostname()))
	}
	ctx, span := tracing.Start(ctx, "webhook.deliver", trace.SpanKindClient, attrs...)
	att := d.post(ctx, target, secret, eventID, payload)
	if att.StatusCode != 0 {
		span.SetAttributes(attribute.Int("http.response.status_code", att.StatusCode))
	}
	span.SetAttributes(attribute.Bool("subprov.webhook.delivered", att.Delivered))
	var err error
	if att.Error != "" {
		err = attemptFailed(att.Error)
	}
	tracing.End(span, err)
	return att
}

// attemptFailed is a failed attempt as a span's error.
type attemptFailed string

func (e attemptFailed) Error() string { return string(e) }
