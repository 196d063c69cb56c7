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
	"github.com/subprov/subprov/internal/sqltext"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

// crashResult is the bill run through serve's job workers with serve killed halfway.
type crashResult struct {
	lines      int           // the period's invoices once every run finished
	atKill     int           // the period's invoices when serve was killed
	killedLate bool          // every run had finished before the kill came (a small database)
	toKill     time.Duration // from serve's readiness to the kill
	recovery   time.Duration // from the restart until every run finished
	leftOver   int           // invoices a further run issued after the runs finished (want 0)
	halves     int           // invoices without their lines or without their ledger document, the more of the two (want 0)
	recorded   int           // the invoices the runs' records count (want lines)
}

const (
	killShare   = 0.4              // serve is killed once this share of the platform-billed lines is invoiced
	crashWithin = 20 * time.Minute // each half of the run, before and after the kill, must end within this
)

// billCrash bills the platform-billed lines of every provider as serve does on the 1st: one
// billing.run job a provider, queued before serve starts and worked by its job workers. When
// the invoices written reach killShare of the platform-billed lines, serve is SIGKILLed; it is
// started again, the job queue hands the killed jobs out again, and their next attempts finish
// the runs. Then every invoice must have its lines and its ledger document, a further run must
// find nothing left to bill, and the runs' records must count every invoice; the caller
// compares their number with the billrun scenario's when both ran (a line has at most one
// invoice a period by the invoices' own uniqueness). What the runs wrote is removed afterwards,
// as billRun does, and so are their jobs and records when the scenario stops on an error
// before its checks; a failed check leaves the period's invoices for a look.
func billCrash(ctx context.Context, o options, bin, engine, dbURL string) (res crashResult, err error) {
	st, err := store.Open(ctx, dbURL)
	if err != nil {
		return res, err
	}
	defer st.Close()
	seqs, err := clearBillPeriod(ctx, st, o.providers)
	if err != nil {
		return res, err
	}
	var platform int
	if err := rawdb.Writer(st).QueryRowContext(ctx, `SELECT COUNT(*) FROM subscriptions WHERE billing_owner = 'platform'`).Scan(&platform); err != nil {
		return res, fmt.Errorf("count the platform-billed lines: %w", err)
	}
	runIDs := newRunIDs(o.providers)
	if err := queueBillRuns(ctx, st, runIDs); err != nil {
		return res, err
	}
	failedCheck := false
	defer func() {
		// On an error before the checks, what is left of the runs goes, their jobs (a later
		// serve must not work them) and records (they would stay unfinished) with them; when a
		// check failed, the invoices stay for a look.
		if err != nil && !failedCheck {
			ctx := context.WithoutCancel(ctx)
			err = errors.Join(err, dropBillRuns(ctx, st, runIDs), undoBillRuns(ctx, st, seqs))
		}
	}()

	srv, _, err := startServe(ctx, o, bin, engine, dbURL)
	if err != nil {
		return res, err
	}
	started := time.Now()
	res.killedLate, err = waitForRuns(ctx, st, srv, runIDs, int(killShare*float64(platform)))
	srv.kill()
	killedAt := time.Now()
	if err != nil {
		return res, err
	}
	res.toKill = killedAt.Sub(started)
	if err := os.Rename(filepath.Join(o.dir, engine+"-serve.log"), filepath.Join(o.dir, engine+"-serve-killed.log")); err != nil {
		return res, err
	}
	if _, err := jobs.AfterKill(ctx, st, killedAt); err != nil {
		return res, err
	}
	if res.atKill, err = periodInvoices(ctx, st); err != nil { // once the killed commits have landed
		return res, err
	}

	restarted := time.Now()
	if srv, _, err = startServe(ctx, o, bin, engine, dbURL); err != nil {
		return res, err
	}
	_, err = waitForRuns(ctx, st, srv, runIDs, -1)
	srv.stop()
	if err != nil {
		return res, err
	}
	res.recovery = time.Since(restarted)

	if res.lines, err = periodInvoices(ctx, st); err != nil {
		return res, err
	}
	if err := checkAfterCrash(ctx, st, runIDs, &res); err != nil {
		return res, err
	}
	if res.halves > 0 || res.leftOver > 0 || res.recorded != res.lines {
		failedCheck = true
		return res, fmt.Errorf("after the crash %d invoices lack their lines or ledger document, a further run issued %d, and the runs' records count %d of the %d invoices (the period %s is left in the database)",
			res.halves, res.leftOver, res.recorded, res.lines, billPeriod)
	}
	if err := undoBillRuns(ctx, st, seqs); err != nil {
		return res, err
	}
	return res, vacuumBillRun(ctx, st)
}

// waitForRuns waits until the records of the bill runs runIDs count at least invoices
// invoices (never, when invoices < 0) or until every run has finished, in which case it
// reports true. It fails when serve exits or after crashWithin.
func waitForRuns(ctx context.Context, st *store.Store, srv *server, runIDs []string, invoices int) (finished bool, err error) {
	every := 100 * time.Millisecond
	if invoices >= 0 {
		every = 5 * time.Millisecond // a small database's runs take a few tenths of a second
	}
	for deadline := time.Now().Add(crashWithin); ; time.Sleep(every) {
		// A run's record is written when its job first starts, and ends with a finish time.
		n, done, err := runRecords(ctx, st, runIDs)
		if err != nil || (invoices >= 0 && n >= invoices) {
			return false, err
		}
		switch {
		case done == len(runIDs):
			return true, nil
		case srv.exited():
			return false, fmt.Errorf("serve exited with %d of %d bill runs unfinished", len(runIDs)-done, len(runIDs))
		case time.Now().After(deadline):
			return false, fmt.Errorf("%d of %d bill runs unfinished after %s", len(runIDs)-done, len(runIDs), crashWithin)
		}
	}
}

// queueBillRuns queues each generated provider's billing.run job for the harness's period,
// runIDs in provider order, in one transaction, through an insert-only job client as
// serve --no-workers would.
func queueBillRuns(ctx context.Context, st *store.Store, runIDs []string) error {
	// The queue takes only kinds its client has a worker for; this client never works one.
	kinds := jobs.Handlers{BillRun: func(context.Context, jobs.BillRun) error { return errors.New("worked by serve") }}
	jc, err := jobs.New(st, kinds, jobs.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	err = st.InTx(ctx, func(tx *store.Tx) error {
		for i, id := range runIDs {
			if err := jc.Enqueue(ctx, tx, jobs.BillRun{ProviderID: gen.ProviderID(i + 1), Period: billPeriod, RunID: id}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("queue the bill runs: %w", err)
	}
	return nil
}

// dropBillRuns removes the jobs of the bill runs runIDs, whatever their state (their arguments
// name the run), and the runs' records.
func dropBillRuns(ctx context.Context, st *store.Store, runIDs []string) error {
	for _, id := range runIDs {
		q := st.Dialect.Rebind(`DELETE FROM river_job WHERE kind = 'billing.run' AND CAST(args AS TEXT) LIKE ?`)
		if _, err := rawdb.Writer(st).ExecContext(ctx, q, "%"+id+"%"); err != nil {
			return fmt.Errorf("drop the bill runs' jobs: %w", err)
		}
	}
	q := st.Dialect.Rebind(`DELETE FROM bill_runs WHERE id IN (` + sqltext.Placeholders(len(runIDs)) + `)`)
	if _, err := rawdb.Writer(st).ExecContext(ctx, q, sqltext.Args(runIDs[0], runIDs[1:])...); err != nil {
		return fmt.Errorf("drop the bill runs' records: %w", err)
	}
	return nil
}

// checkAfterCrash counts into res the period's invoices without their lines or ledger
// document, the invoices the records of the runs runIDs count, and the invoices a further run
// of every provider's bill run issues.
func checkAfterCrash(ctx context.Context, st *store.Store, runIDs []string, res *crashResult) error {
	// An invoice lacking its lines is found through the lines' index by invoice; the ledger
	// documents have no such index, so those of the period's invoices are counted from their side.
	var unlined, ledgered int
	counts := []struct {
		into *int
		q    string
	}{
		{&unlined, `SELECT COUNT(*) FROM invoices i WHERE i.period = ? AND i.kind = 'recurring'
			AND NOT EXISTS (SELECT 1 FROM invoice_lines l WHERE l.invoice_id = i.id)`},
		{&ledgered, `SELECT COUNT(DISTINCT d.invoice_id) FROM ledger_documents d JOIN invoices i ON i.id = d.invoice_id
			WHERE i.period = ? AND i.kind = 'recurring'`},
	}
	for _, c := range counts {
		if err := rawdb.Writer(st).QueryRowContext(ctx, st.Dialect.Rebind(c.q), billPeriod).Scan(c.into); err != nil {
			return fmt.Errorf("check the bill run: %w", err)
		}
	}
	res.halves = max(unlined, res.lines-ledgered)
	var err error
	if res.recorded, _, err = runRecords(ctx, st, runIDs); err != nil {
		return err
	}
	further := newRunIDs(len(runIDs))
	if err := billEveryProvider(ctx, st, further); err != nil {
		return fmt.Errorf("bill run after the jobs: %w", err)
	}
	res.leftOver, _, err = runRecords(ctx, st, further)
	return err
}
