package billing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/store"
)

// The operations surface's billing: invoices of every provider in the operator's scope, their
// PDFs, operator credit notes against an invoice, and the record of bill runs.

// Invoice states an operator filters by. An open invoice whose due date has passed is overdue.
const (
	InvoiceOpen    = "open"
	InvoiceOverdue = "overdue"
	InvoicePaid    = "paid"
	InvoiceVoid    = "void"
)

var invoiceStates = []string{InvoiceOpen, InvoiceOverdue, InvoicePaid, InvoiceVoid}

// InvoiceFilter narrows an operator's list of invoices; "" matches anything.
type InvoiceFilter struct {
	ProviderID   string
	SubscriberID string
	Status       string // open, overdue, paid, void
}

// OperatorInvoice is an invoice as an operator sees it: its state (overdue for an open invoice
// past its due date) and what the credit notes issued against it so far took.
type OperatorInvoice struct {
	*subprov.Invoice
	State    string
	Credited subprov.Money
	// CreditNotes are the notes issued against it that its subscriber is shown, newest first:
	// read for one invoice (Invoice), not for a list.
	CreditNotes []*subprov.CreditNote
}

// ListInvoices lists the invoices in the operator's scope, newest first, one page at a time.
func (s *Service) ListInvoices(ctx context.Context, op *subprov.Operator, f InvoiceFilter, page subprov.Page) ([]OperatorInvoice, string, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, "", err
	}
	if f.Status != "" && !slices.Contains(invoiceStates, f.Status) {
		return nil, "", subprov.Invalid(map[string]string{"status": "must be one of " + strings.Join(invoiceStates, ", ")})
	}
	provider, ok := narrow(op.Scope(), f.ProviderID)
	if !ok {
		return []OperatorInvoice{}, "", nil
	}
	today := s.today()
	filter := store.InvoiceFilter{ProviderID: provider, SubscriberID: f.SubscriberID, Status: f.Status}
	switch f.Status { // an open invoice is due on its date: dated before today, it is overdue
	case InvoiceOpen:
		filter.DatedFrom = today
	case InvoiceOverdue:
		filter.Status, filter.DatedBefore = InvoiceOpen, today
	}
	invs, err := s.Store.Invoices(ctx, filter, page)
	if err != nil {
		return nil, "", err
	}
	invs, next := subprov.Cut(page, invs, store.InvoiceKey)
	ids := make([]string, len(invs))
	for i, inv := range invs {
		ids[i] = inv.ID
	}
	credited, err := s.Store.CreditedOnInvoices(ctx, ids)
	if err != nil {
		return nil, "", err
	}
	out := make([]OperatorInvoice, len(invs))
	for i, inv := range invs {
		out[i] = OperatorInvoice{Invoice: inv, State: invoiceState(inv, today), Credited: credited[inv.ID]}
	}
	return out, next, nil
}

// today is the service's date (UTC) that due dates are compared with.
func (s *Service) today() string { return s.Clock.Now().UTC().Format(time.DateOnly) }

// invoiceState is the state an operator sees: an open invoice due before today is overdue.
func invoiceState(inv *subprov.Invoice, today string) string {
	if inv.Status == InvoiceOpen && inv.InvoiceDate < today {
		return InvoiceOverdue
	}
	return inv.Status
}

// InvoiceDocument renders an invoice in the operator's scope as its PDF, the document its
// subscriber downloads, in the provider's default language.
func (s *Service) InvoiceDocument(ctx context.Context, op *subprov.Operator, w io.Writer, invoiceID string) error {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return err
	}
	inv, p, err := s.scopedInvoice(ctx, op, invoiceID)
	if err != nil {
		return err
	}
	return s.renderInvoice(ctx, w, p, inv, locale.Choose("", "", p.DefaultLanguage))
}

// CreditNoteDocument renders a credit note in the operator's scope as its PDF, the document its
// subscriber downloads, in the provider's default language. Another provider's note is not
// found, as an unknown id is, and so is one the subscriber is not shown (a draft, archived or
// voided note).
func (s *Service) CreditNoteDocument(ctx context.Context, op *subprov.Operator, w io.Writer, creditNoteID string) error {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return err
	}
	cn, err := s.Store.CreditNoteByID(ctx, creditNoteID)
	if errors.Is(err, subprov.ErrNotFound) || (err == nil && (!op.Scope().Allows(cn.ProviderID) || !listed(cn.State))) {
		return subprov.NotFound("Credit note")
	}
	if err != nil {
		return err
	}
	p, err := s.Store.Provider(ctx, cn.ProviderID)
	if err != nil {
		return err
	}
	return s.renderCreditNote(ctx, w, p, cn, locale.Choose("", "", p.DefaultLanguage))
}

// Invoice reads one invoice in the operator's scope as the list shows it, its state and what
// its credit notes took so far, with those notes. Another provider's invoice is not found, as an unknown id is.
func (s *Service) Invoice(ctx context.Context, op *subprov.Operator, invoiceID string) (*OperatorInvoice, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, err
	}
	inv, _, err := s.scopedInvoice(ctx, op, invoiceID)
	if err != nil {
		return nil, err
	}
	credited, err := s.Store.CreditedOnInvoices(ctx, []string{inv.ID})
	if err != nil {
		return nil, err
	}
	notes, err := s.Store.ListedCreditsOfInvoice(ctx, inv.ID)
	if err != nil {
		return nil, err
	}
	return &OperatorInvoice{Invoice: inv, State: invoiceState(inv, s.today()), Credited: credited[inv.ID], CreditNotes: notes}, nil
}

// scopedInvoice reads an invoice in the operator's scope and its provider; another provider's
// invoice is not found, as an unknown id is.
func (s *Service) scopedInvoice(ctx context.Context, op *subprov.Operator, invoiceID string) (*subprov.Invoice, *subprov.Provider, error) {
	inv, err := s.Store.InvoiceByID(ctx, invoiceID)
	if errors.Is(err, subprov.ErrNotFound) || (err == nil && !op.Scope().Allows(inv.ProviderID)) {
		return nil, nil, subprov.NotFound("Invoice")
	}
	if err != nil {
		return nil, nil, err
	}
	p, err := s.Store.Provider(ctx, inv.ProviderID)
	if err != nil {
		return nil, nil, err
	}
	return inv, p, nil
}

// CreditInvoice issues an operator's credit note of gross amount against an invoice in its
// scope: an open note of the invoice's line, applied to its next invoice or refunded as any
// other. The invoice's credit notes together never exceed its total (422), and a void invoice
// takes none.
func (s *Service) CreditInvoice(ctx context.Context, op *subprov.Operator, invoiceID string, c Credit) (*subprov.CreditNote, error) {
	if err := op.Authorize(subprov.PermInvoices); err != nil {
		return nil, err
	}
	_, p, err := s.scopedInvoice(ctx, op, invoiceID)
	if err != nil {
		return nil, err
	}
	if problems := c.Problems(); len(problems) > 0 {
		return nil, subprov.Invalid(problems)
	}
	amount, reason := *c.Amount, strings.TrimSpace(c.Reason)
	var cn *subprov.CreditNote
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		inv, err := tx.LockInvoiceRow(ctx, invoiceID)
		if err != nil {
			return err
		}
		if inv.Status == InvoiceVoid {
			return subprov.Invalid(map[string]string{"amount": "the invoice is void: there is nothing to credit"})
		}
		credited, err := tx.CreditedOnInvoice(ctx, inv.ID)
		if err != nil {
			return err
		}
		if left := inv.Total - credited; amount > left {
			return subprov.Invalid(map[string]string{"amount": fmt.Sprintf("must be at most %s, the invoice's total less its earlier credits", max(left, 0))})
		}
		sub := &subprov.Subscription{ID: inv.SubscriptionID, SubscriberID: inv.SubscriberID}
		cn, err = s.IssueCredit(ctx, tx, p, sub, amount, reason, inv.ID, s.Clock.Now())
		return err
	})
	if err != nil {
		return nil, err
	}
	return cn, nil
}

// Credit is an operator's credit note: a gross amount and why.
type Credit struct {
	Amount *subprov.Money
	Reason string
}

// Problems lists what is wrong with a credit note's amount and reason, by field.
func (c Credit) Problems() map[string]string {
	problems := map[string]string{}
	switch {
	case c.Amount == nil:
		problems["amount"] = "required"
	case *c.Amount <= 0:
		problems["amount"] = "must be more than 0"
	}
	switch reason := strings.TrimSpace(c.Reason); {
	case reason == "":
		problems["reason"] = "required"
	case len(reason) > 500:
		problems["reason"] = "at most 500 characters"
	}
	return problems
}

// BillRuns lists the bill runs of the providers in the operator's scope (or of providerID),
// newest first, one page at a time.
func (s *Service) BillRuns(ctx context.Context, op *subprov.Operator, providerID string, page subprov.Page) ([]*subprov.BillRun, string, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, "", err
	}
	provider, ok := narrow(op.Scope(), providerID)
	if !ok {
		return []*subprov.BillRun{}, "", nil
	}
	runs, err := s.Store.BillRuns(ctx, store.BillRunFilter{ProviderID: provider}, page)
	if err != nil {
		return nil, "", err
	}
	runs, next := subprov.Cut(page, runs, store.BillRunKey)
	return runs, next, nil
}

// narrow is the provider a list reads for an operator of scope who asked for providerID ("":
// every provider in scope): false when the operator asked for a provider outside its scope,
// whose list is empty.
func narrow(scope subprov.Scope, providerID string) (string, bool) {
	if providerID == "" {
		return scope.ProviderID, true
	}
	return providerID, scope.Allows(providerID)
}
