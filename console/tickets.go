package console

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/tickets"
)

// Tickets: the ticket queue by provider, status and group, one ticket with its comments, and
// its edit (status, assignee, a comment). The capabilities are those of GET /api/v1/tickets
// and PATCH /api/v1/tickets/{id}; the edit carries the version the page showed, so an edit of
// a ticket someone changed since is refused (409).

// ticketRow is a ticket with its provider's name and time zone.
type ticketRow struct {
	tickets.Worked
	Provider string
	Loc      *time.Location
}

// ticketList: GET /console/tickets?provider_id=&status=&group=&cursor=.
func (h *Handler) ticketList(w http.ResponseWriter, r *http.Request, v *View) error {
	q := r.URL.Query()
	return h.listPage(w, r, v, list{title: "Tickets", tmpl: "tickets", path: Prefix + "tickets", choices: tickets.Statuses}, func(page subprov.Page, idx providerIndex) (any, string, error) {
		ts, next, err := h.Ops.Tickets.List(v.ctx, v.Operator, tickets.Filter{ProviderID: q.Get("provider_id"), Status: q.Get("status"),
			Group: strings.TrimSpace(q.Get("group"))}, page)
		rows := make([]ticketRow, len(ts))
		for i, t := range ts {
			rows[i] = ticketRow{Worked: t, Provider: idx.Name(t.ProviderID), Loc: idx.Loc(t.ProviderID)}
		}
		return rows, next, err
	})
}

// ticketData is a ticket's page: the ticket and the states it can be moved to.
type ticketData struct {
	ticketRow
	Statuses []string
}

// ticket: GET /console/tickets/{ticket_id}.
func (h *Handler) ticket(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.ticketPage(w, r, v, http.StatusOK)
}

func (h *Handler) ticketPage(w http.ResponseWriter, r *http.Request, v *View, status int) error {
	t, err := h.Ops.Tickets.Get(v.ctx, v.Operator, r.PathValue("ticket_id"))
	if err != nil {
		return err
	}
	p, err := h.providerOf(v, t.ProviderID)
	if err != nil {
		return err
	}
	v.Title, v.Data = "Ticket "+t.Number, ticketData{ticketRow: ticketRow{Worked: *t, Provider: p.Name, Loc: p.Location()}, Statuses: tickets.Statuses}
	h.render(w, r, v, status, "ticket")
	return nil
}

// updateTicket: POST /console/tickets/{ticket_id} (status, assigned_to, comment, version).
// The status and the assignee are sent as the form holds them; an empty comment adds none.
func (h *Handler) updateTicket(w http.ResponseWriter, r *http.Request, v *View) error {
	f := r.PostForm
	id := r.PathValue("ticket_id")
	var u tickets.Update
	if _, ok := f["status"]; ok {
		s := f.Get("status")
		u.Status = &s
	}
	if _, ok := f["assigned_to"]; ok {
		a := strings.TrimSpace(f.Get("assigned_to"))
		u.AssignedTo = &a
	}
	if c := f.Get("comment"); strings.TrimSpace(c) != "" {
		u.Comment = &c
	}
	version, err := strconv.ParseInt(f.Get("version"), 10, 64)
	if err != nil || version < 1 {
		version = 0
	}
	_, err = h.Ops.Tickets.Update(v.ctx, v.Operator, id, version, u)
	if err != nil {
		return refused(r, v, err, func(status int) error {
			if status == http.StatusConflict {
				// Someone changed the ticket since: the page shows it as it is now, the comment kept.
				v.Form.Del("status")
				v.Form.Del("assigned_to")
				v.Form.Del("version")
			}
			return h.ticketPage(w, r, v, status)
		})
	}
	h.redirect(w, r, Prefix+"tickets/"+id, "The ticket is updated.")
	return nil
}
