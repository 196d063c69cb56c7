package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/provisioning"
)

type subscriberJSON struct {
	FirstName   string `json:"firstname"`
	LastName    string `json:"lastname"`
	Email       string `json:"email"`
	PhoneNumber string `json:"phonenumber"`
	Company     string `json:"company"`
}

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
	Subscriber             *subscriberJSON `json:"subscriber"`
	Billing                *billingJSON    `json:"billing"`
}

// person is the order's subscriber; a missing block is an empty one.
func (s *subscriberJSON) person() provisioning.Subscriber {
	if s == nil {
		return provisioning.Subscriber{}
	}
	return provisioning.Subscriber{FirstName: s.FirstName, LastName: s.LastName, Email: s.Email, PhoneNumber: s.PhoneNumber, Company: s.Company}
}

// withSubscriber reports a missing subscriber block as one problem, "subscriber", in place of
// a "required" for each of its fields.
func withSubscriber(p map[string]string, s *subscriberJSON) map[string]string {
	if s == nil {
		for f := range p {
			if strings.HasPrefix(f, "subscriber.") {
				delete(p, f)
			}
		}
		p["subscriber"] = "required"
	}
	return p
}

// Valid runs the order's own rules (provisioning.Order.Validate), so that one 422 names every
// missing or malformed field, not only a missing subscriber.
func (q orderRequest) Valid() map[string]string {
	return withSubscriber(q.order("").Validate(), q.Subscriber)
}

func (q orderRequest) order(source string) *provisioning.Order {
	o := &provisioning.Order{PlanVersionID: strings.TrimSpace(q.PlanVersionID), DeliveryMode: subprov.DeliveryMode(q.DeliveryMode),
		LocationHash: strings.TrimSpace(q.LocationHash), LocationIdentifier: strings.TrimSpace(q.LocationIdentifier),
		UnitID: strings.TrimSpace(q.UnitID), MACAddress: q.MACAddress, ExternalSubscriptionID: strings.TrimSpace(q.ExternalSubscriptionID),
		Subscriber: q.Subscriber.person(), Source: source}
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
	out := orderResponse{SubscriptionID: r.Subscription.ID, SubscriberID: r.SubscriberID, CustomerNumber: r.CustomerNumber,
		Status: string(r.Subscription.Status), WorkflowState: r.Subscription.WorkflowState, Route: r.Route,
		BillingOwner: string(r.Subscription.BillingOwner), IdempotentReplay: r.Replay}
	if r.JobID != "" {
		out.JobID = &r.JobID
	}
	return out
}

// handleProviderInitiated: POST /partner/provisioning/provider-initiated.
func (s *server) handleProviderInitiated(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[orderRequest](r)
	if err != nil {
		return err
	}
	res, err := s.Provisioning.PlaceOrder(r.Context(), callerOf(r).Provider, q.order("provider_initiated"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, orderResponseOf(res))
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

// handleBulk: POST /partner/provisioning/bulk. Items are independent: each has its own status
// and error, and a bad item changes nothing for the others.
func (s *server) handleBulk(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[bulkRequest](r)
	if err != nil {
		return err
	}
	p := callerOf(r).Provider
	results := make([]bulkItemJSON, len(q.Orders))
	for i, raw := range q.Orders {
		item := bulkItemJSON{Index: i}
		var res *provisioning.Result
		oq, err := decodeBytes[orderRequest](raw)
		if err == nil {
			o := oq.order("bulk")
			items, e := s.Provisioning.PlaceBulk(r.Context(), p, []*provisioning.Order{o})
			if e != nil {
				err = e
			} else {
				res, err = items[0].Result, items[0].Err
			}
		}
		if err != nil {
			item.Error, item.StatusCode = bulkErrorOf(err)
			if item.StatusCode >= 500 {
				s.Log.Error("bulk item failed", "index", i, "err", err)
			}
		} else {
			item.OK, item.StatusCode = true, http.StatusOK
			item.SubscriptionID, item.Route, item.JobID = res.Subscription.ID, res.Route, res.JobID
			item.BillingOwner, item.Status, item.Replay = string(res.Subscription.BillingOwner), string(res.Subscription.Status), res.Replay
		}
		results[i] = item
	}
	writeJSON(w, http.StatusOK, map[string]any{"results": results})
	return nil
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
	return &bulkItemError{Code: code, Message: e.Message, Fields: e.Fields}, statusOf[e.Code]
}

type confirmInstallRequest struct {
	SubscriptionID string `json:"subscription_id"`
	MACAddress     string `json:"mac_address"`
}

func (q confirmInstallRequest) Valid() map[string]string {
	p := map[string]string{}
	required(p, map[string]string{"subscription_id": q.SubscriptionID})
	return p
}

// handleConfirmInstall: POST /partner/provisioning/confirm-install.
func (s *server) handleConfirmInstall(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[confirmInstallRequest](r)
	if err != nil {
		return err
	}
	sub, err := s.Provisioning.CompleteInstall(r.Context(), callerOf(r).Provider.ID, strings.TrimSpace(q.SubscriptionID), q.MACAddress, "confirm-install")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"subscription_id": sub.ID, "status": sub.Status})
	return nil
}

type devicePullRequest struct {
	MACAddress string `json:"mac_address"`
}

func (q devicePullRequest) Valid() map[string]string {
	p := map[string]string{}
	required(p, map[string]string{"mac_address": q.MACAddress})
	return p
}

// handleDevicePull: POST /partner/cpe/config — the CPE's configuration pull.
func (s *server) handleDevicePull(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[devicePullRequest](r)
	if err != nil {
		return err
	}
	cfg, err := s.Provisioning.DevicePull(r.Context(), callerOf(r).Provider, q.MACAddress)
	if err != nil {
		return err
	}
	sub := cfg.Subscription
	writeJSON(w, http.StatusOK, map[string]any{"subscription_id": sub.ID, "status": sub.Status, "vlan": sub.VLAN,
		"download_mbps": cfg.Plan.DownloadMbps, "upload_mbps": cfg.Plan.UploadMbps})
	return nil
}

type planRef struct {
	PlanVersionID string        `json:"plan_version_id"`
	Name          string        `json:"name"`
	MonthlyPrice  subprov.Money `json:"monthly_price"`
	DownloadMbps  int           `json:"download_mbps"`
	UploadMbps    int           `json:"upload_mbps"`
}

func planRefOf(v *subprov.PlanVersion) planRef {
	return planRef{PlanVersionID: v.ID, Name: v.PlanName, MonthlyPrice: v.MonthlyPrice, DownloadMbps: v.DownloadMbps, UploadMbps: v.UploadMbps}
}

func quoteJSON(q *provisioning.PlanChangeQuote) map[string]any {
	return map[string]any{
		"subscription_id":     q.Subscription.ID,
		"eligible":            q.Eligible,
		"blockers":            q.Blockers,
		"current_plan":        planRefOf(q.From),
		"new_plan":            planRefOf(q.To),
		"recurring_change":    q.RecurringChange,
		"one_time_adjustment": q.Adjustment,
		"note":                q.Note,
		"effective_date":      q.EffectiveDate,
		"billing_owner":       q.Subscription.BillingOwner,
	}
}

// handleChangePlanPreview: GET /partner/subscriptions/{subscription_id}/change-plan/preview.
func (s *server) handleChangePlanPreview(w http.ResponseWriter, r *http.Request) error {
	q, err := s.Provisioning.PreviewPlanChange(r.Context(), callerOf(r).Provider, r.PathValue("subscription_id"), r.URL.Query().Get("plan_version_id"), provisioning.UTCDay)
	if err != nil {
		return inQuery(err)
	}
	writeJSON(w, http.StatusOK, quoteJSON(q))
	return nil
}

type changePlanRequest struct {
	PlanVersionID string `json:"plan_version_id"`
}

func (q changePlanRequest) Valid() map[string]string {
	p := map[string]string{}
	required(p, map[string]string{"plan_version_id": q.PlanVersionID})
	return p
}

// handleChangePlan: POST /partner/subscriptions/{subscription_id}/change-plan.
func (s *server) handleChangePlan(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[changePlanRequest](r)
	if err != nil {
		return err
	}
	c := callerOf(r)
	// The partner endpoint counts UTC days (docs/provisioning.md, Plan change).
	res, err := s.Provisioning.ChangePlan(r.Context(), c.Provider, r.PathValue("subscription_id"), strings.TrimSpace(q.PlanVersionID), "api_key:"+c.APIKey.Prefix, provisioning.UTCDay)
	if err != nil {
		return err
	}
	body := quoteJSON(res.Quote)
	body["status"] = subprov.StatusActive
	body["plan_version_id"] = res.Quote.To.ID
	body["bandwidth_updated"] = res.BandwidthUpdated
	body["applied_at"] = res.AppliedAt.Format(time.RFC3339)
	delete(body, "eligible")
	delete(body, "blockers")
	writeJSON(w, http.StatusOK, body)
	return nil
}

func timeOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

func cancellationJSON(sub *subprov.Subscription) map[string]any {
	return map[string]any{"subscription_id": sub.ID, "status": sub.Status, "canceled_at": timeOrNil(sub.CanceledAt),
		"ended_at": timeOrNil(sub.EndedAt), "reason": sub.CancelReason, "billing_owner": sub.BillingOwner}
}

type cancelRequest struct {
	EndDate string `json:"end_date"`
	Reason  string `json:"reason"`
}

func (q cancelRequest) Valid() map[string]string {
	p := map[string]string{}
	required(p, map[string]string{"end_date": q.EndDate})
	return p
}

// handleCancel: POST /api/v1/subscription/{subscription_id}/cancel (dashboard JWT).
func (s *server) handleCancel(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[cancelRequest](r)
	if err != nil {
		return err
	}
	sub, err := s.Provisioning.Cancel(r.Context(), r.PathValue("subscription_id"), q.EndDate, q.Reason, "operator:"+callerOf(r).Operator.Email)
	if err != nil {
		return err
	}
	body := cancellationJSON(sub)
	body["end_date"] = strings.TrimSpace(q.EndDate)
	writeJSON(w, http.StatusOK, body)
	return nil
}

// handleCancellation: GET /api/v1/subscription/{subscription_id}/cancel — the current cancellation.
func (s *server) handleCancellation(w http.ResponseWriter, r *http.Request) error {
	sub, err := s.Provisioning.Cancellation(r.Context(), r.PathValue("subscription_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, cancellationJSON(sub))
	return nil
}

type quoteLineJSON struct {
	Type        string        `json:"type"`
	Description string        `json:"description"`
	Amount      subprov.Money `json:"amount"`
}

// handleCancelPreview: GET /api/v1/subscription/{subscription_id}/cancel/preview?end_date=…
func (s *server) handleCancelPreview(w http.ResponseWriter, r *http.Request) error {
	endDate := r.URL.Query().Get("end_date")
	if strings.TrimSpace(endDate) == "" {
		return subprov.Invalid(map[string]string{"query:end_date": "required"})
	}
	q, err := s.Provisioning.QuoteCancellation(r.Context(), r.PathValue("subscription_id"), endDate)
	if err != nil {
		return inQuery(err)
	}
	lines := make([]quoteLineJSON, 0, len(q.Lines))
	for _, l := range q.Lines {
		lines = append(lines, quoteLineJSON(l))
	}
	writeJSON(w, http.StatusOK, map[string]any{"subscription_id": q.Subscription.ID, "end_date": q.EndDate,
		"ended_at": q.EndedAt.Format(time.RFC3339), "period": q.Period, "billing_owner": q.Subscription.BillingOwner,
		"lines": lines, "total": q.Total})
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
