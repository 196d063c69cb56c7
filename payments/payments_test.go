package payments_test

import (
	"context"
	"errors"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/store"
)

func TestAdoptableMethod(t *testing.T) {
	t.Parallel()
	cards := []payments.Method{{ID: "pm_1"}, {ID: "pm_2"}}
	tests := []struct {
		name string
		c    *payments.Customer
		want string
	}{
		{"default wins over the first card", &payments.Customer{DefaultMethodID: "pm_2", Methods: cards}, "pm_2"},
		{"no default: first attached card", &payments.Customer{Methods: cards}, "pm_1"},
		{"no card", &payments.Customer{}, ""},
		{"no customer", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.AdoptableMethod(); got != tt.want {
				t.Fatalf("AdoptableMethod() = %q, want %q", got, tt.want)
			}
		})
	}
}

// everyCall runs each Processor method once, so a routing rule is checked on all of them.
func everyCall(ctx context.Context, proc payments.Processor, p *subprov.Provider) map[string]error {
	out := map[string]error{}
	_, out["Customer"] = proc.Customer(ctx, p, "cus_ok")
	_, out["Charge"] = proc.Charge(ctx, p, charge("cus_ok", "pm_ok", 100, "k"))
	_, out["Refund"] = proc.Refund(ctx, p, "ch_x", 100, "k")
	_, out["CreateCustomer"] = proc.CreateCustomer(ctx, p, "a@example.net")
	_, out["CreateSetupIntent"] = proc.CreateSetupIntent(ctx, p, "cus_ok")
	_, out["ConfirmSetupIntent"] = proc.ConfirmSetupIntent(ctx, p, "cus_ok", "seti_x", payments.TestCardSucceeds)
	return out
}

func TestRouter(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		w := newWorld(t, s)
		ctx := context.Background()
		withProcessor := func(name, account string) *subprov.Provider {
			p := *w.pa
			p.PaymentProcessor, p.ProcessorAccountID = name, account
			return &p
		}
		tests := []struct {
			name    string
			router  payments.Processor
			p       *subprov.Provider
			wantErr error
		}{
			{"none", payments.NewRouter(w.fake, nil), withProcessor("none", ""), payments.ErrNotConnected},
			{"unknown processor name", payments.NewRouter(w.fake, nil), withProcessor("paypal", ""), payments.ErrNotConnected},
			{"no provider", payments.NewRouter(w.fake, nil), nil, payments.ErrNotConnected},
			{"stripe without a Stripe adapter", payments.NewRouter(w.fake, nil), withProcessor("stripe", "acct_1"), payments.ErrUnavailable},
			{"builtin without a fake", payments.NewRouter(nil, nil), withProcessor("builtin", ""), payments.ErrUnavailable},
			// The adapter refuses before any HTTP call: no connected account, no Stripe-Account header.
			{"stripe without a connected account", payments.NewRouter(w.fake, payments.NewStripe("sk_test_x", "http://127.0.0.1:1")),
				withProcessor("stripe", ""), payments.ErrNotConnected},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				for call, err := range everyCall(ctx, tt.router, tt.p) {
					if !errors.Is(err, tt.wantErr) {
						t.Errorf("%s: err = %v, want %v", call, err, tt.wantErr)
					}
				}
			})
		}
		for _, name := range []string{"builtin", ""} {
			t.Run("builtin goes to the fake/"+name, func(t *testing.T) {
				r := payments.NewRouter(w.fake, nil)
				c, err := r.Customer(ctx, withProcessor(name, ""), "cus_ok")
				if err != nil || c.AdoptableMethod() != "pm_ok" {
					t.Fatalf("customer = %+v, %v", c, err)
				}
				if ch, err := r.Charge(ctx, withProcessor(name, ""), charge("cus_ok", "pm_ok", 100, "via-router-"+name)); err != nil || ch.ID == "" {
					t.Fatalf("charge = %+v, %v", ch, err)
				}
			})
		}
	})
}
