package billing_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/internal/servicetest"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

// TestOperatorBilling: the operations surface's invoices, credit notes and bill runs, by role
// and scope. Marie's March invoice (Fibre 500, 60.00 + 13 % = 67.80), dated her billing day, 1 March, is issued by
// that day's bill run; it is open that day and overdue the next.
func TestOperatorBilling(t *testing.T) {
	const marieLine = "c1000000-0000-4000-8000-000000000001"
	admin := &subprov.Operator{ID: "op-admin", Email: "admin@ops.test", Role: subprov.RoleAdmin}
	billingNW := &subprov.Operator{ID: "op-billing", Email: "billing@ops.test", Role: subprov.RoleBilling, ProviderID: servicetest.Northwind}
	mapleAdmin := &subprov.Operator{ID: "op-maple", Email: "maple@ops.test", Role: subprov.RoleAdmin, ProviderID: servicetest.Maple}
	viewer := &subprov.Operator{ID: "op-viewer", Email: "viewer@ops.test", Role: subprov.RoleViewer}
	servicetest.Each(t, func(t *testing.T, e *servicetest.Env) {
		ctx := context.Background()
		e.Clock.Set(time.Date(2027, 3, 1, 15, 0, 0, 0, time.UTC))
		if err := e.Billing.BillRun(ctx, jobs.BillRun{ProviderID: servicetest.Northwind, Period: "2027-03", RunID: "run-1"}); err != nil {
			t.Fatal(err)
		}
		var invoice string
		if err := e.Store.R().QueryRow(ctx, `SELECT id FROM invoices WHERE subscription_id = ? AND period = '2027-03'`, marieLine).Scan(&invoice); err != nil {
			t.Fatal(err)
		}
		amount := func(s string) *subprov.Money {
			m, err := subprov.ParseMoney(s)
			if err != nil {
				t.Fatal(err)
			}
			return &m
		}

		t.Run("invoices by filter and scope", func(t *testing.T) {
			tests := []struct {
				name string
				op   *subprov.Operator
				f    billing.InvoiceFilter
				want int // invoices of Marie's line listed
				err  subprov.Code
			}{
				{"platform admin", admin, billing.InvoiceFilter{}, 1, ""},
				{"Northwind's billing operator", billingNW, billing.InvoiceFilter{}, 1, ""},
				{"another provider's operator", mapleAdmin, billing.InvoiceFilter{}, 0, ""},
				{"another provider asked for", billingNW, billing.InvoiceFilter{ProviderID: servicetest.Maple}, 0, ""},
				{"by subscriber", admin, billing.InvoiceFilter{SubscriberID: servicetest.SubscriberMarie}, 1, ""},
				{"another subscriber", admin, billing.InvoiceFilter{SubscriberID: servicetest.SubscriberPriya}, 0, ""},
				{"open today", admin, billing.InvoiceFilter{Status: "open"}, 1, ""},
				{"not overdue yet", admin, billing.InvoiceFilter{Status: "overdue"}, 0, ""},
				{"not paid", admin, billing.InvoiceFilter{Status: "paid"}, 0, ""},
				{"an unknown state", admin, billing.InvoiceFilter{Status: "late"}, 0, subprov.EINVALID},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					invs, _, err := e.Billing.ListInvoices(ctx, tt.op, tt.f, subprov.Page{Limit: 50})
					if subprov.ErrorCode(err) != tt.err && !(err == nil && tt.err == "") {
						t.Fatalf("err %v, want %s", err, tt.err)
					}
					got := 0
					for _, inv := range invs {
						if inv.SubscriptionID == marieLine {
							got++
							if inv.Total != 6780 || inv.State != "open" {
								t.Errorf("invoice %s: total %s state %s", inv.ID, inv.Total, inv.State)
							}
						}
					}
					if got != tt.want {
						t.Errorf("Marie's invoices listed %d, want %d", got, tt.want)
					}
				})
			}
		})

		t.Run("the next day it is overdue", func(t *testing.T) {
			e.Clock.Set(time.Date(2027, 3, 2, 15, 0, 0, 0, time.UTC))
			defer e.Clock.Set(time.Date(2027, 3, 1, 15, 0, 0, 0, time.UTC))
			invs, _, err := e.Billing.ListInvoices(ctx, admin, billing.InvoiceFilter{Status: "overdue", SubscriberID: servicetest.SubscriberMarie}, subprov.Page{Limit: 50})
			if err != nil || len(invs) != 1 || invs[0].State != "overdue" {
				t.Fatalf("overdue: %v %+v", err, invs)
			}
		})

		t.Run("the document", func(t *testing.T) {
			tests := []struct {
				name string
				op   *subprov.Operator
				id   string
				err  subprov.Code
			}{
				{"in scope", billingNW, invoice, ""},
				{"a viewer", viewer, invoice, ""},
				{"another provider's", mapleAdmin, invoice, subprov.ENOTFOUND},
				{"unknown", admin, store.NewID(), subprov.ENOTFOUND},
				{"a role that does not read invoices", &subprov.Operator{Role: subprov.RoleInstaller}, invoice, subprov.EFORBIDDEN},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					// The invoice as its page reads it, and its PDF: the same answer.
					inv, readErr := e.Billing.Invoice(ctx, tt.op, tt.id)
					var buf bytes.Buffer
					err := e.Billing.InvoiceDocument(ctx, tt.op, &buf, tt.id)
					if tt.err == "" {
						if err != nil || !bytes.HasPrefix(buf.Bytes(), []byte("%PDF")) {
							t.Fatalf("err %v, %d bytes", err, buf.Len())
						}
						if readErr != nil || inv.ID != invoice || inv.Total != 6780 || inv.State != "open" || inv.Credited != 0 {
							t.Fatalf("read: err %v, invoice %+v", readErr, inv)
						}
						return
					}
					for _, err := range []error{err, readErr} {
						var se *subprov.Error
						if !errors.As(err, &se) || se.Code != tt.err || (tt.err == subprov.ENOTFOUND && se.Message != "Invoice not found") {
							t.Fatalf("err %v, want %s", err, tt.err)
						}
					}
				})
			}
		})

		t.Run("credit notes up to the total", func(t *testing.T) {
			tests := []struct {
				name   string
				op     *subprov.Operator
				id     string
				credit billing.Credit
				err    subprov.Code
				field  string
			}{
				{"a viewer may not", viewer, invoice, billing.Credit{Amount: amount("1.00"), Reason: "goodwill"}, subprov.EFORBIDDEN, ""},
				{"another provider's invoice", mapleAdmin, invoice, billing.Credit{Amount: amount("1.00"), Reason: "goodwill"}, subprov.ENOTFOUND, ""},
				{"no amount", billingNW, invoice, billing.Credit{Reason: "goodwill"}, subprov.EINVALID, "amount"},
				{"nothing", billingNW, invoice, billing.Credit{Amount: amount("0.00"), Reason: "goodwill"}, subprov.EINVALID, "amount"},
				{"no reason", billingNW, invoice, billing.Credit{Amount: amount("1.00"), Reason: "  "}, subprov.EINVALID, "reason"},
				{"more than the total", billingNW, invoice, billing.Credit{Amount: amount("67.81"), Reason: "goodwill"}, subprov.EINVALID, "amount"},
				{"part of it", billingNW, invoice, billing.Credit{Amount: amount("60.00"), Reason: "outage"}, "", ""},
				{"more than what is left", billingNW, invoice, billing.Credit{Amount: amount("7.81"), Reason: "outage"}, subprov.EINVALID, "amount"},
				{"the rest", admin, invoice, billing.Credit{Amount: amount("7.80"), Reason: "outage"}, "", ""},
				{"nothing left", admin, invoice, billing.Credit{Amount: amount("0.01"), Reason: "outage"}, subprov.EINVALID, "amount"},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					audits := count(t, e, `SELECT COUNT(*) FROM audit_log WHERE action = 'credit_note.issued'`)
					cn, err := e.Billing.CreditInvoice(ctx, tt.op, tt.id, tt.credit)
					after := count(t, e, `SELECT COUNT(*) FROM audit_log WHERE action = 'credit_note.issued'`)
					if tt.err != "" {
						var se *subprov.Error
						if subprov.ErrorCode(err) != tt.err || (tt.field != "" && (!errors.As(err, &se) || se.Fields[tt.field] == "")) {
							t.Fatalf("err %v, want %s on %q", err, tt.err, tt.field)
						}
						if after != audits {
							t.Errorf("a refused credit note was audited")
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					if cn.InvoiceID != invoice || cn.Amount != *tt.credit.Amount || cn.State != subprov.CreditOpen || after != audits+1 {
						t.Fatalf("credit note %+v, audits %d -> %d", cn, audits, after)
					}
					var actor, object, reason string
					if err := e.Store.R().QueryRow(ctx, `SELECT actor_id, subject_id, reason FROM audit_log WHERE action = 'credit_note.issued'
						ORDER BY created_at DESC, id DESC LIMIT 1`).Scan(&actor, &object, &reason); err != nil {
						t.Fatal(err)
					}
					if object != cn.ID || reason != tt.credit.Reason {
						t.Errorf("audit names %s for %q, want %s for %q", object, reason, cn.ID, tt.credit.Reason)
					}
				})
			}
			invs, _, err := e.Billing.ListInvoices(ctx, admin, billing.InvoiceFilter{SubscriberID: servicetest.SubscriberMarie}, subprov.Page{Limit: 50})
			if err != nil || len(invs) != 1 || invs[0].Credited != 6780 {
				t.Fatalf("credited: %v %+v", err, invs)
			}
		})

		t.Run("bill runs", func(t *testing.T) {
			e.Clock.Set(time.Date(2027, 3, 1, 16, 0, 0, 0, time.UTC))
			if err := e.Billing.BillRun(ctx, jobs.BillRun{ProviderID: servicetest.Northwind, Period: "2027-03", RunID: "run-2"}); err != nil {
				t.Fatal(err)
			}
			tests := []struct {
				name string
				op   *subprov.Operator
				want []string // run ids, newest first
			}{
				{"platform", admin, []string{"run-2", "run-1"}},
				{"Northwind's", billingNW, []string{"run-2", "run-1"}},
				{"Maple's", mapleAdmin, nil},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					var got []string
					page := subprov.Page{Limit: 1}
					for {
						runs, next, err := e.Billing.BillRuns(ctx, tt.op, "", page)
						if err != nil {
							t.Fatal(err)
						}
						for _, r := range runs {
							got = append(got, r.ID)
							if r.FinishedAt == nil || r.Failed != 0 || r.Period != "2027-03" {
								t.Errorf("run %+v", r)
							}
							if want := map[string]int{"run-1": 1, "run-2": 0}[r.ID]; r.Invoices != want {
								t.Errorf("run %s issued %d, want %d", r.ID, r.Invoices, want)
							}
						}
						if next == "" {
							break
						}
						if page, err = subprov.ParsePage(1, true, next); err != nil {
							t.Fatal(err)
						}
					}
					if len(got) != len(tt.want) || (len(got) > 0 && got[0] != tt.want[0]) {
						t.Fatalf("runs %v, want %v", got, tt.want)
					}
				})
			}
		})
	})
}

func count(t *testing.T, e *servicetest.Env, q string, args ...any) int {
	t.Helper()
	var n int
	if err := e.Store.R().QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
