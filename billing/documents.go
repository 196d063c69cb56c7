package billing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/pdf"
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

// InvoicePDF renders one of a subscriber's invoices in lang, the reader's language; another
// subscriber's is not found.
func (s *Service) InvoicePDF(ctx context.Context, w io.Writer, p *subprov.Provider, subscriberID, invoiceID string, lang locale.Lang) error {
	inv, err := s.Store.Invoice(ctx, p.ID, invoiceID)
	if err != nil || inv.SubscriberID != subscriberID {
		if err == nil || errors.Is(err, subprov.ErrNotFound) {
			return subprov.NotFound("Invoice")
		}
		return err
	}
	return s.renderInvoice(ctx, w, p, inv, lang)
}

// renderInvoice renders an invoice of provider p as its PDF in lang, for its subscriber or an
// operator.
func (s *Service) renderInvoice(ctx context.Context, w io.Writer, p *subprov.Provider, inv *subprov.Invoice, lang locale.Lang) error {
	lines, err := s.Store.InvoiceLines(ctx, inv.ID)
	if err != nil {
		return err
	}
	to, err := s.addressee(ctx, p, inv.SubscriberID, inv.SubscriptionID, inv.CustomerNumber)
	if err != nil {
		return err
	}
	doc := pdf.Invoice{Lang: lang, ProviderName: p.Name, ProviderColor: p.BrandColor, Currency: inv.Currency, Number: inv.Number,
		CustomerNumber: to.customerNumber, BillTo: to.party, ServiceAddress: to.serviceAddress,
		InvoiceDate: inv.InvoiceDate, DueDate: inv.InvoiceDate, Period: inv.Period,
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

// CreditNotePDF renders one of a subscriber's credit notes in lang, the reader's language;
// another subscriber's is not found.
func (s *Service) CreditNotePDF(ctx context.Context, w io.Writer, p *subprov.Provider, subscriberID, id string, lang locale.Lang) error {
	cn, err := s.Store.CreditNote(ctx, p.ID, id)
	if err != nil || cn.SubscriberID != subscriberID || !listed(cn.State) {
		if err == nil || errors.Is(err, subprov.ErrNotFound) {
			return subprov.NotFound("Credit note")
		}
		return err
	}
	return s.renderCreditNote(ctx, w, p, cn, lang)
}

// renderCreditNote renders a credit note of provider p as its PDF in lang, for its subscriber
// or an operator.
func (s *Service) renderCreditNote(ctx context.Context, w io.Writer, p *subprov.Provider, cn *subprov.CreditNote, lang locale.Lang) error {
	to, err := s.addressee(ctx, p, cn.SubscriberID, cn.SubscriptionID, cn.CustomerNumber)
	if err != nil {
		return err
	}
	doc := pdf.CreditNote{Lang: lang, ProviderName: p.Name, ProviderColor: p.BrandColor, Currency: cn.Currency, Number: cn.Number,
		CustomerNumber: to.customerNumber, BillTo: to.party,
		IssueDate: cn.CreatedAt.In(p.Location()).Format("2006-01-02"), State: cn.State, Reason: cn.Reason, Amount: cn.Amount,
		Lines: []pdf.Line{{Description: lang.T("pdf.credit.line", cn.Reason), UnitPrice: cn.Amount, Amount: cn.Amount}}}
	if cn.InvoiceID != "" {
		inv, err := s.Store.Invoice(ctx, p.ID, cn.InvoiceID)
		if err != nil && !errors.Is(err, subprov.ErrNotFound) {
			return err
		}
		if inv != nil {
			doc.InvoiceNumber = inv.Number
		}
	}
	if err := pdf.RenderCreditNote(w, doc); err != nil {
		return fmt.Errorf("render credit note %s: %w", cn.Number, err)
	}
	return nil
}

// addressee is what a subscriber's document prints about whom it is for.
type addressee struct {
	customerNumber string
	party          pdf.Party
	serviceAddress string
}

// addressee reads whom a document of a subscriber's line is for. The customer number is the one the
// document was issued with (issued documents keep the old number when it changes: docs/billing.md,
// PDFs); one issued before the subscriber had a number prints the number they have now. The bill-to
// party is the billing contact, the separate invoice contact else the holder, at the postal address
// kept on a contact, else at the line's service address (invoices go where the service is).
func (s *Service) addressee(ctx context.Context, p *subprov.Provider, subscriberID, subscriptionID, issuedNumber string) (*addressee, error) {
	rec, err := s.Store.SubscriberRecordOf(ctx, p.ID, subscriberID)
	if err != nil {
		return nil, err
	}
	c := rec.BillingContact()
	to := &addressee{customerNumber: issuedNumber, party: pdf.Party{Name: strings.TrimSpace(c.FirstName + " " + c.LastName),
		Company: c.Company, Email: c.Email, Phone: c.PhoneNumber}}
	if to.customerNumber == "" {
		to.customerNumber = rec.CustomerNumber
	}
	var service subprov.Address
	var suite string
	if subscriptionID != "" {
		if service, suite, err = s.Store.ServiceAddress(ctx, p.ID, subscriptionID); err != nil && !errors.Is(err, subprov.ErrNotFound) {
			return nil, err
		}
		to.serviceAddress = strings.Join(postalLines(service, suite), ", ")
	}
	kept, err := s.Store.InvoiceAddress(ctx, subscriberID)
	if err != nil {
		return nil, err
	}
	if kept.Street != "" {
		to.party.AddressLines = postalLines(kept, "")
	} else {
		to.party.AddressLines = postalLines(service, suite)
	}
	return to, nil
}

// postalLines writes a Canadian postal address: the suite before the civic address
// ("1204-120 Rue King O"), then city, province and postal code ("Montréal QC  H3C 2B5"), then
// the country unless it is Canada. No street, no lines.
func postalLines(a subprov.Address, suite string) []string {
	if strings.TrimSpace(a.Street) == "" {
		return nil
	}
	street := a.Street
	if suite != "" {
		street = suite + "-" + street
	}
	lines := []string{street}
	place := strings.TrimSpace(strings.Join([]string{a.City, a.Province}, " "))
	if a.PostalCode != "" {
		place = strings.TrimSpace(place + "  " + a.PostalCode)
	}
	if place != "" {
		lines = append(lines, place)
	}
	if c := strings.TrimSpace(a.Country); c != "" && !strings.EqualFold(c, "CA") {
		lines = append(lines, c)
	}
	return lines
}

func listed(state string) bool {
	switch state {
	case subprov.CreditOpen, subprov.CreditRefunded, subprov.CreditPaidOut, subprov.CreditApplied:
		return true
	}
	return false
}
