package events

import (
	"context"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/tracing"
)

// send is one delivery attempt of ev (post); with tracing on it is a span, "webhook.deliver",
// naming the event, the receiver's host and its answer. The span continues the trace the event
// was recorded in, kept on its row (tracing.StartFrom): the dispatcher's first attempt, a
// retry hours later, a flush in another process and a replay all join the work that caused
// the event.
func (d *Deliverer) send(ctx context.Context, target, secret string, ev *subprov.WebhookEvent) Attempt {
	if !tracing.Enabled() {
		return d.post(ctx, target, secret, ev.ID, ev.Payload)
	}
	attrs := []attribute.KeyValue{attribute.String("subprov.event_id", ev.ID)}
	if u, err := url.Parse(target); err == nil {
		attrs = append(attrs, attribute.String("server.address", u.Hostname()))
	}
	ctx, span := tracing.StartFrom(ctx, tracing.ParseOrigin(ev.Trace), "webhook.deliver", trace.SpanKindClient, attrs...)
	att := d.post(ctx, target, secret, ev.ID, ev.Payload)
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
