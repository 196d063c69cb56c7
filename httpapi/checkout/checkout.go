package checkout

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/checkout"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/provisioning"
)

// External checkout (marketplace hand-over). Session routes authenticate in the checkout
// package (credSessionSecret) because a session's age is checked before its secret.

type sessionCreateRequest struct {
	ProviderID    string `json:"provider_id"`
	PlanVersionID string `json:"plan_version_id"`
	BuildingID    string `json:"building_id"`
	UnitID        string `json:"unit_id"`
	LocationHash  string `json:"location_hash"`
	MACAddress    string `json:"mac_address"`
	DeliveryMode  string `json:"delivery_mode"`
}

// CreateSession: POST /partner/external-checkout/sessions.
func (h *Handler) CreateSession(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[sessionCreateRequest](r)
	if err != nil {
		return err
	}
	accountID := ""
	if a := api.CallerOf(r).Account; a != nil {
		accountID = a.ID
	}
	c, err := h.Checkout.Create(r.Context(), checkout.CreateInput{ProviderID: strings.TrimSpace(q.ProviderID),
		PlanVersionID: strings.TrimSpace(q.PlanVersionID), BuildingID: strings.TrimSpace(q.BuildingID), UnitID: strings.TrimSpace(q.UnitID),
		LocationHash: strings.TrimSpace(q.LocationHash), MACAddress: q.MACAddress, DeliveryMode: subprov.DeliveryMode(q.DeliveryMode)}, accountID)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusCreated, sessionCreatedJSON{SessionID: c.Session.ID, CheckoutURL: c.CheckoutURL,
		ExpiresAt: c.Session.ExpiresAt().Format(time.RFC3339), Status: c.Session.Status})
	return nil
}

// sessionCreatedJSON is a new session. Fields are in name order in this and every answer, as
// the maps the answers once were encoded them.
type sessionCreatedJSON struct {
	CheckoutURL string `json:"checkout_url"`
	ExpiresAt   string `json:"expires_at"`
	SessionID   string `json:"session_id"`
	Status      string `json:"status"`
}

func webhookSecret(r *http.Request) string { return r.Header.Get("X-Webhook-Secret") }

// decodeCheckout reads the body of a webhook-secret call on a session. A body that does not
// decode is answered only after the checks the call makes first: when the path or the body
// names a session, its age check (410, marking it expired: the age check runs
// before authentication) and the secret (401, or another provider's 404); otherwise 401 when
// the secret names no provider. An anonymous caller thus learns nothing about the request's
// shape, and an expired session answers 410 whatever the body. A body that decodes goes on to
// the checkout package, which runs the same checks in the same order.
func decodeCheckout[T any](h *Handler, r *http.Request, pathSession string) (T, error) {
	body, err := api.ReadBody(r)
	if err != nil {
		return *new(T), err
	}
	v, decodeErr := api.DecodeBytes[T](body)
	if decodeErr == nil {
		return v, nil
	}
	id := pathSession
	if id == "" {
		var named struct {
			SessionID any `json:"session_id"`
		}
		if json.Unmarshal(body, &named) == nil {
			id, _ = named.SessionID.(string)
			id = strings.TrimSpace(id)
		}
	}
	if id != "" {
		if err := h.Checkout.Check(r.Context(), id, webhookSecret(r)); err != nil {
			return v, err
		}
	} else if _, err := h.Auth.WebhookSecret(r.Context(), webhookSecret(r)); err != nil {
		return v, err
	}
	return v, decodeErr
}

// ReadSession: GET /partner/external-checkout/sessions/{session_id}.
func (h *Handler) ReadSession(w http.ResponseWriter, r *http.Request) error {
	v, err := h.Checkout.Read(r.Context(), r.PathValue("session_id"), webhookSecret(r))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, sessionOf(v))
	return nil
}

type sessionPatchRequest struct {
	PlanVersionID      *string `json:"plan_version_id"`
	PartnerReferenceID *string `json:"partner_reference_id"`
}

// PatchSession: PATCH /partner/external-checkout/sessions/{session_id}.
func (h *Handler) PatchSession(w http.ResponseWriter, r *http.Request) error {
	q, err := decodeCheckout[sessionPatchRequest](h, r, r.PathValue("session_id"))
	if err != nil {
		return err
	}
	v, err := h.Checkout.Patch(r.Context(), r.PathValue("session_id"), webhookSecret(r),
		checkout.PatchInput{PlanVersionID: q.PlanVersionID, PartnerReferenceID: q.PartnerReferenceID})
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, sessionOf(v))
	return nil
}

// CancelSession: POST /partner/external-checkout/sessions/{session_id}/cancel.
func (h *Handler) CancelSession(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("session_id")
	if err := h.Checkout.Cancel(r.Context(), id, webhookSecret(r)); err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, sessionCancelledJSON{SessionID: id, Status: subprov.SessionCancelled})
	return nil
}

type sessionCancelledJSON struct {
	SessionID string `json:"session_id"`
	Status    string `json:"status"`
}

// sessionJSON is the session with its plan, suite and building, and provider embedded.
type sessionJSON struct {
	BuildingID                string               `json:"building_id"`
	CompletedAt               *string              `json:"completed_at"`
	CreatedAt                 string               `json:"created_at"`
	DeliveryMode              subprov.DeliveryMode `json:"delivery_mode"`
	ExpiresAt                 *string              `json:"expires_at"` // null once read: a read session never expires
	LocationHash              *string              `json:"location_hash"`
	MACAddress                *string              `json:"mac_address"`
	PartnerReferenceID        *string              `json:"partner_reference_id"`
	Plan                      marketplacePlanJSON  `json:"plan"`
	PlanVersionID             string               `json:"plan_version_id"`
	Provider                  sessionProviderJSON  `json:"provider"`
	ProviderID                string               `json:"provider_id"`
	RedirectedAt              *string              `json:"redirected_at"`
	ServiceProviderDocumentID *string              `json:"service_provider_document_id"`
	SessionID                 string               `json:"session_id"`
	Status                    string               `json:"status"`
	StoreProductID            *string              `json:"store_product_id"`
	SubscriptionID            *string              `json:"subscription_id"`
	UnitID                    *string              `json:"unit_id"`
	Units                     sessionUnitJSON      `json:"units"`
}

type sessionProviderJSON struct {
	BrandColor                *string `json:"brand_color"`
	Currency                  string  `json:"currency"`
	ID                        string  `json:"id"`
	Name                      string  `json:"name"`
	ProviderID                string  `json:"provider_id"`
	Sandbox                   bool    `json:"sandbox"`
	ServiceProviderDocumentID *string `json:"service_provider_document_id"`
	TimeZone                  string  `json:"time_zone"`
}

// sessionUnitJSON is the session's suite (all null when it names none) and its building.
type sessionUnitJSON struct {
	Buildings  sessionBuildingJSON `json:"buildings"`
	ID         *string             `json:"id"`
	PostalUnit *string             `json:"postal_unit"`
	UnitID     *string             `json:"unit_id"`
	UnitNumber *string             `json:"unit_number"`
}

type sessionBuildingJSON struct {
	BuildingID string  `json:"building_id"`
	City       *string `json:"city"`
	Country    *string `json:"country"`
	ID         string  `json:"id"`
	PostalCode *string `json:"postal_code"`
	Province   *string `json:"province"`
	Street     *string `json:"street"`
}

func sessionOf(v *checkout.View) sessionJSON {
	c := v.Session
	var expires *string
	if c.Status == subprov.SessionPending {
		e := c.ExpiresAt().Format(time.RFC3339) // a read session never expires
		expires = &e
	}
	b := v.Building
	units := sessionUnitJSON{Buildings: sessionBuildingJSON{ID: b.ID, BuildingID: b.ID, Street: api.Optional(b.Street), City: api.Optional(b.City),
		PostalCode: api.Optional(b.PostalCode), Province: api.Optional(b.Province), Country: api.Optional(b.Country)}}
	if u := v.Unit; u != nil {
		units.ID, units.UnitID, units.UnitNumber, units.PostalUnit = &u.ID, &u.ID, &u.UnitNumber, api.Optional(u.PostalUnit)
	}
	pl, p := v.Plan, v.Provider
	return sessionJSON{
		SessionID: c.ID, Status: c.Status, ProviderID: c.ProviderID, PlanVersionID: c.PlanVersionID,
		BuildingID: c.BuildingID, UnitID: api.Optional(c.UnitID), LocationHash: api.Optional(c.LocationHash),
		MACAddress: api.Optional(c.MACAddress), DeliveryMode: c.DeliveryMode,
		ServiceProviderDocumentID: api.Optional(p.ServiceProviderDocumentID), PartnerReferenceID: api.Optional(c.PartnerReferenceID),
		SubscriptionID: api.Optional(c.SubscriptionID), CreatedAt: c.CreatedAt.Format(time.RFC3339), ExpiresAt: expires,
		RedirectedAt: api.Instant(c.RedirectedAt), CompletedAt: api.Instant(c.CompletedAt),
		StoreProductID: api.Optional(pl.StoreProductID),
		Plan:           marketplacePlanOf(pl, p),
		Units:          units,
		Provider: sessionProviderJSON{ID: p.ID, ProviderID: p.ID, Name: p.Name, Currency: p.Currency, TimeZone: p.TimeZone,
			ServiceProviderDocumentID: api.Optional(p.ServiceProviderDocumentID), Sandbox: p.Sandbox, BrandColor: api.Optional(p.BrandColor)},
	}
}

// marketplacePlanJSON is a plan version as the marketplace reads it; Provider only in the
// answer of the plan read, not inside a session.
type marketplacePlanJSON struct {
	Currency       string            `json:"currency"`
	DownloadMbps   int               `json:"download_mbps"`
	ID             string            `json:"id"`
	MonthlyPrice   subprov.Money     `json:"monthly_price"`
	Name           string            `json:"name"`
	PlanID         string            `json:"plan_id"`
	PlanVersionID  string            `json:"plan_version_id"`
	Provider       *planProviderJSON `json:"provider,omitempty"`
	ProviderID     string            `json:"provider_id"`
	Sellable       bool              `json:"sellable"`
	SetupFee       subprov.Money     `json:"setup_fee"`
	StoreProductID *string           `json:"store_product_id"`
	UploadMbps     int               `json:"upload_mbps"`
}

type planProviderJSON struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

func marketplacePlanOf(v *subprov.PlanVersion, p *subprov.Provider) marketplacePlanJSON {
	return marketplacePlanJSON{ID: v.ID, PlanVersionID: v.ID, PlanID: v.PlanID, ProviderID: v.ProviderID, Name: v.PlanName,
		MonthlyPrice: v.MonthlyPrice, SetupFee: v.SetupFee, Currency: p.Currency, DownloadMbps: v.DownloadMbps,
		UploadMbps: v.UploadMbps, StoreProductID: api.Optional(v.StoreProductID), Sellable: v.Sellable}
}

// MarketplacePlan: GET /partner/marketplace/plans/{plan_version_id}.
func (h *Handler) MarketplacePlan(w http.ResponseWriter, r *http.Request) error {
	v, p, err := h.Checkout.Plan(r.Context(), r.PathValue("plan_version_id"))
	if err != nil {
		return err
	}
	out := marketplacePlanOf(v, p)
	out.Provider = &planProviderJSON{ID: p.ID, Name: p.Name}
	api.JSON(w, http.StatusOK, out)
	return nil
}

type completeRequest struct {
	SessionID                 string          `json:"session_id"`
	Subscriber                *api.Subscriber `json:"subscriber"`
	ExternalSubscriptionID    string          `json:"external_subscription_id"`
	MACAddress                string          `json:"mac_address"`
	PlanVersionID             string          `json:"plan_version_id"`
	LocationHash              string          `json:"location_hash"`
	LocationIdentifier        string          `json:"location_identifier"`
	UnitID                    string          `json:"unit_id"`
	DeliveryMode              string          `json:"delivery_mode"`
	ServiceProviderDocumentID string          `json:"service_provider_document_id"`
}

// Valid names every missing or malformed field at once: the subscriber's and, without a
// session, the explicit order fields (the rules PlaceOrder applies). With a session its plan,
// delivery mode and MAC are the ones used, so the payload's are not judged.
func (q completeRequest) Valid() map[string]string {
	o := provisioning.Order{Subscriber: q.Subscriber.Person(), ExternalSubscriptionID: strings.TrimSpace(q.ExternalSubscriptionID),
		PlanVersionID: q.PlanVersionID, DeliveryMode: subprov.DeliveryMode(q.DeliveryMode), MACAddress: q.MACAddress}
	p := o.Validate()
	if strings.TrimSpace(q.SessionID) != "" {
		delete(p, "plan_version_id")
		delete(p, "delivery_mode")
		delete(p, "mac_address")
	}
	return api.WithSubscriber(p, q.Subscriber)
}

// Complete: POST /partner/external-checkout/complete.
func (h *Handler) Complete(w http.ResponseWriter, r *http.Request) error {
	q, err := decodeCheckout[completeRequest](h, r, "")
	if err != nil {
		return err
	}
	c, err := h.Checkout.Complete(r.Context(), webhookSecret(r), checkout.CompleteInput{SessionID: strings.TrimSpace(q.SessionID),
		Subscriber:             q.Subscriber.Person(),
		ExternalSubscriptionID: strings.TrimSpace(q.ExternalSubscriptionID), MACAddress: q.MACAddress, PlanVersionID: strings.TrimSpace(q.PlanVersionID),
		LocationHash: strings.TrimSpace(q.LocationHash), LocationIdentifier: strings.TrimSpace(q.LocationIdentifier), UnitID: strings.TrimSpace(q.UnitID),
		DeliveryMode: subprov.DeliveryMode(q.DeliveryMode), ServiceProviderDocumentID: strings.TrimSpace(q.ServiceProviderDocumentID)})
	if err != nil {
		return err
	}
	writeCompletion(w, c)
	return nil
}

// completionJSON is complete's answer: the replay shape, the provisioned shape (with job_id),
// or the install shape (no job_id, PENDING_INSTALL).
// completionReplayJSON answers a completion already made; SubscriberID is absent when the
// session was completed anonymously (there is no subscriber record).
type completionReplayJSON struct {
	Message        string `json:"message"`
	SubscriberID   string `json:"subscriber_id,omitempty"`
	SubscriptionID string `json:"subscription_id"`
}

// completionJSON is a completion's new line; JobID only on the provision route.
type completionJSON struct {
	BillingOwner           subprov.BillingOwner `json:"billing_owner"`
	CustomerNumber         *string              `json:"customer_number"`
	ExternalSubscriptionID *string              `json:"external_subscription_id"`
	JobID                  *string              `json:"job_id,omitempty"`
	Route                  string               `json:"route"`
	Status                 subprov.Status       `json:"status"`
	SubscriberID           string               `json:"subscriber_id"`
	SubscriptionID         string               `json:"subscription_id"`
	WorkflowState          string               `json:"workflow_state"`
}

func writeCompletion(w http.ResponseWriter, c *checkout.Completion) {
	sub := c.Subscription
	if c.Replay {
		api.JSON(w, http.StatusOK, completionReplayJSON{SubscriptionID: sub.ID, SubscriberID: c.SubscriberID, Message: c.Message})
		return
	}
	out := completionJSON{SubscriptionID: sub.ID, SubscriberID: c.SubscriberID, CustomerNumber: api.Optional(c.CustomerNumber),
		Status: sub.Status, WorkflowState: sub.WorkflowState, Route: c.Route, BillingOwner: sub.BillingOwner,
		ExternalSubscriptionID: api.Optional(sub.ExternalSubscriptionID)}
	if c.Route == "provision" {
		out.JobID = &c.JobID
	}
	api.JSON(w, http.StatusOK, out)
}

type anonymousRequest struct {
	SessionID                 string `json:"session_id"`
	ExternalSubscriptionID    string `json:"external_subscription_id"`
	ServiceProviderDocumentID string `json:"service_provider_document_id"`
	ContactEmail              string `json:"contact_email"`
	PlanVersionID             string `json:"plan_version_id"`
	LocationHash              string `json:"location_hash"`
	LocationIdentifier        string `json:"location_identifier"`
	UnitID                    string `json:"unit_id"`
	MACAddress                string `json:"mac_address"`
	DeliveryMode              string `json:"delivery_mode"`
}

// AnonymousComplete: POST /partner/external-checkout/anonymous-complete.
func (h *Handler) AnonymousComplete(w http.ResponseWriter, r *http.Request) error {
	q, err := decodeCheckout[anonymousRequest](h, r, "")
	if err != nil {
		return err
	}
	res, err := h.Checkout.AnonymousComplete(r.Context(), webhookSecret(r), checkout.AnonymousInput{SessionID: strings.TrimSpace(q.SessionID),
		ExternalSubscriptionID: strings.TrimSpace(q.ExternalSubscriptionID), ServiceProviderDocumentID: strings.TrimSpace(q.ServiceProviderDocumentID),
		ContactEmail: q.ContactEmail, PlanVersionID: strings.TrimSpace(q.PlanVersionID), LocationHash: strings.TrimSpace(q.LocationHash),
		LocationIdentifier: strings.TrimSpace(q.LocationIdentifier), UnitID: strings.TrimSpace(q.UnitID), MACAddress: q.MACAddress,
		DeliveryMode: subprov.DeliveryMode(q.DeliveryMode)})
	if err != nil {
		return err
	}
	sub := res.Subscription
	var job *string
	if res.JobID != "" && !res.Replay {
		job = &res.JobID
	}
	api.JSON(w, http.StatusOK, anonymousCompletionJSON{SubscriptionID: sub.ID, ExternalSubscriptionID: api.Optional(sub.ExternalSubscriptionID),
		Status: sub.Status, WorkflowState: sub.WorkflowState, Anonymous: sub.Anonymous, JobID: job, IdempotentReplay: res.Replay, Route: res.Route})
	return nil
}

type anonymousCompletionJSON struct {
	Anonymous              bool           `json:"anonymous"`
	ExternalSubscriptionID *string        `json:"external_subscription_id"`
	IdempotentReplay       bool           `json:"idempotent_replay"`
	JobID                  *string        `json:"job_id"`
	Route                  string         `json:"route,omitempty"` // absent when the completion names no route
	Status                 subprov.Status `json:"status"`
	SubscriptionID         string         `json:"subscription_id"`
	WorkflowState          string         `json:"workflow_state"`
}

// CheckoutSubscription: GET /partner/external-checkout/subscriptions/{external_subscription_id}.
func (h *Handler) CheckoutSubscription(w http.ResponseWriter, r *http.Request) error {
	sub, err := h.Checkout.Subscription(r.Context(), api.CallerOf(r).Provider, r.PathValue("external_subscription_id"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, partnerSubscriptionOf(sub))
	return nil
}

// partnerSubscriptionJSON is a line as the marketplace reads it (the OpenAPI document's partner
// subscription); SubscriberID is absent for an anonymous line.
type partnerSubscriptionJSON struct {
	Anonymous              bool                 `json:"anonymous"`
	AppointmentAt          *string              `json:"appointment_at"`
	BillingOwner           subprov.BillingOwner `json:"billing_owner"`
	BookingLinkSent        bool                 `json:"booking_link_sent"`
	CanceledAt             *string              `json:"canceled_at"`
	EndedAt                *string              `json:"ended_at"`
	ExternalSubscriptionID *string              `json:"external_subscription_id"`
	OnHold                 bool                 `json:"on_hold"`
	PlanVersionID          string               `json:"plan_version_id"`
	Status                 subprov.Status       `json:"status"`
	SubscriberID           *string              `json:"subscriber_id,omitempty"`
	SubscriptionID         string               `json:"subscription_id"`
	WorkflowState          string               `json:"workflow_state"`
}

func partnerSubscriptionOf(sub *subprov.Subscription) partnerSubscriptionJSON {
	out := partnerSubscriptionJSON{SubscriptionID: sub.ID, ExternalSubscriptionID: api.Optional(sub.ExternalSubscriptionID),
		Status: sub.Status, Anonymous: sub.Anonymous, WorkflowState: sub.WorkflowState, AppointmentAt: api.Instant(sub.AppointmentAt),
		OnHold: sub.OnHold, BookingLinkSent: sub.BookingLinkSent, BillingOwner: sub.BillingOwner,
		PlanVersionID: sub.PlanVersionID, CanceledAt: api.Instant(sub.CanceledAt), EndedAt: api.Instant(sub.EndedAt)}
	if !sub.Anonymous {
		out.SubscriberID = &sub.SubscriberID
	}
	return out
}

type subscriptionStatusRequest struct {
	Action                    string `json:"action"`
	ExternalSubscriptionID    string `json:"external_subscription_id"`
	ServiceProviderDocumentID string `json:"service_provider_document_id"`
}

// SubscriptionStatus: POST /partner/external-checkout/subscription-status.
func (h *Handler) SubscriptionStatus(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[subscriptionStatusRequest](r)
	if err != nil {
		return err
	}
	res, err := h.Checkout.SetStatus(r.Context(), api.CallerOf(r).Provider, checkout.StatusInput{Action: strings.TrimSpace(q.Action),
		ExternalSubscriptionID: strings.TrimSpace(q.ExternalSubscriptionID), ServiceProviderDocumentID: strings.TrimSpace(q.ServiceProviderDocumentID)})
	if err != nil {
		return err
	}
	sub := res.Subscription
	api.JSON(w, http.StatusOK, subscriptionStatusJSON{SubscriptionID: sub.ID, ExternalSubscriptionID: api.Optional(sub.ExternalSubscriptionID),
		SubscriptionStatus: sub.Status, PortChanged: res.PortChanged, OnHold: sub.OnHold})
	return nil
}

type subscriptionStatusJSON struct {
	ExternalSubscriptionID *string        `json:"external_subscription_id"`
	OnHold                 bool           `json:"on_hold"`
	PortChanged            bool           `json:"port_changed"`
	SubscriptionID         string         `json:"subscription_id"`
	SubscriptionStatus     subprov.Status `json:"subscription_status"`
}
