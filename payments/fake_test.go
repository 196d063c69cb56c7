package payments_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/store"
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// world is a fake processor on a fresh store with two providers: pa owns cus_ok (one card of
// each behaviour, default pm_ok), cus_dec (one declining card) and cus_empty (no card); pb owns
// cus_b.
type world struct {
	s      *store.Store
	fake   *payments.Fake
	faults *faults.Switches
	pa, pb *subprov.Provider
}

func newWorld(t *testing.T, s *store.Store) *world {
	t.Helper()
	ctx := context.Background()
	w := &world{
		s:      s,
		faults: &faults.Switches{},
		pa:     &subprov.Provider{ID: "pa", Name: "A", TimeZone: "UTC", Currency: "CAD", PaymentProcessor: "builtin", WebhookSecret: "sa"},
		pb:     &subprov.Provider{ID: "pb", Name: "B", TimeZone: "UTC", Currency: "CAD", PaymentProcessor: "builtin", WebhookSecret: "sb"},
	}
	w.fake = payments.NewFake(s, w.faults, clock.NewManual(now))
	err := s.InTx(ctx, func(tx *store.Tx) error {
		for _, p := range []*subprov.Provider{w.pa, w.pb} {
			if err := tx.UpsertProvider(ctx, p, "h-"+p.ID, "", now); err != nil {
				return err
			}
		}
		customers := []struct {
			id, provider string
			methods      []payments.FakeMethod
		}{
			{"cus_ok", "pa", []payments.FakeMethod{
				{ID: "pm_ok", Behaviour: "succeeds", Last4: "4242"},
				{ID: "pm_dec", Behaviour: "declines", Last4: "0002"},
				{ID: "pm_fail", Behaviour: "fails", Last4: "0119"},
			}},
			{"cus_dec", "pa", []payments.FakeMethod{{ID: "pm_d", Behaviour: "declines", Last4: "0002"}}},
			{"cus_empty", "pa", nil},
			{"cus_b", "pb", []payments.FakeMethod{{ID: "pm_b", Behaviour: "succeeds", Last4: "4242"}}},
		}
		for _, c := range customers {
			if err := payments.UpsertFakeCustomer(ctx, tx, c.id, c.provider, c.methods, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// rows counts processor_charges rows of a provider with a status ("" for any).
func (w *world) rows(t *testing.T, provider, status string) int {
	t.Helper()
	var n int
	err := w.s.R().QueryRow(context.Background(),
		`SELECT COUNT(*) FROM processor_charges WHERE provider_id = ? AND (? = '' OR status = ?)`, provider, status, status).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func charge(customer, method string, amount subprov.Money, key string) payments.ChargeRequest {
	return payments.ChargeRequest{CustomerID: customer, MethodID: method, Amount: amount, IdempotencyKey: key, Description: "test"}
}

func TestFakeCustomer(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s)
		tests := []struct {
			name        string
			p           *subprov.Provider
			id          string
			wantErr     error
			wantDefault string
			wantMethods []string
		}{
			{"found with cards in order", w.pa, "cus_ok", nil, "pm_ok", []string{"pm_ok", "pm_dec", "pm_fail"}},
			{"found without cards", w.pa, "cus_empty", nil, "", []string{}},
			{"other provider's customer", w.pa, "cus_b", payments.ErrCustomerNotFound, "", nil},
			{"same customer from its own provider", w.pb, "cus_b", nil, "pm_b", []string{"pm_b"}},
			{"unknown", w.pa, "cus_nope", payments.ErrCustomerNotFound, "", nil},
			{"empty id", w.pa, "", payments.ErrCustomerNotFound, "", nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c, err := w.fake.Customer(context.Background(), tt.p, tt.id)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if tt.wantErr != nil {
					return
				}
				if c.ID != tt.id || c.DefaultMethodID != tt.wantDefault {
					t.Fatalf("customer = %+v, want id %s default %q", c, tt.id, tt.wantDefault)
				}
				if got := methodIDs(c); fmt.Sprint(got) != fmt.Sprint(tt.wantMethods) {
					t.Fatalf("methods = %v, want %v", got, tt.wantMethods)
				}
				for _, m := range c.Methods {
					if m.Brand != "visa" || len(m.Last4) != 4 {
						t.Fatalf("method %+v: want brand visa and four digits", m)
					}
				}
			})
		}
	})
}

func methodIDs(c *payments.Customer) []string {
	out := []string{}
	for _, m := range c.Methods {
		out = append(out, m.ID)
	}
	return out
}

func TestFakeAdoptableMethod(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s)
		ctx := context.Background()
		// cus_ok's default moved to its second card: the default wins over the first card.
		err := s.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO processor_customers (id, provider_id, default_payment_method_id, created_at) VALUES ('cus_def2', 'pa', 'pm_second', ?)`, now)
			if err != nil {
				return err
			}
			_, err = tx.Exec(ctx, `INSERT INTO processor_payment_methods (id, customer_id, behaviour, position, created_at)
				VALUES ('pm_first', 'cus_def2', 'succeeds', 0, ?), ('pm_second', 'cus_def2', 'succeeds', 1, ?)`, now, now)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		// A customer whose cards were saved through setup intents has no default.
		noDefault, err := w.fake.CreateCustomer(ctx, w.pa, "a@example.net")
		if err != nil {
			t.Fatal(err)
		}
		var first string
		for _, card := range []string{payments.TestCardSucceeds, payments.TestCardDeclines} {
			si, err := w.fake.CreateSetupIntent(ctx, w.pa, noDefault)
			if err != nil {
				t.Fatal(err)
			}
			m, err := w.fake.ConfirmSetupIntent(ctx, w.pa, noDefault, si.ID, card)
			if err != nil {
				t.Fatal(err)
			}
			if first == "" {
				first = m.ID
			}
		}
		tests := []struct {
			name, customer, want string
		}{
			{"default", "cus_def2", "pm_second"},
			{"fixture default is its first card", "cus_ok", "pm_ok"},
			{"no default: first attached card", noDefault, first},
			{"no card", "cus_empty", ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c, err := w.fake.Customer(ctx, w.pa, tt.customer)
				if err != nil {
					t.Fatal(err)
				}
				if got := c.AdoptableMethod(); got != tt.want {
					t.Fatalf("AdoptableMethod() = %q, want %q", got, tt.want)
				}
			})
		}
	})
}

func TestFakeCharge(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s)
		tests := []struct {
			name       string
			p          *subprov.Provider
			req        payments.ChargeRequest
			wantErr    error
			wantStatus string // the processor_charges row left behind, "" for none
		}{
			{"succeeds", w.pa, charge("cus_ok", "pm_ok", 1250, "k-ok"), nil, payments.FakeChargeSucceeded},
			{"declines", w.pa, charge("cus_ok", "pm_dec", 1250, "k-dec"), payments.ErrCardDeclined, payments.FakeChargeFailed},
			{"fails", w.pa, charge("cus_ok", "pm_fail", 1250, "k-fail"), payments.ErrUnavailable, ""},
			{"unknown card", w.pa, charge("cus_ok", "pm_nope", 1250, "k-nope"), payments.ErrNoPaymentMethod, ""},
			{"another customer's card", w.pa, charge("cus_ok", "pm_d", 1250, "k-other"), payments.ErrNoPaymentMethod, ""},
			{"no card", w.pa, charge("cus_empty", "", 1250, "k-none"), payments.ErrNoPaymentMethod, ""},
			{"another provider's customer", w.pa, charge("cus_b", "pm_b", 1250, "k-b"), payments.ErrCustomerNotFound, ""},
			{"zero amount", w.pa, charge("cus_ok", "pm_ok", 0, "k-zero"), payments.ErrInvalidRequest, ""},
			{"no idempotency key", w.pa, charge("cus_ok", "pm_ok", 1250, ""), payments.ErrInvalidRequest, ""},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				ctx := context.Background()
				c, err := w.fake.Charge(ctx, tt.p, tt.req)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				if tt.wantErr == nil && (c == nil || c.ID == "" || c.Status != payments.ChargeSucceeded) {
					t.Fatalf("charge = %+v, want an id and status succeeded", c)
				}
				row, err := payments.FakeChargeByKey(ctx, s.R(), tt.p.ID, "charge:"+tt.p.ID+":"+tt.req.IdempotencyKey)
				switch {
				case tt.wantStatus == "" && !errors.Is(err, subprov.ErrNotFound):
					t.Fatalf("row = %+v, err %v; want no row", row, err)
				case tt.wantStatus != "" && err != nil:
					t.Fatalf("row: %v", err)
				case tt.wantStatus != "" && (row.Status != tt.wantStatus || row.Amount != 1250 || row.Currency != "CAD"):
					t.Fatalf("row = %+v, want status %s, 12.50 CAD", row, tt.wantStatus)
				}
			})
		}
	})
}

func TestFakeChargeIsIdempotentByKey(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s)
		ctx := context.Background()
		first, err := w.fake.Charge(ctx, w.pa, charge("cus_ok", "pm_ok", 5000, "invoice-1"))
		if err != nil {
			t.Fatal(err)
		}
		again, err := w.fake.Charge(ctx, w.pa, charge("cus_ok", "pm_ok", 5000, "invoice-1"))
		if err != nil || *again != *first {
			t.Fatalf("same key again = %+v, %v; want %+v", again, err, first)
		}
		for range 2 {
			if _, err := w.fake.Charge(ctx, w.pa, charge("cus_ok", "pm_dec", 5000, "invoice-2")); !errors.Is(err, payments.ErrCardDeclined) {
				t.Fatalf("declined retry: err = %v, want card declined", err)
			}
		}
		if _, err := w.fake.Charge(ctx, w.pa, charge("cus_ok", "pm_ok", 4999, "invoice-1")); !errors.Is(err, payments.ErrInvalidRequest) {
			t.Fatalf("key reused with another amount: err = %v, want invalid request", err)
		}
		// Keys are per provider, as Stripe scopes them per account.
		other, err := w.fake.Charge(ctx, w.pb, charge("cus_b", "pm_b", 5000, "invoice-1"))
		if err != nil || other.ID == first.ID {
			t.Fatalf("other provider, same key = %+v, %v; want its own charge", other, err)
		}
		if n := w.rows(t, "pa", ""); n != 2 {
			t.Fatalf("provider pa has %d charge rows, want 2 (one charge, one declined attempt)", n)
		}
	})
}

func TestFakeConcurrentIdenticalChargesChargeOnce(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s)
		const n = 10
		var wg sync.WaitGroup
		got := make([]*payments.Charge, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[i], errs[i] = w.fake.Charge(context.Background(), w.pa, charge("cus_ok", "pm_ok", 6000, "same-key"))
			}()
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("charge %d: %v", i, errs[i])
			}
			if *got[i] != *got[0] {
				t.Fatalf("charge %d = %+v, charge 0 = %+v", i, got[i], got[0])
			}
		}
		if rows := w.rows(t, "pa", ""); rows != 1 {
			t.Fatalf("%d processor_charges rows, want exactly 1", rows)
		}
	})
}

func TestFakeProcessorDownFailsEveryCall(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s)
		ctx := context.Background()
		paid, err := w.fake.Charge(ctx, w.pa, charge("cus_ok", "pm_ok", 1000, "before"))
		if err != nil {
			t.Fatal(err)
		}
		si, err := w.fake.CreateSetupIntent(ctx, w.pa, "cus_empty")
		if err != nil {
			t.Fatal(err)
		}
		w.faults.Apply(map[string]string{"processor": "down"})
		calls := map[string]func() error{
			"Customer": func() error { _, err := w.fake.Customer(ctx, w.pa, "cus_ok"); return err },
			"Charge": func() error {
				_, err := w.fake.Charge(ctx, w.pa, charge("cus_ok", "pm_ok", 1000, "during"))
				return err
			},
			"Charge replay": func() error {
				_, err := w.fake.Charge(ctx, w.pa, charge("cus_ok", "pm_ok", 1000, "before"))
				return err
			},
			"Refund":            func() error { _, err := w.fake.Refund(ctx, w.pa, paid.ID, 100, "r"); return err },
			"CreateCustomer":    func() error { _, err := w.fake.CreateCustomer(ctx, w.pa, "x@example.net"); return err },
			"CreateSetupIntent": func() error { _, err := w.fake.CreateSetupIntent(ctx, w.pa, "cus_ok"); return err },
			"ConfirmSetupIntent": func() error {
				_, err := w.fake.ConfirmSetupIntent(ctx, w.pa, "cus_ok", si.ID, payments.TestCardSucceeds)
				return err
			},
		}
		for name, call := range calls {
			t.Run(name, func(t *testing.T) {
				if err := call(); !errors.Is(err, payments.ErrUnavailable) {
					t.Fatalf("err = %v, want processor unavailable", err)
				}
			})
		}
		if n := w.rows(t, "pa", ""); n != 1 {
			t.Fatalf("%d charge rows, want only the one from before the fault", n)
		}
		w.faults.Apply(map[string]string{"processor": "up"})
		if c, err := w.fake.Customer(ctx, w.pa, "cus_empty"); err != nil || len(c.Methods) != 0 {
			t.Fatalf("after the fault: customer = %+v, %v; want no card saved while down", c, err)
		}
	})
}

func TestFakeRefund(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s)
		ctx := context.Background()
		paid, err := w.fake.Charge(ctx, w.pa, charge("cus_ok", "pm_ok", 5000, "inv-1"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = w.fake.Charge(ctx, w.pa, charge("cus_ok", "pm_dec", 5000, "inv-2"))
		if !errors.Is(err, payments.ErrCardDeclined) {
			t.Fatal(err)
		}
		declined, err := payments.FakeChargeByKey(ctx, s.R(), "pa", "charge:pa:inv-2")
		if err != nil {
			t.Fatal(err)
		}
		var firstRefund string
		steps := []struct {
			name     string
			p        *subprov.Provider
			chargeID string
			amount   subprov.Money
			key      string
			wantErr  error
		}{
			{"part", w.pa, paid.ID, 2000, "r1", nil},
			{"same key again", w.pa, paid.ID, 2000, "r1", nil},
			{"same key, other amount", w.pa, paid.ID, 1000, "r1", payments.ErrInvalidRequest},
			{"the rest", w.pa, paid.ID, 3000, "r2", nil},
			{"more than is left", w.pa, paid.ID, 1, "r3", payments.ErrInvalidRequest},
			{"declined charge", w.pa, declined.ID, 100, "r4", payments.ErrInvalidRequest},
			{"unknown charge", w.pa, "ch_nope", 100, "r5", payments.ErrInvalidRequest},
			{"another provider's charge", w.pb, paid.ID, 100, "r6", payments.ErrInvalidRequest},
			{"zero", w.pa, paid.ID, 0, "r7", payments.ErrInvalidRequest},
			{"no key", w.pa, paid.ID, 100, "", payments.ErrInvalidRequest},
		}
		for _, st := range steps {
			re, err := w.fake.Refund(ctx, st.p, st.chargeID, st.amount, st.key)
			if !errors.Is(err, st.wantErr) {
				t.Fatalf("%s: err = %v, want %v", st.name, err, st.wantErr)
			}
			if st.wantErr != nil {
				continue
			}
			switch {
			case re == nil || re.ID == "":
				t.Fatalf("%s: refund = %+v, want an id", st.name, re)
			case st.key == "r1" && firstRefund == "":
				firstRefund = re.ID
			case st.key == "r1" && re.ID != firstRefund:
				t.Fatalf("%s: refund %s, want the first one, %s", st.name, re.ID, firstRefund)
			}
		}
		if n := w.rows(t, "pa", payments.FakeRefund); n != 2 {
			t.Fatalf("%d refund rows, want 2", n)
		}
	})
}

func TestFakeConcurrentRefundsNeverExceedTheCharge(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s)
		ctx := context.Background()
		paid, err := w.fake.Charge(ctx, w.pa, charge("cus_ok", "pm_ok", 5000, "inv"))
		if err != nil {
			t.Fatal(err)
		}
		const n = 6
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = w.fake.Refund(ctx, w.pa, paid.ID, 2000, fmt.Sprintf("r%d", i))
			}()
		}
		wg.Wait()
		ok := 0
		for i, err := range errs {
			switch {
			case err == nil:
				ok++
			case !errors.Is(err, payments.ErrInvalidRequest):
				t.Fatalf("refund %d: %v", i, err)
			}
		}
		if ok != 2 {
			t.Fatalf("%d refunds of 20.00 on a 50.00 charge went through, want 2", ok)
		}
	})
}

func TestFakeSetupIntent(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s)
		ctx := context.Background()
		cus, err := w.fake.CreateCustomer(ctx, w.pa, "new@example.net")
		if err != nil {
			t.Fatal(err)
		}
		si, err := w.fake.CreateSetupIntent(ctx, w.pa, cus)
		if err != nil {
			t.Fatal(err)
		}
		if si.ID == "" || si.ClientSecret == "" || si.Status != "requires_payment_method" {
			t.Fatalf("setup intent = %+v", si)
		}
		saved, err := w.fake.ConfirmSetupIntent(ctx, w.pa, cus, si.ID, payments.TestCardSucceeds)
		if err != nil {
			t.Fatal(err)
		}
		if saved.Brand != "visa" || saved.Last4 != "4242" {
			t.Fatalf("saved = %+v, want visa 4242", saved)
		}
		// Confirming again (a retried page submit, here by client secret) saves nothing new.
		again, err := w.fake.ConfirmSetupIntent(ctx, w.pa, cus, si.ClientSecret, payments.TestCardSucceeds)
		if err != nil || *again != *saved {
			t.Fatalf("second confirm = %+v, %v; want %+v", again, err, saved)
		}
		c, err := w.fake.Customer(ctx, w.pa, cus)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Methods) != 1 || c.Methods[0] != *saved || c.AdoptableMethod() != saved.ID {
			t.Fatalf("customer = %+v, want exactly the saved card, adoptable", c)
		}
		if got, err := w.fake.Charge(ctx, w.pa, charge(cus, saved.ID, 100, "k1")); err != nil || got.Status != payments.ChargeSucceeded {
			t.Fatalf("charge on the saved card = %+v, %v", got, err)
		}

		otherSI, err := w.fake.CreateSetupIntent(ctx, w.pb, "cus_b")
		if err != nil {
			t.Fatal(err)
		}
		neighbourSI, err := w.fake.CreateSetupIntent(ctx, w.pa, "cus_ok")
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name, setupIntent, card string
			wantErr                 error
			wantBehaviour           error // what a charge on the saved card then does
		}{
			{"declines later", "", payments.TestCardDeclines, nil, payments.ErrCardDeclined},
			{"Stripe test payment method name", "", "pm_card_visa", nil, nil},
			{"setup fails", "", payments.TestCardFails, payments.ErrUnavailable, nil},
			{"unknown card", "", "4111111111111111", payments.ErrCardDeclined, nil},
			{"malformed setup intent", "seti_zz", payments.TestCardSucceeds, payments.ErrSetupIntentNotFound, nil},
			{"another provider's setup intent", otherSI.ID, payments.TestCardSucceeds, payments.ErrSetupIntentNotFound, nil},
			{"another customer's setup intent", neighbourSI.ID, payments.TestCardSucceeds, payments.ErrSetupIntentNotFound, nil},
			{"another customer's setup intent by its client secret", neighbourSI.ClientSecret, payments.TestCardSucceeds, payments.ErrSetupIntentNotFound, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				id := tt.setupIntent
				if id == "" {
					si, err := w.fake.CreateSetupIntent(ctx, w.pa, cus)
					if err != nil {
						t.Fatal(err)
					}
					id = si.ID
				}
				before, _ := w.fake.Customer(ctx, w.pa, cus)
				neighbour, _ := w.fake.Customer(ctx, w.pa, "cus_ok")
				m, err := w.fake.ConfirmSetupIntent(ctx, w.pa, cus, id, tt.card)
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				after, _ := w.fake.Customer(ctx, w.pa, cus)
				if tt.wantErr != nil {
					if len(after.Methods) != len(before.Methods) {
						t.Fatalf("a failed setup saved a card: %v", methodIDs(after))
					}
					if now, _ := w.fake.Customer(ctx, w.pa, "cus_ok"); len(now.Methods) != len(neighbour.Methods) {
						t.Fatalf("a refused setup saved a card on the intent's own customer: %v", methodIDs(now))
					}
					return
				}
				if len(after.Methods) != len(before.Methods)+1 || after.Methods[len(after.Methods)-1] != *m {
					t.Fatalf("methods = %v, want %s appended", methodIDs(after), m.ID)
				}
				_, err = w.fake.Charge(ctx, w.pa, charge(cus, m.ID, 100, "k-"+m.ID))
				if !errors.Is(err, tt.wantBehaviour) {
					t.Fatalf("charge on the new card: err = %v, want %v", err, tt.wantBehaviour)
				}
			})
		}
		if _, err := w.fake.CreateSetupIntent(ctx, w.pa, "cus_b"); !errors.Is(err, payments.ErrCustomerNotFound) {
			t.Fatalf("setup intent on another provider's customer: err = %v, want customer not found", err)
		}
	})
}
