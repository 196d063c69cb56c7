package partner

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/checkout"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/sandbox"
)

// Sandbox (dashboard JWT).

// SandboxProviderInfo: GET /api/v1/sandbox/provider-info.
func (h *Handler) SandboxProviderInfo(w http.ResponseWriter, r *http.Request) error {
	p, err := h.Sandbox.Provider(r.Context(), api.CallerOf(r).Operator.Scope())
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, sandboxProviderJSON{SandboxProviderID: p.ID, SandboxWebhookSecret: p.WebhookSecret,
		Name: p.Name, ServiceProviderDocumentID: api.Optional(p.ServiceProviderDocumentID), WebhookURL: api.Optional(p.WebhookURL),
		CheckoutURL: strings.TrimRight(h.PublicURL, "/") + checkout.SandboxCheckoutPath})
	return nil
}

type sandboxProviderJSON struct {
	CheckoutURL               string  `json:"checkout_url"`
	Name                      string  `json:"name"`
	SandboxProviderID         string  `json:"sandbox_provider_id"`
	SandboxWebhookSecret      string  `json:"sandbox_webhook_secret"`
	ServiceProviderDocumentID *string `json:"service_provider_document_id"`
	WebhookURL                *string `json:"webhook_url"`
}

type webhookConfigRequest struct {
	WebhookURL string `json:"webhook_url"`
}

func (q webhookConfigRequest) Valid() map[string]string {
	p := map[string]string{}
	api.Required(p, map[string]string{"webhook_url": q.WebhookURL})
	return p
}

// SandboxWebhookConfig: POST /api/v1/sandbox/webhook-config.
func (h *Handler) SandboxWebhookConfig(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[webhookConfigRequest](r)
	if err != nil {
		return err
	}
	p, d, err := h.Sandbox.SetWebhookURL(r.Context(), api.CallerOf(r).Operator.Scope(), strings.TrimSpace(q.WebhookURL))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, webhookConfigJSON{SandboxProviderID: p.ID, WebhookURL: p.WebhookURL, Ping: deliveryOf(d)})
	return nil
}

type webhookConfigJSON struct {
	Ping              deliveryJSON `json:"ping"`
	SandboxProviderID string       `json:"sandbox_provider_id"`
	WebhookURL        string       `json:"webhook_url"`
}

// deliveryJSON is the outcome of one synchronous delivery attempt.
type deliveryJSON struct {
	Delivered  bool    `json:"delivered"`
	Error      *string `json:"error"`
	EventID    string  `json:"event_id"`
	LatencyMS  int     `json:"latency_ms"`
	StatusCode *int    `json:"status_code"` // null when no HTTP answer came
	Type       string  `json:"type"`
}

func deliveryOf(d *sandbox.Delivery) deliveryJSON {
	a := d.Attempt
	var code *int
	if a.StatusCode != 0 {
		code = &a.StatusCode
	}
	return deliveryJSON{EventID: d.Event.ID, Type: d.Event.Type, Delivered: a.Delivered, StatusCode: code,
		LatencyMS: a.LatencyMS, Error: api.Optional(a.Error)}
}

// SandboxEvents: GET /api/v1/sandbox/webhook-events?limit=.
func (h *Handler) SandboxEvents(w http.ResponseWriter, r *http.Request) error {
	limit := 0
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return subprov.Invalid(map[string]string{"query:limit": "want a whole number from 1 to 200"})
		}
		if n == 0 {
			n = -1 // an explicit 0 is out of range, not "the default"
		}
		limit = n
	}
	evs, err := h.Sandbox.ListEvents(r.Context(), api.CallerOf(r).Operator.Scope(), limit)
	if err != nil {
		return err
	}
	out := make([]sandboxEventJSON, 0, len(evs))
	for _, e := range evs {
		out = append(out, sandboxEventJSON{ID: e.ID, Type: e.Type, CreatedAt: e.CreatedAt.UTC().Format(time.RFC3339),
			SubscriptionID: api.Optional(e.SubscriptionID), DeliveryState: e.DeliveryState, Attempts: e.Attempts,
			Payload: json.RawMessage(e.Payload)})
	}
	api.JSON(w, http.StatusOK, sandboxEventsJSON{Events: out})
	return nil
}

type sandboxEventsJSON struct {
	Events []sandboxEventJSON `json:"events"`
}

type sandboxEventJSON struct {
	Attempts       int             `json:"attempts"`
	CreatedAt      string          `json:"created_at"`
	DeliveryState  string          `json:"delivery_state"`
	ID             string          `json:"id"`
	Payload        json.RawMessage `json:"payload"`
	SubscriptionID *string         `json:"subscription_id"`
	Type           string          `json:"type"`
}

// SandboxReplay: POST /api/v1/sandbox/webhook-events/{event_id}/replay.
func (h *Handler) SandboxReplay(w http.ResponseWriter, r *http.Request) error {
	d, err := h.Sandbox.Replay(r.Context(), api.CallerOf(r).Operator, r.PathValue("event_id"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, deliveryOf(d))
	return nil
}
