package httpapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/checkout"
	"github.com/subprov/subprov/sandbox"
)

// Sandbox (dashboard JWT).

// handleSandboxProviderInfo: GET /api/v1/sandbox/provider-info.
func (s *server) handleSandboxProviderInfo(w http.ResponseWriter, r *http.Request) error {
	p, err := s.Sandbox.Provider(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"sandbox_provider_id": p.ID, "sandbox_webhook_secret": p.WebhookSecret,
		"name": p.Name, "service_provider_document_id": strOrNil(p.ServiceProviderDocumentID), "webhook_url": strOrNil(p.WebhookURL),
		"checkout_url": strings.TrimRight(s.PublicURL, "/") + checkout.SandboxCheckoutPath})
	return nil
}

type webhookConfigRequest struct {
	WebhookURL string `json:"webhook_url"`
}

func (q webhookConfigRequest) Valid() map[string]string {
	if strings.TrimSpace(q.WebhookURL) == "" {
		return map[string]string{"webhook_url": "required"}
	}
	return nil
}

// handleSandboxWebhookConfig: POST /api/v1/sandbox/webhook-config.
func (s *server) handleSandboxWebhookConfig(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[webhookConfigRequest](r)
	if err != nil {
		return err
	}
	p, d, err := s.Sandbox.SetWebhookURL(r.Context(), strings.TrimSpace(q.WebhookURL))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"sandbox_provider_id": p.ID, "webhook_url": p.WebhookURL, "ping": deliveryJSON(d)})
	return nil
}

// deliveryJSON is the outcome of one synchronous delivery attempt.
func deliveryJSON(d *sandbox.Delivery) map[string]any {
	a := d.Attempt
	var code any
	if a.StatusCode != 0 {
		code = a.StatusCode
	}
	return map[string]any{"event_id": d.Event.ID, "type": d.Event.Type, "delivered": a.Delivered, "status_code": code,
		"latency_ms": a.LatencyMS, "error": strOrNil(a.Error)}
}

// handleSandboxEvents: GET /api/v1/sandbox/webhook-events?limit=.
func (s *server) handleSandboxEvents(w http.ResponseWriter, r *http.Request) error {
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
	evs, err := s.Sandbox.ListEvents(r.Context(), limit)
	if err != nil {
		return err
	}
	out := make([]map[string]any, 0, len(evs))
	for _, e := range evs {
		out = append(out, map[string]any{"id": e.ID, "type": e.Type, "created_at": e.CreatedAt.UTC().Format(time.RFC3339),
			"subscription_id": strOrNil(e.SubscriptionID), "delivery_state": e.DeliveryState, "attempts": e.Attempts,
			"payload": json.RawMessage(e.Payload)})
	}
	writeJSON(w, http.StatusOK, map[string]any{"events": out})
	return nil
}

// handleSandboxReplay: POST /api/v1/sandbox/webhook-events/{event_id}/replay.
func (s *server) handleSandboxReplay(w http.ResponseWriter, r *http.Request) error {
	d, err := s.Sandbox.Replay(r.Context(), r.PathValue("event_id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, deliveryJSON(d))
	return nil
}
