package ops

import (
	"net/http"
	"time"

	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/tickets"
)

// ListTickets: GET /api/v1/tickets.
func (h *Handler) ListTickets(w http.ResponseWriter, r *http.Request) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	ts, next, err := h.Tickets.List(r.Context(), api.CallerOf(r).Operator,
		tickets.Filter{ProviderID: q.Get("provider_id"), Status: q.Get("status"), Group: q.Get("group")}, page)
	if err != nil {
		return err
	}
	out := make([]ticketJSON, len(ts))
	for i, t := range ts {
		out[i] = ticketOf(t)
	}
	api.List(w, "tickets", out, next)
	return nil
}

type ticketPatch struct {
	Status     *string `json:"status"`
	AssignedTo *string `json:"assigned_to"`
	Comment    *string `json:"comment"`
}

// UpdateTicket: PATCH /api/v1/tickets/{ticket_id}.
func (h *Handler) UpdateTicket(w http.ResponseWriter, r *http.Request) error {
	version, err := api.IfMatch(r)
	if err != nil {
		return err
	}
	q, err := api.Decode[ticketPatch](r)
	if err != nil {
		return err
	}
	t, err := h.Tickets.Update(r.Context(), api.CallerOf(r).Operator, r.PathValue("ticket_id"), version,
		tickets.Update{Status: q.Status, AssignedTo: q.AssignedTo, Comment: q.Comment})
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, ticketOf(*t))
	return nil
}

type ticketJSON struct {
	ID           string              `json:"id"`
	ProviderID   string              `json:"provider_id"`
	Number       string              `json:"number"`
	SubscriberID *string             `json:"subscriber_id"`
	ContactEmail *string             `json:"contact_email"`
	Kind         string              `json:"kind"`
	Subject      string              `json:"subject"`
	Priority     string              `json:"priority"`
	Status       string              `json:"status"`
	Group        string              `json:"group"`
	AssignedTo   *string             `json:"assigned_to"`
	Article      string              `json:"article"`
	InternalNote string              `json:"internal_note"`
	Comments     []ticketCommentJSON `json:"comments"`
	Version      int64               `json:"version"`
	CreatedAt    string              `json:"created_at"`
	UpdatedAt    *string             `json:"updated_at"`
}

type ticketCommentJSON struct {
	ID        string `json:"id"`
	Author    string `json:"author"`
	Body      string `json:"body"`
	CreatedAt string `json:"created_at"`
}

func ticketOf(t tickets.Worked) ticketJSON {
	cs := make([]ticketCommentJSON, len(t.Comments))
	for i, c := range t.Comments {
		cs[i] = ticketCommentJSON{ID: c.ID, Author: c.Author, Body: c.Body, CreatedAt: c.CreatedAt.UTC().Format(time.RFC3339)}
	}
	return ticketJSON{ID: t.ID, ProviderID: t.ProviderID, Number: t.Number, SubscriberID: api.Optional(t.SubscriberID),
		ContactEmail: api.Optional(t.ContactEmail), Kind: t.Kind, Subject: t.Subject, Priority: t.Priority, Status: t.Status, Group: t.Group,
		AssignedTo: api.Optional(t.AssignedTo), Article: t.Article, InternalNote: t.InternalNote, Comments: cs, Version: t.Version,
		CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339), UpdatedAt: api.Instant(t.UpdatedAt)}
}
