package checkout

import (
	"context"
	"errors"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
)

// CompleteInput is the checkout page's completion after payment. With a session the session
// is the source of truth for provider, plan, location, suite, building and MAC;
// without one the explicit fields say what is sent (docs/checkout.md, Complete).
type CompleteInput struct {
	SessionID              string
	Subscriber             provisioning.Subscriber
	ExternalSubscriptionID string
	MACAddress             string
	// Without a session:
	PlanVersionID             string
	LocationHash              string
	LocationIdentifier        string
	UnitID                    string
	DeliveryMode              subprov.DeliveryMode
	ServiceProviderDocumentID string
}

// Completion is what a completion produced, or found on replay.
type Completion struct {
	*provisioning.Result
	Message string // the replay message; "" when the line is new
}

// Replay messages of a completion answered before (docs/checkout.md, Complete).
const (
	MsgReplayExists     = "Subscription already exists (idempotent replay)"
	MsgReplayInProgress = "Provisioning already in progress"
)

// Complete turns a paid checkout into a subscription with a subscriber record. Routing is by
// the building's line type: only a first-line building with a resolvable port
// provisions at once; everything else takes the install route.
func (s *Service) Complete(ctx context.Context, secret string, in CompleteInput) (*Completion, error) {
	if in.SessionID != "" {
		sess, p, err := s.session(ctx, in.SessionID, secret)
		if err != nil {
			return nil, err
		}
		return s.completeSession(ctx, p, sess, in, nil)
	}
	p, err := s.Auth.WebhookSecret(ctx, secret)
	if err != nil {
		return nil, err
	}
	if err := checkDocumentID(p, in.ServiceProviderDocumentID, false); err != nil {
		return nil, err
	}
	if in.DeliveryMode == "" {
		in.DeliveryMode = subprov.DeliveryDirect
	}
	res, err := s.Provisioning.PlaceOrder(ctx, p, &provisioning.Order{PlanVersionID: in.PlanVersionID, DeliveryMode: in.DeliveryMode,
		LocationHash: in.LocationHash, LocationIdentifier: in.LocationIdentifier, UnitID: in.UnitID, MACAddress: in.MACAddress,
		ExternalSubscriptionID: in.ExternalSubscriptionID, Subscriber: in.Subscriber, Source: "checkout", Routing: provisioning.ByLineType})
	if err != nil {
		return nil, err
	}
	return completion(res), nil
}

// completeSession completes a live session; then runs in the order's transaction when the
// line is new (the sandbox payment page records its payment event there).
func (s *Service) completeSession(ctx context.Context, p *subprov.Provider, sess *subprov.CheckoutSession, in CompleteInput,
	then func(ctx context.Context, tx *store.Tx, sub *subprov.Subscription) error) (*Completion, error) {
	if sess.Status == subprov.SessionCompleted {
		return s.replayOf(ctx, p, sess)
	}
	mac := sess.MACAddress // the session wins over the payload
	if mac == "" {
		mac = in.MACAddress
	}
	unitID, err := s.sessionUnit(ctx, sess)
	if err != nil {
		return nil, err
	}
	res, err := s.Provisioning.PlaceOrder(ctx, p, &provisioning.Order{PlanVersionID: sess.PlanVersionID, DeliveryMode: sess.DeliveryMode,
		LocationHash: sess.LocationHash, UnitID: unitID, MACAddress: mac, ExternalSubscriptionID: in.ExternalSubscriptionID,
		Subscriber: in.Subscriber, Source: "checkout", Routing: provisioning.ByLineType, SessionID: sess.ID,
		AfterCreate: s.closeSession(sess, then)})
	if err != nil {
		return nil, err
	}
	return completion(res), nil
}

// closeSession marks the session completed in the order's transaction.
func (s *Service) closeSession(sess *subprov.CheckoutSession, then func(ctx context.Context, tx *store.Tx, sub *subprov.Subscription) error) func(ctx context.Context, tx *store.Tx, sub *subprov.Subscription) error {
	return func(ctx context.Context, tx *store.Tx, sub *subprov.Subscription) error {
		if err := tx.CompleteCheckoutSession(ctx, sess.ID, sub.ID, s.Clock.Now()); err != nil {
			return err
		}
		if then != nil {
			return then(ctx, tx, sub)
		}
		return nil
	}
}

// sessionUnit is the session's suite, or its port's suite when it names only a port.
func (s *Service) sessionUnit(ctx context.Context, sess *subprov.CheckoutSession) (string, error) {
	if sess.UnitID != "" || sess.LocationHash == "" {
		return sess.UnitID, nil
	}
	loc, err := s.Store.LocationByPort(ctx, sess.LocationHash, "")
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return "", nil // place() refuses the unresolvable port with its own 422
		}
		return "", err
	}
	return loc.Port.UnitID, nil
}

// replayOf answers a completed session with the line it produced.
func (s *Service) replayOf(ctx context.Context, p *subprov.Provider, sess *subprov.CheckoutSession) (*Completion, error) {
	sub, err := s.Store.Subscription(ctx, p.ID, sess.SubscriptionID)
	if err != nil {
		return nil, err
	}
	return completion(&provisioning.Result{Subscription: sub, SubscriberID: sub.SubscriberID, Replay: true}), nil
}

// anonymousReplay answers an anonymous completion's replay with the existing line and the
// route it took (complete's replay shape has no route).
func (s *Service) anonymousReplay(ctx context.Context, sub *subprov.Subscription) (*provisioning.Result, error) {
	route, err := s.Provisioning.RouteOf(ctx, s.Store.R(), sub)
	if err != nil {
		return nil, err
	}
	return &provisioning.Result{Subscription: sub, Route: route, Replay: true}, nil
}

func completion(res *provisioning.Result) *Completion {
	c := &Completion{Result: res}
	if res.Replay {
		c.Message = MsgReplayExists
		if res.Subscription.WorkflowState == provisioning.WorkflowProvisioning {
			c.Message = MsgReplayInProgress
		}
	}
	return c
}

// checkDocumentID checks the caller's service_provider_document_id against the provider's.
func checkDocumentID(p *subprov.Provider, id string, required bool) error {
	switch {
	case strings.TrimSpace(id) == "" && required:
		return subprov.Invalid(map[string]string{"service_provider_document_id": "required"})
	case id != "" && id != p.ServiceProviderDocumentID:
		return subprov.Invalid(map[string]string{"service_provider_document_id": "does not match the provider of this webhook secret"})
	}
	return nil
}

// AnonymousInput is an anonymous completion: option A names a session, option B gives the
// explicit fields. No subscriber data is stored; contact_email stays on the line only.
type AnonymousInput struct {
	SessionID                 string
	ExternalSubscriptionID    string
	ServiceProviderDocumentID string
	ContactEmail              string
	// Option B only (ignored with a session):
	PlanVersionID      string
	LocationHash       string
	LocationIdentifier string
	UnitID             string
	MACAddress         string
	DeliveryMode       subprov.DeliveryMode
}

// AnonymousComplete provisions without a subscriber record (docs/checkout.md, Anonymous complete). It
// routes on the delivery mode (the session's with option A): direct provisions at once,
// home_drop takes the install route. It is idempotent by a completed session, and by
// external_subscription_id with the same plan at the same place, so a retry after a 5xx or a
// timeout is safe; the id with another plan or place is 409 external_id_in_use.
func (s *Service) AnonymousComplete(ctx context.Context, secret string, in AnonymousInput) (*provisioning.Result, error) {
	var sess *subprov.CheckoutSession
	var p *subprov.Provider
	var err error
	if in.SessionID != "" {
		sess, p, err = s.session(ctx, in.SessionID, secret)
	} else {
		p, err = s.Auth.WebhookSecret(ctx, secret)
	}
	if err != nil {
		return nil, err
	}
	problems := map[string]string{}
	if strings.TrimSpace(in.ExternalSubscriptionID) == "" {
		problems["external_subscription_id"] = "required"
	}
	if err := checkDocumentID(p, in.ServiceProviderDocumentID, true); err != nil {
		e, _ := subprov.AsError(err)
		for k, v := range e.Fields {
			problems[k] = v
		}
	}
	if len(problems) > 0 {
		return nil, subprov.Invalid(problems)
	}
	if sess != nil && sess.Status == subprov.SessionCompleted {
		sub, err := s.Store.Subscription(ctx, p.ID, sess.SubscriptionID)
		if err != nil {
			return nil, err
		}
		return s.anonymousReplay(ctx, sub)
	}
	// A known external_subscription_id is judged where every order's is (provisioning's
	// replay): the same suite and plan is the idempotent replay, anything else 409
	// external_id_in_use, as on the other order routes.
	o := &provisioning.Order{ExternalSubscriptionID: in.ExternalSubscriptionID, Anonymous: true, ContactEmail: in.ContactEmail,
		Source: "anonymous_checkout", Routing: provisioning.ByDeliveryMode}
	if sess != nil {
		unitID, err := s.sessionUnit(ctx, sess)
		if err != nil {
			return nil, err
		}
		o.PlanVersionID, o.DeliveryMode, o.LocationHash, o.UnitID, o.MACAddress = sess.PlanVersionID, sess.DeliveryMode, sess.LocationHash, unitID, sess.MACAddress
		o.SessionID, o.AfterCreate = sess.ID, s.closeSession(sess, nil)
	} else {
		o.PlanVersionID, o.DeliveryMode, o.LocationHash, o.LocationIdentifier, o.UnitID, o.MACAddress =
			in.PlanVersionID, in.DeliveryMode, in.LocationHash, in.LocationIdentifier, in.UnitID, in.MACAddress
	}
	return s.Provisioning.PlaceOrder(ctx, p, o)
}
