package tickets_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/servicetest"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/tickets"
)

// open opens t for its provider in a transaction of its own.
func open(t *testing.T, e *servicetest.Env, tk *subprov.Ticket) *subprov.Ticket {
	t.Helper()
	ctx := context.Background()
	if err := e.Store.InTx(ctx, func(tx *store.Tx) error { return e.Desk.Open(ctx, tx, tk) }); err != nil {
		t.Fatal(err)
	}
	return tk
}

func number(t *testing.T, tk *subprov.Ticket) int {
	t.Helper()
	var n int
	if _, err := fmt.Sscanf(tk.Number, "T-%06d", &n); err != nil || len(tk.Number) != 8 {
		t.Fatalf("ticket number %q is not T-nnnnnn", tk.Number)
	}
	return n
}

// defaults: the defaults a ticket gets when the caller leaves a field empty, and the caller's
// values kept when it does not.
func defaults(t *testing.T, e *servicetest.Env) {
	tests := []struct {
		name                    string
		in                      subprov.Ticket
		wantGroup, wantPriority string
	}{
		{"routed to the provider's support group", subprov.Ticket{Kind: tickets.KindSupport}, "Northwind Tier 1", "normal"},
		{"a group the caller set is kept", subprov.Ticket{Kind: tickets.KindOperator, Group: "NOC"}, "NOC", "normal"},
		{"a priority the caller set is kept", subprov.Ticket{Kind: tickets.KindInstall, Priority: "high"}, "Northwind Tier 1", "high"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.ProviderID, in.Subject = servicetest.Northwind, tt.name
			start := e.Clock.Now()
			got := open(t, e, &in)
			if got.ID == "" || got.Status != "open" || got.Group != tt.wantGroup || got.Priority != tt.wantPriority {
				t.Fatalf("opened %+v, want status open, group %q, priority %q", got, tt.wantGroup, tt.wantPriority)
			}
			if got.CreatedAt.Before(start) || got.CreatedAt.After(e.Clock.Now()) {
				t.Fatalf("created at %s, not the clock's now (%s)", got.CreatedAt, start)
			}
		})
	}
}

// numbersArePerProvider: each provider numbers its own tickets one after another, so
// one provider's tickets never reveal how many another has.
func numbersArePerProvider(t *testing.T, e *servicetest.Env) {
	mapleFirst := number(t, open(t, e, &subprov.Ticket{ProviderID: servicetest.Maple, Kind: tickets.KindSupport, Subject: "one"}))
	first := number(t, open(t, e, &subprov.Ticket{ProviderID: servicetest.Northwind, Kind: tickets.KindSupport, Subject: "one"}))
	second := number(t, open(t, e, &subprov.Ticket{ProviderID: servicetest.Northwind, Kind: tickets.KindSupport, Subject: "two"}))
	mapleNext := number(t, open(t, e, &subprov.Ticket{ProviderID: servicetest.Maple, Kind: tickets.KindSupport, Subject: "two"}))
	if second != first+1 {
		t.Fatalf("Northwind's tickets %d then %d: not consecutive", first, second)
	}
	if mapleNext != mapleFirst+1 {
		t.Fatalf("Maple's tickets %d then %d: its count follows another provider's", mapleFirst, mapleNext)
	}
}

// openRollsBackWithTheChange: a ticket exists exactly when the change that raised it
// committed, and a rolled-back ticket uses up no number.
func openRollsBackWithTheChange(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	since := e.Clock.Now()
	last := number(t, open(t, e, &subprov.Ticket{ProviderID: servicetest.Northwind, Kind: tickets.KindOperator, Subject: "first"}))
	failed := errors.New("the change failed")
	err := e.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := e.Desk.Open(ctx, tx, &subprov.Ticket{ProviderID: servicetest.Northwind, Kind: tickets.KindOperator, Subject: "lost"}); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("InTx = %v", err)
	}
	kept := open(t, e, &subprov.Ticket{ProviderID: servicetest.Northwind, Kind: tickets.KindOperator, Subject: "kept"})
	after, err := tickets.Since(ctx, e.Store, servicetest.Northwind, since)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 2 || after[0].Subject != "first" || after[1].Subject != "kept" {
		t.Fatalf("tickets after a rolled-back open: %+v", after)
	}
	if n := number(t, kept); n != last+1 {
		t.Fatalf("the kept ticket is number %d after %d: the rolled-back one used a number", n, last)
	}
}

// sinceIsScopedToTheProvider: a provider's list holds only its own tickets.
func sinceIsScopedToTheProvider(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	since := e.Clock.Now().Add(-time.Minute)
	open(t, e, &subprov.Ticket{ProviderID: servicetest.Maple, Kind: tickets.KindSupport, Subject: "Maple's"})
	got, err := tickets.Since(ctx, e.Store, servicetest.Northwind, since)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range got {
		if tk.ProviderID != servicetest.Northwind {
			t.Fatalf("Northwind's list holds %+v", tk)
		}
	}
}

// TestTickets runs the ticket rules on one store per engine (a store is the costly part of a
// test); each rule keeps to numbers and rows of its own, so their order does not matter.
func TestTickets(t *testing.T) {
	servicetest.EachRules(t,
		servicetest.Rule{Name: "Defaults", Test: defaults},
		servicetest.Rule{Name: "NumbersArePerProvider", Test: numbersArePerProvider},
		servicetest.Rule{Name: "OpenRollsBackWithTheChange", Test: openRollsBackWithTheChange},
		servicetest.Rule{Name: "SinceIsScopedToTheProvider", Test: sinceIsScopedToTheProvider},
	)
}
