package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/sqltext"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

// billResult is the monthly bill run over the generated providers' platform-billed lines.
type billResult struct {
	lines   int // invoices issued
	elapsed time.Duration
}

func (b billResult) linesPerSecond() float64 { return float64(b.lines) / b.elapsed.Seconds() }

// billPeriod is the period the harness bills: far in the future, as serve's own daily sweep
// bills the current month while the scenarios run, and a late run (period after today's)
// bills every line whatever its billing day.
const billPeriod = "2099-01"

// billRun runs the bill run of every generated provider (every eighth line is
// platform-billed) with serve stopped, as serve's workers run the jobs its sweep queues on the
// 1st (billEveryProvider). It removes what the runs wrote afterwards (and anything
// a run interrupted earlier left), so a reused database bills the same lines on the next run;
// their audit entries and the runs' records stay, the audit log being append-only.
func billRun(ctx context.Context, dbURL string, providers int) (billResult, error) {
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return billResult{}, err
	}
	defer st.Close()
	seqs, err := clearBillPeriod(ctx, st, providers)
	if err != nil {
		return billResult{}, err
	}
	runIDs := newRunIDs(providers)
	start := time.Now()
	if err := billEveryProvider(ctx, st, runIDs); err != nil {
		return billResult{}, err
	}
	res := billResult{elapsed: time.Since(start)}
	if res.lines, _, err = runRecords(ctx, st, runIDs); err != nil {
		return billResult{}, err
	}
	if err := undoBillRuns(ctx, st, seqs); err != nil {
		return billResult{}, err
	}
	return res, vacuumBillRun(ctx, st)
}

// newRunIDs are fresh bill-run ids, one a generated provider, in provider order.
func newRunIDs(providers int) []string {
	ids := make([]string, providers)
	for i := range ids {
		ids[i] = store.NewOrderedID()
	}
	return ids
}

// billEveryProvider runs the bill run of every generated provider, as the job workers of serve
// run the jobs its sweep queues on the 1st: as many at once as a process works by default
// (jobs.BillRunsAtOnce), runIDs in provider order.
func billEveryProvider(ctx context.Context, st *store.Store, runIDs []string) error {
	svc := billingService(st)
	errs := make([]error, len(runIDs))
	turns := make(chan struct{}, jobs.BillRunsAtOnce(st.Dialect, jobs.DefaultMaxWorkers))
	var wg sync.WaitGroup
	for i, id := range runIDs {
		turns <- struct{}{} // in provider order, as the queue hands the runs out
		wg.Go(func() {
			defer func() { <-turns }()
			errs[i] = svc.BillRun(ctx, jobs.BillRun{ProviderID: gen.ProviderID(i + 1), Period: billPeriod, RunID: id})
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// runRecords reads the records of the bill runs ids: the invoices they count (each batch of a
// run counts its invoices as it commits them) and how many of the runs have finished.
func runRecords(ctx context.Context, st *store.Store, ids []string) (invoices, finished int, err error) {
	q := `SELECT COALESCE(SUM(invoices), 0), COUNT(finished_at) FROM bill_runs WHERE id IN (` + sqltext.Placeholders(len(ids)) + `)`
	if err := rawdb.Writer(st).QueryRowContext(ctx, st.Dialect.Rebind(q), sqltext.Args(ids[0], ids[1:])...).Scan(&invoices, &finished); err != nil {
		return 0, 0, fmt.Errorf("the bill runs' records: %w", err)
	}
	return invoices, finished, nil
}

// billingService is the billing service as a job worker runs it, with the clock at the harness's
// now (its period is later: a late run, every billing day passed) and its log discarded.
func billingService(st *store.Store) *billing.Service {
	return &billing.Service{Store: st, Clock: clock.NewManual(time.Now().UTC()), Log: slog.New(slog.DiscardHandler)}
}

// vacuumBillRun vacuums, on PostgreSQL, the tables undoBillRun deleted the run's rows from, as
// autovacuum would on a production server: without it (a server run with autovacuum off, as
// CI's is) the dead rows of every earlier run stay in the tables and their indexes, and each
// run on a reused database is slower than the one before.
func vacuumBillRun(ctx context.Context, st *store.Store) error {
	if st.Dialect != store.Postgres {
		return nil
	}
	if _, err := rawdb.Writer(st).ExecContext(ctx, `VACUUM invoices, invoice_lines, charges, ledger_documents`); err != nil {
		return fmt.Errorf("vacuum after the bill run: %w", err)
	}
	return nil
}

// clearBillPeriod removes what an interrupted run left in the harness's period for each
// generated provider and returns their document sequences, to set back when the run is undone.
func clearBillPeriod(ctx context.Context, st *store.Store, providers int) ([]int64, error) {
	seqs := make([]int64, providers)
	for i := range seqs {
		var err error
		if seqs[i], err = documentSeq(ctx, st, gen.ProviderID(i+1)); err != nil {
			return nil, err
		}
		if err := undoBillRun(ctx, st, gen.ProviderID(i+1), seqs[i]); err != nil {
			return nil, err
		}
	}
	return seqs, nil
}

// undoBillRuns undoes the harness's period for each generated provider (undoBillRun), setting
// their document sequences back to seqs.
func undoBillRuns(ctx context.Context, st *store.Store, seqs []int64) error {
	for i, seq := range seqs {
		if err := undoBillRun(ctx, st, gen.ProviderID(i+1), seq); err != nil {
			return err
		}
	}
	return nil
}

// periodInvoices counts the recurring invoices of the harness's period.
func periodInvoices(ctx context.Context, st *store.Store) (int, error) {
	var n int
	q := st.Dialect.Rebind(`SELECT COUNT(*) FROM invoices WHERE period = ? AND kind = 'recurring'`)
	if err := rawdb.Writer(st).QueryRowContext(ctx, q, billPeriod).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the period's invoices: %w", err)
	}
	return n, nil
}

// documentSeq reads a provider's document sequence: the bill run takes one number per invoice.
func documentSeq(ctx context.Context, st *store.Store, providerID string) (int64, error) {
	var seq int64
	if err := rawdb.Writer(st).QueryRowContext(ctx, st.Dialect.Rebind(`SELECT document_seq FROM providers WHERE id = ?`), providerID).Scan(&seq); err != nil {
		return 0, fmt.Errorf("document sequence: %w", err)
	}
	return seq, nil
}

// undoBillRun removes the provider's invoices of the harness's period, with their lines,
// charges and ledger documents, and sets its document sequence back to seq when the invoices
// removed took every number since: a document another process issued meanwhile (serve's own
// sweep, while the billcrash scenario runs) keeps its number, and the sequence stays past it.
func undoBillRun(ctx context.Context, st *store.Store, providerID string, seq int64) error {
	invoices := `SELECT id FROM invoices WHERE provider_id = ? AND period = ? AND kind = 'recurring'`
	for _, q := range []string{
		`DELETE FROM invoice_lines WHERE invoice_id IN (` + invoices + `)`,
		`DELETE FROM charges WHERE invoice_id IN (` + invoices + `)`,
		`DELETE FROM ledger_documents WHERE invoice_id IN (` + invoices + `)`,
	} {
		if _, err := rawdb.Writer(st).ExecContext(ctx, st.Dialect.Rebind(q), providerID, billPeriod); err != nil {
			return fmt.Errorf("undo bill run: %w", err)
		}
	}
	res, err := rawdb.Writer(st).ExecContext(ctx, st.Dialect.Rebind(`DELETE FROM invoices WHERE provider_id = ? AND period = ? AND kind = 'recurring'`), providerID, billPeriod)
	if err != nil {
		return fmt.Errorf("undo bill run: %w", err)
	}
	removed, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("undo bill run: %w", err)
	}
	q := st.Dialect.Rebind(`UPDATE providers SET document_seq = ? WHERE id = ? AND document_seq = ?`)
	if _, err := rawdb.Writer(st).ExecContext(ctx, q, seq, providerID, seq+removed); err != nil {
		return fmt.Errorf("undo bill run: %w", err)
	}
	return nil
}
