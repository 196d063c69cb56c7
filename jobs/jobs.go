// Package jobs is the durable work queue: the River client, the job kinds and their workers.
// It is the only package that knows River. Work that leaves the process (mail, switch writes,
// webhooks, charges) is enqueued with Enqueue inside the transaction of the row that asked for
// it, so the job exists if and only if that row committed.
package jobs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/subprov/subprov/store"
)

// Handlers are the capability code each job kind runs. A nil handler leaves its kind
// unregistered (an insert-only process, or a test that does not need it).
type Handlers struct {
	DeliverMail     func(ctx context.Context, args DeliverMail) error
	PasswordReset   func(ctx context.Context, args SendPasswordReset) error
	ProvisionPort   func(ctx context.Context, args ProvisionPort, attempt int) error
	DeprovisionPort func(ctx context.Context, args DeprovisionPort) error
	ConvergePort    func(ctx context.Context, args ConvergePort, attempt int) error
	FlushWebhooks   func(ctx context.Context, args FlushWebhooks) error
	ChargeInvoice   func(ctx context.Context, args ChargeInvoice) error
	BillRun         func(ctx context.Context, args BillRun) error
	SetLineService  func(ctx context.Context, args SetLineService) error
	RefundCredits   func(ctx context.Context, args RefundCredits) error
	SendSandbox     func(ctx context.Context, args SendSandboxEvent) error
	ReconcileSwitch func(ctx context.Context, args ReconcileSwitch) error
	SampleSwitch    func(ctx context.Context, args SampleSwitch) error
	OutageCredits   func(ctx context.Context, args OutageCredits) error
}

// Options tune the client.
type Options struct {
	Work bool // false: insert only (serve --no-workers)
	// MaxWorkers is how many jobs run at once per process, bill runs apart (BillRunsAtOnce);
	// default DefaultMaxWorkers. A job mostly waits (on a switch, a mail relay, or its turn at
	// the database writer), and on SQLite the writer commits waiting transactions together, so
	// more jobs in flight cost little, while fewer let a burst of orders queue its provisioning
	// jobs for seconds (docs/performance.md). It also bounds the calls that leave the process (a
	// mail relay, a payment processor) at 200 at once.
	MaxWorkers int
	// BillRunsAtOnce is how many bill runs (BillRun, one a provider and month) the process
	// works at once, in a queue of their own beside MaxWorkers'; default
	// BillRunsAtOnce(the store's engine, MaxWorkers).
	BillRunsAtOnce int
	PollInterval   time.Duration // how often to look for jobs other processes inserted; default 200ms
	// FetchCooldown is the least time between two fetches; it bounds how long a job enqueued
	// by this process waits after its transaction commits (the commit wakes the workers).
	// Default 5ms.
	FetchCooldown time.Duration
	Logger        *slog.Logger
}

// QueueBillRuns is the queue of the bill runs; every other kind is in River's default queue.
const QueueBillRuns = "bill_runs"

// DefaultMaxWorkers is how many jobs a process works at once unless told otherwise.
const DefaultMaxWorkers = 200

// BillRunsAtOnce is how many bill runs a process works at once unless told otherwise, given
// how many jobs it works (maxWorkers). On the 1st every provider's run is due together. On
// SQLite they share the one writer and the four readers: a hundred at once interleave their
// reads over the file, and the writer, which every run's batches wait for, waits longer for
// the pages it inserts into; eight at once finish the month's runs sooner (docs/performance.md,
// "The bill run"; four at once did as well in one run). On PostgreSQL a run waits on its round
// trips more than on the server, and as many run at once as other jobs.
func BillRunsAtOnce(d store.Dialect, maxWorkers int) int {
	if d == store.SQLite {
		return min(8, maxWorkers)
	}
	return maxWorkers
}

// Client enqueues jobs and, when working, runs them.
type Client struct {
	river *river.Client[*sql.Tx]
	work  bool
	pilot *wakePilot
}

// addWorker registers a handler for its job kind; nil leaves the kind unregistered.
func addWorker[T river.JobArgs](w *river.Workers, h func(context.Context, T) error) {
	if h == nil {
		return
	}
	river.AddWorker(w, river.WorkFunc(func(ctx context.Context, j *river.Job[T]) error { return h(ctx, j.Args) }))
}

// Migrate applies River's own schema migrations.
func Migrate(ctx context.Context, s *store.Store) error {
	m, err := rivermigrate.New(driverFor(s), nil)
	if err != nil {
		return fmt.Errorf("river migrator: %w", err)
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrate: %w", err)
	}
	return nil
}

// Pending lists River's own schema migrations the database has not applied ("NNN name"), in
// order, applying none.
func Pending(ctx context.Context, s *store.Store) ([]string, error) {
	quiet := slog.New(slog.DiscardHandler)
	m, err := rivermigrate.New(driverFor(s), &rivermigrate.Config{Logger: quiet})
	if err != nil {
		return nil, fmt.Errorf("river migrator: %w", err)
	}
	res, err := m.Migrate(ctx, rivermigrate.DirectionUp, &rivermigrate.MigrateOpts{DryRun: true})
	if err != nil {
		return nil, fmt.Errorf("river pending migrations: %w", err)
	}
	var out []string
	for _, v := range res.Versions {
		out = append(out, fmt.Sprintf("%03d %s", v.Version, v.Name))
	}
	return out, nil
}

// Ready reports whether River's own tables are migrated (part of /readyz).
func Ready(ctx context.Context, s *store.Store) error {
	ok, err := jobTableExists(ctx, s)
	if err != nil {
		return fmt.Errorf("job queue not migrated: %w", err)
	}
	if !ok {
		return fmt.Errorf("job queue not migrated: no table %s", jobTable)
	}
	return nil
}

// New builds the client. Call Start to begin working jobs.
func New(s *store.Store, h Handlers, o Options) (*Client, error) {
	if o.MaxWorkers <= 0 {
		o.MaxWorkers = DefaultMaxWorkers
	}
	if o.BillRunsAtOnce <= 0 {
		o.BillRunsAtOnce = BillRunsAtOnce(s.Dialect, o.MaxWorkers)
	}
	if o.PollInterval <= 0 {
		o.PollInterval = 200 * time.Millisecond
	}
	if o.FetchCooldown <= 0 {
		o.FetchCooldown = 5 * time.Millisecond
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	workers := river.NewWorkers()
	addWorker(workers, h.DeliverMail)
	addWorker(workers, h.PasswordReset)
	if h.ProvisionPort != nil {
		river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[ProvisionPort]) error {
			return h.ProvisionPort(ctx, j.Args, j.Attempt)
		}))
	}
	addWorker(workers, h.DeprovisionPort)
	if h.ConvergePort != nil {
		river.AddWorker(workers, river.WorkFunc(func(ctx context.Context, j *river.Job[ConvergePort]) error {
			return h.ConvergePort(ctx, j.Args, j.Attempt)
		}))
	}
	addWorker(workers, h.FlushWebhooks)
	addWorker(workers, h.ChargeInvoice)
	addWorker(workers, h.BillRun)
	addWorker(workers, h.SetLineService)
	addWorker(workers, h.RefundCredits)
	addWorker(workers, h.SendSandbox)
	addWorker(workers, h.ReconcileSwitch)
	addWorker(workers, h.SampleSwitch)
	addWorker(workers, h.OutageCredits)
	cfg := &river.Config{
		ID:                WorkerID(),
		Logger:            o.Logger.With("component", "river"),
		Workers:           workers,
		FetchPollInterval: o.PollInterval,
		FetchCooldown:     min(o.PollInterval, o.FetchCooldown),
		JobTimeout:        2 * time.Minute,
		MaxAttempts:       25,
		// A job whose process died mid-run is handed out again after this long.
		RescueStuckJobsAfter: 3 * time.Minute,
		RetryPolicy:          &backoff{},
		Middleware:           []rivertype.Middleware{&traceJobs{}},
	}
	if o.Work {
		cfg.Queues = map[string]river.QueueConfig{
			river.QueueDefault: {MaxWorkers: o.MaxWorkers},
			QueueBillRuns:      {MaxWorkers: o.BillRunsAtOnce},
		}
	}
	pilot := &wakePilot{}
	rc, err := river.NewClient[*sql.Tx](&wakeDriver{Driver: driverFor(s), pilot: pilot}, cfg)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return &Client{river: rc, work: o.Work, pilot: pilot}, nil
}

// WorkerID names this process in the job queue: its host and process id, which is what the
// queue records in each job's attempted_by. An operator (or a test) that knows a process died
// can tell its running jobs from the live workers' by it.
func WorkerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "subprov"
	}
	return fmt.Sprintf("%s-%d", host, os.Getpid())
}

// Start begins working jobs (no-op for an insert-only client).
func (c *Client) Start(ctx context.Context) error {
	if !c.work {
		return nil
	}
	if err := c.river.Start(ctx); err != nil {
		return fmt.Errorf("start job workers: %w", err)
	}
	return nil
}

// Stop lets running jobs finish (graceful shutdown), up to ctx's deadline, then cancels them.
func (c *Client) Stop(ctx context.Context) error {
	if !c.work {
		return nil
	}
	if err := c.river.Stop(ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return c.river.StopAndCancel(context.Background())
		}
		return fmt.Errorf("stop job workers: %w", err)
	}
	return nil
}

// Snooze is what a handler returns to run its job again after d without counting an attempt
// (the work is waiting for something, not failing).
func Snooze(d time.Duration) error { return river.JobSnooze(d) }

// Enqueuer inserts a job inside a transaction; *Client is one.
type Enqueuer interface {
	Enqueue(ctx context.Context, tx *store.Tx, args Args) error
}

// Args is a job's arguments; every kind is declared in kinds.go.
type Args = river.JobArgs

// Enqueue inserts a job inside tx: it becomes visible to workers only when tx commits, and
// the commit wakes this process's workers to fetch it at once.
func (c *Client) Enqueue(ctx context.Context, tx *store.Tx, args Args) error {
	res, err := c.river.InsertTx(tx.StatementContext(ctx), tx.Tx, args, nil)
	if err != nil {
		return fmt.Errorf("enqueue %s: %w", args.Kind(), err)
	}
	if c.work {
		tx.AfterCommit(func() { c.wake(res) })
	}
	return nil
}

// EnqueueNow inserts a job in its own transaction (sweeps of due work, which write nothing else).
func (c *Client) EnqueueNow(ctx context.Context, s *store.Store, args Args) error {
	return s.InTx(ctx, func(tx *store.Tx) error { return c.Enqueue(ctx, tx, args) })
}

// ClaimAndEnqueue is the body of every clock-driven sweep: for each due id, claim it and
// enqueue its job in one transaction, so two sweeps (or two replicas) never queue one twice.
func ClaimAndEnqueue(ctx context.Context, s *store.Store, q Enqueuer, ids []string,
	claim func(ctx context.Context, tx *store.Tx, id string) (bool, error), job func(id string) Args) error {
	for _, id := range ids {
		err := s.InTx(ctx, func(tx *store.Tx) error {
			ok, err := claim(ctx, tx, id)
			if err != nil || !ok {
				return err
			}
			return q.Enqueue(ctx, tx, job(id))
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// ClaimDueAndEnqueue is ClaimAndEnqueue for a sweep whose due ids are claimed all at once:
// claim marks them and returns them, and each one's job is enqueued in the same transaction.
func ClaimDueAndEnqueue(ctx context.Context, s *store.Store, q Enqueuer,
	claim func(ctx context.Context, tx *store.Tx) ([]string, error), job func(id string) Args) error {
	return s.InTx(ctx, func(tx *store.Tx) error {
		ids, err := claim(ctx, tx)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if err := q.Enqueue(ctx, tx, job(id)); err != nil {
				return err
			}
		}
		return nil
	})
}

// Counts returns the number of jobs per state, for /metrics.
func Counts(ctx context.Context, s *store.Store) (map[string]int, error) { return countJobs(ctx, s) }

// Unfinished describes the jobs not done yet, at most limit of them: waiting to run, running,
// retrying after a failure (whenever the retry is due), or scheduled for a time already past.
// A job scheduled for later is not unfinished work yet. Tests wait for the list to be empty.
func (c *Client) Unfinished(ctx context.Context, limit int) ([]string, error) {
	res, err := c.river.JobList(ctx, river.NewJobListParams().First(limit).States(rivertype.JobStateAvailable,
		rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled))
	if err != nil {
		return nil, fmt.Errorf("list unfinished jobs: %w", err)
	}
	now := time.Now()
	var out []string
	for _, j := range res.Jobs {
		if j.State == rivertype.JobStateScheduled && j.ScheduledAt.After(now) {
			continue
		}
		d := fmt.Sprintf("%s %s (attempt %d)", j.Kind, j.State, j.Attempt)
		if n := len(j.Errors); n > 0 {
			d += ": " + j.Errors[n-1].Error
		}
		out = append(out, d)
	}
	return out, nil
}

// backoff retries quickly at first and then exponentially, capped at an hour: transient
// failures (a busy SMTP relay, a switch timing out) recover within seconds.
type backoff struct{}

func (backoff) NextRetry(j *rivertype.JobRow) time.Time {
	n := j.Attempt
	if n < 1 {
		n = 1
	}
	d := time.Second << min(n-1, 12)
	if d > time.Hour {
		d = time.Hour
	}
	return time.Now().Add(d)
}
