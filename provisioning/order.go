package provisioning

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/metrics"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// Subscriber is the person an order is for.
type Subscriber struct {
	FirstName, LastName, Email, PhoneNumber, Company string
}

// BillingBlock is the optional billing block of an order (billing-owner rules).
type BillingBlock struct {
	Owner               subprov.BillingOwner
	ProcessorCustomerID string
	// BillingDay is 1 to 10; nil (left out, or null) means the default, 1. An explicit 0 is
	// refused like any other day outside 1-10 (Limits).
	BillingDay *int
}

// day is the line's billing day: the block's, else the default 1.
func (b *BillingBlock) day() int {
	if b == nil || b.BillingDay == nil {
		return 1
	}
	return *b.BillingDay
}

// Routing says what decides an order's route.
type Routing int

const (
	// ByDeliveryMode: the caller's delivery_mode says what it has and must fit the building
	// (provider-initiated, bulk, anonymous-complete; docs/provisioning.md, Routing).
	ByDeliveryMode Routing = iota
	// ByLineType: the building's line type decides; only a first-line building with a
	// resolvable port provisions unattended, everything else takes the install route
	// (external-checkout complete: docs/checkout.md, Complete).
	ByLineType
)

// Order is one order for a line: provider-initiated, bulk, or a marketplace completion.
type Order struct {
	PlanVersionID          string
	DeliveryMode           subprov.DeliveryMode
	LocationHash           string
	LocationIdentifier     string
	UnitID                 string
	MACAddress             string
	ExternalSubscriptionID string
	Subscriber             Subscriber
	Billing                *BillingBlock
	Source                 string // provider_initiated, bulk, checkout, anonymous_checkout
	Routing                Routing
	// SessionID is the checkout session the order completes. Its values were copied into the
	// order by the checkout package; here it means "session-based": a sandbox provider's
	// session never provisions a switch unattended, and the line records the session.
	SessionID string
	// Anonymous orders have no subscriber record (anonymous-complete): no invoices, no portal
	// access; ContactEmail, if any, is kept on the line only.
	Anonymous    bool
	ContactEmail string
	// AfterCreate runs inside the order's transaction when the line is new (not on replay),
	// so a caller's own record (a completed checkout session) commits with the line or not at all.
	AfterCreate func(ctx context.Context, tx *store.Tx, sub *subprov.Subscription) error
}

// Result is what an order produced (or found, on replay).
type Result struct {
	Subscription   *subprov.Subscription
	SubscriberID   string
	CustomerNumber string
	Route          string // provision or install
	JobID          string // the provisioning job; "" on the install route and on replay
	Replay         bool
}

// Validate checks the order's fields on their own; it returns field -> problem.
func (o *Order) Validate() map[string]string {
	p := map[string]string{}
	if strings.TrimSpace(o.PlanVersionID) == "" {
		p["plan_version_id"] = "required"
	}
	CheckDelivery(&o.DeliveryMode, &o.MACAddress, p)
	if !o.Anonymous {
		s := &o.Subscriber
		for field, v := range map[string]string{"subscriber.firstname": s.FirstName, "subscriber.lastname": s.LastName,
			"subscriber.email": s.Email, "subscriber.phonenumber": s.PhoneNumber} {
			if strings.TrimSpace(v) == "" {
				p[field] = "required"
			}
		}
		if s.Email != "" && !auth.ValidEmail(strings.TrimSpace(s.Email)) {
			p["subscriber.email"] = "not a valid e-mail address"
		}
	}
	if o.ContactEmail = strings.TrimSpace(o.ContactEmail); o.ContactEmail != "" && !auth.ValidEmail(o.ContactEmail) {
		p["contact_email"] = "not a valid e-mail address"
	}
	if len(o.ExternalSubscriptionID) > 200 {
		p["external_subscription_id"] = "at most 200 characters"
	}
	if b := o.Billing; b != nil {
		switch b.Owner {
		case "":
			b.Owner = subprov.BillingPartner
		case subprov.BillingPartner, subprov.BillingPlatform:
		default:
			p["billing.owner"] = "want partner or platform"
		}
		if d := b.day(); d < 1 || d > 10 {
			p["billing.billing_day"] = "want 1 to 10"
		}
		if b.Owner == subprov.BillingPlatform && strings.TrimSpace(b.ProcessorCustomerID) == "" {
			p["billing.processor_customer_id"] = "required when owner is platform"
		}
	}
	return p
}

// CheckDelivery defaults an empty delivery mode to direct and normalises a MAC address in
// place, recording what is wrong in problems; orders and checkout sessions share it.
func CheckDelivery(mode *subprov.DeliveryMode, mac *string, problems map[string]string) {
	switch *mode {
	case "":
		*mode = subprov.DeliveryDirect
	case subprov.DeliveryDirect, subprov.DeliveryHomeDrop:
	default:
		problems["delivery_mode"] = "want direct or home_drop"
	}
	if *mac != "" {
		m, ok := subprov.NormalizeMAC(*mac)
		if !ok {
			problems["mac_address"] = "not a MAC address"
		}
		*mac = m
	}
}

// placement is an order resolved against the network: where it goes and how.
type placement struct {
	plan     *subprov.PlanVersion
	building *subprov.Building
	unitID   string
	port     *subprov.Port
	route    string
}

func invalid(field, msg string) error { return subprov.Invalid(map[string]string{field: msg}) }

// place resolves plan, port or suite, and building, and decides the route
// (docs/provisioning.md, Routing; docs/checkout.md, Complete). Everything it refuses is 422 and
// nothing is written. Only a first-line building with a resolvable port provisions a switch
// unattended; a sandbox provider's session never does, while a legacy no-session direct
// order against a sandbox provider queues a provisioning job that ends as provisioning.failed.
func (s *Service) place(ctx context.Context, p *subprov.Provider, o *Order) (*placement, error) {
	pl := &placement{}
	plan, err := s.Store.PlanVersion(ctx, p.ID, o.PlanVersionID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, invalid("plan_version_id", "no plan version of this provider with this id")
		}
		return nil, err
	}
	if !plan.Sellable {
		return nil, invalid("plan_version_id", "this plan version is no longer sold")
	}
	pl.plan = plan
	hasPort := o.LocationHash != "" || o.LocationIdentifier != ""
	direct, session := o.DeliveryMode == subprov.DeliveryDirect, o.SessionID != ""
	switch {
	case !hasPort && o.UnitID == "":
		return nil, invalid("location_hash", "give a port (location_hash or location_identifier) or a unit_id")
	case o.Routing == ByDeliveryMode && direct && !hasPort:
		return nil, invalid("location_hash", "delivery_mode direct needs a location_hash or location_identifier that resolves to a port")
	case !session && o.DeliveryMode == subprov.DeliveryHomeDrop && o.UnitID == "":
		return nil, invalid("unit_id", "delivery_mode home_drop needs a unit_id")
	}
	// A session-based completion routes on the port whenever the session names one; otherwise
	// the port counts only when the caller says it is delivering direct.
	if hasPort && (direct || (o.Routing == ByLineType && session)) {
		return s.placeAtPort(ctx, p, o, pl)
	}
	// A suite in a building the provider does not cover answers as an unknown one: an order
	// never tells which ids exist in other providers' coverage.
	noUnit := func() error { return invalid("unit_id", "no unit with this id") }
	unit, err := s.Store.Unit(ctx, o.UnitID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, noUnit()
		}
		return nil, err
	}
	b, err := s.Store.CoveredBuilding(ctx, p.ID, unit.BuildingID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, noUnit()
		}
		return nil, err
	}
	if !b.LineType.Valid() && !p.Sandbox { // sandbox buildings have no line type and route to install
		return nil, invalid("unit_id", "the building is not classified yet and cannot take orders")
	}
	if err := Orderable(b, "unit_id"); err != nil {
		return nil, err
	}
	pl.building, pl.unitID, pl.route = b, unit.ID, "install"
	return pl, nil
}

// Orderable refuses an order on a building the operator has closed to orders (orderable
// false): serviceability only advises, and says serviceable false there; the order itself
// re-checks, fail-closed (docs/provisioning.md), and so does a new checkout session. field is
// the request field that named the building.
func Orderable(b *subprov.Building, field string) error {
	if !b.Orderable {
		return invalid(field, "the building is not orderable: it takes no orders at present")
	}
	return nil
}

// placeAtPort places an order that names a port.
func (s *Service) placeAtPort(ctx context.Context, p *subprov.Provider, o *Order, pl *placement) (*placement, error) {
	// As for a suite: a port outside the provider's coverage answers as an unknown one.
	noPort := func() error {
		return invalid("location_hash", "no port with this location_hash or location_identifier")
	}
	loc, err := s.Store.LocationByPortFor(ctx, p.ID, o.LocationHash, o.LocationIdentifier)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, noPort()
		}
		return nil, err
	}
	if !loc.Covered {
		return nil, noPort()
	}
	b := &loc.Building
	if err := Orderable(b, "location_hash"); err != nil {
		return nil, err
	}
	if o.UnitID != "" && loc.Port.UnitID != "" && o.UnitID != loc.Port.UnitID {
		return nil, invalid("unit_id", "the unit does not match the port's suite")
	}
	port := loc.Port
	pl.building, pl.port, pl.unitID = b, &port, loc.Port.UnitID
	session := o.SessionID != ""
	switch {
	case p.Sandbox && !session, b.LineType == subprov.LineFirst && !p.Sandbox:
		pl.route = "provision"
	case session && pl.unitID != "":
		pl.port, pl.route = nil, "install" // the session's port is not switchable unattended: a technician installs
	case session:
		return nil, invalid("location_hash", "the port's building cannot be provisioned unattended and the port has no suite to install")
	default:
		return nil, invalid("delivery_mode", "direct names a port, but the building is not first-line: order home_drop with a unit_id")
	}
	return pl, nil
}

// billingError builds a billing-owner refusal whose detail starts with its code
// (docs/provisioning.md, Billing owner).
func billingError(code subprov.Code, reason, msg string) error {
	return &subprov.Error{Code: code, Reason: reason, Message: reason + ": " + msg}
}

// verifyBilling checks, before anything is written, that the service can bill the processor
// customer, and returns the payment method it will adopt (docs/provisioning.md, Billing owner).
func (s *Service) verifyBilling(ctx context.Context, p *subprov.Provider, b *BillingBlock) (string, error) {
	c, err := s.Processor.Customer(ctx, p, b.ProcessorCustomerID)
	switch {
	case errors.Is(err, payments.ErrNotConnected):
		return "", billingError(subprov.ECONFLICT, "billing_not_available", "the provider has no payment-processor connection")
	case errors.Is(err, payments.ErrCustomerNotFound):
		return "", billingError(subprov.EINVALID, "processor_customer_not_found", "no such customer in the provider's processor account")
	case errors.Is(err, payments.ErrUnavailable):
		return "", billingError(subprov.EUNAVAILABLE, "processor_unavailable", "the payment processor did not answer; nothing was created, retry later")
	case err != nil:
		return "", err
	}
	pm := c.AdoptableMethod()
	if pm == "" {
		return "", billingError(subprov.EINVALID, "processor_customer_has_no_payment_method", "the customer has no saved card")
	}
	return pm, nil
}

// PlaceOrder creates (or reuses by e-mail) the subscriber and the line, then provisions the
// port through a job or opens an install job. Idempotent per (subscriber e-mail, plan version,
// location): a replay answers the existing line with its real status.
func (s *Service) PlaceOrder(ctx context.Context, p *subprov.Provider, o *Order) (*Result, error) {
	route := ""
	res, err := s.placeOrder(ctx, p, o, &route)
	switch {
	case err != nil:
		s.Metrics.Order(route, metrics.OrderRefused, subprov.ErrorReason(err))
	case res.Replay:
		s.Metrics.Order(res.Route, metrics.OrderReplayed, "")
	default:
		s.Metrics.Order(res.Route, metrics.OrderCreated, "")
	}
	return res, err
}

// placeOrder is PlaceOrder; it sets *route once the order is routed.
func (s *Service) placeOrder(ctx context.Context, p *subprov.Provider, o *Order, route *string) (*Result, error) {
	if problems := o.Validate(); len(problems) > 0 {
		return nil, subprov.Invalid(problems)
	}
	pl, err := s.place(ctx, p, o)
	if err != nil {
		return nil, err
	}
	*route = pl.route
	billing := BillingBlock{Owner: subprov.BillingPartner}
	if o.Billing != nil {
		billing = *o.Billing
	}
	var methodID string
	if billing.Owner == subprov.BillingPlatform {
		if methodID, err = s.verifyBilling(ctx, p, &billing); err != nil {
			return nil, err
		}
	}
	now := s.Clock.Now()
	var res *Result
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		res = nil
		holder := subprov.Contact{FirstName: strings.TrimSpace(o.Subscriber.FirstName), LastName: strings.TrimSpace(o.Subscriber.LastName),
			Email: strings.TrimSpace(o.Subscriber.Email), PhoneNumber: strings.TrimSpace(o.Subscriber.PhoneNumber), Company: o.Subscriber.Company}
		if billing.Owner == subprov.BillingPlatform {
			inUse, err := tx.ProcessorCustomerInUse(ctx, p.ID, billing.ProcessorCustomerID, holder.Email)
			if err != nil {
				return err
			}
			if inUse {
				return billingError(subprov.ECONFLICT, "processor_customer_in_use", "the processor customer already pays for another subscriber's line")
			}
		}
		subscriber := &subprov.Subscriber{}
		if !o.Anonymous {
			if subscriber, _, err = tx.EnsureSubscriber(ctx, p.ID, holder, now); err != nil {
				return err
			}
		}
		sub := &subprov.Subscription{ID: store.NewID(), ProviderID: p.ID, SubscriberID: subscriber.ID, PlanVersionID: pl.plan.ID,
			BuildingID: pl.building.ID, UnitID: pl.unitID, DeliveryMode: o.DeliveryMode, MACAddress: o.MACAddress,
			BillingOwner: billing.Owner, BillingDay: billing.day(), ExternalSubscriptionID: o.ExternalSubscriptionID,
			Source: o.Source, Anonymous: o.Anonymous, ContactEmail: o.ContactEmail, CheckoutSessionID: o.SessionID}
		if billing.Owner == subprov.BillingPlatform {
			sub.ProcessorCustomerID, sub.PaymentMethodID = billing.ProcessorCustomerID, methodID
		}
		action, workflow := ActAwaitInstall, WorkflowAwaitingInstall
		if pl.route == "provision" {
			sub.PortID = pl.port.ID
			sub.VLAN = switches.ServiceVLAN(switches.Port{Switch: pl.port.Switch, Name: pl.port.Name})
			action, workflow = ActProvision, WorkflowProvisioning
		} else if port, err := tx.PortOfUnit(ctx, pl.unitID); err != nil {
			return err
		} else if port != "" {
			sub.PortID = port // a first-line suite reached by suite only: the port is switched on after install
		}
		if sub.Status, err = Next(fresh, action); err != nil {
			return err
		}
		sub.WorkflowState = workflow
		inserted, err := tx.InsertSubscription(ctx, sub, now)
		if err != nil {
			return err
		}
		if !inserted {
			res, err = s.replay(ctx, tx, p, subscriber, pl, subprov.LocationKey(sub.UnitID, sub.PortID), o)
			return err
		}
		res = &Result{Subscription: sub, SubscriberID: subscriber.ID, CustomerNumber: subscriber.CustomerNumber, Route: pl.route}
		if o.AfterCreate != nil {
			if err := o.AfterCreate(ctx, tx, sub); err != nil {
				return err
			}
		}
		if pl.route == "provision" {
			if _, err := s.Events.Record(ctx, tx, p, subprov.EventSubscriptionActivated, sub, nil); err != nil {
				return err
			}
			jobID, err := s.enqueueProvision(ctx, tx, sub, false)
			if err != nil {
				return err
			}
			res.JobID = jobID
			return nil
		}
		if _, err := s.Events.Record(ctx, tx, p, subprov.EventSubscriptionPendingInstall, sub, nil); err != nil {
			return err
		}
		return s.openInstall(ctx, tx, p, sub, pl.building, "install", now)
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// replay answers an order whose line already exists: the same subscriber (or, anonymous, the
// same external id or checkout session) with the same plan at the same place is the idempotent
// answer (a SUSPENDED line counts), with the route that line took; an external id names one
// line, so one that names a line of anyone else, of another plan or at another place is 409
// external_id_in_use (the same subscriber and plan elsewhere is a second line, which needs an
// id of its own); any other line holding the place (another subscriber's, or a cancelled one
// whose service has not ended) is 409 location_in_use.
func (s *Service) replay(ctx context.Context, tx *store.Tx, p *subprov.Provider, subscriber *subprov.Subscriber, pl *placement,
	place string, o *Order) (*Result, error) {
	same := func(ex *subprov.Subscription) bool {
		return ex.ProviderID == p.ID && ex.PlanVersionID == pl.plan.ID && ex.Anonymous == o.Anonymous &&
			(o.Anonymous || ex.SubscriberID == subscriber.ID) && subprov.LocationKey(ex.UnitID, ex.PortID) == place
	}
	answer := func(ex *subprov.Subscription) (*Result, error) {
		route, err := s.RouteOf(ctx, tx, ex)
		if err != nil {
			return nil, err
		}
		return &Result{Subscription: ex, SubscriberID: ex.SubscriberID, CustomerNumber: subscriber.CustomerNumber, Route: route, Replay: true}, nil
	}
	if o.ExternalSubscriptionID != "" {
		if ex, err := tx.SubscriptionByExternalID(ctx, p.ID, o.ExternalSubscriptionID); err == nil {
			if !same(ex) {
				return nil, subprov.Errorf(subprov.ECONFLICT, "external_id_in_use", "external_id_in_use: external_subscription_id already names another line")
			}
			return answer(ex)
		} else if !errors.Is(err, subprov.ErrNotFound) {
			return nil, err
		}
	}
	if o.SessionID != "" {
		if ex, err := tx.SubscriptionByCheckoutSession(ctx, o.SessionID); err == nil {
			return answer(ex)
		} else if !errors.Is(err, subprov.ErrNotFound) {
			return nil, err
		}
	}
	holder, err := tx.LineHolding(ctx, place)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, subprov.Errorf(subprov.ECONFLICT, "conflict", "the order conflicts with an existing line; retry")
		}
		return nil, err
	}
	if holder.Status == subprov.StatusCancelled {
		until := "its port is reset"
		if holder.EndedAt != nil {
			until = "its service ends at " + holder.EndedAt.UTC().Format(time.RFC3339) + " and its port is reset"
		}
		return nil, subprov.Errorf(subprov.ECONFLICT, "location_in_use", "location_in_use: a cancelled line keeps this location until %s", until)
	}
	if !same(holder) || o.Anonymous {
		return nil, subprov.Errorf(subprov.ECONFLICT, "location_in_use", "location_in_use: another line already uses this location (its suite or its port)")
	}
	return answer(holder)
}

// RouteOf is the route an existing line took, for a replay (whatever route the repeated
// request would take now): install when it has had an install job, or has no port to have
// been provisioned on (a line loaded from a fixture has no jobs); provision otherwise. q is
// the store's reader or the order's transaction.
func (s *Service) RouteOf(ctx context.Context, q store.Querier, sub *subprov.Subscription) (string, error) {
	if sub.PortID == "" {
		return "install", nil
	}
	installed, err := s.Store.HadInstallJob(ctx, q, sub.ID)
	if err != nil || !installed {
		return "provision", err
	}
	return "install", nil
}

// enqueueProvision records the line's port's desired setting and queues the job that converges
// it and reports the outcome, returning the id partners know the job by
// (jobs.ProvisionPort.JobID): the outcome's webhook names the same id.
func (s *Service) enqueueProvision(ctx context.Context, tx *store.Tx, sub *subprov.Subscription, quiet bool) (string, error) {
	if _, err := s.wantPort(ctx, tx, sub.PortID); err != nil {
		return "", err
	}
	job := jobs.ProvisionPort{SubscriptionID: sub.ID, Quiet: quiet}
	if err := s.Jobs.Enqueue(ctx, tx, job); err != nil {
		return "", err
	}
	return job.JobID(), nil
}

// provisioningOutcome is the data of a provisioning.completed or provisioning.failed event
// beyond the line's own: the job_id the order answered, and a failure's reason.
func provisioningOutcome(sub *subprov.Subscription, reason string) map[string]any {
	data := map[string]any{"job_id": jobs.ProvisionPort{SubscriptionID: sub.ID}.JobID()}
	if reason != "" {
		data["reason"] = reason
	}
	return data
}

// openInstall records the install route: the install job (opened by the install package: who
// books it, flags, booking invitation) and the provider's install ticket. The event
// subscription.pending_install is the caller's: a provider's order records it, the portal's
// orders and reactivations do not (the subscriber surface emits none: docs/portal.md).
func (s *Service) openInstall(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, b *subprov.Building,
	kind string, now time.Time) error {
	job, err := s.Installs.Open(ctx, tx, p, sub, b, kind, now)
	if err != nil {
		return err
	}
	booking := job.Booking
	if booking == "" {
		booking = "none"
	}
	return s.Tickets.Open(ctx, tx, &subprov.Ticket{ProviderID: p.ID, SubscriberID: sub.SubscriberID, Kind: "install",
		Subject: fmt.Sprintf("Install %s line at %s", b.LineType, b.Street), Article: fmt.Sprintf("New %s job for subscription %s (booking: %s).", kind, sub.ID, booking)})
}
