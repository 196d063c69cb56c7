package billing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

// SweepBillRuns starts each provider's bill run once per local calendar day (and again when
// the dev clock moves into a new day). The run is a durable job; the marker written with it
// keeps every replica's sweep from queueing the same day twice. The last day swept is kept
// too: when the clock has jumped past whole months (or past the billing days of the month it
// left), the run first catches up every month from the last swept day's on, in order, so no
// month's recurring invoices are skipped (billing runs read the dev clock).
func (s *Service) SweepBillRuns(ctx context.Context) error {
	providers, err := s.Store.Providers(ctx)
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	for _, p := range providers {
		today := LocalDay(now, p.Location())
		err := s.onceADay(ctx, "billrun:"+p.ID+":"+today.Format(time.DateOnly), now, func(tx *store.Tx) error {
			last, err := tx.SwapSetting(ctx, "billrun-last:"+p.ID, today.Format(time.DateOnly))
			if err != nil {
				return err
			}
			run := jobs.BillRun{ProviderID: p.ID, Period: PeriodOf(today).String(), RunID: store.NewOrderedID()}
			if from, ok := skippedSince(last, today); ok {
				run.From = from.String()
			}
			return s.Jobs.Enqueue(ctx, tx, run)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// onceADay runs queue in a transaction that writes the day's marker, unless a sweep (of any
// replica) wrote it already: a daily job is queued once per day whatever the number of sweeps.
// The marker is read first, outside a transaction, as the sweeps run every second.
func (s *Service) onceADay(ctx context.Context, marker string, now time.Time, queue func(tx *store.Tx) error) error {
	if _, queued, err := s.Store.Setting(ctx, marker); err != nil || queued {
		return err
	}
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		fresh, err := tx.InsertSettingIfAbsent(ctx, marker, now.UTC().Format(time.RFC3339))
		if err != nil || !fresh {
			return err
		}
		return queue(tx)
	})
}

// skippedSince returns the first month before today's with billing days no sweep saw, given
// the last day swept (YYYY-MM-DD, "" for none): the clock jumped over them. A sweep every day
// skips none: the month left behind at its end had all its billing days swept, so it is not
// run again (a late run of a month would bill a line whose month a final invoice settled and
// that was reactivated since).
func skippedSince(last string, today time.Time) (Period, bool) {
	d, err := time.Parse(time.DateOnly, last)
	if err != nil || !d.Before(today) {
		return Period{}, false
	}
	from := PeriodOf(d)
	if d.Day() >= LastBillingDay {
		from = from.Next() // every billing day of d's month was swept
	}
	return from, from.Before(PeriodOf(today))
}

// BillRun is the billing.run job: issue the period's recurring invoice, on or after its
// billing day, for every platform-billed running line of the provider that does not have one
// yet, after the same for each earlier period from a.From on, oldest first (late runs: every
// billing day of those months has passed). Idempotent per (line, period): a second run, or a
// run that crashed halfway and runs again, adds nothing for lines already invoiced.
func (s *Service) BillRun(ctx context.Context, a jobs.BillRun) error {
	p, err := s.Store.Provider(ctx, a.ProviderID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil
		}
		return err
	}
	period, err := parsePeriod(a.Period)
	if err != nil {
		return err
	}
	from := period
	if a.From != "" {
		if from, err = parsePeriod(a.From); err != nil {
			return err
		}
	}
	runID := a.RunID
	if runID == "" {
		runID = store.NewOrderedID()
	}
	if err := s.Store.StartBillRun(ctx, runID, p.ID, a.Period, s.Clock.Now()); err != nil {
		return err
	}
	start := time.Now()
	issued := 0
	for pp := from; !period.Before(pp) && err == nil; pp = pp.Next() {
		var n int
		n, err = s.billPeriod(ctx, p, pp, runID)
		issued += n
	}
	// The run's end is recorded after the invoices (each batch counted its own), in a
	// transaction of its own: a failure to write it must not fail a run whose invoices stand,
	// so it is logged.
	if rerr := s.Store.EndBillRun(ctx, runID, err != nil, s.Clock.Now()); rerr != nil {
		s.Log.Warn("record bill run", "run_id", runID, "err", rerr)
	}
	s.Metrics.BillRun(p.ID, time.Since(start), issued, err != nil)
	return err
}

// billPeriod issues one period's due recurring invoices for the bill run runID: the store
// narrows the lines by period and billing day, owesRecurring decides. Invoices are written in
// batches, each in a transaction; what a batch only reads (its plans' lines for the month, its
// subscribers' customer numbers) is read before it, so the transaction holds the writer no
// longer than its writes need. It returns how many it issued, also when it stops on an error.
func (s *Service) billPeriod(ctx context.Context, p *subprov.Provider, period Period, runID string) (int, error) {
	loc := p.Location()
	now := s.Clock.Now()
	today := LocalDay(now, loc)
	dayOfMonth := today.Day()
	if PeriodOf(today) != period {
		dayOfMonth = period.Days() // a late run: every billing day of that month has passed
	}
	start := time.Date(period.Year, period.Month, 1, 0, 0, 0, 0, loc)
	month := billingMonth{start: start, end: start.AddDate(0, 1, 0), day: dayOfMonth}
	planLines := map[string][]subprov.InvoiceLine{} // the month's plan lines, by plan version
	after := ""
	issued := 0
	for {
		candidates, last, err := s.Store.RecurringCandidates(ctx, p.ID, period.String(), dayOfMonth, month.end, after, 500)
		if err != nil {
			return issued, err
		}
		if last == "" {
			break
		}
		after = last
		subs := candidates[:0]
		for _, sub := range candidates {
			if owesRecurring(sub, month) {
				subs = append(subs, sub)
			}
		}
		if len(subs) == 0 {
			continue
		}
		subscriberIDs := make([]string, 0, len(subs))
		for _, sub := range subs {
			if sub.SubscriberID != "" {
				subscriberIDs = append(subscriberIDs, sub.SubscriberID)
			}
			if planLines[sub.PlanVersionID] == nil {
				plan, err := s.Store.PlanVersion(ctx, p.ID, sub.PlanVersionID)
				if err != nil {
					return issued, err
				}
				planLines[sub.PlanVersionID] = slices.Clip(monthLines(plan, period)) // each draft appends to a copy
			}
		}
		numbers, err := s.Store.CustomerNumbers(ctx, subscriberIDs)
		if err != nil {
			return issued, err
		}
		var n int // counted once its batch committed
		err = s.Store.InTx(ctx, func(tx *store.Tx) (err error) {
			n, err = s.issueRecurring(ctx, tx, p, runID, subs, planLines, numbers, period, now)
			return err
		})
		if err != nil {
			return issued, err
		}
		issued += n
	}
	if issued > 0 {
		s.Log.Info("bill run", "provider_id", p.ID, "period", period.String(), "invoices", issued)
	}
	return issued, nil
}

// issueRecurring issues the period's recurring invoice of each line of a batch, as issue does
// one by one, with a handful of statements for the whole batch: the lines' adjustments and
// credits read at once, the document numbers allocated at once, invoices, their lines and
// ledger documents written with multi-row INSERTs. planLines are the month's plan lines by
// plan version, numbers the subscribers' customer numbers. The batch is audited as one entry
// of the bill run runID (batchAudit), where issue audits each invoice. It returns how many
// invoices it wrote (a line invoiced meanwhile by another run is skipped, as issue skips it).
func (s *Service) issueRecurring(ctx context.Context, tx *store.Tx, p *subprov.Provider, runID string, subs []*subprov.Subscription,
	planLines map[string][]subprov.InvoiceLine, numbers map[string]string, period Period, now time.Time) (int, error) {
	lineIDs := make([]string, len(subs))
	for i, sub := range subs {
		lineIDs[i] = sub.ID
	}
	adjustments, err := s.Store.OpenAdjustmentsOfLines(ctx, tx, lineIDs)
	if err != nil {
		return 0, err
	}
	credits, err := tx.OpenCreditsOfLines(ctx, lineIDs)
	if err != nil {
		return 0, err
	}
	docNumbers, err := documentNumbers(ctx, tx, p.ID, InvoicePrefix, len(subs))
	if err != nil {
		return 0, err
	}
	drafts := make([]*draft, len(subs))
	batch := make([]subprov.IssuedInvoice, len(subs))
	for i, sub := range subs {
		if _, ok := numbers[sub.SubscriberID]; !ok {
			return 0, fmt.Errorf("subscriber for invoice: %s: %w", sub.SubscriberID, subprov.ErrNotFound)
		}
		d := newDraft(p, sub, "recurring", period, period.Day(sub.BillingDay), planLines[sub.PlanVersionID], adjustments[sub.ID],
			credits[sub.ID], numbers[sub.SubscriberID], now)
		d.inv.Number = docNumbers[i]
		drafts[i], batch[i] = d, subprov.IssuedInvoice{Invoice: d.inv, Lines: d.lines, NextChargeAt: d.chargeAt}
	}
	inserted, err := tx.InsertInvoices(ctx, batch, now)
	if err != nil {
		return 0, err
	}
	var issued []*subprov.Invoice
	for i, d := range drafts {
		if !inserted[d.inv.ID] {
			continue
		}
		if err := d.settle(ctx, tx, now); err != nil {
			return 0, err
		}
		if err := s.holderPays(ctx, tx, subs[i], d, now); err != nil {
			return 0, err
		}
		issued = append(issued, d.inv)
	}
	if len(issued) == 0 {
		return 0, nil
	}
	entry, err := batchAudit(p, runID, period, issued)
	if err != nil {
		return 0, err
	}
	if err := tx.InsertAudits(ctx, []subprov.AuditEntry{entry}, now); err != nil {
		return 0, err
	}
	return len(issued), tx.CountBillRunInvoices(ctx, runID, len(issued))
}

// BatchAuditDetails are the details of the audit entry of a batch of a bill run's invoices
// (bill_run.invoices_issued).
type BatchAuditDetails struct {
	Period   string `json:"period"`       // YYYY-MM
	Invoices int    `json:"invoices"`     // how many the batch issued
	First    string `json:"first_number"` // the first and last of their numbers
	Last     string `json:"last_number"`
	Total    string `json:"total"` // their totals' sum, in Currency
	Currency string `json:"currency"`
}

// batchAudit is the audit entry of a batch of a bill run's invoices: the run (its id, as the
// list of bill runs shows it), and in the entry's details the period, how many invoices, the
// first and last of their numbers, their total and its currency. Each invoice is a row of its
// own already; an entry each would add as many entries to the audit log every month as there
// are platform-billed lines (docs/performance.md, "The bill run").
func batchAudit(p *subprov.Provider, runID string, period Period, invoices []*subprov.Invoice) (subprov.AuditEntry, error) {
	var total subprov.Money
	for _, inv := range invoices {
		total += inv.Total
	}
	details, err := json.Marshal(BatchAuditDetails{Period: period.String(), Invoices: len(invoices), First: invoices[0].Number,
		Last: invoices[len(invoices)-1].Number, Total: total.String(), Currency: p.Currency})
	if err != nil {
		return subprov.AuditEntry{}, fmt.Errorf("audit of a bill run's batch: %w", err)
	}
	return subprov.AuditEntry{ProviderID: p.ID, Actor: subprov.Actor{Type: subprov.ActorSystem, ID: "billing"},
		Action: "bill_run.invoices_issued", ObjectType: "bill_run", ObjectID: runID, Details: string(details)}, nil
}

func parsePeriod(s string) (Period, error) {
	t, err := time.Parse("2006-01", s)
	if err != nil {
		return Period{}, fmt.Errorf("bill run period %q: %w", s, err)
	}
	return PeriodOf(t), nil
}
