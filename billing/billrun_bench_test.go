package billing_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

// BenchmarkBillRun measures the monthly bill run over generated data (every eighth line is
// platform-billed) on each engine; SUBPROV_BENCH_SUBSCRIBERS sets the scale (default 4000).
// Each iteration bills the month afresh: the previous iteration's invoices are removed first
// (their audit entries stay: the audit log is append-only).
func BenchmarkBillRun(b *testing.B) {
	n := testdb.Scale("SUBPROV_BENCH_SUBSCRIBERS", 4000)
	testdb.EachBenchStore(b, func(b *testing.B, st *store.Store) {
		ctx := context.Background()
		now := time.Date(2026, 12, 28, 17, 0, 0, 0, time.UTC)
		if _, err := gen.Run(ctx, st, gen.Options{Subscribers: n, Seed: 1, Now: now}); err != nil {
			b.Fatal(err)
		}
		svc := &billing.Service{Store: st, Clock: clock.NewManual(now), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		var lines int
		for b.Loop() {
			b.StopTimer()
			for _, q := range []string{`DELETE FROM invoice_lines WHERE invoice_id IN (SELECT id FROM invoices WHERE period = '2026-12')`,
				`DELETE FROM invoices WHERE period = '2026-12'`} {
				if _, err := rawdb.Writer(st).ExecContext(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			b.StartTimer()
			if err := svc.BillRun(ctx, jobs.BillRun{ProviderID: gen.ProviderID(1), Period: "2026-12"}); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			_ = rawdb.Writer(st).QueryRowContext(ctx, `SELECT COUNT(*) FROM invoices WHERE period = '2026-12'`).Scan(&lines)
			b.StartTimer()
		}
		b.ReportMetric(float64(lines), "lines/run")
	})
}
