package billing_test

import (
	"context"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestChangeBillingDayIsTheHolders: the capability itself refuses an authorized user, whatever
// route or tool calls it, and leaves the line's day as it was.
func TestChangeBillingDayIsTheHolders(t *testing.T) {
	const (
		marie     = "s1000000-0000-4000-8000-000000000001"
		marieLine = "c1000000-0000-4000-8000-000000000001"
	)
	tests := []struct {
		name    string
		acc     subprov.Account
		reason  string // "" when the day moves
		wantDay int
	}{
		{"an authorized user may not move the billing day", subprov.Account{ID: "acc-au", ProviderID: northwind, SubscriberID: marie,
			AuthorizedUserID: "au-1"}, "holder_only", 1},
		{"the account holder may", subprov.Account{ID: "acc-holder", ProviderID: northwind, SubscriberID: marie}, "", 5},
	}
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		loadDemo(t, s)
		p, err := s.Provider(ctx, northwind)
		if err != nil {
			t.Fatal(err)
		}
		// December 2nd in Toronto, the month not invoiced yet: day 5 is still ahead.
		svc := &billing.Service{Store: s, Clock: clock.NewManual(time.Date(2026, 12, 2, 17, 0, 0, 0, time.UTC)),
			Ledger: &billing.BuiltinLedger{Store: s, Faults: &faults.Switches{}}}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				_, err := svc.ChangeBillingDay(ctx, p, &tt.acc, marieLine, 5)
				if got := subprov.ErrorReason(err); got != tt.reason || (tt.reason == "" && err != nil) {
					t.Fatalf("ChangeBillingDay = %v, want reason %q", err, tt.reason)
				}
				sub, err := s.Subscription(ctx, northwind, marieLine)
				if err != nil {
					t.Fatal(err)
				}
				if sub.BillingDay != tt.wantDay {
					t.Fatalf("billing day %d, want %d", sub.BillingDay, tt.wantDay)
				}
			})
		}
	})
}
