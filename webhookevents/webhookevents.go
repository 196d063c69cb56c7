// Package webhookevents is the operations surface's view of the events sent to providers'
// webhook receivers: every provider's events in one list, one event with its payload and
// every delivery attempt, and a replay of one event. An operator sees the events of its
// scope; another provider's event is not found, exactly as an unknown id.
package webhookevents

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/events"
	"github.com/subprov/subprov/sandbox"
	"github.com/subprov/subprov/store"
)

// Service reads and replays webhook events.
type Service struct {
	Store    *store.Store
	Webhooks *events.Deliverer
	Sandbox  *sandbox.Service // replays the sandbox provider's events
}

// Filter narrows the list; "" matches anything.
type Filter struct {
	ProviderID string
	Type       string
	Status     string // pending, delivered, failed or no_endpoint
}

// Statuses are the delivery states the list can be filtered on.
var Statuses = []string{subprov.WebhookPending, subprov.WebhookDelivered, subprov.WebhookFailed, subprov.WebhookNoEndpoint}

// Listed is an event as the list shows it: with its latest attempt, nil before the first.
type Listed struct {
	*subprov.WebhookEvent
	LastAttempt *subprov.WebhookAttempt
}

// Detail is one event with every attempt, oldest first.
type Detail struct {
	*subprov.WebhookEvent
	Attempts []*subprov.WebhookAttempt
}

// List lists the events in the operator's scope newest first, one page at a time. Asking for
// another provider's events than the scope's lists nothing.
func (s *Service) List(ctx context.Context, op *subprov.Operator, f Filter, page subprov.Page) ([]Listed, string, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, "", err
	}
	if f.Status != "" && !slices.Contains(Statuses, f.Status) {
		return nil, "", subprov.Invalid(map[string]string{"status": "want pending, delivered, failed or no_endpoint"})
	}
	scope := op.Scope()
	if f.ProviderID != "" && !scope.Allows(f.ProviderID) {
		return []Listed{}, "", nil
	}
	if f.ProviderID == "" {
		f.ProviderID = scope.ProviderID
	}
	evs, err := s.Store.WebhookEvents(ctx, store.WebhookEventFilter{ProviderID: f.ProviderID, Type: f.Type, State: f.Status}, page)
	if err != nil {
		return nil, "", err
	}
	evs, next := subprov.Cut(page, evs, store.WebhookEventKey)
	ids := make([]string, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	// The events' latest attempts, in one read for the page.
	last, err := s.Store.LastWebhookAttempts(ctx, ids)
	if err != nil {
		return nil, "", err
	}
	out := make([]Listed, len(evs))
	for i, e := range evs {
		out[i] = Listed{WebhookEvent: e.WebhookEvent, LastAttempt: last[e.ID]}
	}
	return out, next, nil
}

// Get returns one event in the operator's scope with its payload and every attempt.
func (s *Service) Get(ctx context.Context, op *subprov.Operator, id string) (*Detail, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, err
	}
	ev, err := s.event(ctx, op.Scope(), id)
	if err != nil {
		return nil, err
	}
	return s.detail(ctx, ev)
}

// Replay delivers one event in the operator's scope once more: the same payload with the same
// X-Webhook-Id, signed with the provider's current secret, to its current receiver, recorded
// as one more attempt and audited (webhook_event.replayed). A sandbox event is replayed as the
// sandbox replays it. A provider without a receiver is a conflict, and nothing is sent. It
// returns the event as it is after the attempt.
func (s *Service) Replay(ctx context.Context, op *subprov.Operator, id string) (*Detail, error) {
	if err := op.Authorize(subprov.PermSupport); err != nil {
		return nil, err
	}
	ev, err := s.event(ctx, op.Scope(), id)
	if err != nil {
		return nil, err
	}
	if ev.Sandbox {
		if _, err := s.Sandbox.Replay(ctx, op, ev.ID); err != nil {
			return nil, err
		}
	} else {
		p, err := s.Store.Provider(ctx, ev.ProviderID)
		if err != nil {
			return nil, fmt.Errorf("replay event %s: %w", ev.ID, err)
		}
		if p.WebhookURL == "" {
			return nil, subprov.Errorf(subprov.ECONFLICT, "no_webhook_url", "The provider has no webhook URL to send the event to")
		}
		_, err = s.Webhooks.Replay(ctx, ev, p.WebhookURL, p.WebhookSecret, func(tx *store.Tx, state string) error {
			return tx.RecordAudit(ctx, sandbox.ReplayAudit(ctx, ev, state), s.Webhooks.Clock.Now())
		})
		if err != nil {
			return nil, err
		}
	}
	if ev, err = s.event(ctx, op.Scope(), id); err != nil {
		return nil, err
	}
	return s.detail(ctx, ev)
}

// event reads one event in scope; another provider's is not found, as an unknown id.
func (s *Service) event(ctx context.Context, scope subprov.Scope, id string) (*subprov.WebhookEvent, error) {
	ev, err := s.Store.WebhookEvent(ctx, scope.ProviderID, id)
	if errors.Is(err, subprov.ErrNotFound) {
		return nil, subprov.NotFound("Event")
	}
	if err != nil {
		return nil, err
	}
	return ev, nil
}

func (s *Service) detail(ctx context.Context, ev *subprov.WebhookEvent) (*Detail, error) {
	atts, err := s.Store.WebhookAttempts(ctx, ev.ProviderID, ev.ID)
	if err != nil {
		return nil, err
	}
	if atts == nil {
		atts = []*subprov.WebhookAttempt{}
	}
	return &Detail{WebhookEvent: ev, Attempts: atts}, nil
}
