package portal_test

import (
	"context"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/portal"
	"github.com/subprov/subprov/store"
)

const northwind = "8d0c7f2e-1a3b-4c5d-9e6f-000000000001"

// TestHolderOnlyOperations: the portal refuses an authorized user (403 holder_only) every
// operation that is the holder's alone, before reading anything else of the request, whoever
// calls it; the holder goes on to the operation's own rules (here the answer each gives an
// empty or unknown request).
func TestHolderOnlyOperations(t *testing.T) {
	ops := []struct {
		name   string
		call   func(ctx context.Context, svc *portal.Service, acc *subprov.AccountLogin) error
		holder string // the reason the holder is answered
	}{
		{"add an authorized user", func(ctx context.Context, svc *portal.Service, acc *subprov.AccountLogin) error {
			_, err := svc.AddAuthorizedUser(ctx, acc, portal.AuthorizedUserInput{})
			return err
		}, "validation_error"},
		{"resend an invitation", func(ctx context.Context, svc *portal.Service, acc *subprov.AccountLogin) error {
			_, err := svc.ResendInvite(ctx, acc, "no-such-user")
			return err
		}, "not_found"},
		{"remove an authorized user", func(ctx context.Context, svc *portal.Service, acc *subprov.AccountLogin) error {
			return svc.RemoveAuthorizedUser(ctx, acc, "no-such-user")
		}, "not_found"},
		{"read the payment method", func(ctx context.Context, svc *portal.Service, acc *subprov.AccountLogin) error {
			_, err := svc.PaymentMethod(ctx, acc)
			return err
		}, ""},
		{"start a card setup", func(ctx context.Context, svc *portal.Service, acc *subprov.AccountLogin) error {
			_, err := svc.StartCardSetup(ctx, acc)
			return err
		}, ""},
		{"confirm a card setup", func(ctx context.Context, svc *portal.Service, acc *subprov.AccountLogin) error {
			_, err := svc.ConfirmCardSetup(ctx, acc, "seti_unknown", "")
			return err
		}, "not_found"},
		{"list order options", func(ctx context.Context, svc *portal.Service, acc *subprov.AccountLogin) error {
			_, err := svc.OrderOptions(ctx, acc, "")
			return err
		}, "validation_error"},
		{"preview an order", func(ctx context.Context, svc *portal.Service, acc *subprov.AccountLogin) error {
			_, err := svc.PreviewOrder(ctx, acc, portal.OrderRequest{})
			return err
		}, ""},
		{"place an order", func(ctx context.Context, svc *portal.Service, acc *subprov.AccountLogin) error {
			_, err := svc.PlaceOrder(ctx, acc, portal.OrderRequest{})
			return err
		}, "validation_error"},
		{"reactivate a line", func(ctx context.Context, svc *portal.Service, acc *subprov.AccountLogin) error {
			_, err := svc.Reactivate(ctx, acc, "no-such-line")
			return err
		}, "not_found"},
	}
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		f, _ := fixture.Parse(fixture.DemoJSON)
		if _, err := fixture.Load(ctx, s, f, time.Now()); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 12, 2, 17, 0, 0, 0, time.UTC)
		clk := clock.NewManual(now)
		svc := &portal.Service{Store: s, Clock: clk, Processor: payments.NewFake(s, &faults.Switches{}, clk)}
		holder, err := s.AccountByEmail(ctx, "marie.tremblay@example.ca")
		if err != nil {
			t.Fatal(err)
		}
		err = s.InTx(ctx, func(tx *store.Tx) error {
			return tx.InsertAuthorizedUser(ctx, northwind, &subprov.AuthorizedUser{ID: store.NewID(), SubscriberID: holder.SubscriberID,
				Contact: subprov.Contact{FirstName: "Luc", LastName: "Tremblay", Email: "luc.tremblay@example.ca"}}, store.NewID(), now)
		})
		if err != nil {
			t.Fatal(err)
		}
		user, err := s.AccountByEmail(ctx, "luc.tremblay@example.ca")
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ops {
			t.Run(op.name, func(t *testing.T) {
				if err := op.call(ctx, svc, user); subprov.ErrorCode(err) != subprov.EFORBIDDEN || subprov.ErrorReason(err) != "holder_only" {
					t.Errorf("authorized user: %v, want forbidden (holder_only)", err)
				}
				if err := op.call(ctx, svc, holder); subprov.ErrorReason(err) != op.holder {
					t.Errorf("holder: %v, want reason %q", err, op.holder)
				}
			})
		}
	})
}
