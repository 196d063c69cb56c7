package billing_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/servicetest"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

// TestCancellationSettlesCarriedCorrections: a plan-change correction under 0.50, carried to
// the next change, is settled by the line's cancellation, since no change will come to take
// it: taken off the credit note of an invoiced month (a carried credit added to it), added to
// the final invoice of a month not invoiced, or, when it is a credit larger than what the
// month owes, given back as a credit note. The cancellation uses it up.
func TestCancellationSettlesCarriedCorrections(t *testing.T) {
	const marieLine = "c1000000-0000-4000-8000-000000000001" // ACTIVE, platform-billed, Fibre 500 at 60.00, billing day 1
	servicetest.Each(t, func(t *testing.T, e *servicetest.Env) {
		ctx := context.Background()
		p := e.Provider(t, servicetest.Northwind)
		e.Clock.Set(time.Date(2027, 3, 10, 15, 0, 0, 0, time.UTC))
		if err := e.Billing.BillRun(ctx, jobs.BillRun{ProviderID: p.ID, Period: "2027-03"}); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name  string
			carry subprov.Money
			end   string
			want  string // the quote's lines, "type amount"
		}{
			// March invoiced: 12 unused days of 31 at 60.00 = 23.23, less 0.48 = 22.75 + 2.96.
			{"invoiced month, a charge carried", 48, "2027-03-20", "[credit_note -25.71]"},
			// 23.23 plus 0.40 carried to the customer = 23.63 + 3.07.
			{"invoiced month, a credit carried", -40, "2027-03-20", "[credit_note -26.70]"},
			// April not invoiced, no day served: the 0.48 alone, + 0.06.
			{"month not invoiced, a charge carried", 48, "2027-04-01", "[final_invoice 0.54]"},
			// April 1 and 2 served: 60.00 x 2/30 = 4.00 + 0.48 = 4.48 + 0.58.
			{"month not invoiced, days served, a charge carried", 48, "2027-04-03", "[final_invoice 5.06]"},
			// Nothing served, 0.40 owed to the customer: 0.40 + 0.05 back.
			{"month not invoiced, a credit carried", -40, "2027-04-01", "[credit_note -0.45]"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := e.Store.InTx(ctx, func(tx *store.Tx) error {
					if _, err := tx.Exec(ctx, `DELETE FROM billing_adjustments WHERE subscription_id = ?`, marieLine); err != nil {
						return err
					}
					return tx.InsertAdjustment(ctx, p.ID, marieLine, subprov.Adjustment{Kind: "carry", Description: "Plan change", Amount: tt.carry}, e.Clock.Now())
				})
				if err != nil {
					t.Fatal(err)
				}
				sub, err := e.Store.SubscriptionByID(ctx, marieLine)
				if err != nil {
					t.Fatal(err)
				}
				end, _ := time.ParseInLocation(time.DateOnly, tt.end, p.Location())
				lines, err := e.Billing.QuoteCancellation(ctx, p, sub, end)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, l := range lines {
					got = append(got, fmt.Sprintf("%s %s", l.Type, l.Amount))
				}
				if fmt.Sprint(got) != tt.want {
					t.Fatalf("quote %v, want %s", got, tt.want)
				}
			})
		}
		// The last case booked: the carried credit comes back as a credit note and is used up.
		if _, err := e.Provisioning.Cancel(ctx, subprov.Everything, marieLine, "2027-04-01", "", "test"); err != nil {
			t.Fatal(err)
		}
		var open, credit int
		if err := e.Store.R().QueryRow(ctx, `SELECT COUNT(*) FROM billing_adjustments WHERE subscription_id = ? AND consumed_at IS NULL`, marieLine).Scan(&open); err != nil {
			t.Fatal(err)
		}
		if err := e.Store.R().QueryRow(ctx, `SELECT COALESCE(SUM(amount_minor), 0) FROM credit_notes WHERE subscription_id = ? AND reason = 'cancellation'`, marieLine).Scan(&credit); err != nil {
			t.Fatal(err)
		}
		if open != 0 || credit != 45 {
			t.Fatalf("after the cancellation: %d corrections open, credit note %d, want none and 45", open, credit)
		}
	})
}
