package ops

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/webhookevents"
)

// WebhookEvents: GET /api/v1/webhook-events?provider_id=&type=&status=.
func (h *Handler) WebhookEvents(w http.ResponseWriter, r *http.Request) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	evs, next, err := h.Events.List(r.Context(), api.CallerOf(r).Operator,
		webhookevents.Filter{ProviderID: q.Get("provider_id"), Type: q.Get("type"), Status: q.Get("status")}, page)
	if err != nil {
		return err
	}
	out := make([]webhookEventJSON, len(evs))
	for i, e := range evs {
		out[i] = webhookEventOf(e.WebhookEvent, e.LastAttempt)
	}
	api.List(w, "events", out, next)
	return nil
}

// WebhookEvent: GET /api/v1/webhook-events/{event_id}.
func (h *Handler) WebhookEvent(w http.ResponseWriter, r *http.Request) error {
	d, err := h.Events.Get(r.Context(), api.CallerOf(r).Operator, r.PathValue("event_id"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, webhookEventDetailOf(d))
	return nil
}

// ReplayWebhookEvent: POST /api/v1/webhook-events/{event_id}/replay.
func (h *Handler) ReplayWebhookEvent(w http.ResponseWriter, r *http.Request) error {
	d, err := h.Events.Replay(r.Context(), api.CallerOf(r).Operator, r.PathValue("event_id"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusAccepted, webhookEventDetailOf(d))
	return nil
}

type webhookEventJSON struct {
	ID          string              `json:"id"`
	ProviderID  string              `json:"provider_id"`
	Type        string              `json:"type"`
	CreatedAt   string              `json:"created_at"`
	Status      string              `json:"status"`
	Attempts    int                 `json:"attempts"`
	LastAttempt *webhookAttemptJSON `json:"last_attempt"`
}

type webhookAttemptJSON struct {
	At         string  `json:"at"`
	StatusCode *int    `json:"status_code"` // null when no HTTP answer came
	Error      *string `json:"error"`
}

type webhookEventDetailJSON struct {
	webhookEventJSON
	Payload        json.RawMessage     `json:"payload"`
	AttemptHistory []attemptRecordJSON `json:"attempt_history"`
}

// attemptRecordJSON is one attempt as an event's history shows it: with the receiver's URL
// and how long it took to answer.
type attemptRecordJSON struct {
	webhookAttemptJSON
	URL       string `json:"url"`
	LatencyMS int    `json:"latency_ms"`
}

func webhookEventOf(e *subprov.WebhookEvent, last *subprov.WebhookAttempt) webhookEventJSON {
	out := webhookEventJSON{ID: e.ID, ProviderID: e.ProviderID, Type: e.Type, CreatedAt: e.CreatedAt.UTC().Format(time.RFC3339),
		Status: e.DeliveryState, Attempts: e.Attempts}
	if last != nil {
		a := webhookAttemptOf(last)
		out.LastAttempt = &a
	}
	return out
}

func webhookAttemptOf(a *subprov.WebhookAttempt) webhookAttemptJSON {
	var code *int
	if a.StatusCode != 0 {
		c := a.StatusCode
		code = &c
	}
	return webhookAttemptJSON{At: a.AttemptedAt.UTC().Format(time.RFC3339), StatusCode: code, Error: api.Optional(a.Error)}
}

func webhookEventDetailOf(d *webhookevents.Detail) webhookEventDetailJSON {
	var last *subprov.WebhookAttempt
	list := make([]attemptRecordJSON, len(d.Attempts))
	for i, a := range d.Attempts {
		list[i] = attemptRecordJSON{webhookAttemptJSON: webhookAttemptOf(a), URL: a.URL, LatencyMS: a.LatencyMS}
		last = a
	}
	return webhookEventDetailJSON{webhookEventJSON: webhookEventOf(d.WebhookEvent, last), Payload: json.RawMessage(d.Payload), AttemptHistory: list}
}
