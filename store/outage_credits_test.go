package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// A provider's outage credit policy is kept (set, changed, removed) and a line's outage is
// recorded as credited once: the second record of the same outage writes nothing, another
// outage of the line or the same outage of another line is recorded. The demo line is a
// candidate while it runs, not once it ended before the window.
func TestOutageCreditsRoundTrip(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC)
		loadDemo(t, s, now)
		setPolicy := func(o *subprov.OutageCredit) {
			t.Helper()
			err := s.InTx(ctx, func(tx *store.Tx) error {
				p, err := tx.ProviderForUpdate(ctx, fixture.DemoProviderID)
				if err != nil {
					return err
				}
				p.OutageCredit = o
				return tx.UpdateProvider(ctx, p)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		policy := func() *subprov.OutageCredit {
			t.Helper()
			p, err := s.Provider(ctx, fixture.DemoProviderID)
			if err != nil {
				t.Fatal(err)
			}
			return p.OutageCredit
		}
		if got := policy(); got != nil {
			t.Fatalf("the demo provider has policy %+v, want none", got)
		}
		for _, hours := range []float64{4, 1.25} {
			setPolicy(&subprov.OutageCredit{MinHours: hours})
			if got := policy(); got == nil || got.MinHours != hours {
				t.Fatalf("policy %+v, want %v hours", got, hours)
			}
		}
		setPolicy(nil)
		if got := policy(); got != nil {
			t.Fatalf("policy %+v after removing it", got)
		}

		const marie, priya = "c1000000-0000-4000-8000-000000000001", "c1000000-0000-4000-8000-000000000002"
		lines, err := s.OutageCreditCandidates(ctx, fixture.DemoProviderID, now.AddDate(0, 0, -35), "", 100)
		if err != nil {
			t.Fatal(err)
		}
		if len(lines) != 1 || lines[0].ID != marie {
			t.Fatalf("candidates %v, want Marie's platform-billed line alone", lines)
		}
		var credited []string
		for i, line := range []string{marie, marie, marie, priya} {
			outage := "mtl-king-sw1/ge-0/0/12/20261120T150000"
			if i == 2 {
				outage = "mtl-king-sw1/ge-0/0/12/20261122T090000"
			}
			var fresh bool
			err := s.InTx(ctx, func(tx *store.Tx) error {
				sub, err := s.Subscription(ctx, fixture.DemoProviderID, line)
				if err != nil {
					return err
				}
				p, err := s.Provider(ctx, fixture.DemoProviderID)
				if err != nil {
					return err
				}
				cn := &subprov.CreditNote{ID: store.NewID(), ProviderID: p.ID, SubscriberID: sub.SubscriberID, SubscriptionID: sub.ID,
					Number: "CN-T" + string(rune('0'+i)), State: subprov.CreditOpen, Reason: "outage", Amount: 50, Remaining: 50, Currency: "CAD"}
				if err := tx.InsertCreditNote(ctx, cn, now); err != nil {
					return err
				}
				start := now.Add(-time.Duration(i+1) * 24 * time.Hour)
				fresh, err = tx.RecordCreditedOutage(ctx, store.CreditedOutage{SubscriptionID: line, OutageID: outage, ProviderID: p.ID,
					CreditNoteID: cn.ID, StartedAt: start, ResolvedAt: start.Add(5 * time.Hour)}, now)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if want := i != 1; fresh != want {
				t.Errorf("record %d (%s, %s): fresh %t, want %t", i, line, outage, fresh, want)
			}
		}
		if credited, err = s.CreditedOutages(ctx, marie); err != nil {
			t.Fatal(err)
		}
		if len(credited) != 2 {
			t.Errorf("Marie's credited outages %v, want two", credited)
		}
		ended := now.AddDate(0, 0, -40)
		if err := s.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE subscriptions SET ended_at = ? WHERE id = ?`, ended, marie)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if lines, err := s.OutageCreditCandidates(ctx, fixture.DemoProviderID, now.AddDate(0, 0, -35), "", 100); err != nil || len(lines) != 0 {
			t.Fatalf("candidates after the line ended before the window: %v (%v)", lines, err)
		}
	})
}
