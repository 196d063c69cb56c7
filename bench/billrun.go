package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

// billResult is the monthly bill run over the generated provider's platform-billed lines.
type billResult struct {
	lines   int // invoices issued
	elapsed time.Duration
}

func (b billResult) linesPerSecond() float64 { return float64(b.lines) / b.elapsed.Seconds() }

// billRun runs a bill run of generated provider 1 (every eighth line is platform-billed) with
// serve stopped, and removes what it wrote afterwards (and anything a run interrupted earlier
// left), so a reused database bills the same lines on the next run; its audit entries stay,
// the audit log being append-only. The period is far in the
// future: serve's own daily sweep bills the current month while the scenarios run, and a
// late run (period after today's) bills every line whatever its billing day.
func billRun(ctx context.Context, dbURL string) (billResult, error) {
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return billResult{}, err
	}
	defer st.Close()
	providerID := gen.ProviderID(1)
	now := time.Now().UTC()
	const period = "2099-01"
	var seq int64
	if err := rawdb.Writer(st).QueryRowContext(ctx, st.Dialect.Rebind(`SELECT document_seq FROM providers WHERE id = ?`), providerID).Scan(&seq); err != nil {
		return billResult{}, fmt.Errorf("document sequence: %w", err)
	}
	undo := func() error {
		invoices := `SELECT id FROM invoices WHERE provider_id = ? AND period = ? AND kind = 'recurring'`
		for _, q := range []string{
			`DELETE FROM invoice_lines WHERE invoice_id IN (` + invoices + `)`,
			`DELETE FROM charges WHERE invoice_id IN (` + invoices + `)`,
			`DELETE FROM ledger_documents WHERE invoice_id IN (` + invoices + `)`,
			`DELETE FROM invoices WHERE provider_id = ? AND period = ? AND kind = 'recurring'`,
		} {
			if _, err := rawdb.Writer(st).ExecContext(ctx, st.Dialect.Rebind(q), providerID, period); err != nil {
				return fmt.Errorf("undo bill run: %w", err)
			}
		}
		return nil
	}
	if err := undo(); err != nil { // left by an interrupted run
		return billResult{}, err
	}
	svc := &billing.Service{Store: st, Clock: clock.NewManual(now), Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	start := time.Now()
	if err := svc.BillRun(ctx, jobs.BillRun{ProviderID: providerID, Period: period}); err != nil {
		return billResult{}, err
	}
	res := billResult{elapsed: time.Since(start)}
	var last int64
	if err := rawdb.Writer(st).QueryRowContext(ctx, st.Dialect.Rebind(`SELECT document_seq FROM providers WHERE id = ?`), providerID).Scan(&last); err != nil {
		return billResult{}, fmt.Errorf("document sequence: %w", err)
	}
	res.lines = int(last - seq)
	if err := undo(); err != nil {
		return billResult{}, err
	}
	if _, err := rawdb.Writer(st).ExecContext(ctx, st.Dialect.Rebind(`UPDATE providers SET document_seq = ? WHERE id = ?`), seq, providerID); err != nil {
		return billResult{}, fmt.Errorf("undo bill run: %w", err)
	}
	return res, nil
}
