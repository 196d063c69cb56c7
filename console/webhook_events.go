package console

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/webhookevents"
)

// Webhook events: the events sent to the providers' receivers by provider, type and delivery
// state, one event with its payload and every attempt, and its replay. The capabilities are
// those of GET /api/v1/webhook-events, GET /api/v1/webhook-events/{id} and POST
// /api/v1/webhook-events/{id}/replay.

// webhookEventRow is an event with its latest attempt and its provider's name and time zone.
type webhookEventRow struct {
	webhookevents.Listed
	Provider string
	Loc      *time.Location
}

// webhookEvents: GET /console/webhook-events?provider_id=&type=&status=&cursor=.
func (h *Handler) webhookEvents(w http.ResponseWriter, r *http.Request, v *View) error {
	q := r.URL.Query()
	return h.listPage(w, r, v, list{title: "Webhook events", tmpl: "webhook_events", path: Prefix + "webhook-events", choices: webhookevents.Statuses}, func(page subprov.Page, idx providerIndex) (any, string, error) {
		evs, next, err := h.Ops.Events.List(v.ctx, v.Operator, webhookevents.Filter{ProviderID: q.Get("provider_id"), Type: q.Get("type"),
			Status: q.Get("status")}, page)
		rows := make([]webhookEventRow, len(evs))
		for i, e := range evs {
			rows[i] = webhookEventRow{Listed: e, Provider: idx.Name(e.ProviderID), Loc: idx.Loc(e.ProviderID)}
		}
		return rows, next, err
	})
}

// webhookEventData is an event's page: the event, its payload as sent (indented) and every
// attempt, oldest first.
type webhookEventData struct {
	*webhookevents.Detail
	Payload  string
	Provider string
	Loc      *time.Location
}

// webhookEvent: GET /console/webhook-events/{event_id}.
func (h *Handler) webhookEvent(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.webhookEventPage(w, r, v, http.StatusOK)
}

func (h *Handler) webhookEventPage(w http.ResponseWriter, r *http.Request, v *View, status int) error {
	d, err := h.Ops.Events.Get(v.ctx, v.Operator, r.PathValue("event_id"))
	if err != nil {
		return err
	}
	p, err := h.providerOf(v, d.ProviderID)
	if err != nil {
		return err
	}
	payload := string(d.Payload)
	var buf bytes.Buffer
	if json.Indent(&buf, d.Payload, "", "  ") == nil {
		payload = buf.String()
	}
	v.Title, v.Data = "Webhook event "+d.Type, webhookEventData{Detail: d, Payload: payload, Provider: p.Name, Loc: p.Location()}
	h.render(w, r, v, status, "webhook_event")
	return nil
}

// replayWebhookEvent: POST /console/webhook-events/{event_id}/replay. The event's page then
// shows the new attempt; a provider without a receiver (409) is shown with nothing sent.
func (h *Handler) replayWebhookEvent(w http.ResponseWriter, r *http.Request, v *View) error {
	d, err := h.Ops.Events.Replay(v.ctx, v.Operator, r.PathValue("event_id"))
	if err != nil {
		return refused(r, v, err, func(status int) error { return h.webhookEventPage(w, r, v, status) })
	}
	flash := "The event was sent again."
	if n := len(d.Attempts); n > 0 {
		if a := d.Attempts[n-1]; a.StatusCode != 0 {
			flash = fmt.Sprintf("The event was sent again: the receiver answered %d.", a.StatusCode)
		} else {
			flash = "The event was sent again: the receiver did not answer."
		}
	}
	h.redirect(w, r, Prefix+"webhook-events/"+d.ID, flash)
	return nil
}
