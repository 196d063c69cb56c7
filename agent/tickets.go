package agent

import (
	"context"
	"strings"
	"unicode/utf8"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/tickets"
)

// TicketInput is an enriched ticket from the agent (docs/agent.md, Tickets): customer_id or
// contact_email, priority and ai_summary are required.
type TicketInput struct {
	CustomerID   string `json:"customer_id,omitempty"`
	ContactEmail string `json:"contact_email,omitempty"`
	Priority     string `json:"priority" jsonschema:"low, normal or high"`
	Subject      string `json:"subject,omitempty"`
	AISummary    string `json:"ai_summary"`
	AIDiagnosis  string `json:"ai_diagnosis,omitempty"`
	Transcript   string `json:"transcript,omitempty"`
}

// Problems lists every problem of the input.
func (in TicketInput) Problems() map[string]string {
	p := map[string]string{}
	if strings.TrimSpace(in.CustomerID) == "" && strings.TrimSpace(in.ContactEmail) == "" {
		p["customer_id"] = "provide customer_id or contact_email"
	}
	if e := strings.TrimSpace(in.ContactEmail); e != "" && !auth.ValidEmail(e) {
		p["contact_email"] = "not a valid e-mail address"
	}
	switch in.Priority {
	case "low", "normal", "high":
	case "":
		p["priority"] = "required: low, normal or high"
	default:
		p["priority"] = "must be low, normal or high"
	}
	if strings.TrimSpace(in.AISummary) == "" {
		p["ai_summary"] = "required"
	}
	for name, v := range map[string]string{"subject": in.Subject, "ai_summary": in.AISummary, "ai_diagnosis": in.AIDiagnosis} {
		if utf8.RuneCountInString(v) > 10_000 {
			p[name] = "at most 10000 characters"
		}
	}
	if utf8.RuneCountInString(in.Transcript) > 200_000 {
		p["transcript"] = "at most 200000 characters"
	}
	return p
}

// TicketReceipt is an opened ticket.
type TicketReceipt struct {
	TicketID string `json:"ticket_id"`
	Number   string `json:"number"`
	Status   string `json:"status"`
	Group    string `json:"group"`
}

// OpenTicket opens a support ticket routed to the provider's support group. It needs no
// verified session; a customer_id must be of the caller's provider (else 404). ai_summary
// and ai_diagnosis form the customer-facing article; the transcript is an internal note.
func (s *Service) OpenTicket(ctx context.Context, c Caller, in TicketInput) (*TicketReceipt, error) {
	// Scoping first: another provider's customer is 404 whatever else the input says.
	var rec *subprov.SubscriberContacts
	if strings.TrimSpace(in.CustomerID) != "" {
		var err error
		if rec, err = s.customer(ctx, c, in.CustomerID, false); err != nil {
			return nil, err
		}
	}
	if p := in.Problems(); len(p) > 0 {
		return nil, subprov.Invalid(p)
	}
	t := &subprov.Ticket{ProviderID: c.Provider.ID, Kind: tickets.KindSupport, Priority: in.Priority,
		ContactEmail: subprov.NormalizeEmail(in.ContactEmail), Subject: strings.TrimSpace(in.Subject),
		Article: article(in), InternalNote: strings.TrimSpace(in.Transcript)}
	if rec != nil {
		t.SubscriberID = rec.ID
		if t.ContactEmail == "" {
			t.ContactEmail = subprov.NormalizeEmail(rec.Holder.Email)
		}
	}
	if t.Subject == "" {
		t.Subject = subjectOf(in.AISummary)
	}
	if err := s.Store.InTx(ctx, func(tx *store.Tx) error { return s.Desk.Open(ctx, tx, t) }); err != nil {
		return nil, err
	}
	return &TicketReceipt{TicketID: t.ID, Number: t.Number, Status: t.Status, Group: t.Group}, nil
}

func article(in TicketInput) string {
	a := "Summary:\n" + strings.TrimSpace(in.AISummary)
	if d := strings.TrimSpace(in.AIDiagnosis); d != "" {
		a += "\n\nDiagnosis:\n" + d
	}
	return a
}

// subjectOf is the summary's first line, cut at 80 characters.
func subjectOf(summary string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(summary), "\n")
	if r := []rune(line); len(r) > 80 {
		line = string(r[:77]) + "..."
	}
	return line
}
