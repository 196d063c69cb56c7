package portal

import (
	"context"
	"sort"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/monitoring"
	"github.com/subprov/subprov/switches"
)

// UsageMonth is one month of traffic.
type UsageMonth struct {
	Month      string // YYYY-MM
	DownloadGB float64
	UploadGB   float64
}

// Usage is GET /me/usage.
type Usage struct {
	Status string // ok, no_data, no_subscription
	Months []UsageMonth
}

// maxUsageMonths caps the usage history at five years of months.
const maxUsageMonths = 60

// currentLine is the subscriber's line the usage and status views speak of: the newest that is
// not cancelled, else the newest.
func (s *Service) currentLine(ctx context.Context, acc *subprov.AccountLogin) (*subprov.Subscription, error) {
	subs, err := s.Store.SubscriptionsOfSubscriber(ctx, acc.ProviderID, acc.SubscriberID)
	if err != nil || len(subs) == 0 {
		return nil, err
	}
	for _, sub := range subs {
		if sub.Status != subprov.StatusCancelled {
			return sub, nil
		}
	}
	return subs[0], nil
}

func (s *Service) portOf(ctx context.Context, sub *subprov.Subscription) (*switches.Port, error) {
	if sub.PortID == "" {
		return nil, nil
	}
	p, err := s.Store.PortByID(ctx, sub.PortID)
	if err != nil {
		return nil, err
	}
	return &switches.Port{Switch: p.Switch, Name: p.Name}, nil
}

// UsageOf lists monthly traffic oldest first: from the month the line started to the current
// month (at most 60), or without a start date the last 6 complete months and the current one;
// months are the provider's, in its time zone.
// A line without a switch port has no data (no months); all-zero months are no_data.
func (s *Service) UsageOf(ctx context.Context, acc *subprov.AccountLogin) (*Usage, error) {
	if acc.SubscriberID == "" {
		return nil, noSubscriber()
	}
	sub, err := s.currentLine(ctx, acc)
	if err != nil {
		return nil, err
	}
	if sub == nil {
		return &Usage{Status: "no_subscription", Months: []UsageMonth{}}, nil
	}
	port, err := s.portOf(ctx, sub)
	if err != nil {
		return nil, err
	}
	if port == nil || s.Monitoring == nil {
		return &Usage{Status: "no_data", Months: []UsageMonth{}}, nil
	}
	// A month is the provider's calendar month: at 03:00 UTC on 1 December it
	// is still November in Toronto, and November is still counting.
	p, err := s.Store.Provider(ctx, acc.ProviderID)
	if err != nil {
		return nil, err
	}
	loc := p.Location()
	now := s.Clock.Now().In(loc)
	cur := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, loc)
	first := cur.AddDate(0, -6, 0)
	if t, err := time.Parse(time.DateOnly, sub.StartedAt); err == nil {
		first = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, loc)
	}
	if oldest := cur.AddDate(0, -(maxUsageMonths - 1), 0); first.Before(oldest) {
		first = oldest
	}
	u := &Usage{Status: "no_data", Months: []UsageMonth{}}
	for m := first; !m.After(cur); m = m.AddDate(0, 1, 0) {
		d, up, err := s.Monitoring.MonthlyUsage(ctx, *port, m)
		if err != nil {
			return nil, err
		}
		if d > 0 || up > 0 {
			u.Status = "ok"
		}
		u.Months = append(u.Months, UsageMonth{Month: m.Format("2006-01"), DownloadGB: d, UploadGB: up})
	}
	return u, nil
}

// StatusHistory lists connection events newest first over the last 90 days. It never fails:
// on any problem the list is empty.
func (s *Service) StatusHistory(ctx context.Context, acc *subprov.AccountLogin) []monitoring.Event {
	if acc.SubscriberID == "" || s.Monitoring == nil {
		return nil
	}
	sub, err := s.currentLine(ctx, acc)
	if err != nil || sub == nil {
		return nil
	}
	port, err := s.portOf(ctx, sub)
	if err != nil || port == nil {
		return nil
	}
	now := s.Clock.Now()
	evs, err := s.Monitoring.Events(ctx, *port, now.AddDate(0, 0, -90), now)
	if err != nil {
		s.Log.Warn("status history unavailable", "err", err)
		return nil
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].StartedAt.After(evs[j].StartedAt) })
	return evs
}
