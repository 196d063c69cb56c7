package portal

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
)

// OrderWindowDays is how far ahead a portal order may ask service to start: from today (or
// the building's earliest service date, when later) to this many days after that first day.
const OrderWindowDays = 90

// OrderRequest is a portal order (docs/portal.md), also the query of its preview.
type OrderRequest struct {
	BuildingID               string
	PlanVersionID            string
	UnitID                   string
	RequestedStartDate       string
	EndCurrentSubscriptionID string
}

// Suite is one suite of a building as the portal offers it.
type Suite struct {
	subprov.UnitAvailability
	Route string // provision (first-line suite with a port) or install
}

// OrderOptions is what the caller can order in a building.
type OrderOptions struct {
	BuildingID          string
	Served              bool
	Route               string // provision or install; "" when not served
	LineType            subprov.LineType
	Suites              []Suite
	CurrentSubscription *subprov.Subscription
	PostalUnit          string
	Plans               []*subprov.PlanVersion
	EarliestStartDate   string
	LatestStartDate     string
}

func orderError(code subprov.Code, reason, msg string) error {
	return subprov.Errorf(code, reason, "%s", msg)
}

// account resolves the signed-in account to its subscriber and provider.
func (s *Service) account(ctx context.Context, acc *subprov.AccountLogin) (*subprov.Provider, error) {
	if acc == nil || acc.SubscriberID == "" {
		return nil, noSubscriber()
	}
	return s.Store.Provider(ctx, acc.ProviderID)
}

// runningLine is the caller's running line, the one a move replaces.
func (s *Service) runningLine(ctx context.Context, p *subprov.Provider, subscriberID string) (*subprov.Subscription, error) {
	lines, err := s.Store.SubscriptionsOfSubscriber(ctx, p.ID, subscriberID)
	if err != nil {
		return nil, err
	}
	for _, l := range lines {
		if l.Status == subprov.StatusActive {
			return l, nil
		}
	}
	return nil, nil
}

// orderableBuilding returns the building when the provider can take a portal order there,
// else not_served (or no_provider when no provider covers the address at all). A building
// the provider does not cover is 404, as an unknown or
// uncovered building is everywhere; one it covers that cannot take an order this way is 409.
func (s *Service) orderableBuilding(ctx context.Context, p *subprov.Provider, buildingID string) (*subprov.Building, error) {
	b, err := s.Store.CoveredBuilding(ctx, p.ID, buildingID)
	if errors.Is(err, subprov.ErrNotFound) {
		covering, err := s.Store.CoveringProviders(ctx, buildingID)
		if err != nil {
			return nil, err
		}
		if len(covering) == 0 {
			return nil, orderError(subprov.ENOTFOUND, "no_provider", "No provider serves this building")
		}
		return nil, orderError(subprov.ENOTFOUND, "not_served", p.Name+" does not serve this building")
	}
	if err != nil {
		return nil, err
	}
	if !b.LineType.Valid() || !b.Orderable {
		return b, orderError(subprov.ECONFLICT, "not_served", "This building cannot take orders from the portal yet")
	}
	return b, nil
}

func (s *Service) today(p *subprov.Provider) string { return p.Today(s.Clock.Now()) }

// window is the order window of a building: from today, or the building's earliest service
// date when later, to OrderWindowDays after that.
func (s *Service) window(p *subprov.Provider, b *subprov.Building) (string, string) {
	first := s.Clock.Now().In(p.Location())
	if b != nil && b.EarliestServiceDate > first.Format(time.DateOnly) {
		if d, err := time.Parse(time.DateOnly, b.EarliestServiceDate); err == nil {
			first = d
		}
	}
	return first.Format(time.DateOnly), first.AddDate(0, 0, OrderWindowDays).Format(time.DateOnly)
}

// OrderOptions lists what the caller can order in a building: whether it is served, the
// route, every suite with its availability, the caller's running line and its postal label.
func (s *Service) OrderOptions(ctx context.Context, acc *subprov.AccountLogin, buildingID string) (*OrderOptions, error) {
	p, err := s.holderAccount(ctx, acc)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(buildingID) == "" {
		return nil, subprov.Invalid(map[string]string{"building_id": "required"})
	}
	o := &OrderOptions{BuildingID: buildingID, Suites: []Suite{}, Plans: []*subprov.PlanVersion{}}
	if o.CurrentSubscription, err = s.runningLine(ctx, p, acc.SubscriberID); err != nil {
		return nil, err
	}
	if cur := o.CurrentSubscription; cur != nil && cur.UnitID != "" && cur.BuildingID == buildingID {
		if u, err := s.Store.Unit(ctx, cur.UnitID); err == nil {
			o.PostalUnit = u.PostalUnit
		}
	}
	b, err := s.orderableBuilding(ctx, p, buildingID)
	if err != nil {
		if _, coded := subprov.AsError(err); coded {
			return o, nil // not served: served false, nothing listed
		}
		return nil, err
	}
	units, err := s.Store.UnitsOfBuilding(ctx, b.ID)
	if err != nil {
		return nil, err
	}
	o.LineType, o.Route = b.LineType, "install"
	for _, u := range units {
		suite := Suite{UnitAvailability: u, Route: "install"}
		if b.LineType == subprov.LineFirst {
			if port, err := s.Store.PortIDOfUnit(ctx, u.ID); err != nil {
				return nil, err
			} else if port != "" {
				suite.Route, o.Route = "provision", "provision"
			}
		}
		o.Suites = append(o.Suites, suite)
	}
	o.Served = len(o.Suites) > 0
	if !o.Served {
		o.Route = ""
		return o, nil
	}
	if o.Plans, err = s.Store.SellablePlanVersions(ctx, p.ID); err != nil {
		return nil, err
	}
	o.EarliestStartDate, o.LatestStartDate = s.window(p, b)
	return o, nil
}

// OrderPlan is an order checked against the rules, before anything is written.
type OrderPlan struct {
	Provider     *subprov.Provider
	SubscriberID string
	Building     *subprov.Building
	Unit         *subprov.Unit
	Plan         *subprov.PlanVersion
	PortID       string
	Route        string // provision or install
	StartDate    string
	End          *subprov.Subscription // the running line the order replaces
	Customer     string
	Method       string
	Quote        *billing.Quote // the first invoice charged at once (provision route)
}

// Booking is who books the install visit: customer on a third-line building, operator
// otherwise; "" on the provision route.
func (o *OrderPlan) Booking() string {
	switch {
	case o.Route == "provision":
		return ""
	case o.Building.LineType == subprov.LineThird:
		return "customer"
	}
	return "operator"
}

// checkOrder applies the order rules in the order a person would fix them; it returns what
// it resolved so far with the first problem. It writes nothing.
func (s *Service) checkOrder(ctx context.Context, acc *subprov.AccountLogin, r OrderRequest) (*OrderPlan, error) {
	p, err := s.holderAccount(ctx, acc)
	if err != nil {
		return nil, err
	}
	o := &OrderPlan{Provider: p, SubscriberID: acc.SubscriberID}
	// What is missing or malformed is answered in one go, every field named. A missing suite
	// alone keeps its own code (suite_required), once building and plan are there to check.
	missing := map[string]string{}
	if strings.TrimSpace(r.BuildingID) == "" {
		missing["building_id"] = "required"
	}
	if strings.TrimSpace(r.PlanVersionID) == "" {
		missing["plan_version_id"] = "required"
	}
	if d := strings.TrimSpace(r.RequestedStartDate); d != "" {
		if _, perr := time.Parse(time.DateOnly, d); perr != nil {
			missing["requested_start_date"] = "want a date YYYY-MM-DD"
		}
	}
	if len(missing) > 0 {
		if strings.TrimSpace(r.UnitID) == "" {
			missing["unit_id"] = "required"
		}
		return o, subprov.Invalid(missing)
	}
	if o.Building, err = s.orderableBuilding(ctx, p, r.BuildingID); err != nil {
		return o, err
	}
	if o.Plan, err = s.Store.PlanVersion(ctx, p.ID, r.PlanVersionID); err != nil || !o.Plan.Sellable {
		if err == nil || errors.Is(err, subprov.ErrNotFound) {
			o.Plan = nil
			return o, orderError(subprov.ENOTFOUND, "plan_not_found", "No plan of this provider with this plan_version_id is on sale")
		}
		return o, err
	}
	if strings.TrimSpace(r.UnitID) == "" {
		return o, orderError(subprov.EINVALID, "suite_required", "Choose the suite (unit_id) the line is for")
	}
	if o.Unit, err = s.Store.Unit(ctx, r.UnitID); err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return o, orderError(subprov.ENOTFOUND, "suite_not_found", "No suite with this unit_id")
		}
		return o, err
	}
	if o.Unit.BuildingID != o.Building.ID {
		return o, orderError(subprov.EINVALID, "suite_mismatch", "The suite is not in this building")
	}
	if o.PortID, err = s.Store.PortIDOfUnit(ctx, o.Unit.ID); err != nil {
		return o, err
	}
	earliest, latest := s.window(p, o.Building)
	o.StartDate = earliest
	if d := strings.TrimSpace(r.RequestedStartDate); d != "" {
		if d < earliest || d > latest {
			return o, &subprov.Error{Code: subprov.EINVALID, Reason: "order_window", Message: fmt.Sprintf("The start date must be from %s to %s", earliest, latest),
				Fields: map[string]string{"requested_start_date": fmt.Sprintf("want %s to %s", earliest, latest)}}
		}
		o.StartDate = d
	}
	o.Route = "install"
	if o.Building.LineType == subprov.LineFirst && o.PortID != "" && o.StartDate == s.today(p) {
		o.Route = "provision"
	}
	held, err := s.Store.UnitHeldByOther(ctx, o.Unit.ID, "")
	if err != nil {
		return o, err
	}
	if held {
		return o, orderError(subprov.ECONFLICT, "suite_held", "The suite is held by another order or line")
	}
	if id := strings.TrimSpace(r.EndCurrentSubscriptionID); id != "" {
		end, err := s.Store.Subscription(ctx, p.ID, id)
		if err != nil || end.SubscriberID != acc.SubscriberID {
			if err == nil || errors.Is(err, subprov.ErrNotFound) {
				return o, subprov.NotFound("Subscription")
			}
			return o, err
		}
		if end.Status != subprov.StatusActive {
			return o, orderError(subprov.ECONFLICT, "not_running", "The line to end is not running")
		}
		o.End = end
	}
	if o.Route == "provision" {
		o.Quote = s.Billing.FirstInvoiceQuote(p, o.Plan)
	}
	return o, nil
}

// savedCard returns the account's card on file: the processor customer and the card AutoPay
// charges. no_payment_method when there is none.
func (s *Service) savedCard(ctx context.Context, p *subprov.Provider, subscriberID string) (string, string, error) {
	none := orderError(subprov.ECONFLICT, "no_payment_method", "There is no saved card on the account; add one under payment method first")
	if p.PaymentProcessor == "none" {
		return "", "", none
	}
	customer, method, err := s.Store.SubscriberProcessor(ctx, subscriberID)
	if err != nil {
		return "", "", err
	}
	if customer == "" {
		return "", "", none
	}
	if method == "" {
		c, err := s.Processor.Customer(ctx, p, customer)
		if err != nil {
			return "", "", billing.ChargeError(err)
		}
		method = c.AdoptableMethod()
	}
	if method == "" {
		return "", "", none
	}
	return customer, method, nil
}

// OrderPreview is the order as it would be placed, with the problems that stop it.
type OrderPreview struct {
	Plan     *OrderPlan
	Blockers []string
}

// PreviewOrder checks an order without placing it. Problems, a missing card included, come
// back as blockers, never as an error (only a login without a subscriber record is one).
func (s *Service) PreviewOrder(ctx context.Context, acc *subprov.AccountLogin, r OrderRequest) (*OrderPreview, error) {
	o, err := s.checkOrder(ctx, acc, r)
	if o == nil {
		return nil, err
	}
	pv := &OrderPreview{Plan: o, Blockers: []string{}}
	if err != nil {
		e, ok := subprov.AsError(err)
		if !ok {
			return nil, err
		}
		pv.Blockers = append(pv.Blockers, blocker(e))
	}
	if _, _, cerr := s.savedCard(ctx, o.Provider, o.SubscriberID); cerr != nil {
		e, ok := subprov.AsError(cerr)
		if !ok {
			return nil, cerr
		}
		pv.Blockers = append(pv.Blockers, e.Message)
	}
	return pv, nil
}

// blocker is the sentence a preview shows for what would refuse the order: its message, or
// for a request that lacks fields or has malformed ones, each field with its problem ("unit_id
// is required."), so the sentence says what to send rather than "Request validation failed".
func blocker(e *subprov.Error) string {
	if e.Reason != "validation_error" || len(e.Fields) == 0 {
		return e.Message
	}
	names := make([]string, 0, len(e.Fields))
	for f := range e.Fields {
		names = append(names, f)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, f := range names {
		if e.Fields[f] == "required" {
			parts = append(parts, f+" is required.")
		} else {
			parts = append(parts, f+": "+e.Fields[f]+".")
		}
	}
	return strings.Join(parts, " ")
}

// OrderResult is a placed portal order.
type OrderResult struct {
	Plan         *OrderPlan
	Subscription *subprov.Subscription
	FirstCharge  *subprov.Invoice      // provision route: the first invoice, paid
	Ended        *subprov.Subscription // the running line cancelled for the move-in date
}

// PlaceOrder orders a new line on the caller's account, paid with the saved card (billing
// owner platform, source portal). The provision route charges the first invoice at once,
// before anything is written: a declined card leaves nothing behind. The running line named
// by end_current_subscription_id is cancelled for the move-in date only once the order
// stands.
func (s *Service) PlaceOrder(ctx context.Context, acc *subprov.AccountLogin, r OrderRequest) (*OrderResult, error) {
	o, err := s.checkOrder(ctx, acc, r)
	if err != nil {
		return nil, err
	}
	p := o.Provider
	if o.Customer, o.Method, err = s.savedCard(ctx, p, o.SubscriberID); err != nil {
		return nil, err
	}
	res := &OrderResult{Plan: o}
	key := "portal-order:" + store.NewID()
	var charge *payments.Charge
	if o.Route == "provision" {
		if charge, err = s.Billing.ChargeNow(ctx, p, o.Customer, o.Method, o.Quote, key, "First invoice — "+o.Plan.PlanName); err != nil {
			return nil, err
		}
	}
	line := &provisioning.PortalLine{SubscriberID: o.SubscriberID, Plan: o.Plan, Building: o.Building, UnitID: o.Unit.ID, PortID: o.PortID,
		Provision: o.Route == "provision", RequestedStartDate: o.StartDate, ProcessorCustomerID: o.Customer, PaymentMethodID: o.Method}
	endID := ""
	if o.End != nil {
		endID = o.End.ID
	}
	sub, err := s.Provisioning.PlacePortalLine(ctx, p, line, func(tx *store.Tx, sub *subprov.Subscription) error {
		if charge != nil {
			inv, err := s.Billing.BookPaid(ctx, tx, p, sub, o.Quote, charge, key)
			if err != nil {
				return err
			}
			res.FirstCharge = inv
		}
		details := fmt.Sprintf(`{"route":%q,"plan_version_id":%q,"unit_id":%q,"requested_start_date":%q,"end_current_subscription_id":%q}`,
			o.Route, o.Plan.ID, o.Unit.ID, o.StartDate, endID)
		return tx.InsertAudit(ctx, p.ID, "subscriber:"+acc.ID, "subscription.ordered_from_portal", sub.ID, details, s.Clock.Now())
	})
	if err != nil {
		if charge != nil {
			s.Billing.GiveBack(ctx, p, charge, o.Quote.Total, key)
		}
		return nil, err
	}
	res.Subscription = sub
	if o.End != nil {
		ended, err := s.Provisioning.CancelForMove(ctx, o.End.ID, o.StartDate, "subscriber:"+acc.ID)
		if err != nil {
			s.Log.Error("order placed but the line it replaces was not cancelled", "subscription_id", o.End.ID, "err", err)
		} else {
			res.Ended = ended
		}
	}
	return res, nil
}
