package provisioning_test

import (
	"context"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/servicetest"
	"github.com/subprov/subprov/store"
)

const lineMarie = "c1000000-0000-4000-8000-000000000001" // ACTIVE at King 1204, platform-billed, Fibre 500

// TestCancelPreview runs the cancellation preview's rules on one store per engine.
func TestCancelPreview(t *testing.T) {
	servicetest.EachRules(t,
		servicetest.Rule{Name: "period is the end date's month", Test: testCancelPreviewPeriod},
		servicetest.Rule{Name: "the preview answers as the cancel", Test: testCancelPreviewAnswersAsTheCancel},
		servicetest.Rule{Name: "an operator's role, then its scope", Test: testCancelAsOperator},
	)
}

// testCancelAsOperator: an operator's role is checked first (a role that may not act gets
// 403 whatever the line, and nothing changes), then its scope (another provider's line is not
// found); a role that may read quotes and reads the line.
func testCancelAsOperator(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	e.Clock.Set(time.Date(2027, 3, 20, 15, 0, 0, 0, time.UTC))
	northwind, maple := "8d0c7f2e-1a3b-4c5d-9e6f-000000000001", "8d0c7f2e-1a3b-4c5d-9e6f-000000000002"
	const linePriya = "c1000000-0000-4000-8000-000000000002" // ACTIVE at 88A Queen 101, Northwind's
	for _, tt := range []struct {
		role                subprov.Role
		provider            string
		read, quote, cancel subprov.Code // "" for allowed
	}{
		{subprov.RoleViewer, "", "", "", subprov.EFORBIDDEN},
		{subprov.RoleInstaller, northwind, subprov.EFORBIDDEN, subprov.EFORBIDDEN, subprov.EFORBIDDEN},
		{subprov.RoleBilling, northwind, "", "", subprov.EFORBIDDEN},
		{subprov.RoleSupport, maple, subprov.ENOTFOUND, subprov.ENOTFOUND, subprov.ENOTFOUND},
		{subprov.RoleSupport, northwind, "", "", ""},
	} {
		op := &subprov.Operator{ID: "op", Email: "op@example.net", Role: tt.role, ProviderID: tt.provider}
		_, read := e.Provisioning.CancellationAs(ctx, op, linePriya)
		_, quote := e.Provisioning.QuoteCancellationAs(ctx, op, linePriya, "2027-04-01")
		sub, cancel := e.Provisioning.CancelAs(ctx, op, linePriya, "2027-04-01", "moving")
		code := func(err error) subprov.Code {
			if err == nil {
				return ""
			}
			return subprov.ErrorCode(err)
		}
		if code(read) != tt.read || code(quote) != tt.quote || code(cancel) != tt.cancel {
			t.Errorf("%s of %q: read %q, quote %q, cancel %q; want %q, %q, %q", tt.role, tt.provider,
				code(read), code(quote), code(cancel), tt.read, tt.quote, tt.cancel)
		}
		if cancel == nil && sub.Status != subprov.StatusCancelled {
			t.Errorf("%s cancelled the line, which is %s", tt.role, sub.Status)
		}
		if cancel != nil {
			if cur, _ := e.Store.SubscriptionByID(ctx, linePriya); cur.Status == subprov.StatusCancelled {
				t.Fatalf("a refused cancellation (%s of %q) cancelled the line", tt.role, tt.provider)
			}
		}
	}
}

// testCancelPreviewPeriod: the quote's period is the calendar month of the end date, the
// month whose documents the cancellation writes, a 1st included.
func testCancelPreviewPeriod(t *testing.T, e *servicetest.Env) {
	e.Clock.Set(time.Date(2027, 3, 20, 15, 0, 0, 0, time.UTC))
	for _, tt := range []struct{ end, period string }{
		{"2027-03-20", "2027-03"},
		{"2027-03-31", "2027-03"},
		{"2027-04-01", "2027-04"},
		{"2027-04-30", "2027-04"},
		{"2027-05-01", "2027-05"},
	} {
		q, err := e.Provisioning.QuoteCancellation(context.Background(), subprov.Everything, lineMarie, tt.end)
		if err != nil {
			t.Fatalf("quote for %s: %v", tt.end, err)
		}
		if q.Period != tt.period {
			t.Errorf("end date %s: period %s, want %s", tt.end, q.Period, tt.period)
		}
	}
}

// testCancelPreviewAnswersAsTheCancel: in every status, the preview refuses what the
// cancellation refuses, with the same answer, and quotes what it accepts.
func testCancelPreviewAnswersAsTheCancel(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	e.Clock.Set(time.Date(2027, 3, 20, 15, 0, 0, 0, time.UTC))
	for _, tt := range []struct {
		status subprov.Status
		want   string
	}{
		{subprov.StatusCancelled, "conflict/invalid_transition"},
		{subprov.StatusActive, ""},
		{subprov.StatusSuspended, ""},
		{subprov.StatusPendingInstall, ""},
	} {
		t.Run(string(tt.status), func(t *testing.T) {
			status := tt.status
			if err := e.Store.InTx(ctx, func(tx *store.Tx) error {
				return tx.UpdateSubscription(ctx, lineMarie, subprov.SubscriptionChange{Status: &status}, e.Clock.Now())
			}); err != nil {
				t.Fatal(err)
			}
			_, quoted := e.Provisioning.QuoteCancellation(ctx, subprov.Everything, lineMarie, "2027-04-01")
			_, cancelled := e.Provisioning.Cancel(ctx, subprov.Everything, lineMarie, "2027-04-01", "", "test")
			if servicetest.Code(quoted) != tt.want || servicetest.Code(cancelled) != tt.want {
				t.Fatalf("preview %q, cancel %q, want both %q", servicetest.Code(quoted), servicetest.Code(cancelled), tt.want)
			}
		})
	}
}
