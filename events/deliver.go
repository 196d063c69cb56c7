package events

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/metrics"
	"github.com/subprov/subprov/store"
)

const (
	// AttemptTimeout bounds one delivery attempt, production and sandbox alike.
	AttemptTimeout = 10 * time.Second
	// RetryFor is how long a production event is retried, counted from its first attempt.
	RetryFor = 72 * time.Hour

	firstRetry = 30 * time.Second // the first retry comes within a minute (docs/webhooks.md)
	maxRetry   = 6 * time.Hour

	// leaseTTL is how long a flusher owns a provider unless it renews. A flusher renews
	// after leaseRenew, before starting an attempt, so an attempt (AttemptTimeout), or a
	// wait for the recording of its deliveries (one transaction), and the writes after it end
	// well inside the lease and two flushers never overlap.
	leaseTTL   = 60 * time.Second
	leaseRenew = 20 * time.Second
	// flushBudget: a webhooks.flush job stops starting attempts after this long (the queue
	// bounds a job's run time); a follow-up flush continues.
	flushBudget = 25 * time.Second
	batchSize   = 50
	// sequenceLimit is how many events one pass numbers.
	sequenceLimit = 10 * batchSize
	sweepLimit    = 1000
	// linger is how long the dispatcher keeps a provider's lease after its last wake-up,
	// so a steady stream of events is delivered without taking the lease for each one.
	linger = 100 * time.Millisecond
	// idle is how long a provider's dispatcher goroutine waits for work before it ends.
	idle = 2 * time.Second
	// leaseBusyRetry is how soon the dispatcher tries again for a lease another process holds.
	leaseBusyRetry = 50 * time.Millisecond
)

// providerFresh is how long a run of deliveries uses the provider's webhook_url and secret as
// read before reading them again: an attempt started providerFresh after a change uses the
// new ones. A variable for the tests only.
var providerFresh = time.Second

// Attempt is the outcome of one delivery attempt.
type Attempt struct {
	StatusCode int // 0 when no HTTP answer came (refused, timeout, invalid URL)
	LatencyMS  int
	Error      string // "" on success
	Delivered  bool   // the receiver answered 2xx
}

// Deliverer sends recorded events to the providers' receivers.
//
// A process that runs workers starts its dispatcher (Start): the Recorder wakes it when an
// event's transaction commits (Wake) and a goroutine per active provider delivers at once,
// holding the provider's lease while events keep coming. The webhooks.flush job, enqueued by
// processes without a dispatcher and by the sweep where none runs, does the same in one go.
// Either way the lease makes one flusher per provider at a time, across processes.
type Deliverer struct {
	Store  *store.Store
	Jobs   *jobs.Client // for Sweep and follow-up flushes
	Clock  subprov.Clock
	Client *http.Client // nil: SafeClient(AttemptTimeout)
	Log    *slog.Logger
	// Metrics counts the failed attempts (nil: nothing is recorded).
	Metrics *metrics.Recorder

	disp atomic.Pointer[dispatcher] // set by Start
}

// One shared client when none is configured, so connections to a receiver are reused across
// flushes.
var defaultClient = sync.OnceValue(func() *http.Client { return SafeClient(AttemptTimeout) })

func (d *Deliverer) client() *http.Client {
	if d.Client != nil {
		return d.Client
	}
	return defaultClient()
}

func (d *Deliverer) log() *slog.Logger {
	if d.Log != nil {
		return d.Log
	}
	return slog.Default()
}

// leaseNow is the wall clock, not d.Clock: a lease is mutual exclusion between real
// processes in real time, and moving the dev clock forward must not expire a live lease.
func leaseNow() time.Time { return time.Now().UTC() }

// RetryDelay is the wait after the n-th failed attempt of a production event: 30 s, 1 min,
// 2 min, 4 min, … capped at 6 h.
func RetryDelay(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	d := firstRetry << min(n-1, 16)
	return min(d, maxRetry)
}

// Flush is the webhooks.flush job. In a process whose dispatcher runs it hands the provider
// to the dispatcher. Otherwise it takes the provider's lease (free or expired; 60 s),
// delivers the provider's due production events strictly in seq order to its current
// webhook_url, and releases the lease. Every attempt is recorded. A failed attempt schedules
// the event's retry and stops the flush, so later events wait behind it; an event failing for
// more than RetryFor since its first attempt becomes failed and the flush moves on.
//
// Running it twice sends nothing twice that was already marked delivered: only pending
// events are read, and the lease keeps a concurrent flush of the same provider out. (A crash
// between a 2xx and its mark, or a failed write of the marks, resends the events delivered and
// not yet recorded, at most maxUnsettled; X-Webhook-Id lets receivers drop them.) Receiver
// failures are not job errors: the event carries its own retry schedule, and the sweep wakes a
// flush when it falls due.
func (d *Deliverer) Flush(ctx context.Context, a jobs.FlushWebhooks) error {
	if d.disp.Load() != nil {
		d.Wake(a.ProviderID)
		return nil
	}
	got, err := d.session(ctx, a.ProviderID, nil, nil, time.Now().Add(flushBudget))
	if err != nil {
		return fmt.Errorf("flush webhooks of provider %s: %w", a.ProviderID, err)
	}
	if !got {
		// Another flusher is at work; it looks for due events again after releasing.
		return nil
	}
	// A flush of an event recorded while we held the lease was turned away above; look once
	// more now that the lease is free so that event need not wait for the sweep. This also
	// continues a flush that ran out of budget.
	due, err := d.Store.DueEvents(ctx, a.ProviderID, d.Clock.Now(), 1)
	if err != nil {
		return fmt.Errorf("flush webhooks of provider %s: %w", a.ProviderID, err)
	}
	unsequenced, err := d.Store.HasEventsToSequence(ctx, a.ProviderID)
	if err != nil {
		return fmt.Errorf("flush webhooks of provider %s: %w", a.ProviderID, err)
	}
	if (len(due) > 0 || unsequenced) && d.Jobs != nil {
		if err := d.Jobs.EnqueueNow(ctx, d.Store, jobs.FlushWebhooks{ProviderID: a.ProviderID}); err != nil {
			return fmt.Errorf("flush webhooks of provider %s: follow-up: %w", a.ProviderID, err)
		}
	}
	return nil
}

// errLeaseLost: the lease expired and another flusher took it; stop without writing more.
var errLeaseLost = errors.New("webhook lease lost")

// session takes the provider's lease, delivers what is due, and releases the lease. With a
// kick channel (the dispatcher) it keeps the lease and delivers again on every kick that comes
// within linger of the last delivery, until drain is closed. It stops starting attempts after
// deadline (zero: none). It reports whether it got the lease.
func (d *Deliverer) session(ctx context.Context, providerID string, kick, drain <-chan struct{}, deadline time.Time) (bool, error) {
	holder := store.NewID()
	now := leaseNow()
	got, err := d.Store.AcquireWebhookLease(ctx, providerID, holder, now, now.Add(leaseTTL))
	if err != nil || !got {
		return false, err
	}
	l := &lease{providerID: providerID, holder: holder, renewed: now}
	err = func() error {
		for {
			if err := d.deliverDue(ctx, l, deadline); err != nil {
				return err
			}
			if kick == nil {
				return nil
			}
			t := time.NewTimer(linger)
			select {
			case <-kick:
				t.Stop()
			case <-t.C:
				return nil
			case <-drain:
				t.Stop()
				return nil
			case <-ctx.Done():
				t.Stop()
				return nil
			}
		}
	}()
	if errors.Is(err, errLeaseLost) {
		d.log().Warn("webhook lease lost; another flusher continues", "provider_id", providerID)
		return true, nil
	}
	// Release even when the job was cancelled, or the provider waits out the lease.
	if relErr := d.Store.ReleaseWebhookLease(context.WithoutCancel(ctx), providerID, holder); relErr != nil {
		err = errors.Join(err, relErr)
	}
	return true, err
}

// lease is a flusher's hold on one provider.
type lease struct {
	providerID, holder string
	renewed            time.Time
}

// keep renews the lease when it is due for renewal.
func (d *Deliverer) keep(ctx context.Context, l *lease) error {
	now := leaseNow()
	if now.Sub(l.renewed) < leaseRenew {
		return nil
	}
	ok, err := d.Store.RenewWebhookLease(ctx, l.providerID, l.holder, now.Add(leaseTTL))
	if err != nil {
		return err
	}
	if !ok {
		return errLeaseLost
	}
	l.renewed = now
	return nil
}

// deliverDue numbers the events committed since the last look, then sends due events in seq
// order until none is due, one fails, or the deadline passes. The caller holds the lease.
//
// Each batch's sends overlap the read of the next batch (the events numbered after the
// batch's last): under load a read waits for a session of the pool, and between small
// batches those waits took as long as the sends. A look ahead that finds nothing or fails is
// read again at once, so the events numbered since it started are not left for a later run.
// The provider's URL and secret are read again before an attempt once providerFresh has
// passed since the last read began, not for every batch.
//
// Deliveries are recorded behind the sends (settler): the flusher goes on to the next due
// events while the last ones are written, so a slow write (on SQLite, a wait for the writer's
// turn) delays their recording, not the receiver's next events. The transaction that records
// deliveries also numbers the events committed meanwhile: one commit for both. Whatever ends
// the run, it returns only once every delivery made is recorded.
func (d *Deliverer) deliverDue(ctx context.Context, l *lease, deadline time.Time) (err error) {
	providerID := l.providerID
	st := &settler{d: d, providerID: providerID}
	// The deliveries happened: record them even when ctx is done. Without the lease, record
	// them only: numbering events is the holder's.
	defer func() {
		st.recordOnly = errors.Is(err, errLeaseLost)
		err = errors.Join(err, st.finish(context.WithoutCancel(ctx)))
	}()
	var sent int64 // seq of the last event sent: the events up to it are being recorded
	var p *subprov.Provider
	var pRead time.Time // when the read of p began
	provider := func() error {
		if p != nil && time.Since(pRead) < providerFresh {
			return nil
		}
		var err error
		pRead = time.Now()
		p, err = d.Store.Provider(ctx, providerID)
		return err
	}
	var ahead chan dueRead // the read of the batch after the one being sent
	defer func() {
		if ahead != nil {
			<-ahead // the read ends before the run does
		}
	}()
	for {
		if err := d.keep(ctx, l); err != nil {
			return err
		}
		if !st.busy() {
			// Number the events committed since the last look, unless the last recording
			// transaction has just done so.
			if st.numbered == 0 {
				if _, err := d.Store.SequenceEvents(ctx, providerID, sequenceLimit); err != nil {
					return err
				}
			}
			st.numbered = 0
		}
		var next dueRead
		if ahead != nil {
			next, ahead = <-ahead, nil
		}
		if next.err != nil || len(next.due) == 0 {
			next = d.readDue(ctx, providerID, sent)
		}
		due, waiting, err := next.due, next.waiting, next.err
		if err != nil {
			return err
		}
		if len(due) == 0 {
			if st.unsettled() > 0 {
				// Record what was delivered, which numbers what committed meanwhile, and look
				// again: the events up to sent must not be pending when the head is judged.
				if err := st.finish(ctx); err != nil {
					return err
				}
				continue
			}
			if !waiting {
				return nil
			}
			// The first pending event waits for its retry: park the events recorded behind
			// it so the sweep stops seeing them as due.
			return d.Store.InTx(ctx, func(tx *store.Tx) error { return tx.HoldQueuedEvents(ctx, providerID) })
		}
		if deadline.IsZero() || time.Now().Before(deadline) {
			ahead = make(chan dueRead, 1)
			go func(into chan<- dueRead, after int64) { into <- d.readDue(ctx, providerID, after) }(ahead, due[len(due)-1].Seq)
		}
		for _, ev := range due {
			if !deadline.IsZero() && time.Now().After(deadline) {
				return nil
			}
			if err := d.keep(ctx, l); err != nil {
				return err
			}
			// Events go to the provider's current URL and secret, not the ones it had when
			// they were recorded.
			if err := provider(); err != nil {
				return err
			}
			att := d.send(ctx, p.WebhookURL, p.WebhookSecret, ev)
			if ctx.Err() != nil {
				// Shutting down: the attempt was cut short by us, not by the receiver, so it
				// is not counted; the event stays pending for the next flush.
				return ctx.Err()
			}
			sent = ev.Seq
			if att.Delivered {
				if err := st.add(ctx, attemptRow(ev.ID, p.WebhookURL, att, d.Clock.Now().UTC())); err != nil {
					return err
				}
				continue
			}
			// A failure is recorded at once, after the deliveries before it: it decides
			// whether the events behind it wait.
			if err := st.finish(ctx); err != nil {
				return err
			}
			stop, err := d.settle(ctx, p, ev, att)
			if err != nil || stop {
				return err
			}
		}
		st.start(ctx)
	}
}

// dueRead is one read of a provider's due events (Store.DueEventsOrHead).
type dueRead struct {
	due     []*subprov.WebhookEvent
	waiting bool // nothing due: a pending event waits for its retry at the head
	err     error
}

// readDue reads the provider's due events numbered after seq after, one batch.
func (d *Deliverer) readDue(ctx context.Context, providerID string, after int64) dueRead {
	due, waiting, err := d.Store.DueEventsOrHead(ctx, providerID, d.Clock.Now(), after, batchSize)
	return dueRead{due, waiting, err}
}

// maxUnsettled bounds the deliveries a flusher has made and not yet recorded, hence what a
// crash can make it send again.
const maxUnsettled = 4 * batchSize

// settler records a flusher's deliveries behind its sends: one transaction at a time, on a
// goroutine of its own, each taking every delivery made since the one before. A slow
// transaction thus records more at once instead of slowing delivery. Only the flusher's
// goroutine calls its methods.
type settler struct {
	d          *Deliverer
	providerID string
	queued     []*subprov.WebhookAttempt // delivered, waiting for the next transaction
	inFlight   int                       // deliveries the running transaction records
	running    chan struct{}             // closed when the running transaction ends; nil: none runs
	// numbered is how many events the last transaction numbered (it numbers the events
	// committed since the one before): the flusher then need not look for more itself.
	numbered   int
	err        error // the last transaction's failure, set before running closes
	recordOnly bool  // the lease is lost: record deliveries, number nothing
}

func (s *settler) busy() bool { return s.running != nil }

// unsettled is how many deliveries are not recorded yet.
func (s *settler) unsettled() int { return len(s.queued) + s.inFlight }

// add queues a delivery. Once maxUnsettled are waiting it waits for the running transaction
// and starts the next.
func (s *settler) add(ctx context.Context, a *subprov.WebhookAttempt) error {
	s.queued = append(s.queued, a)
	if s.unsettled() < maxUnsettled {
		return nil
	}
	if err := s.wait(); err != nil {
		return err
	}
	s.start(ctx)
	return nil
}

// start records the queued deliveries, and numbers what committed meanwhile, unless a
// transaction is already running (the next one takes them).
func (s *settler) start(ctx context.Context) {
	if s.busy() || len(s.queued) == 0 {
		return
	}
	batch, done, recordOnly := s.queued, make(chan struct{}), s.recordOnly
	s.queued, s.inFlight, s.running = nil, len(batch), done
	go func() {
		defer close(done)
		// Not cut short: the deliveries happened and are recorded whatever the flusher's
		// context does meanwhile.
		ctx := context.WithoutCancel(ctx)
		if recordOnly {
			s.numbered, s.err = 0, s.d.settleDelivered(ctx, s.providerID, batch)
			return
		}
		s.numbered, s.err = s.d.settleAndSequence(ctx, s.providerID, batch)
	}()
}

// wait waits for the running transaction, if any, and returns its failure.
func (s *settler) wait() error {
	if !s.busy() {
		return nil
	}
	<-s.running
	s.running, s.inFlight = nil, 0
	err := s.err
	s.err = nil
	return err
}

// finish records every delivery made so far and waits until they are: the running
// transaction, then one for what is queued (even when the running one failed). The flusher
// calls it before it ends and before it records a failed attempt.
func (s *settler) finish(ctx context.Context) error {
	err := s.wait()
	s.start(ctx)
	return errors.Join(err, s.wait())
}

// settleAndSequence records delivered events and numbers the events committed meanwhile, in
// one transaction, and reports how many it numbered.
func (d *Deliverer) settleAndSequence(ctx context.Context, providerID string, delivered []*subprov.WebhookAttempt) (int, error) {
	numbered := 0
	err := d.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.MarkEventsDelivered(ctx, providerID, delivered); err != nil {
			return err
		}
		var err error
		numbered, err = tx.SequenceEvents(ctx, providerID, sequenceLimit)
		return err
	})
	if err != nil {
		// Keep the deliveries even though numbering failed (a lost lease, say): record them on
		// their own, and report the numbering's error.
		if serr := d.settleDelivered(ctx, providerID, delivered); serr != nil {
			return 0, serr
		}
		return 0, fmt.Errorf("settle %d delivered events and number the next: %w", len(delivered), err)
	}
	return numbered, nil
}

// settleDelivered records a run of successful attempts and marks their events delivered, in
// one transaction.
func (d *Deliverer) settleDelivered(ctx context.Context, providerID string, delivered []*subprov.WebhookAttempt) error {
	if len(delivered) == 0 {
		return nil
	}
	err := d.Store.InTx(ctx, func(tx *store.Tx) error { return tx.MarkEventsDelivered(ctx, providerID, delivered) })
	if err != nil {
		return fmt.Errorf("settle %d delivered events: %w", len(delivered), err)
	}
	return nil
}

// retriedFor reports whether the event's retry window (RetryFor) is over. It runs from the
// event's first attempt, not from its creation: an event held for days behind a failing one
// still gets its own retries once its turn comes, so the attempt that failed its first is
// never its last.
func (d *Deliverer) retriedFor(ctx context.Context, ev *subprov.WebhookEvent, now time.Time) (bool, error) {
	if ev.Attempts == 0 {
		return false, nil
	}
	first, ok, err := d.Store.FirstAttemptAt(ctx, ev.ID)
	if err != nil || !ok {
		return false, err
	}
	return now.Sub(first) > RetryFor, nil
}

// settle records the attempt and moves the event on. It reports whether the flush must stop
// because the event will be retried (later events wait behind it).
func (d *Deliverer) settle(ctx context.Context, p *subprov.Provider, ev *subprov.WebhookEvent, att Attempt) (stop bool, err error) {
	now := d.Clock.Now().UTC()
	rec := attemptRow(ev.ID, p.WebhookURL, att, now)
	state := subprov.WebhookDelivered
	var next time.Time
	if !att.Delivered {
		over, err := d.retriedFor(ctx, ev, now)
		if err != nil {
			return true, fmt.Errorf("settle event %s: %w", ev.ID, err)
		}
		if over {
			state = subprov.WebhookFailed
		} else {
			state = subprov.WebhookPending
			next = now.Add(RetryDelay(ev.Attempts + 1))
		}
	}
	err = d.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertWebhookAttempt(ctx, p.ID, rec); err != nil {
			return err
		}
		switch state {
		case subprov.WebhookDelivered:
			return tx.MarkEventDelivered(ctx, p.ID, ev.ID)
		case subprov.WebhookFailed:
			return tx.MarkEventFailed(ctx, p.ID, ev.ID)
		default:
			return tx.MarkEventRetry(ctx, p.ID, ev.ID, next)
		}
	})
	if err != nil {
		return true, fmt.Errorf("settle event %s: %w", ev.ID, err)
	}
	if !att.Delivered {
		attrs := []any{"provider_id", p.ID, "event_id", ev.ID, "type", ev.Type, "seq", ev.Seq,
			"status_code", att.StatusCode, "error", att.Error, "state", state}
		if state == subprov.WebhookPending {
			attrs = append(attrs, "next_attempt_at", next)
		}
		d.log().Warn("webhook delivery failed", attrs...)
		d.Metrics.WebhookFailure(p.ID, state == subprov.WebhookFailed)
	}
	return state == subprov.WebhookPending, nil
}

func attemptRow(eventID, url string, att Attempt, now time.Time) *subprov.WebhookAttempt {
	return &subprov.WebhookAttempt{
		ID:          store.NewID(),
		EventID:     eventID,
		URL:         url,
		StatusCode:  att.StatusCode,
		LatencyMS:   att.LatencyMS,
		Error:       att.Error,
		AttemptedAt: now,
	}
}

// Sweep wakes a flush for every provider with a due production event and no running
// flusher: this process's dispatcher when it runs one, else a webhooks.flush job. The
// scheduler calls it every second and when the dev clock moves; it reads only the events_due
// index, so an idle system pays one empty index range scan.
func (d *Deliverer) Sweep(ctx context.Context) error {
	dispatching := d.disp.Load() != nil
	if d.Jobs == nil && !dispatching {
		return errors.New("sweep webhooks: no job queue")
	}
	ids, err := d.Store.ProvidersWithDueEvents(ctx, d.Clock.Now(), leaseNow(), sweepLimit)
	if err != nil {
		return fmt.Errorf("sweep webhooks: %w", err)
	}
	if dispatching {
		for _, id := range ids {
			d.Wake(id)
		}
		return nil
	}
	var errs []error
	for _, id := range ids {
		if err := d.Jobs.EnqueueNow(ctx, d.Store, jobs.FlushWebhooks{ProviderID: id}); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("sweep webhooks: %w", err)
	}
	return nil
}

// SendOnce delivers ev to url signed with secret, once, with no retry: the sandbox ping, sent
// by the request that recorded it, in its trace. It records the attempt and sets the event
// delivered or failed. A receiver's failure is reported in the Attempt; the error is for the
// store only.
func (d *Deliverer) SendOnce(ctx context.Context, ev *subprov.Event, url, secret string) (*Attempt, error) {
	return d.sendOnce(ctx, &subprov.WebhookEvent{Event: *ev}, url, secret)
}

// sendOnce is SendOnce of an event read with its trace (the sandbox pipeline).
func (d *Deliverer) sendOnce(ctx context.Context, ev *subprov.WebhookEvent, url, secret string) (*Attempt, error) {
	att := d.send(ctx, url, secret, ev)
	// The attempt happened; record it even if the caller has gone away meanwhile.
	wctx := context.WithoutCancel(ctx)
	rec := attemptRow(ev.ID, url, att, d.Clock.Now().UTC())
	err := d.Store.InTx(wctx, func(tx *store.Tx) error {
		if err := tx.InsertWebhookAttempt(wctx, ev.ProviderID, rec); err != nil {
			return err
		}
		if att.Delivered {
			return tx.MarkEventDelivered(wctx, ev.ProviderID, ev.ID)
		}
		return tx.MarkEventFailed(wctx, ev.ProviderID, ev.ID)
	})
	if err != nil {
		return nil, fmt.Errorf("send event %s once: %w", ev.ID, err)
	}
	return &att, nil
}

// post makes one signed POST of the stored payload bytes. It never returns an error: every
// way an attempt can fail is an outcome to record.
func (d *Deliverer) post(ctx context.Context, url, secret, eventID string, payload []byte) Attempt {
	start := time.Now()
	// Checked at every attempt, not only when saved: the URL may have been written by a
	// fixture or an older version, and an invalid one must never be dialed.
	if err := CheckWebhookURL(url); err != nil {
		return Attempt{Error: err.Error()}
	}
	ctx, cancel := context.WithTimeout(ctx, AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(payload))
	if err != nil {
		return Attempt{Error: fmt.Sprintf("build request: %v", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "subprov-webhooks")
	req.Header.Set("X-Webhook-Id", eventID)
	req.Header.Set("X-Webhook-Signature", "sha256="+identity.Sign(secret, payload))
	resp, err := d.client().Do(req)
	latency := int(time.Since(start).Milliseconds())
	if err != nil {
		return Attempt{LatencyMS: latency, Error: attemptError(err)}
	}
	// Drain a little so the connection can be reused; a receiver's body is never kept.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	att := Attempt{StatusCode: resp.StatusCode, LatencyMS: latency}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		att.Delivered = true
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		att.Error = fmt.Sprintf("receiver answered %s; redirects are not followed", resp.Status)
	default:
		att.Error = fmt.Sprintf("receiver answered %s", resp.Status)
	}
	return att
}

// attemptError says why an attempt got no answer. The provider reads it (attempts are listed,
// and the sandbox's webhook-config answers with it), so it names the receiver and what went
// wrong and nothing of this side: a failed lookup names the host, never the resolver asked.
func attemptError(err error) string {
	var dns *net.DNSError
	var op *net.OpError
	switch {
	case errors.As(err, &dns) && dns.IsNotFound:
		return fmt.Sprintf("the receiver's host %s was not found (DNS)", dns.Name)
	case errors.As(err, &dns):
		return fmt.Sprintf("the receiver's host %s could not be resolved (DNS)", dns.Name)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("no answer within %s", AttemptTimeout)
	case errors.As(err, &op):
		// A socket error names this side's address too ("read tcp 10.0.0.5:41234->…"): say
		// what failed with the receiver's address only.
		if op.Addr != nil {
			return fmt.Sprintf("%s %s: %v", op.Op, op.Addr, op.Err)
		}
		return fmt.Sprintf("%s: %v", op.Op, op.Err)
	}
	return err.Error()
}

// SendSandbox is the webhooks.sandbox_send job: the one delivery attempt of a sandbox event,
// to the sandbox provider's receiver as configured now, signed with its secret. Whatever the
// receiver answers is recorded; the job itself never retries.
func (d *Deliverer) SendSandbox(ctx context.Context, a jobs.SendSandboxEvent) error {
	p, err := d.Store.Provider(ctx, a.ProviderID)
	if err != nil {
		return fmt.Errorf("sandbox send: %w", err)
	}
	ev, err := d.Store.Event(ctx, a.ProviderID, a.EventID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil
		}
		return fmt.Errorf("sandbox send: %w", err)
	}
	if ev.DeliveryState != subprov.WebhookPending || p.WebhookURL == "" {
		return nil
	}
	_, err = d.sendOnce(ctx, ev, p.WebhookURL, p.WebhookSecret)
	return err
}
