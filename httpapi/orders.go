package httpapi

import (
	"net/http"

	"github.com/subprov/subprov"
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

func stringOrNil(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func moneyOrNil(m *subprov.Money) any {
	if m == nil {
		return nil
	}
	return *m
}

// lineJSON is a line as the portal's order and reactivation answers show it.
func lineJSON(sub *subprov.Subscription) any {
	if sub == nil {
		return nil
	}
	return map[string]any{"subscription_id": sub.ID, "status": sub.Status, "plan_version_id": sub.PlanVersionID,
		"building_id": sub.BuildingID, "unit_id": stringOrNil(sub.UnitID), "requested_start_date": stringOrNil(sub.RequestedStartDate),
		"canceled_at": timeOrNil(sub.CanceledAt), "ended_at": timeOrNil(sub.EndedAt)}
}

func portalPlanJSON(pv *subprov.PlanVersion, today string) map[string]any {
	return map[string]any{"plan_version_id": pv.ID, "name": pv.PlanName, "monthly_price": pv.MonthlyPrice, "setup_fee": pv.SetupFee,
		"download_mbps": pv.DownloadMbps, "upload_mbps": pv.UploadMbps, "promo": promoJSON(pv, today)}
}

func promoJSON(pv *subprov.PlanVersion, today string) any {
	price := portal.PromoLive(pv, today)
	if price == nil {
		return nil
	}
	return map[string]any{"price": *price, "ends_on": stringOrNil(pv.PromoEndsOn)}
}

func (s *server) localToday(p *subprov.Provider) string {
	return s.Clock.Now().In(p.Location()).Format("2006-01-02")
}

// handleOrderOptions: GET /partner/subscriber/me/orders/options?building_id=
func (s *server) handleOrderOptions(w http.ResponseWriter, r *http.Request) error {
	_, p, err := s.subscriberOf(r)
	if err != nil {
		return err
	}
	o, err := s.Portal.OrderOptions(r.Context(), callerOf(r).Account, r.URL.Query().Get("building_id"))
	if err != nil {
		return err
	}
	suites := make([]map[string]any, 0, len(o.Suites))
	for _, u := range o.Suites {
		suites = append(suites, map[string]any{"unit_id": u.ID, "unit_number": u.UnitNumber, "postal_unit": stringOrNil(u.PostalUnit),
			"available": u.Available, "route": u.Route})
	}
	plans := make([]map[string]any, 0, len(o.Plans))
	for _, pv := range o.Plans {
		plans = append(plans, portalPlanJSON(pv, s.localToday(p)))
	}
	writeJSON(w, http.StatusOK, map[string]any{"building_id": o.BuildingID, "served": o.Served, "route": stringOrNil(o.Route),
		"line_type": stringOrNil(string(o.LineType)), "suites": suites, "units": suites, "current_subscription": lineJSON(o.CurrentSubscription),
		"postal_unit": stringOrNil(o.PostalUnit), "plans": plans,
		"order_window": map[string]any{"earliest": stringOrNil(o.EarliestStartDate), "latest": stringOrNil(o.LatestStartDate)}})
	return nil
}

// handleOrderPreview: GET /partner/subscriber/me/orders/preview — problems are blockers.
func (s *server) handleOrderPreview(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	req := portalOrderRequest{BuildingID: q.Get("building_id"), PlanVersionID: q.Get("plan_version_id"), UnitID: q.Get("unit_id"),
		RequestedStartDate: q.Get("requested_start_date"), EndCurrentSubscriptionID: q.Get("end_current_subscription_id")}
	pv, err := s.Portal.PreviewOrder(r.Context(), callerOf(r).Account, req.portal())
	if err != nil {
		return err
	}
	o := pv.Plan
	out := map[string]any{"eligible": len(pv.Blockers) == 0, "blockers": nil, "route": stringOrNil(o.Route), "booking": nil,
		"first_charge": nil, "billing_starts": "activation", "monthly_price": nil, "setup_fee": nil, "promo": nil,
		"start_date": stringOrNil(o.StartDate), "plan_version_id": stringOrNil(req.PlanVersionID), "unit_id": stringOrNil(req.UnitID),
		"end_current_subscription": nil}
	if len(pv.Blockers) > 0 {
		out["blockers"] = joinSentences(pv.Blockers)
	}
	if o.Plan != nil {
		out["monthly_price"], out["setup_fee"], out["promo"] = o.Plan.MonthlyPrice, o.Plan.SetupFee, promoJSON(o.Plan, s.localToday(o.Provider))
	}
	if o.Route != "" && o.Building != nil {
		out["booking"] = stringOrNil(o.Booking())
	}
	if o.Quote != nil {
		out["first_charge"], out["billing_starts"] = o.Quote.Net, "now"
	}
	if o.End != nil {
		out["end_current_subscription"] = map[string]any{"subscription_id": o.End.ID, "end_date": o.StartDate, "reason": "moving"}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func joinSentences(parts []string) string {
	out := ""
	for i, p := range parts {
		if i > 0 {
			out += " "
		}
		out += p
	}
	return out
}

// handlePlaceOrder: POST /partner/subscriber/me/orders
func (s *server) handlePlaceOrder(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[portalOrderRequest](r)
	if err != nil {
		return err
	}
	res, err := s.Portal.PlaceOrder(r.Context(), callerOf(r).Account, q.portal())
	if err != nil {
		return err
	}
	o := res.Plan
	out := map[string]any{"subscription_id": res.Subscription.ID, "status": res.Subscription.Status, "route": o.Route,
		"source": "portal", "payment": "saved_method", "billing_owner": "platform", "requested_start_date": o.StartDate,
		"booking": stringOrNil(o.Booking()), "install_job": nil, "first_charge": nil, "billing_starts": "activation",
		"ended_subscription": lineJSON(res.Ended)}
	if o.Route == "install" {
		out["install_job"] = map[string]any{"kind": "install", "booking": o.Booking()}
	}
	if inv := res.FirstCharge; inv != nil {
		out["billing_starts"] = "now"
		out["first_charge"] = map[string]any{"invoice_id": inv.ID, "number": inv.Number, "net": inv.Net, "tax": inv.Tax,
			"total": inv.Total, "currency": inv.Currency, "status": inv.Status}
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

func reactivationJSON(v *portal.ReactivationView) map[string]any {
	var c, starts any
	if v.Case != "" {
		c = v.Case
	}
	if v.BillingStarts != "" {
		starts = v.BillingStarts
	}
	out := map[string]any{"case": c, "eligible": v.Eligible(), "blockers": v.Blockers, "path": v.Path, "holder_only": v.HolderOnly,
		"subscription_id": nil, "cancellation": nil, "billing_starts": starts, "monthly_price": moneyOrNil(v.MonthlyPrice),
		"billing": map[string]any{"first_charge": moneyOrNil(v.FirstCharge), "billing_starts": starts, "monthly_price": moneyOrNil(v.MonthlyPrice)},
		"booking": stringOrNil(v.Booking)}
	if sub := v.Subscription; sub != nil {
		out["subscription_id"] = sub.ID
		out["cancellation"] = map[string]any{"canceled_at": timeOrNil(sub.CanceledAt), "ended_at": timeOrNil(sub.EndedAt), "reason": sub.CancelReason}
	}
	return out
}

// handleReactivationPreview: GET /partner/subscriber/me/reactivation (all account users).
func (s *server) handleReactivationPreview(w http.ResponseWriter, r *http.Request) error {
	v, err := s.Portal.Reactivation(r.Context(), callerOf(r).Account)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, reactivationJSON(v))
	return nil
}

// handleReactivate: POST /partner/subscriber/me/subscriptions/{subscription_id}/reactivation
func (s *server) handleReactivate(w http.ResponseWriter, r *http.Request) error {
	if _, err := decode[struct{}](r); err != nil {
		return err
	}
	res, err := s.Portal.Reactivate(r.Context(), callerOf(r).Account, r.PathValue("subscription_id"))
	if err != nil {
		return err
	}
	v := res.View
	billing := map[string]any{"first_charge": moneyOrNil(v.FirstCharge), "billing_starts": stringOrNil(v.BillingStarts), "invoice": nil}
	if inv := res.Invoice; inv != nil {
		billing["invoice"] = map[string]any{"invoice_id": inv.ID, "number": inv.Number, "kind": inv.Kind, "net": inv.Net, "tax": inv.Tax,
			"total": inv.Total, "status": inv.Status}
	}
	if wd := res.Withdrawal; wd != nil {
		billing["voided_credit_notes"], billing["voided_invoices"], billing["invoiced_again"] = wd.VoidedCreditNotes, wd.VoidedInvoices, nil
		if inv := wd.Reinvoiced; inv != nil {
			billing["invoiced_again"] = map[string]any{"invoice_id": inv.ID, "number": inv.Number, "net": inv.Net, "tax": inv.Tax, "total": inv.Total}
		}
		billing["continues"] = true
	}
	out := map[string]any{"case": v.Case, "path": v.Path, "subscription_id": res.Subscription.ID, "status": res.Subscription.Status,
		"subscription": lineJSON(res.Subscription), "billing": billing, "booking": stringOrNil(v.Booking)}
	if res.Provisioned != nil {
		out["provisioned"] = *res.Provisioned
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
