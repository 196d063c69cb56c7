package billing

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/pdf"
	"github.com/subprov/subprov/store"
)

// Invoices lists a subscriber's local invoice rows, newest invoice_date first.
func (s *Service) Invoices(ctx context.Context, p *subprov.Provider, subscriberID string) ([]*subprov.Invoice, error) {
	return s.Store.InvoicesOfSubscriber(ctx, p.ID, subscriberID)
}

// CreditNotes reads a subscriber's credit notes live from the billing system. When it does
// not answer this is 502, never an empty list.
func (s *Service) CreditNotes(ctx context.Context, p *subprov.Provider, subscriberID string) ([]*subprov.CreditNote, error) {
	cns, err := s.Ledger.CreditNotes(ctx, p, subscriberID)
	if errors.Is(err, ErrBillingSystemUnavailable) {
		return nil, subprov.Errorf(subprov.EUNAVAILABLE, "billing_system_unavailable", "The billing system is unreachable; try again later")
	}
	return cns, err
}

// InvoicePDF renders one of a subscriber's invoices; another subscriber's is not found.
func (s *Service) InvoicePDF(ctx context.Context, w io.Writer, p *subprov.Provider, subscriberID, invoiceID string) error {
	inv, err := s.Store.Invoice(ctx, p.ID, invoiceID)
	if err != nil || inv.SubscriberID != subscriberID {
		if err == nil || store.IsNoRows(err) {
			return subprov.NotFound("Invoice")
		}
		return err
	}
	lines, err := s.Store.InvoiceLines(ctx, inv.ID)
	if err != nil {
		return err
	}
	doc := pdf.Invoice{ProviderName: p.Name, ProviderColor: p.BrandColor, Currency: inv.Currency, Number: inv.Number,
		CustomerNumber: inv.CustomerNumber, InvoiceDate: inv.InvoiceDate, DueDate: inv.InvoiceDate, Period: inv.Period,
		Net: inv.Net, Tax: inv.Tax, Total: inv.Total, TaxRateBP: p.TaxRateBP, Status: inv.Status}
	if inv.PaidAt != nil {
		doc.PaidOn = inv.PaidAt.In(p.Location()).Format("2006-01-02")
	}
	for _, l := range lines {
		doc.Lines = append(doc.Lines, pdf.Line{Description: l.Description, UnitPrice: l.UnitPrice, Days: l.Days, DaysInPeriod: l.DaysInPeriod, Amount: l.Amount})
	}
	if err := pdf.RenderInvoice(w, doc); err != nil {
		return fmt.Errorf("render invoice %s: %w", inv.Number, err)
	}
	return nil
}

// CreditNotePDF renders one of a subscriber's credit notes; another subscriber's is not found.
func (s *Service) CreditNotePDF(ctx context.Context, w io.Writer, p *subprov.Provider, subscriberID, id string) error {
	cn, err := s.Store.CreditNote(ctx, p.ID, id)
	if err != nil || cn.SubscriberID != subscriberID || !listed(cn.State) {
		if err == nil || store.IsNoRows(err) {
			return subprov.NotFound("Credit note")
		}
		return err
	}
	doc := pdf.CreditNote{ProviderName: p.Name, ProviderColor: p.BrandColor, Currency: cn.Currency, Number: cn.Number,
		IssueDate: cn.CreatedAt.In(p.Location()).Format("2006-01-02"), State: cn.State, Reason: cn.Reason, Amount: cn.Amount,
		Lines: []pdf.Line{{Description: "Credit: " + cn.Reason, UnitPrice: cn.Amount, Amount: cn.Amount}}}
	if err := pdf.RenderCreditNote(w, doc); err != nil {
		return fmt.Errorf("render credit note %s: %w", cn.Number, err)
	}
	return nil
}

func listed(state string) bool {
	switch state {
	case subprov.CreditOpen, subprov.CreditRefunded, subprov.CreditPaidOut, subprov.CreditApplied:
		return true
	}
	return false
}
