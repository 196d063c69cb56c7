package partner

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/provisioning"
)

type billingJSON struct {
	Owner               string `json:"owner"`
	ProcessorCustomerID string `json:"processor_customer_id"`
	BillingDay          *int   `json:"billing_day"` // nil: left out or null, the default
}

type orderRequest struct {
	PlanVersionID          string          `json:"plan_version_id"`
	DeliveryMode           string          `json:"delivery_mode"`
	LocationHash           string          `json:"location_hash"`
	LocationIdentifier     string          `json:"location_identifier"`
	UnitID                 string          `json:"unit_id"`
	MACAddress             string          `json:"mac_address"`
	ExternalSubscriptionID string          `json:"external_subscription_id"`
	Subscriber             *api.Subscriber `json:"subscriber"`
	Billing                *billingJSON    `json:"billing"`
}

// Valid runs the order's own rules (provisioning.Order.Validate), so that one 422 names every
// missing or malformed field, not only a missing subscriber.
func (q orderRequest) Valid() map[string]string {
	return api.WithSubscriber(q.order("").Validate(), q.Subscriber)
}

func (q orderRequest) order(source string) *provisioning.Order {
	o := &provisioning.Order{PlanVersionID: strings.TrimSpace(q.PlanVersionID), DeliveryMode: subprov.DeliveryMode(q.DeliveryMode),
		LocationHash: strings.TrimSpace(q.LocationHash), LocationIdentifier: strings.TrimSpace(q.LocationIdentifier),
		UnitID: strings.TrimSpace(q.UnitID), MACAddress: q.MACAddress, ExternalSubscriptionID: strings.TrimSpace(q.ExternalSubscriptionID),
		Subscriber: q.Subscriber.Person(), Source: source}
	if b := q.Billing; b != nil {
		o.Billing = &provisioning.BillingBlock{Owner: subprov.BillingOwner(b.Owner), ProcessorCustomerID: strings.TrimSpace(b.ProcessorCustomerID), BillingDay: b.BillingDay}
	}
	return o
}

type orderResponse struct {
	SubscriptionID   string  `json:"subscription_id"`
	SubscriberID     string  `json:"subscriber_id"`
	CustomerNumber   string  `json:"customer_number"`
	Status           string  `json:"status"`
	WorkflowState    string  `json:"workflow_state"`
	Route            string  `json:"route"`
	JobID            *string `json:"job_id"`
	BillingOwner     string  `json:"billing_owner"`
	IdempotentReplay bool    `json:"idempotent_replay"`
}

func orderResponseOf(r *provisioning.Result) orderResponse {
	return orderResponse{SubscriptionID: r.Subscription.ID, SubscriberID: r.SubscriberID, CustomerNumber: r.CustomerNumber,
		Status: string(r.Subscription.Status), WorkflowState: r.Subscription.WorkflowState, Route: r.Route,
		BillingOwner: string(r.Subscription.BillingOwner), IdempotentReplay: r.Replay, JobID: api.Optional(r.JobID)}
}

// ProviderInitiated: POST /partner/provisioning/provider-initiated.
func (h *Handler) ProviderInitiated(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[orderRequest](r)
	if err != nil {
		return err
	}
	res, err := h.Provisioning.PlaceOrder(r.Context(), api.CallerOf(r).Provider, q.order("provider_initiated"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, orderResponseOf(res))
	return nil
}

type bulkRequest struct {
	Orders []json.RawMessage `json:"orders"`
}

func (q bulkRequest) Valid() map[string]string {
	p := map[string]string{}
	switch {
	case q.Orders == nil:
		p["orders"] = "required"
	case len(q.Orders) == 0:
		p["orders"] = "give at least one order"
	case len(q.Orders) > subprov.MaxBulkOrders:
		p["orders"] = "at most 500 orders per request"
	}
	return p
}

type bulkItemJSON struct {
	Index          int            `json:"index"`
	OK             bool           `json:"ok"`
	StatusCode     int            `json:"status_code"`
	SubscriptionID string         `json:"subscription_id,omitempty"`
	Route          string         `json:"route,omitempty"`
	JobID          string         `json:"job_id,omitempty"`
	BillingOwner   string         `json:"billing_owner,omitempty"`
	Status         string         `json:"status,omitempty"`
	Replay         bool           `json:"idempotent_replay,omitempty"`
	Error          *bulkItemError `json:"error,omitempty"`
}

type bulkItemError struct {
	Code    string            `json:"code"`
	Message string            `json:"message"`
	Fields  map[string]string `json:"fields,omitempty"`
}

// Bulk: POST /partner/provisioning/bulk. Items are independent: each has its own status
// and error, and a bad item changes nothing for the others.
func (h *Handler) Bulk(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[bulkRequest](r)
	if err != nil {
		return err
	}
	p := api.CallerOf(r).Provider
	results := make([]bulkItemJSON, len(q.Orders))
	for i, raw := range q.Orders {
		item := bulkItemJSON{Index: i}
		var res *provisioning.Result
		oq, err := api.DecodeBytes[orderRequest](raw)
		if err == nil {
			o := oq.order("bulk")
			items, e := h.Provisioning.PlaceBulk(r.Context(), p, []*provisioning.Order{o})
			if e != nil {
				err = e
			} else {
				res, err = items[0].Result, items[0].Err
			}
		}
		if err != nil {
			item.Error, item.StatusCode = bulkErrorOf(err)
			if item.StatusCode >= 500 {
				h.Log.Error("bulk item failed", "index", i, "err", err)
			}
		} else {
			item.OK, item.StatusCode = true, http.StatusOK
			item.SubscriptionID, item.Route, item.JobID = res.Subscription.ID, res.Route, res.JobID
			item.BillingOwner, item.Status, item.Replay = string(res.Subscription.BillingOwner), string(res.Subscription.Status), res.Replay
		}
		results[i] = item
	}
	api.JSON(w, http.StatusOK, bulkJSON{Results: results})
	return nil
}

type bulkJSON struct {
	Results []bulkItemJSON `json:"results"`
}

func bulkErrorOf(err error) (*bulkItemError, int) {
	e, ok := subprov.AsError(err)
	if !ok {
		return &bulkItemError{Code: "internal", Message: "Internal server error"}, http.StatusInternalServerError
	}
	code := e.Reason
	if code == "" {
		code = string(e.Code)
	}
	return &bulkItemError{Code: code, Message: e.Message, Fields: e.Fields}, api.Status(e.Code)
}

type confirmInstallRequest struct {
	SubscriptionID string `json:"subscription_id"`
	MACAddress     string `json:"mac_address"`
}

func (q confirmInstallRequest) Valid() map[string]string {
	p := map[string]string{}
	api.Required(p, map[string]string{"subscription_id": q.SubscriptionID})
	return p
}

// ConfirmInstall: POST /partner/provisioning/confirm-install.
func (h *Handler) ConfirmInstall(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[confirmInstallRequest](r)
	if err != nil {
		return err
	}
	sub, err := h.Provisioning.CompleteInstall(r.Context(), api.CallerOf(r).Provider.ID, strings.TrimSpace(q.SubscriptionID), q.MACAddress, "confirm-install")
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, lineStatusJSON{SubscriptionID: sub.ID, Status: sub.Status})
	return nil
}

// lineStatusJSON is a line's id and status, the answer of an install's confirmation.
type lineStatusJSON struct {
	Status         subprov.Status `json:"status"`
	SubscriptionID string         `json:"subscription_id"`
}

type devicePullRequest struct {
	MACAddress string `json:"mac_address"`
}

func (q devicePullRequest) Valid() map[string]string {
	p := map[string]string{}
	api.Required(p, map[string]string{"mac_address": q.MACAddress})
	return p
}

// DevicePull: POST /partner/cpe/config — the CPE's configuration pull.
func (h *Handler) DevicePull(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[devicePullRequest](r)
	if err != nil {
		return err
	}
	cfg, err := h.Provisioning.DevicePull(r.Context(), api.CallerOf(r).Provider, q.MACAddress)
	if err != nil {
		return err
	}
	sub := cfg.Subscription
	api.JSON(w, http.StatusOK, deviceConfigJSON{SubscriptionID: sub.ID, Status: sub.Status, VLAN: sub.VLAN,
		DownloadMbps: cfg.Plan.DownloadMbps, UploadMbps: cfg.Plan.UploadMbps})
	return nil
}

type deviceConfigJSON struct {
	DownloadMbps   int            `json:"download_mbps"`
	Status         subprov.Status `json:"status"`
	SubscriptionID string         `json:"subscription_id"`
	UploadMbps     int            `json:"upload_mbps"`
	VLAN           int            `json:"vlan"`
}

// planChangeResultJSON is an applied plan change: its quote without eligibility, and what was done.
type planChangeResultJSON struct {
	AppliedAt         string                   `json:"applied_at"`
	BandwidthUpdated  bool                     `json:"bandwidth_updated"`
	BillingOwner      subprov.BillingOwner     `json:"billing_owner"`
	CurrentPlan       api.PlanRef              `json:"current_plan"`
	EffectiveDate     string                   `json:"effective_date"`
	NewPlan           api.PlanRef              `json:"new_plan"`
	Note              string                   `json:"note"`
	OneTimeAdjustment *provisioning.Adjustment `json:"one_time_adjustment"`
	PlanVersionID     string                   `json:"plan_version_id"`
	RecurringChange   subprov.Money            `json:"recurring_change"`
	Status            subprov.Status           `json:"status"`
	SubscriptionID    string                   `json:"subscription_id"`
}

// ChangePlanPreview: GET /partner/subscriptions/{subscription_id}/change-plan/preview.
func (h *Handler) ChangePlanPreview(w http.ResponseWriter, r *http.Request) error {
	q, err := h.Provisioning.PreviewPlanChange(r.Context(), api.CallerOf(r).Provider, r.PathValue("subscription_id"), r.URL.Query().Get("plan_version_id"), provisioning.UTCDay)
	if err != nil {
		return inQuery(err)
	}
	api.JSON(w, http.StatusOK, api.PlanChangeQuoteOf(q))
	return nil
}

type changePlanRequest struct {
	PlanVersionID string `json:"plan_version_id"`
}

func (q changePlanRequest) Valid() map[string]string {
	p := map[string]string{}
	api.Required(p, map[string]string{"plan_version_id": q.PlanVersionID})
	return p
}

// ChangePlan: POST /partner/subscriptions/{subscription_id}/change-plan.
func (h *Handler) ChangePlan(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[changePlanRequest](r)
	if err != nil {
		return err
	}
	c := api.CallerOf(r)
	// The partner endpoint counts UTC days (docs/provisioning.md, Plan change).
	res, err := h.Provisioning.ChangePlan(r.Context(), c.Provider, r.PathValue("subscription_id"), strings.TrimSpace(q.PlanVersionID), "api_key:"+c.APIKey.Prefix, provisioning.UTCDay)
	if err != nil {
		return err
	}
	quote := res.Quote
	api.JSON(w, http.StatusOK, planChangeResultJSON{AppliedAt: res.AppliedAt.Format(time.RFC3339), BandwidthUpdated: res.BandwidthUpdated,
		BillingOwner: quote.Subscription.BillingOwner, CurrentPlan: api.PlanRefOf(quote.From), EffectiveDate: quote.EffectiveDate, NewPlan: api.PlanRefOf(quote.To),
		Note: quote.Note, OneTimeAdjustment: quote.Adjustment, PlanVersionID: quote.To.ID, RecurringChange: quote.RecurringChange, Status: subprov.StatusActive,
		SubscriptionID: quote.Subscription.ID})
	return nil
}

// cancellationJSON is a line's cancellation; EndDate only in the answer of the cancel call,
// which repeats the date asked for.
type cancellationJSON struct {
	BillingOwner   subprov.BillingOwner `json:"billing_owner"`
	CanceledAt     *string              `json:"canceled_at"`
	EndDate        *string              `json:"end_date,omitempty"`
	EndedAt        *string              `json:"ended_at"`
	Reason         string               `json:"reason"`
	Status         subprov.Status       `json:"status"`
	SubscriptionID string               `json:"subscription_id"`
}

func cancellationOf(sub *subprov.Subscription) cancellationJSON {
	return cancellationJSON{SubscriptionID: sub.ID, Status: sub.Status, CanceledAt: api.Instant(sub.CanceledAt),
		EndedAt: api.Instant(sub.EndedAt), Reason: sub.CancelReason, BillingOwner: sub.BillingOwner}
}

type cancelRequest struct {
	EndDate string `json:"end_date"`
	Reason  string `json:"reason"`
}

func (q cancelRequest) Valid() map[string]string {
	p := map[string]string{}
	api.Required(p, map[string]string{"end_date": q.EndDate})
	return p
}

// Cancel: POST /api/v1/subscription/{subscription_id}/cancel (dashboard JWT).
func (h *Handler) Cancel(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[cancelRequest](r)
	if err != nil {
		return err
	}
	sub, err := h.Provisioning.CancelAs(r.Context(), api.CallerOf(r).Operator, r.PathValue("subscription_id"), q.EndDate, q.Reason)
	if err != nil {
		return err
	}
	out := cancellationOf(sub)
	endDate := strings.TrimSpace(q.EndDate)
	out.EndDate = &endDate
	api.JSON(w, http.StatusOK, out)
	return nil
}

// Cancellation: GET /api/v1/subscription/{subscription_id}/cancel — the current cancellation.
func (h *Handler) Cancellation(w http.ResponseWriter, r *http.Request) error {
	sub, err := h.Provisioning.CancellationAs(r.Context(), api.CallerOf(r).Operator, r.PathValue("subscription_id"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, cancellationOf(sub))
	return nil
}

type quoteLineJSON struct {
	Type        string        `json:"type"`
	Description string        `json:"description"`
	Amount      subprov.Money `json:"amount"`
}

type cancelPreviewJSON struct {
	BillingOwner   subprov.BillingOwner `json:"billing_owner"`
	EndDate        string               `json:"end_date"`
	EndedAt        string               `json:"ended_at"`
	Lines          []quoteLineJSON      `json:"lines"`
	Period         string               `json:"period"`
	SubscriptionID string               `json:"subscription_id"`
	Total          subprov.Money        `json:"total"`
}

// CancelPreview: GET /api/v1/subscription/{subscription_id}/cancel/preview?end_date=…
func (h *Handler) CancelPreview(w http.ResponseWriter, r *http.Request) error {
	endDate := r.URL.Query().Get("end_date")
	if strings.TrimSpace(endDate) == "" {
		return subprov.Invalid(map[string]string{"query:end_date": "required"})
	}
	q, err := h.Provisioning.QuoteCancellationAs(r.Context(), api.CallerOf(r).Operator, r.PathValue("subscription_id"), endDate)
	if err != nil {
		return inQuery(err)
	}
	lines := make([]quoteLineJSON, 0, len(q.Lines))
	for _, l := range q.Lines {
		lines = append(lines, quoteLineJSON(l))
	}
	api.JSON(w, http.StatusOK, cancelPreviewJSON{SubscriptionID: q.Subscription.ID, EndDate: q.EndDate,
		EndedAt: q.EndedAt.Format(time.RFC3339), Period: q.Period, BillingOwner: q.Subscription.BillingOwner,
		Lines: lines, Total: q.Total})
	return nil
}

// inQuery marks a validation error's fields as query parameters, for routes whose input is
// the query string.
func inQuery(err error) error {
	e, ok := subprov.AsError(err)
	if !ok || len(e.Fields) == 0 {
		return err
	}
	fields := map[string]string{}
	for k, v := range e.Fields {
		fields["query:"+k] = v
	}
	return subprov.Invalid(fields)
}
