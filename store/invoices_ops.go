package store

import (
	"context"
	"fmt"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// InvoiceFilter narrows a list of invoices; "" matches anything. DatedBefore and DatedFrom
// (YYYY-MM-DD) bound the invoice date: before, or on or after.
type InvoiceFilter struct {
	ProviderID   string
	SubscriberID string
	Status       string // the stored status: open, paid, void
	DatedBefore  string
	DatedFrom    string
}

// Invoices lists invoices newest first, page.Limit+1 after the page's position (InvoiceKey).
func (s *Store) Invoices(ctx context.Context, f InvoiceFilter, page subprov.Page) ([]*subprov.Invoice, error) {
	var where []string
	var args []any
	for _, c := range []struct{ cond, v string }{{"provider_id = ?", f.ProviderID}, {"subscriber_id = ?", f.SubscriberID},
		{"status = ?", f.Status}, {"invoice_date < ?", f.DatedBefore}, {"invoice_date >= ?", f.DatedFrom}} {
		if c.v != "" {
			where, args = append(where, c.cond), append(args, c.v)
		}
	}
	w, a, err := newestFirstAfter(page, "created_at")
	if err != nil {
		return nil, err
	}
	where, args = append(where, w...), append(args, a...)
	return s.listInvoices(ctx, s.R(), whereOf(where)+` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, page.Limit+1)...)
}

// InvoiceKey is an invoice's position in its list's order, for the next page's cursor.
func InvoiceKey(inv *subprov.Invoice) []string { return TimeKey(inv.CreatedAt, inv.ID) }

// InvoiceByID returns any provider's invoice (the caller checks scope).
func (s *Store) InvoiceByID(ctx context.Context, id string) (*subprov.Invoice, error) {
	inv, err := scanInvoice(s.R().QueryRow(ctx, `SELECT `+invoiceColumns+` FROM invoices WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("invoice %s: %w", id, err)
	}
	return inv, nil
}

// LockInvoiceRow reads any provider's invoice inside a write transaction, locked until it ends,
// so that two credit notes of one invoice are issued one after the other.
func (tx *Tx) LockInvoiceRow(ctx context.Context, id string) (*subprov.Invoice, error) {
	inv, err := scanInvoice(tx.QueryRow(ctx, `SELECT `+invoiceColumns+` FROM invoices WHERE id = ?`+tx.d.ForUpdate(), id))
	if err != nil {
		return nil, fmt.Errorf("invoice %s: %w", id, err)
	}
	return inv, nil
}

// CreditedOnInvoice is the sum of the credit notes issued against an invoice, voided ones aside.
func (tx *Tx) CreditedOnInvoice(ctx context.Context, invoiceID string) (subprov.Money, error) {
	var sum int64
	if err := tx.QueryRow(ctx, `SELECT COALESCE(SUM(amount_minor), 0) FROM credit_notes WHERE invoice_id = ? AND state <> 'voided'`,
		invoiceID).Scan(&sum); err != nil {
		return 0, fmt.Errorf("credits of invoice %s: %w", invoiceID, err)
	}
	return subprov.Money(sum), nil
}

// CreditedOnInvoices is CreditedOnInvoice for several invoices at once, by invoice id.
func (s *Store) CreditedOnInvoices(ctx context.Context, invoiceIDs []string) (map[string]subprov.Money, error) {
	out := map[string]subprov.Money{}
	if len(invoiceIDs) == 0 {
		return out, nil
	}
	type row struct {
		id  string
		sum int64
	}
	rows, err := sqltext.QueryAll(ctx, s.R(), "credits of invoices", func(r interface{ Scan(...any) error }) (row, error) {
		var x row
		err := r.Scan(&x.id, &x.sum)
		return x, err
	}, `SELECT invoice_id, SUM(amount_minor) FROM credit_notes WHERE invoice_id IN `+inList(len(invoiceIDs))+
		` AND state <> 'voided' GROUP BY invoice_id`, anyList(invoiceIDs)...)
	if err != nil {
		return nil, err
	}
	for _, x := range rows {
		out[x.id] = subprov.Money(x.sum)
	}
	return out, nil
}
