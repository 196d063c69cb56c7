package tickets

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// Ticket states an operator moves a ticket through.
const (
	StatusOpen    = "open"
	StatusPending = "pending"
	StatusSolved  = "solved"
	StatusClosed  = "closed"
)

// Statuses lists every ticket state.
var Statuses = []string{StatusOpen, StatusPending, StatusSolved, StatusClosed}

// Service is the operations surface's ticket queue: operators of the providers in their scope
// list tickets and work them (status, assignee, comments).
type Service struct {
	Store *store.Store
	Clock subprov.Clock
}

// Filter narrows a list of tickets; "" matches anything.
type Filter struct {
	ProviderID string
	Status     string
	Group      string
}

// Worked is a ticket with its operators' comments, oldest first.
type Worked struct {
	*subprov.Ticket
	Comments []subprov.TicketComment
}

// List lists the tickets in the operator's scope, newest first, one page at a time.
func (s *Service) List(ctx context.Context, op *subprov.Operator, f Filter, page subprov.Page) ([]Worked, string, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, "", err
	}
	if f.Status != "" && !slices.Contains(Statuses, f.Status) {
		return nil, "", subprov.Invalid(map[string]string{"status": "must be one of " + strings.Join(Statuses, ", ")})
	}
	provider := op.ProviderID
	if f.ProviderID != "" {
		if !op.Scope().Allows(f.ProviderID) {
			return []Worked{}, "", nil
		}
		provider = f.ProviderID
	}
	ts, err := s.Store.Tickets(ctx, store.TicketFilter{ProviderID: provider, Status: f.Status, Group: f.Group}, page)
	if err != nil {
		return nil, "", err
	}
	ts, next := subprov.Cut(page, ts, store.TicketKey)
	return s.withComments(ctx, ts, next)
}

// Get reads one ticket in the operator's scope with its comments; another provider's ticket is
// not found, as an unknown id is.
func (s *Service) Get(ctx context.Context, op *subprov.Operator, id string) (*Worked, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, err
	}
	t, err := s.Store.Ticket(ctx, id)
	if errors.Is(err, subprov.ErrNotFound) || (err == nil && !op.Scope().Allows(t.ProviderID)) {
		return nil, subprov.NotFound("Ticket")
	}
	if err != nil {
		return nil, err
	}
	return s.worked(ctx, t)
}

// worked is one ticket with its comments.
func (s *Service) worked(ctx context.Context, t *subprov.Ticket) (*Worked, error) {
	out, _, err := s.withComments(ctx, []*subprov.Ticket{t}, "")
	if err != nil {
		return nil, err
	}
	return &out[0], nil
}

func (s *Service) withComments(ctx context.Context, ts []*subprov.Ticket, next string) ([]Worked, string, error) {
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.ID
	}
	comments, err := s.Store.TicketComments(ctx, ids)
	if err != nil {
		return nil, "", err
	}
	out := make([]Worked, len(ts))
	for i, t := range ts {
		out[i] = Worked{Ticket: t, Comments: comments[t.ID]}
	}
	return out, next, nil
}

// Update is an operator's edit of a ticket; nil fields are left as they are.
type Update struct {
	Status     *string
	AssignedTo *string // "" unassigns
	Comment    *string
}

// Problems lists what is wrong with an edit, by field.
func (u Update) Problems() map[string]string {
	p := map[string]string{}
	if u.Status == nil && u.AssignedTo == nil && u.Comment == nil {
		p["body"] = "send at least one of status, assigned_to, comment"
	}
	if u.Status != nil && !slices.Contains(Statuses, *u.Status) {
		p["status"] = "must be one of " + strings.Join(Statuses, ", ")
	}
	if u.AssignedTo != nil && len(*u.AssignedTo) > 254 {
		p["assigned_to"] = "at most 254 characters"
	}
	if u.Comment != nil {
		switch c := strings.TrimSpace(*u.Comment); {
		case c == "":
			p["comment"] = "must not be empty"
		case len(c) > 10000:
			p["comment"] = "at most 10000 characters"
		}
	}
	return p
}

// assignee is the e-mail a ticket of providerID is assigned to ("" unassigns it): an active
// operator's who sees the provider's tickets (its own provider's or a platform operator). Any
// other e-mail, another provider's operator's included, is refused alike (422), so that the
// edit tells nothing of who works for another provider.
func assignee(ctx context.Context, tx *store.Tx, providerID, email string) (string, error) {
	email = subprov.NormalizeEmail(email)
	if email == "" {
		return "", nil
	}
	o, _, err := tx.LockOperatorByEmail(ctx, email)
	if err != nil && !errors.Is(err, subprov.ErrNotFound) {
		return "", err
	}
	if err != nil || o.DisabledAt != nil || !o.Scope().Allows(providerID) {
		return "", subprov.Invalid(map[string]string{"assigned_to": "no active operator of this ticket's provider has this e-mail"})
	}
	return email, nil
}

// Update edits a ticket in the operator's scope: its status, its assignee, and a comment added,
// under the version the operator read (expected, 0 for none: 409 when it moved on), audited
// as ticket.updated (a comment's text is recorded only as changed).
func (s *Service) Update(ctx context.Context, op *subprov.Operator, id string, expected int64, u Update) (*Worked, error) {
	if err := op.Authorize(subprov.PermSupport); err != nil {
		return nil, err
	}
	if problems := u.Problems(); len(problems) > 0 {
		return nil, subprov.Invalid(problems)
	}
	var t *subprov.Ticket
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		t, err = tx.LockTicket(ctx, id)
		if errors.Is(err, subprov.ErrNotFound) {
			return subprov.NotFound("Ticket")
		}
		if err != nil {
			return err
		}
		if err := op.Scope().Check(t.ProviderID, "Ticket"); err != nil {
			return err
		}
		if err := subprov.CheckVersion(expected, t.Version); err != nil {
			return err
		}
		now := s.Clock.Now()
		e := subprov.NewAudit(ctx, t.ProviderID, "ticket.updated", "ticket", t.ID)
		if u.Status != nil {
			e.Changes.Set("status", t.Status, *u.Status)
			t.Status = *u.Status
		}
		if u.AssignedTo != nil {
			a, err := assignee(ctx, tx, t.ProviderID, *u.AssignedTo)
			if err != nil {
				return err
			}
			if a != t.AssignedTo {
				e.Changes.SetRedacted("assigned_to") // an operator's e-mail: personal
			}
			t.AssignedTo = a
		}
		if u.Comment != nil {
			c := &subprov.TicketComment{ID: store.NewID(), TicketID: t.ID, Author: op.Email, Body: strings.TrimSpace(*u.Comment), CreatedAt: now}
			if err := tx.InsertTicketComment(ctx, c); err != nil {
				return err
			}
			e.Changes.SetRedacted("comment")
		}
		if err := tx.UpdateTicket(ctx, t, now); err != nil {
			return err
		}
		return tx.RecordAudit(ctx, e, now)
	})
	if err != nil {
		return nil, err
	}
	return s.worked(ctx, t)
}
