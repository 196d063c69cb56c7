package dev

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/httpapi/api"
)

// clockJSON is the dev clock's time.
type clockJSON struct {
	Now string `json:"now"`
}

// platformOnly refuses, with 403 Forbidden, a provider-scoped operator: dev mode acts on the
// whole deployment (one clock, one set of fault switches, every provider's mail), so only a
// platform-wide operator changes the clock or the switches or reads the outbox. Reading the
// clock and the switches shows nothing of any provider and is open to every operator whose
// role reads.
func platformOnly(r *http.Request) error {
	if op := api.CallerOf(r).Operator; op == nil || !op.Platform() {
		return subprov.Forbidden()
	}
	return nil
}

// ClockGet: GET /api/v1/dev/clock.
func (h *Handler) ClockGet(w http.ResponseWriter, r *http.Request) error {
	api.JSON(w, http.StatusOK, clockJSON{Now: h.Clock.Now().Format(time.RFC3339)})
	return nil
}

// The dev clock stays within clock.MaxOffset of the real time: a larger advance (or the sum of
// several), or a set instant farther away, is 422 and leaves the clock where it was.
const maxAdvanceSeconds = int64(clock.MaxOffset / time.Second)

var outOfRange = "the dev clock stays within 100 years of the real time (" + strconv.FormatInt(maxAdvanceSeconds, 10) + " seconds)"

type clockRequest struct {
	AdvanceSeconds *int64  `json:"advance_seconds"`
	Set            *string `json:"set"`
}

func (q clockRequest) Valid() map[string]string {
	p := map[string]string{}
	switch {
	case q.AdvanceSeconds == nil && q.Set == nil:
		p["advance_seconds"] = "give advance_seconds or set"
	case q.AdvanceSeconds != nil && q.Set != nil:
		p["set"] = "give advance_seconds or set, not both"
	case q.AdvanceSeconds != nil && *q.AdvanceSeconds < 0:
		p["advance_seconds"] = "the clock only moves forward"
	case q.AdvanceSeconds != nil && *q.AdvanceSeconds > maxAdvanceSeconds:
		p["advance_seconds"] = outOfRange
	case q.Set != nil:
		if _, err := time.Parse(time.RFC3339, *q.Set); err != nil {
			p["set"] = "want an RFC 3339 instant"
		}
	}
	return p
}

// ClockSet: POST /api/v1/dev/clock {"advance_seconds": N} or {"set": RFC3339}.
func (h *Handler) ClockSet(w http.ResponseWriter, r *http.Request) error {
	if err := platformOnly(r); err != nil {
		return err
	}
	q, err := api.Decode[clockRequest](r)
	if err != nil {
		return err
	}
	var now time.Time
	field := "advance_seconds"
	if q.AdvanceSeconds != nil {
		now, err = h.Clock.TryAdvance(time.Duration(*q.AdvanceSeconds) * time.Second)
	} else {
		t, _ := time.Parse(time.RFC3339, *q.Set)
		field = "set"
		now, err = h.Clock.TrySet(t)
	}
	if errors.Is(err, clock.ErrOutOfRange) {
		return subprov.Invalid(map[string]string{field: outOfRange})
	}
	if h.OnClockChange != nil {
		h.OnClockChange(r.Context())
	}
	api.JSON(w, http.StatusOK, clockJSON{Now: now.Format(time.RFC3339)})
	return nil
}

func (h *Handler) FaultsGet(w http.ResponseWriter, r *http.Request) error {
	api.JSON(w, http.StatusOK, h.Faults.All())
	return nil
}

// FaultsSet: POST /api/v1/dev/faults; an unknown seam or value changes nothing.
func (h *Handler) FaultsSet(w http.ResponseWriter, r *http.Request) error {
	if err := platformOnly(r); err != nil {
		return err
	}
	q, err := api.Decode[map[string]string](r)
	if err != nil {
		return err
	}
	if p := faults.Validate(q); len(p) > 0 {
		return subprov.Invalid(p)
	}
	h.Faults.Apply(q)
	if h.OnFaultsChange != nil {
		h.OnFaultsChange(r.Context())
	}
	api.JSON(w, http.StatusOK, h.Faults.All())
	return nil
}

type outboxMessage struct {
	To      string   `json:"to"`
	Subject string   `json:"subject"`
	Body    string   `json:"body"`
	Links   []string `json:"links"`
	Status  string   `json:"status"`
	SentAt  *string  `json:"sent_at"`
}

// Outbox: GET /api/v1/dev/outbox?to=ADDRESS, newest first.
func (h *Handler) Outbox(w http.ResponseWriter, r *http.Request) error {
	if err := platformOnly(r); err != nil {
		return err
	}
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return subprov.Invalid(map[string]string{"query:limit": "want 1 to 500"})
		}
		limit = n
	}
	ms, err := h.Store.Outbox(r.Context(), r.URL.Query().Get("to"), limit)
	if err != nil {
		return err
	}
	out := make([]outboxMessage, 0, len(ms))
	for _, m := range ms {
		om := outboxMessage{To: m.To, Subject: m.Subject, Body: m.Body, Links: m.Links, Status: m.Status}
		if om.Links == nil {
			om.Links = []string{}
		}
		if m.SentAt != nil {
			t := m.SentAt.Format(time.RFC3339)
			om.SentAt = &t
		}
		out = append(out, om)
	}
	api.JSON(w, http.StatusOK, outboxJSON{Messages: out})
	return nil
}

type outboxJSON struct {
	Messages []outboxMessage `json:"messages"`
}
