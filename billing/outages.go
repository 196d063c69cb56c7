package billing

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/monitoring"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// OutageCreditWindow is how far back a run of the outage credit policy looks: every outage
// that started in it is considered. Runs are daily, so an outage is seen by many runs while it
// is in the window; the record of credited outages makes the first one that credits it the
// only one.
const OutageCreditWindow = 35 * 24 * time.Hour

// outageLinesBatch is how many lines a run reads at a time.
const outageLinesBatch = 200

// OutageCreditable reports whether the policy credits outage ev of line sub, given the line's
// status history (oldest first; none for a line whose status never changed since it was
// loaded): the outage is over and lasted longer than the policy's hours, and the line was
// platform-billed and ACTIVE all through it, from its activation to its end. A suspended
// line is not credited for the time it was suspended, nor is a cancelled line at all: its
// cancellation settled its account (a final invoice, or a credit note refunded), and no next
// invoice would take the note.
func OutageCreditable(policy subprov.OutageCredit, sub *subprov.Subscription, history []subprov.StatusChange, ev monitoring.Event) bool {
	if ev.ResolvedAt == nil || sub.BillingOwner != subprov.BillingPlatform || sub.ActivatedAt == nil || sub.Status == subprov.StatusCancelled {
		return false
	}
	start, end := ev.StartedAt, *ev.ResolvedAt
	if float64(end.Sub(start)) <= policy.MinHours*float64(time.Hour) {
		return false
	}
	if start.Before(*sub.ActivatedAt) || (sub.EndedAt != nil && end.After(*sub.EndedAt)) {
		return false
	}
	status := sub.Status
	if len(history) > 0 {
		status = history[0].Status
	}
	for _, c := range history {
		switch {
		case !c.At.After(start):
			status = c.Status // the status the outage started in
		case c.At.Before(end) && c.Status != subprov.StatusActive:
			return false // the line left ACTIVE during the outage
		}
	}
	return status == subprov.StatusActive
}

// OutageNet is the net amount an outage from start to end is credited: for each calendar
// month of the provider's time zone it covers, the monthly price of that month's part
// (price, by the part's first local day, as PlanVersion.PriceOn) x the part's duration / the
// month's length, each part rounded half away from zero once, as every prorated amount is.
// An outage that spans a month's end is thus credited by its part in each month, on one
// credit note.
func OutageNet(start, end time.Time, loc *time.Location, price func(day string) subprov.Money) subprov.Money {
	var net subprov.Money
	for from := start; from.Before(end); {
		local := from.In(loc)
		monthStart := time.Date(local.Year(), local.Month(), 1, 0, 0, 0, 0, loc)
		next := monthStart.AddDate(0, 1, 0)
		to := end
		if next.Before(end) {
			to = next
		}
		net += subprov.Prorate(price(local.Format(time.DateOnly)), int64(to.Sub(from)/time.Second), int64(next.Sub(monthStart)/time.Second))
		from = to
	}
	return net
}

// errOutageCredited rolls back a credit note whose outage another run credited meanwhile.
var errOutageCredited = errors.New("outage credited already")

// SweepOutageCredits queues one run of the outage credit policy per provider that has one and
// local calendar day (again when the dev clock moves into a new day); the marker written with
// the job keeps every replica's sweep from queueing the same day twice. The reads of the
// monitoring happen in the job, never in the sweep.
func (s *Service) SweepOutageCredits(ctx context.Context) error {
	if s.Outages == nil {
		return nil
	}
	providers, err := s.Store.Providers(ctx)
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	for _, p := range providers {
		if p.OutageCredit == nil {
			continue
		}
		day := p.Today(now)
		err := s.onceADay(ctx, "outagecredits:"+p.ID+":"+day, now, func(tx *store.Tx) error {
			return s.Jobs.Enqueue(ctx, tx, jobs.OutageCredits{ProviderID: p.ID, Day: day})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// CreditOutagesJob is the billing.outage_credits job.
func (s *Service) CreditOutagesJob(ctx context.Context, a jobs.OutageCredits) error {
	n, err := s.CreditOutages(ctx, a.ProviderID)
	if n > 0 {
		s.Log.Info("outage credits", "provider_id", a.ProviderID, "day", a.Day, "credit_notes", n)
	}
	return err
}

// CreditOutages applies a provider's outage credit policy over the outages of its lines' ports
// that started in the last OutageCreditWindow: each one the policy credits (OutageCreditable)
// and no credit note names yet gets one, in the holder's language, of OutageNet plus tax; the
// next invoice deducts it as any open credit note. It returns how many it issued. A port whose
// monitoring fails is skipped and the run fails at the end (the job retries; what was credited
// stays credited once).
func (s *Service) CreditOutages(ctx context.Context, providerID string) (int, error) {
	p, err := s.Store.Provider(ctx, providerID)
	if errors.Is(err, subprov.ErrNotFound) {
		return 0, nil
	}
	if err != nil || p.OutageCredit == nil || s.Outages == nil {
		return 0, err
	}
	now := s.Clock.Now()
	since := now.Add(-OutageCreditWindow)
	plans := map[string]*subprov.PlanVersion{}
	issued := 0
	var failed []error
	for after := ""; ; {
		lines, err := s.Store.OutageCreditCandidates(ctx, p.ID, since, after, outageLinesBatch)
		if err != nil || len(lines) == 0 {
			return issued, errors.Join(append(failed, err)...)
		}
		after = lines[len(lines)-1].ID
		ids := make([]string, len(lines))
		for i, sub := range lines {
			ids[i] = sub.ID
		}
		histories, err := s.Store.StatusHistory(ctx, ids)
		if err != nil {
			return issued, err
		}
		for _, sub := range lines {
			n, err := s.creditLineOutages(ctx, p, sub, histories[sub.ID], plans, since, now)
			issued += n
			if err != nil {
				failed = append(failed, fmt.Errorf("outage credits of line %s: %w", sub.ID, err))
			}
		}
	}
}

// creditLineOutages credits the outages of one line the policy credits and no note names yet.
func (s *Service) creditLineOutages(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription, history []subprov.StatusChange,
	plans map[string]*subprov.PlanVersion, since, now time.Time) (int, error) {
	port, err := s.Store.PortByID(ctx, sub.PortID)
	if err != nil {
		return 0, err
	}
	events, err := s.Outages.Events(ctx, switches.Port{Switch: port.Switch, Name: port.Name}, since, now)
	if err != nil {
		return 0, fmt.Errorf("outages of port %s/%s: %w", port.Switch, port.Name, err)
	}
	credited, err := s.Store.CreditedOutages(ctx, sub.ID)
	if err != nil {
		return 0, err
	}
	done := map[string]bool{}
	for _, id := range credited {
		done[id] = true
	}
	issued := 0
	for _, ev := range events {
		if done[ev.ID] || !OutageCreditable(*p.OutageCredit, sub, history, ev) {
			continue
		}
		plan := plans[sub.PlanVersionID]
		if plan == nil {
			if plan, err = s.Store.PlanVersion(ctx, p.ID, sub.PlanVersionID); err != nil {
				return issued, err
			}
			plans[sub.PlanVersionID] = plan
		}
		net := OutageNet(ev.StartedAt, *ev.ResolvedAt, p.Location(), plan.PriceOn)
		if net <= 0 {
			continue
		}
		ok, err := s.creditOutage(ctx, p, sub, ev, net+Tax(net, p.TaxRateBP), now)
		if err != nil {
			return issued, err
		}
		if ok {
			issued++
		}
		done[ev.ID] = true
	}
	return issued, nil
}

// creditOutage issues the credit note of one outage and records the outage as credited, in one
// transaction; false when another run credited it first (nothing is written).
func (s *Service) creditOutage(ctx context.Context, p *subprov.Provider, sub *subprov.Subscription, ev monitoring.Event, amount subprov.Money,
	now time.Time) (bool, error) {
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		lang, err := tx.HolderLanguage(ctx, p.ID, sub.SubscriberID)
		if err != nil {
			return err
		}
		in := locale.Choose(lang, "", p.DefaultLanguage)
		loc := p.Location()
		reason := in.T("billing.outage_credit.reason", in.Moment(ev.StartedAt.In(loc)), in.Moment(ev.ResolvedAt.In(loc)))
		cn, err := s.IssueCredit(ctx, tx, p, sub, amount, reason, "", now)
		if err != nil {
			return err
		}
		fresh, err := tx.RecordCreditedOutage(ctx, store.CreditedOutage{SubscriptionID: sub.ID, OutageID: ev.ID, ProviderID: p.ID,
			CreditNoteID: cn.ID, StartedAt: ev.StartedAt, ResolvedAt: *ev.ResolvedAt}, now)
		if err != nil {
			return err
		}
		if !fresh {
			return errOutageCredited
		}
		return nil
	})
	if errors.Is(err, errOutageCredited) {
		return false, nil
	}
	return err == nil, err
}
