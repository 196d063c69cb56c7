package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

// crashResult is the bill run through serve's job workers with serve killed halfway.
type crashResult struct {
	lines      int           // the period's invoices once every job finished
	atKill     int           // the period's invoices when serve was killed
	killedLate bool          // every job had finished before the kill came (a small database)
	toKill     time.Duration // from serve's start to the kill
	recovery   time.Duration // from the restart until every bill-run job finished
	leftOver   int           // invoices a further run issued after the jobs finished (want 0)
	halves     int           // invoices without their lines or ledger document (want 0)
	recorded   int           // the invoices the runs' records count (want lines)
}

// pendingBillRuns counts the bill-run jobs still to work or being worked.
const pendingBillRuns = `SELECT COUNT(*) FROM river_job WHERE kind = 'billing.run' AND state IN ('available', 'running', 'retryable', 'scheduled')`

// billCrash bills the platform-billed lines of every provider as serve does on the 1st: one
// billing.run job a provider, queued before serve starts and worked by its job workers. When
// the invoices written reach killShare of the platform-billed lines, serve is SIGKILLed; it is
// started again, the job queue hands the killed jobs out again, and their next attempts finish
// the run. Then every invoice must have its lines and its ledger document, a further run must
// find nothing left to bill, and the invoices must be as many as an uninterrupted run issues
// (the report compares them with the billrun scenario's; a line has at most one invoice a
// period by the invoices' own uniqueness). What the run wrote is removed afterwards, as
// billRun does.
func billCrash(ctx context.Context, o options, bin, engine, dbURL string) (crashResult, error) {
	const killShare = 0.4
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return crashResult{}, err
	}
	defer st.Close()
	seqs, err := clearBillPeriod(ctx, st, o.providers)
	if err != nil {
		return crashResult{}, err
	}
	var platform int
	if err := rawdb.Writer(st).QueryRowContext(ctx, `SELECT COUNT(*) FROM subscriptions WHERE billing_owner = 'platform'`).Scan(&platform); err != nil {
		return crashResult{}, fmt.Errorf("count the platform-billed lines: %w", err)
	}
	runIDs, err := queueBillRuns(ctx, st, o.providers)
	if err != nil {
		return crashResult{}, err
	}

	var res crashResult
	srv, _, err := startServe(ctx, o, bin, engine, dbURL)
	if err != nil {
		return res, err
	}
	started := time.Now()
	for {
		issued, err := issuedSince(ctx, st, seqs)
		if err != nil {
			srv.stop()
			return res, err
		}
		if float64(issued) >= killShare*float64(platform) {
			break
		}
		var pending int
		if err := rawdb.Writer(st).QueryRowContext(ctx, pendingBillRuns).Scan(&pending); err != nil {
			srv.stop()
			return res, fmt.Errorf("count the bill-run jobs: %w", err)
		}
		if pending == 0 {
			res.killedLate = true
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	srv.kill()
	res.toKill = time.Since(started)
	if err := os.Rename(filepath.Join(o.dir, engine+"-serve.log"), filepath.Join(o.dir, engine+"-serve-killed.log")); err != nil {
		return res, err
	}
	if res.atKill, err = periodInvoices(ctx, st); err != nil {
		return res, err
	}
	// The killed process's running jobs are handed out again once they have been stuck for the
	// queue's rescue window (minutes), and its leadership lapses after its lease: both are
	// dated back here, as if that time had passed, so the run goes on at once.
	for _, q := range []string{`UPDATE river_job SET attempted_at = '2000-01-01 00:00:00' WHERE state = 'running'`, `DELETE FROM river_leader`} {
		if _, err := rawdb.Writer(st).ExecContext(ctx, q); err != nil {
			return res, fmt.Errorf("after the kill: %w", err)
		}
	}

	restarted := time.Now()
	if srv, _, err = startServe(ctx, o, bin, engine, dbURL); err != nil {
		return res, err
	}
	for {
		var pending int
		if err := rawdb.Writer(st).QueryRowContext(ctx, pendingBillRuns).Scan(&pending); err != nil {
			srv.stop()
			return res, fmt.Errorf("count the bill-run jobs: %w", err)
		}
		if pending == 0 {
			break
		}
		if time.Since(restarted) > 20*time.Minute {
			srv.stop()
			return res, fmt.Errorf("%d bill-run jobs unfinished 20 minutes after the restart", pending)
		}
		time.Sleep(100 * time.Millisecond)
	}
	res.recovery = time.Since(restarted)
	srv.stop()

	if res.lines, err = periodInvoices(ctx, st); err != nil {
		return res, err
	}
	if err := checkBilledOnce(ctx, st, runIDs, &res); err != nil {
		return res, err
	}
	if res.halves > 0 || res.leftOver > 0 || res.recorded != res.lines {
		return res, fmt.Errorf("after the crash %d invoices lack their lines or ledger document, a further run issued %d, and the runs' records count %d of the %d invoices",
			res.halves, res.leftOver, res.recorded, res.lines)
	}
	if err := undoBillRuns(ctx, st, seqs); err != nil {
		return res, err
	}
	return res, vacuumBillRun(ctx, st)
}

// queueBillRuns queues each provider's billing.run job for the harness's period, in one
// transaction, through an insert-only job client as serve --no-workers would. It returns the
// runs' ids, the provider's first.
func queueBillRuns(ctx context.Context, st *store.Store, providers int) ([]string, error) {
	// The queue takes only kinds its client has a worker for; this client never works one.
	kinds := jobs.Handlers{BillRun: func(context.Context, jobs.BillRun) error { return errors.New("worked by serve") }}
	jc, err := jobs.New(st, kinds, jobs.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, err
	}
	ids := make([]string, providers)
	err = st.InTx(ctx, func(tx *store.Tx) error {
		for i := range providers {
			ids[i] = store.NewOrderedID()
			if err := jc.Enqueue(ctx, tx, jobs.BillRun{ProviderID: gen.ProviderID(i + 1), Period: billPeriod, RunID: ids[i]}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("queue the bill runs: %w", err)
	}
	return ids, nil
}

// checkBilledOnce counts into res the period's invoices without their lines or ledger
// document, the invoices the records of the runs runIDs count, and the invoices a further run
// of every provider's bill run issues.
func checkBilledOnce(ctx context.Context, st *store.Store, runIDs []string, res *crashResult) error {
	halves := `SELECT COUNT(*) FROM invoices i WHERE i.period = ? AND i.kind = 'recurring'
		AND (NOT EXISTS (SELECT 1 FROM invoice_lines l WHERE l.invoice_id = i.id)
			OR NOT EXISTS (SELECT 1 FROM ledger_documents d WHERE d.invoice_id = i.id))`
	if err := rawdb.Writer(st).QueryRowContext(ctx, st.Dialect.Rebind(halves), billPeriod).Scan(&res.halves); err != nil {
		return fmt.Errorf("check the bill run: %w", err)
	}
	for _, id := range runIDs {
		var n int
		if err := rawdb.Writer(st).QueryRowContext(ctx, st.Dialect.Rebind(`SELECT invoices FROM bill_runs WHERE id = ?`), id).Scan(&n); err != nil {
			return fmt.Errorf("the record of bill run %s: %w", id, err)
		}
		res.recorded += n
	}
	svc := billingService(st)
	var errs []error
	for i := range runIDs {
		errs = append(errs, svc.BillRun(ctx, jobs.BillRun{ProviderID: gen.ProviderID(i + 1), Period: billPeriod}))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bill run after the jobs: %w", err)
	}
	after, err := periodInvoices(ctx, st)
	res.leftOver = after - res.lines
	return err
}
