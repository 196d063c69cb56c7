package portal

import (
	"context"
	"errors"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/tickets"
)

// RequestPaperBilling asks the provider's billing staff, by a ticket in the billing group, to
// start (enabled) or stop mailing the holder's invoices on paper; the staff act on it. Only
// the holder asks (403 holder_only). The request is audited (paper_billing.requested) and
// answers the ticket's id. Without a ticket desk there is nobody to ask: 503.
func (s *Service) RequestPaperBilling(ctx context.Context, p *subprov.Provider, acc *subprov.Account, enabled bool) (string, error) {
	if err := acc.CheckHolder(); err != nil {
		return "", err
	}
	if s.Desk == nil {
		return "", subprov.Errorf(subprov.EUNAVAILABLE, "desk_unavailable", "The request could not be passed on; try again later")
	}
	now := s.Clock.Now()
	var ticketID string
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		owner, number, err := tx.SubscriberNumber(ctx, acc.SubscriberID)
		if errors.Is(err, subprov.ErrNotFound) || (err == nil && owner != p.ID) {
			return subprov.NotFound("Subscriber")
		}
		if err != nil {
			return err
		}
		// The ticket names the account by its customer number only: it holds nothing personal.
		subject, note := "Stop paper invoices", "The account holder asked to stop receiving invoices on paper."
		if enabled {
			subject, note = "Start paper invoices", "The account holder asked to receive invoices on paper, mailed to the billing address."
		}
		if number != "" {
			subject += " for customer " + number
		}
		t := &subprov.Ticket{ProviderID: p.ID, SubscriberID: acc.SubscriberID, Kind: tickets.KindOperator, Group: tickets.GroupBilling,
			Subject: subject, InternalNote: note}
		if err := s.Desk.Open(ctx, tx, t); err != nil {
			return err
		}
		ticketID = t.ID
		e := subprov.NewAudit(ctx, p.ID, "paper_billing.requested", "ticket", t.ID)
		e.Changes.Set("paper_billing", nil, enabled)
		return tx.RecordAudit(ctx, e, now)
	})
	return ticketID, err
}
