// Package sandbox is the in-dashboard sandbox (docs/checkout.md, Sandbox): the operator reads the
// sandbox provider's id and webhook secret, points its events at a receiver (saving fires a
// synchronous service.sandbox.ping), lists the events and replays one. Sandbox events get one
// delivery attempt with a 10-second timeout and no retries; every attempt is recorded.
//
// The sandbox provider is one provider: a provider-scoped operator of another provider finds
// no sandbox (404), as a deployment without one answers.
package sandbox

import (
	"context"
	"errors"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/events"
	"github.com/subprov/subprov/store"
)

// Service runs the sandbox operations.
type Service struct {
	Store    *store.Store
	Recorder *events.Recorder
	Webhooks *events.Deliverer
}

// Limits of the sandbox event listing (GET /api/v1/sandbox/webhook-events?limit=).
const (
	DefaultLimit = 20
	MaxLimit     = 100 // effective maximum; 101..200 are accepted and clamped
	MaxAccepted  = 200 // above this: 422
)

// Provider returns the sandbox provider, or 404 when the deployment has none or it is
// outside scope.
func (s *Service) Provider(ctx context.Context, scope subprov.Scope) (*subprov.Provider, error) {
	p, err := s.Store.SandboxProvider(ctx)
	if errors.Is(err, subprov.ErrNotFound) || (err == nil && !scope.Allows(p.ID)) {
		return nil, subprov.NotFound("Sandbox provider")
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Delivery is the outcome of one synchronous send.
type Delivery struct {
	Event   *subprov.Event
	Attempt *events.Attempt
}

// SetWebhookURL saves the sandbox receiver and pings it: the ping event is recorded with the
// change and sent once, synchronously, after the change committed.
func (s *Service) SetWebhookURL(ctx context.Context, scope subprov.Scope, raw string) (*subprov.Provider, *Delivery, error) {
	p, err := s.Provider(ctx, scope)
	if err != nil {
		return nil, nil, err
	}
	if err := events.CheckWebhookTarget(ctx, raw); err != nil {
		if errors.Is(err, events.ErrBadWebhookURL) {
			return nil, nil, subprov.Invalid(map[string]string{"webhook_url": err.Error()})
		}
		return nil, nil, err
	}
	p.WebhookURL = raw
	var ev *subprov.Event
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.SetWebhookURL(ctx, p.ID, raw); err != nil {
			return err
		}
		ev, err = s.Recorder.RecordForSending(ctx, tx, p, subprov.EventSandboxPing, map[string]any{"message": "Sandbox webhook receiver configured", "webhook_url": raw})
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	att, err := s.Webhooks.SendOnce(ctx, ev, raw, p.WebhookSecret)
	if err != nil {
		return nil, nil, err
	}
	return p, &Delivery{Event: ev, Attempt: att}, nil
}

// ListEvents lists the sandbox provider's events, newest first. limit 0 means the default; 1 to
// 200 are accepted and above 100 clamped to 100; anything else is 422.
func (s *Service) ListEvents(ctx context.Context, scope subprov.Scope, limit int) ([]*subprov.WebhookEvent, error) {
	switch {
	case limit == 0:
		limit = DefaultLimit
	case limit < 1 || limit > MaxAccepted:
		return nil, subprov.Invalid(map[string]string{"query:limit": "want 1 to 200 (above 100 counts as 100)"})
	case limit > MaxLimit:
		limit = MaxLimit
	}
	p, err := s.Provider(ctx, scope)
	if err != nil {
		return nil, err
	}
	return s.Store.EventsOfProvider(ctx, p.ID, limit)
}

// Replay sends one of the sandbox provider's events again, once, to the receiver configured
// now, for an operator whose role replays events; the attempt and the audit of the replay
// (webhook_event.replayed) are recorded together.
func (s *Service) Replay(ctx context.Context, op *subprov.Operator, eventID string) (*Delivery, error) {
	if err := op.Authorize(subprov.PermSupport); err != nil {
		return nil, err
	}
	p, err := s.Provider(ctx, op.Scope())
	if err != nil {
		return nil, err
	}
	rec, err := s.Store.Event(ctx, p.ID, eventID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, subprov.NotFound("Event")
		}
		return nil, err
	}
	if p.WebhookURL == "" {
		return nil, subprov.Errorf(subprov.ECONFLICT, "no_webhook_url", "Set a sandbox webhook URL first (POST /api/v1/sandbox/webhook-config)")
	}
	att, err := s.Webhooks.Replay(ctx, rec, p.WebhookURL, p.WebhookSecret, func(tx *store.Tx, state string) error {
		return tx.RecordAudit(ctx, ReplayAudit(ctx, rec, state), s.Webhooks.Clock.Now())
	})
	if err != nil {
		return nil, err
	}
	return &Delivery{Event: &rec.Event, Attempt: att}, nil
}

// ReplayAudit is the audit entry of an operator's replay of ev, which left it in state.
func ReplayAudit(ctx context.Context, ev *subprov.WebhookEvent, state string) subprov.AuditEntry {
	e := subprov.NewAudit(ctx, ev.ProviderID, "webhook_event.replayed", "webhook_event", ev.ID)
	e.Changes.Set("attempts", ev.Attempts, ev.Attempts+1)
	e.Changes.Set("status", ev.DeliveryState, state)
	return e
}
