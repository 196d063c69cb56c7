// Package checkout is the marketplace hand-over (docs/checkout.md): the marketplace
// creates a session and sends the shopper to the provider's checkout page, the page reads the
// session with the provider's webhook secret, and completes it into a subscription (with a
// subscriber record, or anonymously). The partner then suspends and restores the line by its
// own id. A sandbox provider's checkout page is subprov's own fake payment page.
//
// Every call that names a session checks the session's age before it checks who is asking:
// a session never read within two hours of creation is expired, answers 410 to anyone, and is
// marked expired by that same call.
package checkout

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/events"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
)

// Service runs the checkout rules.
type Service struct {
	Store        *store.Store
	Clock        subprov.Clock
	Auth         *auth.Service
	Provisioning *provisioning.Service
	Events       *events.Recorder
	Webhooks     *events.Deliverer // the sandbox's synchronous sends (ping, replay)
	PublicURL    string            // base of the sandbox payment page
	Log          *slog.Logger
}

// SandboxCheckoutPath is the sandbox payment page; a sandbox provider's checkout URL is always
// this page on subprov itself.
const SandboxCheckoutPath = "/sandbox/checkout"

// CreateInput is the marketplace's session request (docs/checkout.md).
type CreateInput struct {
	ProviderID    string
	PlanVersionID string
	BuildingID    string
	UnitID        string
	LocationHash  string
	MACAddress    string
	DeliveryMode  subprov.DeliveryMode
}

// Created is a new session and where to send the shopper.
type Created struct {
	Session     *subprov.CheckoutSession
	CheckoutURL string
}

// Create validates the shopper's choice and opens a pending session, linked to accountID when
// the shopper was signed in. It answers 503 before writing anything when the provider has no
// checkout page.
func (s *Service) Create(ctx context.Context, in CreateInput, accountID string) (*Created, error) {
	problems := map[string]string{}
	for field, v := range map[string]string{"provider_id": in.ProviderID, "plan_version_id": in.PlanVersionID, "building_id": in.BuildingID} {
		if strings.TrimSpace(v) == "" {
			problems[field] = "required"
		}
	}
	provisioning.CheckDelivery(&in.DeliveryMode, &in.MACAddress, problems)
	if len(problems) > 0 {
		return nil, subprov.Invalid(problems)
	}
	p, err := s.Store.Provider(ctx, in.ProviderID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, subprov.NotFound("Provider")
		}
		return nil, err
	}
	if err := s.validateChoice(ctx, p, &in); err != nil {
		return nil, err
	}
	base := s.checkoutPage(p)
	if base == "" {
		return nil, subprov.Errorf(subprov.EUNCONFIGURED, "checkout_unavailable", "The provider has no checkout page configured")
	}
	sess := &subprov.CheckoutSession{ID: store.NewID(), ProviderID: p.ID, PlanVersionID: in.PlanVersionID, BuildingID: in.BuildingID,
		UnitID: in.UnitID, LocationHash: in.LocationHash, MACAddress: in.MACAddress, DeliveryMode: in.DeliveryMode,
		Status: subprov.SessionPending, AccountID: accountID, CreatedAt: s.Clock.Now().UTC().Truncate(time.Second)}
	if err := s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.InsertCheckoutSession(ctx, sess) }); err != nil {
		return nil, err
	}
	return &Created{Session: sess, CheckoutURL: withSessionID(base, sess.ID)}, nil
}

// validateChoice checks that plan, building, suite and port belong together and to the
// provider. Serviceability answers are advisory; completion re-validates fail-closed. A
// building that is unknown or outside the provider's coverage is 404, as the portal order
// answers, the rest 422.
func (s *Service) validateChoice(ctx context.Context, p *subprov.Provider, in *CreateInput) error {
	if _, err := s.sellablePlan(ctx, p, in.PlanVersionID); err != nil {
		return err
	}
	b, err := s.Store.CoveredBuilding(ctx, p.ID, in.BuildingID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) { // unknown and uncovered alike: 404
			return subprov.NotFound("Building")
		}
		return err
	}
	if err := provisioning.Orderable(b, "building_id"); err != nil { // no completion could turn the session into a line
		return err
	}
	if in.UnitID != "" {
		u, err := s.Store.Unit(ctx, in.UnitID)
		if err != nil && !errors.Is(err, subprov.ErrNotFound) {
			return err
		}
		if err != nil || u.BuildingID != in.BuildingID {
			return subprov.Invalid(map[string]string{"unit_id": "no unit with this id in the building"})
		}
	}
	if in.LocationHash != "" {
		loc, err := s.Store.LocationByPort(ctx, in.LocationHash, "")
		if err != nil && !errors.Is(err, subprov.ErrNotFound) {
			return err
		}
		if err != nil || loc.Building.ID != in.BuildingID {
			return subprov.Invalid(map[string]string{"location_hash": "no port with this location_hash in the building"})
		}
		if in.UnitID != "" && loc.Port.UnitID != "" && loc.Port.UnitID != in.UnitID {
			return subprov.Invalid(map[string]string{"unit_id": "the unit does not match the port's suite"})
		}
	}
	return nil
}

func (s *Service) sellablePlan(ctx context.Context, p *subprov.Provider, id string) (*subprov.PlanVersion, error) {
	v, err := s.Store.PlanVersion(ctx, p.ID, id)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, subprov.Invalid(map[string]string{"plan_version_id": "no plan version of this provider with this id"})
		}
		return nil, err
	}
	if !v.Sellable {
		return nil, subprov.Invalid(map[string]string{"plan_version_id": "this plan version is no longer sold"})
	}
	return v, nil
}

// checkoutPage is where a provider's shoppers pay: the configured URL, or for a sandbox
// provider subprov's own fake payment page.
func (s *Service) checkoutPage(p *subprov.Provider) string {
	if p.Sandbox {
		return strings.TrimRight(s.PublicURL, "/") + SandboxCheckoutPath
	}
	return p.CheckoutURL
}

// withSessionID appends session_id to a checkout URL, keeping its own query.
func withSessionID(base, id string) string {
	u, err := url.Parse(base)
	if err != nil {
		sep := "?"
		if strings.Contains(base, "?") {
			sep = "&"
		}
		return base + sep + "session_id=" + url.QueryEscape(id)
	}
	q := u.Query()
	q.Set("session_id", id)
	u.RawQuery = q.Encode()
	return u.String()
}

// load returns a session for any call that names one, applying the age check first: unknown
// is 404; pending and unread for two hours is marked expired and, like a session expired
// before, answers 410 with the nested error body, whoever asks (the age check runs before
// authentication: docs/checkout.md). A cancelled session is returned: its 410 comes after the
// caller's secret is checked (cancelled).
func (s *Service) load(ctx context.Context, id string) (*subprov.CheckoutSession, error) {
	sess, err := s.Store.CheckoutSession(ctx, id)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, errSessionNotFound
		}
		return nil, err
	}
	now := s.Clock.Now()
	if sess.ExpiredByAge(now) {
		at := sess.ExpiresAt()
		if err := s.Store.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.ExpireCheckoutSession(ctx, sess.ID, at)
			return err
		}); err != nil {
			return nil, err
		}
		sess.Status, sess.ExpiredAt = subprov.SessionExpired, &at
	}
	if sess.Status == subprov.SessionExpired {
		at := sess.ExpiresAt()
		if sess.ExpiredAt != nil {
			at = *sess.ExpiredAt
		}
		return nil, &subprov.Error{Code: subprov.EGONE, Reason: "session_expired", Message: "Checkout session has expired",
			Extra: map[string]any{"expired_at": at.UTC().Format(time.RFC3339)}}
	}
	return sess, nil
}

// cancelled is the 410 of a cancelled session, for a caller allowed to know of it: the nested
// error body with the message only (only the expired case adds a field).
func cancelled(sess *subprov.CheckoutSession) error {
	if sess.Status != subprov.SessionCancelled {
		return nil
	}
	return subprov.Errorf(subprov.EGONE, "session_cancelled", "Checkout session was cancelled")
}

var errSessionNotFound = subprov.NotFound("Checkout session")

// authorize checks the webhook secret against a live session: a missing or unknown secret is
// 401; another provider's secret gets the same 404 as an unknown session.
func (s *Service) authorize(ctx context.Context, sess *subprov.CheckoutSession, secret string) (*subprov.Provider, error) {
	p, err := s.Auth.WebhookSecret(ctx, secret)
	if err != nil {
		return nil, err
	}
	if p.ID != sess.ProviderID {
		return nil, errSessionNotFound
	}
	return p, nil
}

// session loads a session, checks its age, then the caller's secret, then whether it was
// cancelled. An unknown id is judged as a live one is: a missing or unknown secret is 401
// for both, so only a caller with a provider's secret learns which ids exist (and then only
// its own: another provider's session is 404 as an unknown one).
func (s *Service) session(ctx context.Context, id, secret string) (*subprov.CheckoutSession, *subprov.Provider, error) {
	sess, err := s.load(ctx, id)
	if errors.Is(err, errSessionNotFound) {
		if _, aerr := s.Auth.WebhookSecret(ctx, secret); aerr != nil {
			return nil, nil, aerr
		}
	}
	if err != nil {
		return nil, nil, err
	}
	p, err := s.authorize(ctx, sess, secret)
	if err != nil {
		return nil, nil, err
	}
	if err := cancelled(sess); err != nil {
		return nil, nil, err
	}
	return sess, p, nil
}

// Check runs the checks a call naming session id makes before anything else, in their order:
// the session is not expired by age (410, and marked expired), the secret is a provider's (401
// missing or unknown, for an unknown session too), the session exists and is that provider's
// (404 unknown or another provider's), and it is not cancelled (410).
// The HTTP layer runs it when a body does not decode, so such a call answers what the
// session's state and the caller's secret call for before the body's problems.
func (s *Service) Check(ctx context.Context, id, secret string) error {
	_, _, err := s.session(ctx, id, secret)
	return err
}

// Read returns a session for the checkout page; the first read marks it redirected, after
// which it never expires.
func (s *Service) Read(ctx context.Context, id, secret string) (*View, error) {
	sess, p, err := s.session(ctx, id, secret)
	if err != nil {
		return nil, err
	}
	if err := s.markRead(ctx, sess); err != nil {
		return nil, err
	}
	return s.view(ctx, p, sess)
}

func (s *Service) markRead(ctx context.Context, sess *subprov.CheckoutSession) error {
	if sess.Status != subprov.SessionPending {
		return nil
	}
	now := s.Clock.Now().UTC()
	if err := s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.RedirectCheckoutSession(ctx, sess.ID, now) }); err != nil {
		return err
	}
	sess.Status, sess.RedirectedAt = subprov.SessionRedirected, &now
	return nil
}

// PatchInput holds the two patchable fields; nil leaves a field as it is.
type PatchInput struct {
	PlanVersionID      *string
	PartnerReferenceID *string
}

// Patch swaps the plan or attaches the partner's reference on a pending or redirected session.
func (s *Service) Patch(ctx context.Context, id, secret string, in PatchInput) (*View, error) {
	sess, p, err := s.session(ctx, id, secret)
	if err != nil {
		return nil, err
	}
	if in.PlanVersionID != nil {
		if _, err := s.sellablePlan(ctx, p, *in.PlanVersionID); err != nil {
			return nil, err
		}
	}
	if in.PartnerReferenceID != nil && len(*in.PartnerReferenceID) > 200 {
		return nil, subprov.Invalid(map[string]string{"partner_reference_id": "at most 200 characters"})
	}
	var ok bool
	if err := s.Store.InTx(ctx, func(tx *store.Tx) (err error) {
		ok, err = tx.PatchCheckoutSession(ctx, sess.ID, in.PlanVersionID, in.PartnerReferenceID)
		return err
	}); err != nil {
		return nil, err
	}
	if !ok {
		return nil, errNotOpen(sess.Status)
	}
	if sess, err = s.Store.CheckoutSession(ctx, id); err != nil {
		return nil, err
	}
	return s.view(ctx, p, sess)
}

// Cancel ends a pending or redirected session; it answers 410 from then on.
func (s *Service) Cancel(ctx context.Context, id, secret string) error {
	sess, _, err := s.session(ctx, id, secret)
	if err != nil {
		return err
	}
	return s.cancel(ctx, sess)
}

func (s *Service) cancel(ctx context.Context, sess *subprov.CheckoutSession) error {
	var ok bool
	if err := s.Store.InTx(ctx, func(tx *store.Tx) (err error) {
		ok, err = tx.CancelCheckoutSession(ctx, sess.ID, s.Clock.Now())
		return err
	}); err != nil {
		return err
	}
	if !ok {
		return errNotOpen(sess.Status)
	}
	return nil
}

func errNotOpen(status string) error {
	return subprov.Errorf(subprov.ECONFLICT, "session_not_open", "The checkout session is %s; only a pending or redirected session can change", status)
}

// SessionsOfAccount lists the sessions a signed-in shopper created, for GET /me.
func (s *Service) SessionsOfAccount(ctx context.Context, accountID string) ([]*subprov.CheckoutSession, error) {
	out, err := s.Store.CheckoutSessionsOfAccount(ctx, accountID)
	if err != nil {
		return nil, err
	}
	s.ShowExpired(out)
	return out, nil
}

// ShowExpired shows each pending session that has gone unread too long as expired, as it is at
// the service's clock, without touching its row (a read).
func (s *Service) ShowExpired(sessions []*subprov.CheckoutSession) {
	now := s.Clock.Now()
	for _, c := range sessions {
		if c.ExpiredByAge(now) {
			at := c.ExpiresAt()
			c.Status, c.ExpiredAt = subprov.SessionExpired, &at
		}
	}
}
