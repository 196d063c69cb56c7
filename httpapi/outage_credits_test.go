package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/monitoring"
	"github.com/subprov/subprov/switches"
)

// recordedOutages is a monitoring source that knows the outages of one port.
type recordedOutages struct {
	port   switches.Port
	mu     sync.Mutex
	events []monitoring.Event
}

func (r *recordedOutages) MonthlyUsage(context.Context, switches.Port, time.Time) (float64, float64, error) {
	return 0, 0, nil
}

func (r *recordedOutages) Link(context.Context, switches.Port, time.Time) (monitoring.Link, error) {
	return monitoring.Link{State: monitoring.LinkUnknown}, nil
}

func (r *recordedOutages) Events(_ context.Context, p switches.Port, since, now time.Time) ([]monitoring.Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p != r.port {
		return nil, nil
	}
	return append([]monitoring.Event(nil), r.events...), nil
}

func (r *recordedOutages) add(id string, start time.Time, hours float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := monitoring.Event{ID: id, StartedAt: start}
	if hours > 0 {
		end := start.Add(time.Duration(hours * float64(time.Hour)))
		ev.ResolvedAt = &end
	}
	r.events = append(r.events, ev)
}

// An operator sets Northwind's outage credit policy (4 hours) through the operations API (bad
// policies are 422 and change nothing); the daily sweep queues one run per provider and day;
// the run credits Marie's line once for each outage of her port longer than the hours while
// the line was billed, also when two runs race, each on a credit note she sees in her portal
// naming the outage's times in her language; her January invoice deducts them; running again
// credits nothing more.
func TestOutageCreditsThroughTheAPI(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		marieInDecember(t, s) // 5 December 2026: her December invoice is issued
		op := s.Operator()
		var port switches.Port
		if err := s.Store.R().QueryRow(ctx, `SELECT p.switch_name, p.port_name FROM ports p JOIN subscriptions s ON s.port_id = p.id WHERE s.id = ?`,
			marieLine).Scan(&port.Switch, &port.Name); err != nil {
			t.Fatal(err)
		}
		path := "/api/v1/providers/" + northwind
		before := s.Do(apptest.Request{Method: "GET", Path: path, Headers: op})
		if before.Status != 200 || before.JSON["outage_credit"] != nil || before.JSON["auto_repair"] != false {
			t.Fatalf("provider before: %d %s", before.Status, before.Raw)
		}
		for _, tt := range []struct {
			name  string
			body  any
			field string
		}{
			{"zero hours", map[string]any{"outage_credit": map[string]any{"min_hours": 0}}, "outage_credit.min_hours"},
			{"negative hours", map[string]any{"outage_credit": map[string]any{"min_hours": -2}}, "outage_credit.min_hours"},
			{"more than a month", map[string]any{"outage_credit": map[string]any{"min_hours": 745}}, "outage_credit.min_hours"},
			{"no hours", map[string]any{"outage_credit": map[string]any{}}, "outage_credit.min_hours"},
			{"hours as text", map[string]any{"outage_credit": map[string]any{"min_hours": "4"}}, "outage_credit.min_hours"},
			{"an unknown field", map[string]any{"outage_credit": map[string]any{"min_hours": 4, "max_hours": 9}}, "outage_credit.max_hours"},
			{"not an object", map[string]any{"outage_credit": 4}, "outage_credit"},
		} {
			res := s.Do(apptest.Request{Method: "PATCH", Path: path, Headers: op, Body: tt.body})
			if res.Status != 422 || !strings.Contains(string(res.Raw), `"loc":["body","`+strings.ReplaceAll(tt.field, ".", `","`)+`"]`) {
				t.Errorf("%s: %d %s, want 422 naming %s", tt.name, res.Status, res.Raw, tt.field)
			}
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: path, Headers: op}); res.JSON["version"] != before.JSON["version"] || res.JSON["outage_credit"] != nil {
			t.Fatalf("a refused policy changed the provider: %s", res.Raw)
		}
		res := s.Do(apptest.Request{Method: "PATCH", Path: path, Headers: op, Body: map[string]any{"outage_credit": map[string]any{"min_hours": 4}}})
		if policy, _ := res.JSON["outage_credit"].(map[string]any); res.Status != 200 || policy["min_hours"] != 4.0 {
			t.Fatalf("set the policy: %d %s", res.Status, res.Raw)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM audit_log WHERE action = 'provider.updated' AND subject_id = ? AND changes LIKE '%"outage_credit":[null,4]%'`, northwind); n != 1 {
			t.Errorf("%d audit entries of the policy set, want 1", n)
		}

		for range 3 {
			if err := s.Billing.SweepOutageCredits(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if n := count(t, s, `SELECT COUNT(*) FROM river_job WHERE kind = 'billing.outage_credits'`); n != 1 {
			t.Errorf("%d outage credit runs queued for one provider and day, want 1", n)
		}

		toronto := northwindZone(t, s)
		outages := &recordedOutages{port: port}
		outages.add("o-long", time.Date(2026, 11, 20, 10, 0, 0, 0, toronto), 5)      // credited: 5 h of November
		outages.add("o-short", time.Date(2026, 11, 22, 9, 0, 0, 0, toronto), 3.5)    // not longer than 4 hours
		outages.add("o-month-end", time.Date(2026, 11, 30, 22, 0, 0, 0, toronto), 6) // credited: 2 h of November, 4 h of December
		outages.add("o-ongoing", time.Date(2026, 12, 5, 8, 0, 0, 0, toronto), 0)     // not over yet
		outages.add("o-before", time.Date(2025, 12, 20, 8, 0, 0, 0, toronto), 12)    // before the line was activated
		credit := func() (int, error) {
			svc := *s.Billing // the running service, reading the recorded outages
			svc.Outages = outages
			return svc.CreditOutages(ctx, northwind)
		}
		run := func() int {
			t.Helper()
			n, err := credit()
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		// Two runs at once (two processes) credit each outage once between them.
		var wg sync.WaitGroup
		issued := make([]int, 2)
		for i := range issued {
			wg.Add(1)
			go func() {
				defer wg.Done()
				n, err := credit()
				if err != nil {
					t.Error(err)
				}
				issued[i] = n
			}()
		}
		wg.Wait()
		if issued[0]+issued[1] != 2 {
			t.Fatalf("racing runs issued %v credit notes, want 2 between them", issued)
		}
		// 60.00 a month. 5 h of November in Toronto (30 days and an hour): 6000 x 18,000 /
		// 2,595,600 = 41.61 -> 0.42, tax 13% 0.05: 0.47. Over the month's end: 2 h of November
		// 0.17 + 4 h of December (6000 x 14,400 / 2,678,400 = 32.26) 0.32 = 0.49, tax 0.06: 0.55.
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		notes := func() map[string]float64 {
			t.Helper()
			res := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me/credit-notes", Headers: marie})
			if res.Status != 200 {
				t.Fatalf("credit notes: %d %s", res.Status, res.Raw)
			}
			out := map[string]float64{}
			for _, cn := range res.JSON["credit_notes"].([]any) {
				m := cn.(map[string]any)
				out[m["reason"].(string)] = m["amount"].(float64)
			}
			return out
		}
		want := map[string]float64{
			"Outage credit: no service from November 20, 2026 at 10:00 EST to November 20, 2026 at 15:00 EST": 0.47,
			"Outage credit: no service from November 30, 2026 at 22:00 EST to December 1, 2026 at 04:00 EST":  0.55,
		}
		if got := notes(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("Marie's credit notes %v, want %v", got, want)
		}
		if n := run(); n != 0 {
			t.Fatalf("a second run credited %d more", n)
		}

		// In French for a holder who reads French (the provider's default language here).
		if res := s.Do(apptest.Request{Method: "PATCH", Path: path, Headers: op, Body: map[string]any{"default_language": "fr"}}); res.Status != 200 {
			t.Fatalf("default language: %d %s", res.Status, res.Raw)
		}
		outages.add("o-december", time.Date(2026, 12, 2, 1, 30, 0, 0, toronto), 4.5)
		if n := run(); n != 1 {
			t.Fatalf("a new outage: %d credit notes, want 1", n)
		}
		// 4.5 h of December: 6000 x 16,200 / 2,678,400 = 36.29 -> 0.36, tax 0.05: 0.41.
		want["Crédit pour panne : aucun service du 2 décembre 2026 à 1 h 30 EST au 2 décembre 2026 à 6 h 00 EST"] = 0.41
		if got := notes(); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("Marie's credit notes %v, want %v", got, want)
		}

		// Her January invoice deducts the three notes: 60.00 + 7.80 tax - 1.43 = 66.37.
		s.DevClock.Set(time.Date(2027, 1, 1, 15, 0, 0, 0, time.UTC))
		var total int64
		apptest.Eventually(t, 15*time.Second, "Marie's January invoice", func() bool {
			return s.Store.R().QueryRow(ctx, `SELECT total_minor FROM invoices WHERE subscription_id = ? AND period = '2027-01'`, marieLine).Scan(&total) == nil
		})
		if total != 6000+780-143 {
			t.Errorf("January invoice total %d, want %d", total, 6000+780-143)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM credit_notes n JOIN outage_credits o ON o.credit_note_id = n.id
			WHERE n.subscription_id = ? AND n.state = 'applied' AND n.remaining_minor = 0`, marieLine); n != 3 {
			t.Errorf("%d outage credit notes applied, want 3", n)
		}
		if n := run(); n != 0 {
			t.Errorf("a run after the invoice credited %d more", n)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM outage_credits WHERE subscription_id = ?`, marieLine); n != 3 {
			t.Errorf("%d outages recorded as credited, want 3", n)
		}
	})
}

// northwindZone is the demo provider's time zone.
func northwindZone(t *testing.T, s *apptest.Service) *time.Location {
	t.Helper()
	p, err := s.Store.Provider(context.Background(), northwind)
	if err != nil {
		t.Fatal(err)
	}
	return p.Location()
}
