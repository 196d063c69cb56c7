package events

import (
	"context"
	"fmt"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// Replay delivers a recorded event once more, with its stored payload and its own id in
// X-Webhook-Id, to url signed with secret, and records the attempt together with whatever
// also writes (the audit of the replay; it is told the state the event moves to) in one
// transaction. A receiver's failure is reported
// in the Attempt; the error is for the store only.
//
// A sandbox event takes the replay's outcome, delivered or failed, as after its one attempt.
// A production event a receiver accepts becomes delivered unless it is pending: a pending
// event keeps its place in the provider's delivery order and its retry schedule, and is sent
// again in its turn (receivers drop the repeat by its id). A failed attempt changes no
// production event's state.
//
// Read ev with its trace (store.Event): with tracing on, the attempt continues the trace the
// event was recorded in, linked to the replay's.
func (d *Deliverer) Replay(ctx context.Context, ev *subprov.WebhookEvent, url, secret string, also func(tx *store.Tx, state string) error) (*Attempt, error) {
	att := d.send(ctx, url, secret, ev)
	// The attempt happened; record it even if the caller has gone away meanwhile.
	wctx := context.WithoutCancel(ctx)
	rec := attemptRow(ev.ID, url, att, d.Clock.Now().UTC())
	state := ReplayedState(ev, att.Delivered)
	err := d.Store.InTx(wctx, func(tx *store.Tx) error {
		if err := tx.RecordReplay(wctx, ev.ProviderID, rec, state); err != nil {
			return err
		}
		if also != nil {
			return also(tx, state)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("replay event %s: %w", ev.ID, err)
	}
	return &att, nil
}

// ReplayedState is the delivery state a replay leaves an event in (Replay).
func ReplayedState(ev *subprov.WebhookEvent, delivered bool) string {
	switch {
	case ev.Sandbox && delivered:
		return subprov.WebhookDelivered
	case ev.Sandbox:
		return subprov.WebhookFailed
	case delivered && ev.DeliveryState != subprov.WebhookPending:
		return subprov.WebhookDelivered
	}
	return ev.DeliveryState
}
