package httpapi

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/checkout"
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

// handleCreateSession: POST /partner/external-checkout/sessions.
func (s *server) handleCreateSession(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[sessionCreateRequest](r)
	if err != nil {
		return err
	}
	accountID := ""
	if a := callerOf(r).Account; a != nil {
		accountID = a.ID
	}
	c, err := s.Checkout.Create(r.Context(), checkout.CreateInput{ProviderID: strings.TrimSpace(q.ProviderID),
		PlanVersionID: strings.TrimSpace(q.PlanVersionID), BuildingID: strings.TrimSpace(q.BuildingID), UnitID: strings.TrimSpace(q.UnitID),
		LocationHash: strings.TrimSpace(q.LocationHash), MACAddress: q.MACAddress, DeliveryMode: subprov.DeliveryMode(q.DeliveryMode)}, accountID)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, map[string]any{"session_id": c.Session.ID, "checkout_url": c.CheckoutURL,
		"expires_at": c.Session.ExpiresAt().Format(time.RFC3339), "status": c.Session.Status})
	return nil
}

func webhookSecret(r *http.Request) string { return r.Header.Get("X-Webhook-Secret") }

// decodeCheckout reads the body of a webhook-secret call on a session. A body that does not
// decode is answered only after the checks the call makes first: when the path or the body
// names a session, its age check (410, marking it expired: the age check runs
// before authentication) and the secret (401, or another provider's 404); otherwise 401 when
// the secret names no provider. An anonymous caller thus learns nothing about the request's
// shape, and an expired session answers 410 whatever the body. A body that decodes goes on to
// the checkout package, which runs the same checks in the same order.
func decodeCheckout[T any](s *server, r *http.Request, pathSession string) (T, error) {
	body, err := readBody(r)
	if err != nil {
		return *new(T), err
	}
	v, decodeErr := decodeBytes[T](body)
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
		if err := s.Checkout.Check(r.Context(), id, webhookSecret(r)); err != nil {
			return v, err
		}
	} else if _, err := s.Auth.WebhookSecret(r.Context(), webhookSecret(r)); err != nil {
		return v, err
	}
	return v, decodeErr
}

// handleReadSession: GET /partner/external-checkout/sessions/{session_id}.
func (s *server) handleReadSession(w http.ResponseWriter, r *http.Request) error {
	v, err := s.Checkout.Read(r.Context(), r.PathValue("session_id"), webhookSecret(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sessionJSON(v))
	return nil
}

type sessionPatchRequest struct {
	PlanVersionID      *string `json:"plan_version_id"`
	PartnerReferenceID *string `json:"partner_reference_id"`
}

// handlePatchSession: PATCH /partner/external-checkout/sessions/{session_id}.
func (s *server) handlePatchSession(w http.ResponseWriter, r *http.Request) error {
	q, err := decodeCheckout[sessionPatchRequest](s, r, r.PathValue("session_id"))
	if err != nil {
		return err
	}
	v, err := s.Checkout.Patch(r.Context(), r.PathValue("session_id"), webhookSecret(r),
		checkout.PatchInput{PlanVersionID: q.PlanVersionID, PartnerReferenceID: q.PartnerReferenceID})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, sessionJSON(v))
	return nil
}

// handleCancelSession: POST /partner/external-checkout/sessions/{session_id}/cancel.
func (s *server) handleCancelSession(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("session_id")
	if err := s.Checkout.Cancel(r.Context(), id, webhookSecret(r)); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"session_id": id, "status": subprov.SessionCancelled})
	return nil
}

// sessionJSON is the session with its plan, suite and building, and provider embedded.
func sessionJSON(v *checkout.View) map[string]any {
	c := v.Session
	var expires any
	if c.Status == subprov.SessionPending {
		expires = c.ExpiresAt().Format(time.RFC3339) // a read session never expires
	}
	b := v.Building
	building := map[string]any{"id": b.ID, "building_id": b.ID, "street": strOrNil(b.Street), "city": strOrNil(b.City),
		"postal_code": strOrNil(b.PostalCode), "province": strOrNil(b.Province), "country": strOrNil(b.Country)}
	units := map[string]any{"id": nil, "unit_id": nil, "unit_number": nil, "postal_unit": nil, "buildings": building}
	if u := v.Unit; u != nil {
		units["id"], units["unit_id"], units["unit_number"], units["postal_unit"] = u.ID, u.ID, u.UnitNumber, strOrNil(u.PostalUnit)
	}
	pl, p := v.Plan, v.Provider
	return map[string]any{
		"session_id": c.ID, "status": c.Status, "provider_id": c.ProviderID, "plan_version_id": c.PlanVersionID,
		"building_id": c.BuildingID, "unit_id": strOrNil(c.UnitID), "location_hash": strOrNil(c.LocationHash),
		"mac_address": strOrNil(c.MACAddress), "delivery_mode": c.DeliveryMode,
		"service_provider_document_id": strOrNil(p.ServiceProviderDocumentID), "partner_reference_id": strOrNil(c.PartnerReferenceID),
		"subscription_id": strOrNil(c.SubscriptionID), "created_at": c.CreatedAt.Format(time.RFC3339), "expires_at": expires,
		"redirected_at": timeOrNil(c.RedirectedAt), "completed_at": timeOrNil(c.CompletedAt),
		"store_product_id": strOrNil(pl.StoreProductID),
		"plan":             marketplacePlanJSON(pl, p),
		"units":            units,
		"provider": map[string]any{"id": p.ID, "provider_id": p.ID, "name": p.Name, "currency": p.Currency, "time_zone": p.TimeZone,
			"service_provider_document_id": strOrNil(p.ServiceProviderDocumentID), "sandbox": p.Sandbox, "brand_color": strOrNil(p.BrandColor)},
	}
}

// marketplacePlanJSON is a plan version for display: name, price and the partner's catalog key.
func marketplacePlanJSON(v *subprov.PlanVersion, p *subprov.Provider) map[string]any {
	return map[string]any{"id": v.ID, "plan_version_id": v.ID, "plan_id": v.PlanID, "provider_id": v.ProviderID, "name": v.PlanName,
		"monthly_price": v.MonthlyPrice, "setup_fee": v.SetupFee, "currency": p.Currency, "download_mbps": v.DownloadMbps,
		"upload_mbps": v.UploadMbps, "store_product_id": strOrNil(v.StoreProductID), "sellable": v.Sellable}
}

// handleMarketplacePlan: GET /partner/marketplace/plans/{plan_version_id}.
func (s *server) handleMarketplacePlan(w http.ResponseWriter, r *http.Request) error {
	v, p, err := s.Checkout.Plan(r.Context(), r.PathValue("plan_version_id"))
	if err != nil {
		return err
	}
	out := marketplacePlanJSON(v, p)
	out["provider"] = map[string]any{"id": p.ID, "name": p.Name}
	writeJSON(w, http.StatusOK, out)
	return nil
}

type completeRequest struct {
	SessionID                 string          `json:"session_id"`
	Subscriber                *subscriberJSON `json:"subscriber"`
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
	o := provisioning.Order{Subscriber: q.Subscriber.person(), ExternalSubscriptionID: strings.TrimSpace(q.ExternalSubscriptionID),
		PlanVersionID: q.PlanVersionID, DeliveryMode: subprov.DeliveryMode(q.DeliveryMode), MACAddress: q.MACAddress}
	p := o.Validate()
	if strings.TrimSpace(q.SessionID) != "" {
		delete(p, "plan_version_id")
		delete(p, "delivery_mode")
		delete(p, "mac_address")
	}
	return withSubscriber(p, q.Subscriber)
}

// handleComplete: POST /partner/external-checkout/complete.
func (s *server) handleComplete(w http.ResponseWriter, r *http.Request) error {
	q, err := decodeCheckout[completeRequest](s, r, "")
	if err != nil {
		return err
	}
	c, err := s.Checkout.Complete(r.Context(), webhookSecret(r), checkout.CompleteInput{SessionID: strings.TrimSpace(q.SessionID),
		Subscriber:             q.Subscriber.person(),
		ExternalSubscriptionID: strings.TrimSpace(q.ExternalSubscriptionID), MACAddress: q.MACAddress, PlanVersionID: strings.TrimSpace(q.PlanVersionID),
		LocationHash: strings.TrimSpace(q.LocationHash), LocationIdentifier: strings.TrimSpace(q.LocationIdentifier), UnitID: strings.TrimSpace(q.UnitID),
		DeliveryMode: subprov.DeliveryMode(q.DeliveryMode), ServiceProviderDocumentID: strings.TrimSpace(q.ServiceProviderDocumentID)})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, completionJSON(c))
	return nil
}

// completionJSON is complete's answer: the replay shape, the provisioned shape (with job_id),
// or the install shape (no job_id, PENDING_INSTALL).
func completionJSON(c *checkout.Completion) map[string]any {
	sub := c.Subscription
	if c.Replay {
		out := map[string]any{"subscription_id": sub.ID, "subscriber_id": c.SubscriberID, "message": c.Message}
		if c.SubscriberID == "" { // the session was completed anonymously: there is no subscriber record
			delete(out, "subscriber_id")
		}
		return out
	}
	out := map[string]any{"subscription_id": sub.ID, "subscriber_id": c.SubscriberID, "customer_number": strOrNil(c.CustomerNumber),
		"status": sub.Status, "workflow_state": sub.WorkflowState, "route": c.Route, "billing_owner": sub.BillingOwner,
		"external_subscription_id": strOrNil(sub.ExternalSubscriptionID)}
	if c.Route == "provision" {
		out["job_id"] = c.JobID
	}
	return out
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

// handleAnonymousComplete: POST /partner/external-checkout/anonymous-complete.
func (s *server) handleAnonymousComplete(w http.ResponseWriter, r *http.Request) error {
	q, err := decodeCheckout[anonymousRequest](s, r, "")
	if err != nil {
		return err
	}
	res, err := s.Checkout.AnonymousComplete(r.Context(), webhookSecret(r), checkout.AnonymousInput{SessionID: strings.TrimSpace(q.SessionID),
		ExternalSubscriptionID: strings.TrimSpace(q.ExternalSubscriptionID), ServiceProviderDocumentID: strings.TrimSpace(q.ServiceProviderDocumentID),
		ContactEmail: q.ContactEmail, PlanVersionID: strings.TrimSpace(q.PlanVersionID), LocationHash: strings.TrimSpace(q.LocationHash),
		LocationIdentifier: strings.TrimSpace(q.LocationIdentifier), UnitID: strings.TrimSpace(q.UnitID), MACAddress: q.MACAddress,
		DeliveryMode: subprov.DeliveryMode(q.DeliveryMode)})
	if err != nil {
		return err
	}
	sub := res.Subscription
	var job any
	if res.JobID != "" && !res.Replay {
		job = res.JobID
	}
	out := map[string]any{"subscription_id": sub.ID, "external_subscription_id": strOrNil(sub.ExternalSubscriptionID), "status": sub.Status,
		"workflow_state": sub.WorkflowState, "anonymous": sub.Anonymous, "job_id": job, "idempotent_replay": res.Replay}
	if res.Route != "" {
		out["route"] = res.Route
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// handleCheckoutSubscription: GET /partner/external-checkout/subscriptions/{external_subscription_id}.
func (s *server) handleCheckoutSubscription(w http.ResponseWriter, r *http.Request) error {
	sub, err := s.Checkout.Subscription(r.Context(), callerOf(r).Provider, r.PathValue("external_subscription_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, partnerSubscriptionJSON(sub))
	return nil
}

// partnerSubscriptionJSON is the partner view of a line (the OpenAPI document's partner subscription).
func partnerSubscriptionJSON(sub *subprov.Subscription) map[string]any {
	out := map[string]any{"subscription_id": sub.ID, "external_subscription_id": strOrNil(sub.ExternalSubscriptionID),
		"status": sub.Status, "anonymous": sub.Anonymous, "workflow_state": sub.WorkflowState, "appointment_at": timeOrNil(sub.AppointmentAt),
		"on_hold": sub.OnHold, "booking_link_sent": sub.BookingLinkSent, "billing_owner": sub.BillingOwner,
		"plan_version_id": sub.PlanVersionID, "canceled_at": timeOrNil(sub.CanceledAt), "ended_at": timeOrNil(sub.EndedAt)}
	if !sub.Anonymous {
		out["subscriber_id"] = sub.SubscriberID
	}
	return out
}

type subscriptionStatusRequest struct {
	Action                    string `json:"action"`
	ExternalSubscriptionID    string `json:"external_subscription_id"`
	ServiceProviderDocumentID string `json:"service_provider_document_id"`
}

// handleSubscriptionStatus: POST /partner/external-checkout/subscription-status.
func (s *server) handleSubscriptionStatus(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[subscriptionStatusRequest](r)
	if err != nil {
		return err
	}
	res, err := s.Checkout.SetStatus(r.Context(), callerOf(r).Provider, checkout.StatusInput{Action: strings.TrimSpace(q.Action),
		ExternalSubscriptionID: strings.TrimSpace(q.ExternalSubscriptionID), ServiceProviderDocumentID: strings.TrimSpace(q.ServiceProviderDocumentID)})
	if err != nil {
		return err
	}
	sub := res.Subscription
	writeJSON(w, http.StatusOK, map[string]any{"subscription_id": sub.ID, "external_subscription_id": strOrNil(sub.ExternalSubscriptionID),
		"subscription_status": sub.Status, "port_changed": res.PortChanged, "on_hold": sub.OnHold})
	return nil
}
