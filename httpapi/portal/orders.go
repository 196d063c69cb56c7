package portal

import (
	"net/http"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/portal"
)

// Portal orders and reactivation (docs/portal.md).

type portalOrderRequest struct {
	BuildingID               string `json:"building_id"`
	PlanVersionID            string `json:"plan_version_id"`
	UnitID                   string `json:"unit_id"`
	RequestedStartDate       string `json:"requested_start_date"`
	EndCurrentSubscriptionID string `json:"end_current_subscription_id"`
}

func (q portalOrderRequest) portal() portal.OrderRequest {
	return portal.OrderRequest{BuildingID: q.BuildingID, PlanVersionID: q.PlanVersionID, UnitID: q.UnitID,
		RequestedStartDate: q.RequestedStartDate, EndCurrentSubscriptionID: q.EndCurrentSubscriptionID}
}

// portalLineJSON is a line as the portal's order and reactivation answers show it. Fields are
// in name order in this and every answer, as the maps the answers once were encoded them.
type portalLineJSON struct {
	BuildingID         string         `json:"building_id"`
	CanceledAt         *string        `json:"canceled_at"`
	EndedAt            *string        `json:"ended_at"`
	PlanVersionID      string         `json:"plan_version_id"`
	RequestedStartDate *string        `json:"requested_start_date"`
	Status             subprov.Status `json:"status"`
	SubscriptionID     string         `json:"subscription_id"`
	UnitID             *string        `json:"unit_id"`
}

// lineOf is sub as the portal shows it, nil for no line.
func lineOf(sub *subprov.Subscription) *portalLineJSON {
	if sub == nil {
		return nil
	}
	return &portalLineJSON{SubscriptionID: sub.ID, Status: sub.Status, PlanVersionID: sub.PlanVersionID,
		BuildingID: sub.BuildingID, UnitID: api.Optional(sub.UnitID), RequestedStartDate: api.Optional(sub.RequestedStartDate),
		CanceledAt: api.Instant(sub.CanceledAt), EndedAt: api.Instant(sub.EndedAt)}
}

type portalPlanJSON struct {
	DownloadMbps  int           `json:"download_mbps"`
	MonthlyPrice  subprov.Money `json:"monthly_price"`
	Name          string        `json:"name"`
	PlanVersionID string        `json:"plan_version_id"`
	Promo         *promoJSON    `json:"promo"`
	SetupFee      subprov.Money `json:"setup_fee"`
	UploadMbps    int           `json:"upload_mbps"`
}

func portalPlanOf(pv *subprov.PlanVersion, today string) portalPlanJSON {
	return portalPlanJSON{PlanVersionID: pv.ID, Name: pv.PlanName, MonthlyPrice: pv.MonthlyPrice, SetupFee: pv.SetupFee,
		DownloadMbps: pv.DownloadMbps, UploadMbps: pv.UploadMbps, Promo: promoOf(pv, today)}
}

type promoJSON struct {
	EndsOn *string       `json:"ends_on"`
	Price  subprov.Money `json:"price"`
}

// promoOf is the plan's promotion live today, nil for none.
func promoOf(pv *subprov.PlanVersion, today string) *promoJSON {
	price := pv.PromoOn(today)
	if price == nil {
		return nil
	}
	return &promoJSON{Price: *price, EndsOn: api.Optional(pv.PromoEndsOn)}
}

func (h *Handler) localToday(p *subprov.Provider) string {
	return h.Clock.Now().In(p.Location()).Format("2006-01-02")
}

// OrderOptions: GET /partner/subscriber/me/orders/options?building_id=
func (h *Handler) OrderOptions(w http.ResponseWriter, r *http.Request) error {
	_, p, err := h.subscriberOf(r)
	if err != nil {
		return err
	}
	o, err := h.Portal.OrderOptions(r.Context(), api.CallerOf(r).Account, r.URL.Query().Get("building_id"))
	if err != nil {
		return err
	}
	suites := make([]suiteJSON, 0, len(o.Suites))
	for _, u := range o.Suites {
		suites = append(suites, suiteJSON{UnitID: u.ID, UnitNumber: u.UnitNumber, PostalUnit: api.Optional(u.PostalUnit),
			Available: u.Available, Route: u.Route})
	}
	plans := make([]portalPlanJSON, 0, len(o.Plans))
	for _, pv := range o.Plans {
		plans = append(plans, portalPlanOf(pv, h.localToday(p)))
	}
	api.JSON(w, http.StatusOK, orderOptionsJSON{BuildingID: o.BuildingID, Served: o.Served, Route: api.Optional(o.Route),
		LineType: api.Optional(string(o.LineType)), Suites: suites, Units: suites, CurrentSubscription: lineOf(o.CurrentSubscription),
		PostalUnit: api.Optional(o.PostalUnit), Plans: plans,
		OrderWindow: orderWindowJSON{Earliest: api.Optional(o.EarliestStartDate), Latest: api.Optional(o.LatestStartDate)}})
	return nil
}

type orderOptionsJSON struct {
	BuildingID          string           `json:"building_id"`
	CurrentSubscription *portalLineJSON  `json:"current_subscription"`
	LineType            *string          `json:"line_type"`
	OrderWindow         orderWindowJSON  `json:"order_window"`
	Plans               []portalPlanJSON `json:"plans"`
	PostalUnit          *string          `json:"postal_unit"`
	Route               *string          `json:"route"`
	Served              bool             `json:"served"`
	Suites              []suiteJSON      `json:"suites"`
	Units               []suiteJSON      `json:"units"` // the suites again, under their older name
}

type suiteJSON struct {
	Available  bool    `json:"available"`
	PostalUnit *string `json:"postal_unit"`
	Route      string  `json:"route"`
	UnitID     string  `json:"unit_id"`
	UnitNumber string  `json:"unit_number"`
}

type orderWindowJSON struct {
	Earliest *string `json:"earliest"`
	Latest   *string `json:"latest"`
}

// OrderPreview: GET /partner/subscriber/me/orders/preview — problems are blockers.
func (h *Handler) OrderPreview(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	req := portalOrderRequest{BuildingID: q.Get("building_id"), PlanVersionID: q.Get("plan_version_id"), UnitID: q.Get("unit_id"),
		RequestedStartDate: q.Get("requested_start_date"), EndCurrentSubscriptionID: q.Get("end_current_subscription_id")}
	pv, err := h.Portal.PreviewOrder(r.Context(), api.CallerOf(r).Account, req.portal())
	if err != nil {
		return err
	}
	o := pv.Plan
	out := orderPreviewJSON{Eligible: len(pv.Blockers) == 0, Route: api.Optional(o.Route), BillingStarts: "activation",
		StartDate: api.Optional(o.StartDate), PlanVersionID: api.Optional(req.PlanVersionID), UnitID: api.Optional(req.UnitID)}
	if len(pv.Blockers) > 0 {
		b := strings.Join(pv.Blockers, " ")
		out.Blockers = &b
	}
	if o.Plan != nil {
		out.MonthlyPrice, out.SetupFee, out.Promo = &o.Plan.MonthlyPrice, &o.Plan.SetupFee, promoOf(o.Plan, h.localToday(o.Provider))
	}
	if o.Route != "" && o.Building != nil {
		out.Booking = api.Optional(o.Booking())
	}
	if o.Quote != nil {
		out.FirstCharge, out.BillingStarts = &o.Quote.Net, "now"
	}
	if o.End != nil {
		out.EndCurrentSubscription = &endSubscriptionJSON{SubscriptionID: o.End.ID, EndDate: o.StartDate, Reason: "moving"}
	}
	api.JSON(w, http.StatusOK, out)
	return nil
}

type orderPreviewJSON struct {
	BillingStarts          string               `json:"billing_starts"`
	Blockers               *string              `json:"blockers"` // the blockers in one text, null when eligible
	Booking                *string              `json:"booking"`
	Eligible               bool                 `json:"eligible"`
	EndCurrentSubscription *endSubscriptionJSON `json:"end_current_subscription"`
	FirstCharge            *subprov.Money       `json:"first_charge"`
	MonthlyPrice           *subprov.Money       `json:"monthly_price"`
	PlanVersionID          *string              `json:"plan_version_id"`
	Promo                  *promoJSON           `json:"promo"`
	Route                  *string              `json:"route"`
	SetupFee               *subprov.Money       `json:"setup_fee"`
	StartDate              *string              `json:"start_date"`
	UnitID                 *string              `json:"unit_id"`
}

type endSubscriptionJSON struct {
	EndDate        string `json:"end_date"`
	Reason         string `json:"reason"`
	SubscriptionID string `json:"subscription_id"`
}

// PlaceOrder: POST /partner/subscriber/me/orders
func (h *Handler) PlaceOrder(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[portalOrderRequest](r)
	if err != nil {
		return err
	}
	res, err := h.Portal.PlaceOrder(r.Context(), api.CallerOf(r).Account, q.portal())
	if err != nil {
		return err
	}
	o := res.Plan
	out := placedOrderJSON{SubscriptionID: res.Subscription.ID, Status: res.Subscription.Status, Route: o.Route,
		Source: "portal", Payment: "saved_method", BillingOwner: "platform", RequestedStartDate: o.StartDate,
		Booking: api.Optional(o.Booking()), BillingStarts: "activation", EndedSubscription: lineOf(res.Ended)}
	if o.Route == "install" {
		out.InstallJob = &orderInstallJobJSON{Kind: "install", Booking: o.Booking()}
	}
	if inv := res.FirstCharge; inv != nil {
		out.BillingStarts = "now"
		out.FirstCharge = &firstChargeJSON{InvoiceID: inv.ID, Number: inv.Number, Net: inv.Net, Tax: inv.Tax,
			Total: inv.Total, Currency: inv.Currency, Status: inv.Status}
	}
	api.JSON(w, http.StatusCreated, out)
	return nil
}

type placedOrderJSON struct {
	BillingOwner       string               `json:"billing_owner"`
	BillingStarts      string               `json:"billing_starts"`
	Booking            *string              `json:"booking"`
	EndedSubscription  *portalLineJSON      `json:"ended_subscription"`
	FirstCharge        *firstChargeJSON     `json:"first_charge"`
	InstallJob         *orderInstallJobJSON `json:"install_job"`
	Payment            string               `json:"payment"`
	RequestedStartDate string               `json:"requested_start_date"`
	Route              string               `json:"route"`
	Source             string               `json:"source"`
	Status             subprov.Status       `json:"status"`
	SubscriptionID     string               `json:"subscription_id"`
}

type orderInstallJobJSON struct {
	Booking string `json:"booking"`
	Kind    string `json:"kind"`
}

type firstChargeJSON struct {
	Currency  string        `json:"currency"`
	InvoiceID string        `json:"invoice_id"`
	Net       subprov.Money `json:"net"`
	Number    string        `json:"number"`
	Status    string        `json:"status"`
	Tax       subprov.Money `json:"tax"`
	Total     subprov.Money `json:"total"`
}

type reactivationJSON struct {
	Billing        reactivationBillingJSON `json:"billing"`
	BillingStarts  *string                 `json:"billing_starts"`
	Blockers       []string                `json:"blockers"`
	Booking        *string                 `json:"booking"`
	Cancellation   *cancellationJSON       `json:"cancellation"`
	Case           *string                 `json:"case"`
	Eligible       bool                    `json:"eligible"`
	HolderOnly     bool                    `json:"holder_only"`
	MonthlyPrice   *subprov.Money          `json:"monthly_price"`
	Path           string                  `json:"path"`
	SubscriptionID *string                 `json:"subscription_id"`
}

type reactivationBillingJSON struct {
	BillingStarts *string        `json:"billing_starts"`
	FirstCharge   *subprov.Money `json:"first_charge"`
	MonthlyPrice  *subprov.Money `json:"monthly_price"`
}

type cancellationJSON struct {
	CanceledAt *string `json:"canceled_at"`
	EndedAt    *string `json:"ended_at"`
	Reason     string  `json:"reason"`
}

func reactivationOf(v *portal.ReactivationView) reactivationJSON {
	starts := api.Optional(v.BillingStarts)
	out := reactivationJSON{Case: api.Optional(v.Case), Eligible: v.Eligible(), Blockers: v.Blockers, Path: v.Path, HolderOnly: v.HolderOnly,
		BillingStarts: starts, MonthlyPrice: v.MonthlyPrice,
		Billing: reactivationBillingJSON{FirstCharge: v.FirstCharge, BillingStarts: starts, MonthlyPrice: v.MonthlyPrice},
		Booking: api.Optional(v.Booking)}
	if sub := v.Subscription; sub != nil {
		out.SubscriptionID = &sub.ID
		out.Cancellation = &cancellationJSON{CanceledAt: api.Instant(sub.CanceledAt), EndedAt: api.Instant(sub.EndedAt), Reason: sub.CancelReason}
	}
	return out
}

// ReactivationPreview: GET /partner/subscriber/me/reactivation (all account users).
func (h *Handler) ReactivationPreview(w http.ResponseWriter, r *http.Request) error {
	v, err := h.Portal.Reactivation(r.Context(), api.CallerOf(r).Account)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, reactivationOf(v))
	return nil
}

// Reactivate: POST /partner/subscriber/me/subscriptions/{subscription_id}/reactivation
func (h *Handler) Reactivate(w http.ResponseWriter, r *http.Request) error {
	if _, err := api.Decode[struct{}](r); err != nil {
		return err
	}
	res, err := h.Portal.Reactivate(r.Context(), api.CallerOf(r).Account, r.PathValue("subscription_id"))
	if err != nil {
		return err
	}
	v := res.View
	billing := reactivatedBillingJSON{FirstCharge: v.FirstCharge, BillingStarts: api.Optional(v.BillingStarts)}
	if inv := res.Invoice; inv != nil {
		billing.Invoice = &reactivationInvoiceJSON{InvoiceID: inv.ID, Number: inv.Number, Kind: inv.Kind, Net: inv.Net, Tax: inv.Tax,
			Total: inv.Total, Status: inv.Status}
	}
	if wd := res.Withdrawal; wd != nil {
		var again *reinvoicedJSON
		if inv := wd.Reinvoiced; inv != nil {
			again = &reinvoicedJSON{InvoiceID: inv.ID, Number: inv.Number, Net: inv.Net, Tax: inv.Tax, Total: inv.Total}
		}
		continues := true
		billing.VoidedCreditNotes, billing.VoidedInvoices, billing.InvoicedAgain = &wd.VoidedCreditNotes, &wd.VoidedInvoices, &again
		billing.Continues = &continues
	}
	api.JSON(w, http.StatusOK, reactivatedJSON{Case: v.Case, Path: v.Path, SubscriptionID: res.Subscription.ID, Status: res.Subscription.Status,
		Subscription: lineOf(res.Subscription), Billing: billing, Booking: api.Optional(v.Booking), Provisioned: res.Provisioned})
	return nil
}

type reactivatedJSON struct {
	Billing        reactivatedBillingJSON `json:"billing"`
	Booking        *string                `json:"booking"`
	Case           string                 `json:"case"`
	Path           string                 `json:"path"`
	Provisioned    *bool                  `json:"provisioned,omitempty"` // only where a port was switched (remote, activate)
	Status         subprov.Status         `json:"status"`
	Subscription   *portalLineJSON        `json:"subscription"`
	SubscriptionID string                 `json:"subscription_id"`
}

// reactivatedBillingJSON is what a reactivation did to the money. The withdrawal's fields
// (continues, invoiced_again, voided_*) are present only when a cancellation that had not
// taken effect was withdrawn; invoiced_again is then null when nothing was invoiced again,
// hence a pointer to a pointer: absent when the outer one is nil, null when the inner one is.
type reactivatedBillingJSON struct {
	BillingStarts     *string                  `json:"billing_starts"`
	Continues         *bool                    `json:"continues,omitempty"`
	FirstCharge       *subprov.Money           `json:"first_charge"`
	Invoice           *reactivationInvoiceJSON `json:"invoice"`
	InvoicedAgain     **reinvoicedJSON         `json:"invoiced_again,omitempty"`
	VoidedCreditNotes *[]string                `json:"voided_credit_notes,omitempty"`
	VoidedInvoices    *[]string                `json:"voided_invoices,omitempty"`
}

type reactivationInvoiceJSON struct {
	InvoiceID string        `json:"invoice_id"`
	Kind      string        `json:"kind"`
	Net       subprov.Money `json:"net"`
	Number    string        `json:"number"`
	Status    string        `json:"status"`
	Tax       subprov.Money `json:"tax"`
	Total     subprov.Money `json:"total"`
}

type reinvoicedJSON struct {
	InvoiceID string        `json:"invoice_id"`
	Net       subprov.Money `json:"net"`
	Number    string        `json:"number"`
	Tax       subprov.Money `json:"tax"`
	Total     subprov.Money `json:"total"`
}
