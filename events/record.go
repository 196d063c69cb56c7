// Package events is webhook events: recorded in the same transaction as the state change that
// causes them, delivered signed, in order, durably, with every attempt kept.
//
// Production events are flushed per provider under a lease, strictly in the provider's seq
// order, by the in-process dispatcher of a process that runs workers (woken when the recording
// transaction commits) or by the webhooks.flush job; a failing receiver holds back every later
// event until it answers or the failing event gives up after three days (docs/webhooks.md). seq
// is commit order. On PostgreSQL the flusher gives it when it first takes an event, in
// recording order, so recording takes no lock on the provider; on SQLite, whose recording
// transactions commit one at a time, the store gives it as it records the event, so the
// flusher sends an event as soon as it commits. The flusher records its deliveries behind
// its sends (deliverDue). Sandbox events are numbered when recorded and get exactly one
// synchronous attempt through SendOnce (docs/checkout.md, Sandbox).
package events

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/tracing"
)

// Recorder writes events inside the transaction of the change that causes them, so an event
// exists (and is delivered) if and only if that change committed.
type Recorder struct {
	Jobs  jobs.Enqueuer
	Clock subprov.Clock
	// Wake, when set, is this process's webhook dispatcher (Deliverer.Wake): a pending
	// production event then wakes it when its transaction commits instead of enqueueing a
	// webhooks.flush job (the scheduler's sweep still finds any event a crash left behind).
	// nil (serve --no-workers): the flush job is enqueued in the transaction.
	Wake func(providerID string)
}

// body is the JSON envelope of every event (docs/webhooks.md). A struct, not a map, so the keys
// keep this order in the signed bytes.
type body struct {
	ID         string         `json:"id"`
	Type       string         `json:"type"`
	CreatedAt  string         `json:"created_at"`
	ProviderID string         `json:"provider_id"`
	Data       map[string]any `json:"data"`
}

// Record writes one event of type typ in tx with the exact JSON body that will be signed and
// sent:
//
//	{"id", "type", "created_at", "provider_id",
//	 "data": {"subscription_id", "external_subscription_id", "status", ...extra}}
//
// The subscription's own fields win over keys of the same name in extra, so an event can
// never contradict the row it describes; with a nil sub (a ping) they are null unless extra
// sets them.
//
// The event is pending when the provider has a webhook_url and no_endpoint otherwise. A
// pending production event is due at once; its commit wakes the dispatcher, or a
// webhooks.flush job is enqueued in tx. A pending sandbox event gets its one-attempt send job
// (one attempt, no retries: docs/checkout.md, Sandbox). With tracing on, the event keeps the
// trace ctx is in, which each of its delivery attempts continues.
func (r *Recorder) Record(ctx context.Context, tx *store.Tx, p *subprov.Provider, typ string, sub *subprov.Subscription, extra map[string]any) (*subprov.Event, error) {
	subID := ""
	if sub != nil {
		subID = sub.ID
	}
	return r.record(ctx, tx, p, typ, subID, func(id string, created time.Time) any {
		data := make(map[string]any, len(extra)+3)
		for k, v := range extra {
			data[k] = v
		}
		if sub != nil {
			data["subscription_id"] = sub.ID
			data["external_subscription_id"] = nullable(sub.ExternalSubscriptionID)
			data["status"] = sub.Status
		} else {
			for _, k := range []string{"subscription_id", "external_subscription_id", "status"} {
				if _, ok := data[k]; !ok {
					data[k] = nil
				}
			}
		}
		return body{ID: id, Type: typ, CreatedAt: created.Format(time.RFC3339), ProviderID: p.ID, Data: data}
	}, true)
}

// RecordRaw records an event whose body is not the service's envelope but a foreign shape,
// such as checkout.session.completed's payment-processor-shaped payload (docs/checkout.md, Sandbox).
// payload gets the event's id and creation instant and returns the value to encode.
func (r *Recorder) RecordRaw(ctx context.Context, tx *store.Tx, p *subprov.Provider, typ, subscriptionID string, payload func(id string, created time.Time) any) (*subprov.Event, error) {
	return r.record(ctx, tx, p, typ, subscriptionID, payload, true)
}

// RecordForSending records an event that the caller delivers itself with SendOnce once tx has
// committed (the synchronous sandbox ping): no job is queued for it.
func (r *Recorder) RecordForSending(ctx context.Context, tx *store.Tx, p *subprov.Provider, typ string, extra map[string]any) (*subprov.Event, error) {
	return r.record(ctx, tx, p, typ, "", func(id string, created time.Time) any {
		data := map[string]any{"subscription_id": nil, "external_subscription_id": nil, "status": nil}
		for k, v := range extra {
			data[k] = v
		}
		return body{ID: id, Type: typ, CreatedAt: created.Format(time.RFC3339), ProviderID: p.ID, Data: data}
	}, false)
}

// record writes the event row. A pending production event is due at once and wakes the
// dispatcher on commit, or gets a webhooks.flush job in tx; a pending sandbox event gets its
// one-attempt send job, unless queue is false because the caller sends it itself.
func (r *Recorder) record(ctx context.Context, tx *store.Tx, p *subprov.Provider, typ, subscriptionID string, payload func(id string, created time.Time) any, queue bool) (*subprov.Event, error) {
	if p == nil {
		return nil, errors.New("record event: no provider")
	}
	now := r.Clock.Now().UTC()
	// Whole seconds: the body carries created_at in RFC 3339 and the row must say the same.
	created := now.Truncate(time.Second)
	ev := &subprov.WebhookEvent{
		Event: subprov.Event{
			ID:         store.NewID(),
			ProviderID: p.ID,
			Type:       typ,
			Sandbox:    p.Sandbox,
			CreatedAt:  created,
		},
		SubscriptionID: subscriptionID,
		DeliveryState:  subprov.WebhookNoEndpoint,
		// Every attempt to deliver it, by any process, continues the trace it is recorded in
		// (tracing on only: off, nothing is stored).
		Trace: tracing.OriginOf(ctx).Text(),
	}
	var err error
	if p.Sandbox {
		// Sandbox events are listed in recording order and never flushed: number them now (a
		// sandbox provider's few events do not contend for its row).
		if ev.Seq, err = tx.NextEventSeq(ctx, p.ID); err != nil {
			return nil, fmt.Errorf("record %s: %w", typ, err)
		}
	}
	if ev.Payload, err = marshal(payload(ev.ID, created)); err != nil {
		return nil, fmt.Errorf("record %s: encode body: %w", typ, err)
	}
	var job jobs.Args
	if p.WebhookURL != "" {
		ev.DeliveryState = subprov.WebhookPending
		switch {
		case !p.Sandbox:
			ev.NextAttemptAt = &now
			if wake := r.Wake; wake != nil {
				providerID := p.ID
				tx.AfterCommit(func() { wake(providerID) })
			} else {
				job = jobs.FlushWebhooks{ProviderID: p.ID}
			}
		case queue:
			job = jobs.SendSandboxEvent{EventID: ev.ID, ProviderID: p.ID}
		}
	}
	if err := tx.InsertEvent(ctx, ev); err != nil {
		return nil, fmt.Errorf("record %s: %w", typ, err)
	}
	if job != nil {
		if r.Jobs == nil {
			return nil, fmt.Errorf("record %s: no job queue to deliver it", typ)
		}
		if err := r.Jobs.Enqueue(ctx, tx, job); err != nil {
			return nil, fmt.Errorf("record %s: %w", typ, err)
		}
	}
	out := ev.Event
	return &out, nil
}

// marshal encodes without HTML escaping (the body is JSON for machines, and "&" should read
// as "&" in the bytes a receiver verifies) and without json.Encoder's trailing newline.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// List returns the provider's events for the sandbox listing, newest first, at most limit
// (the caller applies the surface's default and clamping). Delivery state is on
// store.EventsOfProvider for callers that show it.
func List(ctx context.Context, st *store.Store, providerID string, limit int) ([]*subprov.Event, error) {
	if limit < 1 {
		return nil, fmt.Errorf("list events: limit %d, want at least 1", limit)
	}
	recs, err := st.EventsOfProvider(ctx, providerID, limit)
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	out := make([]*subprov.Event, len(recs))
	for i, r := range recs {
		e := r.Event
		out[i] = &e
	}
	return out, nil
}
