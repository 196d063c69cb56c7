package billing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

const northwind = "8d0c7f2e-1a3b-4c5d-9e6f-000000000001"

// loadDemo loads the demo fixture now, its logins hashed at the test cost (no test here logs in).
func loadDemo(t *testing.T, s *store.Store) {
	t.Helper()
	f, _ := fixture.Parse(fixture.DemoJSON)
	if _, err := fixture.LoadAtCost(context.Background(), s, f, time.Now(), identity.TestPasswordCost); err != nil {
		t.Fatal(err)
	}
}

// TestBillRunOverTenThousandLines: one run invoices every due line once; a second run, as
// after a crash or a duplicate job, adds nothing; a run after a crash that left the last lines
// uninvoiced invoices them, reading on past pages whose lines all have their invoice. Each run
// audits its batches, one entry each, whose counts add up to the invoices it issued, and its
// record counts them.
func TestBillRunOverTenThousandLines(t *testing.T) {
	t.Parallel()
	n := 10000
	if testing.Short() {
		n = 1200 // still pages (of 500 lines) whose lines all have their invoice at the last run
	}
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		loadDemo(t, s)
		activated := time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
		err := s.InTx(ctx, func(tx *store.Tx) error {
			for i := 0; i < n; i++ {
				_, err := tx.Exec(ctx, `INSERT INTO subscriptions (id, provider_id, subscriber_id, plan_version_id, building_id, location_key,
					status, delivery_mode, billing_owner, billing_day, processor_customer_id, payment_method_id, source, activated_at, created_at, updated_at)
					VALUES (?, ?, 's1000000-0000-4000-8000-000000000002', 'pv100000-0000-4000-8000-000000000500', 'b1000000-0000-4000-8000-000000000002',
						?, 'ACTIVE', 'home_drop', 'platform', ?, 'cus_demo_visa', 'pm_demo_visa', 'test', ?, ?, ?)`,
					fmt.Sprintf("bulk-%05d", i), northwind, fmt.Sprintf("loc-%05d", i), 1+i%10, activated, activated, activated)
				if err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		svc := &billing.Service{Store: s, Clock: clock.NewManual(time.Date(2026, 12, 15, 17, 0, 0, 0, time.UTC)), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		invoices := func() int {
			var c int
			_ = s.R().QueryRow(ctx, `SELECT COUNT(*) FROM invoices WHERE period = '2026-12' AND kind = 'recurring'`).Scan(&c)
			return c
		}
		// audited returns the audit entries of a bill run's batches and the invoices they count.
		audited := func(runID string) (entries []billing.BatchAuditDetails, invoices int) {
			t.Helper()
			for _, details := range testdb.Strings(t, s.R().Query, `SELECT details FROM audit_log WHERE action = 'bill_run.invoices_issued'
				AND object_type = 'bill_run' AND subject_id = ? AND provider_id = ? AND actor_type = 'system'`, runID, northwind) {
				var e billing.BatchAuditDetails
				if err := json.Unmarshal([]byte(details), &e); err != nil || e.Period != "2026-12" || e.Invoices == 0 || e.First == "" || e.Last < e.First {
					t.Fatalf("a batch's audit details %s (%v)", details, err)
				}
				entries, invoices = append(entries, e), invoices+e.Invoices
			}
			return entries, invoices
		}
		// recorded is the invoices the record of a bill run counts (GET /api/v1/bill-runs).
		recorded := func(runID string) (n int) {
			t.Helper()
			if err := s.R().QueryRow(ctx, `SELECT invoices FROM bill_runs WHERE id = ? AND finished_at IS NOT NULL`, runID).Scan(&n); err != nil {
				t.Fatalf("the record of %s: %v", runID, err)
			}
			return n
		}
		perInvoice := func() (n int) {
			_ = s.R().QueryRow(ctx, `SELECT COUNT(*) FROM audit_log WHERE action = 'invoice.issued'`).Scan(&n)
			return n
		}
		issuedOneByOne := perInvoice()
		start := time.Now()
		if err := svc.BillRun(ctx, jobs.BillRun{ProviderID: northwind, Period: "2026-12", RunID: "run-1"}); err != nil {
			t.Fatal(err)
		}
		first := time.Since(start)
		if entries, invoices := audited("run-1"); invoices != n+1 || len(entries) < (n+1)/500 || len(entries) > (n+1)/500+1 {
			t.Fatalf("the run's audit: %d entries counting %d invoices, want %d invoices in batches of 500", len(entries), invoices, n+1)
		}
		if got := recorded("run-1"); got != n+1 {
			t.Fatalf("the run's record counts %d invoices, want %d", got, n+1)
		}
		if got := perInvoice(); got != issuedOneByOne {
			t.Fatalf("the run audited invoices one by one too: %d entries, were %d", got, issuedOneByOne)
		}
		// Every demo line billed by the platform is due too (Marie's line).
		if got := invoices(); got != n+1 {
			t.Fatalf("%d recurring invoices, want %d", got, n+1)
		}
		if err := svc.BillRun(ctx, jobs.BillRun{ProviderID: northwind, Period: "2026-12", RunID: "run-2"}); err != nil {
			t.Fatal(err)
		}
		if got := invoices(); got != n+1 {
			t.Fatalf("a second run changed the count to %d", got)
		}
		if entries, _ := audited("run-2"); len(entries) != 0 || recorded("run-2") != 0 {
			t.Fatalf("a run that issued nothing audited %d batches and recorded %d invoices", len(entries), recorded("run-2"))
		}
		// As if the first run had crashed before its last batches: the last lines in id order
		// have no invoice.
		lastLines := `SELECT id FROM invoices WHERE period = '2026-12' AND subscription_id IN
			(SELECT id FROM subscriptions WHERE id LIKE 'bulk-%' ORDER BY id DESC LIMIT 150)`
		for _, q := range []string{`DELETE FROM invoice_lines WHERE invoice_id IN (` + lastLines + `)`,
			`DELETE FROM ledger_documents WHERE invoice_id IN (` + lastLines + `)`,
			`DELETE FROM invoices WHERE id IN (` + lastLines + `)`} {
			if _, err := rawdb.Writer(s).ExecContext(ctx, q); err != nil {
				t.Fatal(err)
			}
		}
		if got := invoices(); got != n+1-150 {
			t.Fatalf("%d recurring invoices left, want %d", got, n+1-150)
		}
		if err := svc.BillRun(ctx, jobs.BillRun{ProviderID: northwind, Period: "2026-12", RunID: "run-3"}); err != nil {
			t.Fatal(err)
		}
		if got := invoices(); got != n+1 {
			t.Fatalf("the run after the crash left %d recurring invoices, want %d", got, n+1)
		}
		// Its one batch: the 150 invoices it wrote (the other lines of their page it skipped),
		// their numbers and their total.
		var want billing.BatchAuditDetails
		var total int64
		if err := s.R().QueryRow(ctx, `SELECT COUNT(*), MIN(number), MAX(number), SUM(total_minor) FROM invoices WHERE period = '2026-12'
			AND subscription_id IN (SELECT id FROM subscriptions WHERE id LIKE 'bulk-%' ORDER BY id DESC LIMIT 150)`).
			Scan(&want.Invoices, &want.First, &want.Last, &total); err != nil {
			t.Fatal(err)
		}
		want.Period, want.Total, want.Currency = "2026-12", subprov.Money(total).String(), "CAD"
		if entries, _ := audited("run-3"); len(entries) != 1 || entries[0] != want || recorded("run-3") != 150 {
			t.Fatalf("the run after the crash audited %+v and recorded %d invoices, want one batch %+v and 150", entries, recorded("run-3"), want)
		}
		var totals int64
		_ = s.R().QueryRow(ctx, `SELECT COUNT(DISTINCT number) FROM invoices WHERE period = '2026-12'`).Scan(&totals)
		if totals != int64(n+1) {
			t.Fatalf("invoice numbers are not unique: %d", totals)
		}
		t.Logf("%s: first run over %d lines took %v", s.Dialect, n, first)
	})
}
