package payments_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/store"
)

var procNow = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func seedProcessorProviders(t *testing.T, s *store.Store, ids ...string) {
	t.Helper()
	for _, id := range ids {
		testdb.SeedProvider(t, s, id, procNow)
	}
}

func TestProcessorCustomerIsScopedToItsProvider(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seedProcessorProviders(t, s, "pa", "pb")
		err := s.InTx(ctx, func(tx *store.Tx) error {
			return payments.UpsertFakeCustomer(ctx, tx, "cus_a", "pa", []payments.FakeMethod{
				{ID: "pm_1", Behaviour: "succeeds", Last4: "4242"}, {ID: "pm_2", Behaviour: "declines", Last4: "0002"},
			}, procNow)
		})
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name, provider, id string
			wantErr            bool
		}{
			{"own customer", "pa", "cus_a", false},
			{"another provider's customer", "pb", "cus_a", true},
			{"unknown customer", "pa", "cus_x", true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c, err := payments.ReadFakeCustomer(ctx, s.R(), tt.provider, tt.id)
				if tt.wantErr {
					if !errors.Is(err, subprov.ErrNotFound) {
						t.Fatalf("err = %v, want no rows", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if c.DefaultMethodID != "pm_1" || len(c.Methods) != 2 || c.Methods[0].ID != "pm_1" || c.Methods[1].ID != "pm_2" {
					t.Fatalf("customer = %+v, want default pm_1 and methods pm_1, pm_2", c)
				}
			})
		}
	})
}

func TestAddProcessorPaymentMethodAppendsOnceByID(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seedProcessorProviders(t, s, "pa", "pb")
		add := func(provider, id, customer string) (*payments.FakePaymentMethod, error) {
			var out *payments.FakePaymentMethod
			err := s.InTx(ctx, func(tx *store.Tx) error {
				var err error
				out, err = payments.AddFakePaymentMethod(ctx, tx, provider, payments.FakePaymentMethod{
					ID: id, CustomerID: customer, Behaviour: "succeeds", Brand: "visa", Last4: "4242"}, procNow)
				return err
			})
			return out, err
		}
		if err := s.InTx(ctx, func(tx *store.Tx) error { return payments.InsertFakeCustomer(ctx, tx, "pa", "cus_new", procNow) }); err != nil {
			t.Fatal(err)
		}
		for i, id := range []string{"pm_a", "pm_b", "pm_a"} {
			m, err := add("pa", id, "cus_new")
			if err != nil {
				t.Fatalf("add %s: %v", id, err)
			}
			if want := map[string]int{"pm_a": 0, "pm_b": 1}[id]; m.Position != want {
				t.Fatalf("add #%d %s: position %d, want %d", i, id, m.Position, want)
			}
		}
		c, err := payments.ReadFakeCustomer(ctx, s.R(), "pa", "cus_new")
		if err != nil {
			t.Fatal(err)
		}
		if c.DefaultMethodID != "" || len(c.Methods) != 2 {
			t.Fatalf("customer = %+v, want no default and two methods", c)
		}
		if _, err := add("pb", "pm_c", "cus_new"); !errors.Is(err, subprov.ErrNotFound) {
			t.Fatalf("another provider adding a card: err = %v, want no rows", err)
		}
	})
}

func TestInsertProcessorChargeKeepsOneRowPerKey(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seedProcessorProviders(t, s, "pa")
		const n = 10
		var wg sync.WaitGroup
		ids := make([]string, n)
		inserted := make([]bool, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := &payments.FakeCharge{ID: store.NewID(), ProviderID: "pa", CustomerID: "cus", PaymentMethodID: "pm",
					IdempotencyKey: "k1", Amount: 1250, Currency: "CAD", Status: payments.FakeChargeSucceeded, CreatedAt: procNow}
				got, ins, err := payments.InsertFakeCharge(ctx, s, c)
				errs[i], inserted[i] = err, ins
				if got != nil {
					ids[i] = got.ID
				}
			}()
		}
		wg.Wait()
		wins := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("insert %d: %v", i, errs[i])
			}
			if ids[i] != ids[0] {
				t.Fatalf("insert %d returned charge %s, insert 0 returned %s", i, ids[i], ids[0])
			}
			if inserted[i] {
				wins++
			}
		}
		if wins != 1 {
			t.Fatalf("%d inserts report inserting, want 1", wins)
		}
		var rows int
		if err := s.R().QueryRow(ctx, `SELECT COUNT(*) FROM processor_charges`).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		if rows != 1 {
			t.Fatalf("%d rows, want 1", rows)
		}
	})
}

func TestProcessorRefundTotalMatchesTheKeyPrefixOnly(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seedProcessorProviders(t, s, "pa")
		rows := []struct {
			key, status string
			amount      subprov.Money
		}{
			{"refund:pa:ch_1:a", payments.FakeRefund, 100},
			{"refund:pa:ch_1:b", payments.FakeRefund, 250},
			{"refund:pa:ch_10:a", payments.FakeRefund, 1000}, // another charge whose id extends ch_1
			{"refund:pa:chX1:a", payments.FakeRefund, 1000},  // the "_" of ch_1 must not act as a wildcard
			{"charge:pa:x", payments.FakeChargeSucceeded, 5000},
		}
		err := s.InTx(ctx, func(tx *store.Tx) error {
			for _, r := range rows {
				c := &payments.FakeCharge{ID: store.NewID(), ProviderID: "pa", CustomerID: "cus", PaymentMethodID: "pm",
					IdempotencyKey: r.key, Amount: r.amount, Currency: "CAD", Status: r.status, CreatedAt: procNow}
				if err := payments.InsertFakeChargeTx(ctx, tx, c); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		var total subprov.Money
		err = s.InTx(ctx, func(tx *store.Tx) error {
			var err error
			total, err = payments.FakeRefundTotal(ctx, tx, "pa", "refund:pa:ch_1:")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if total != 350 {
			t.Fatalf("total = %d, want 350", total)
		}
		err = s.InTx(ctx, func(tx *store.Tx) error {
			_, err := payments.LockFakeCharge(ctx, tx, "pb", "nope")
			return err
		})
		if !errors.Is(err, subprov.ErrNotFound) {
			t.Fatalf("lock of a missing charge: err = %v, want no rows", err)
		}
	})
}
