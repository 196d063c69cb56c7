package metrics_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/subprov/subprov/internal/promtext"
	"github.com/subprov/subprov/metrics"
	"github.com/subprov/subprov/store"
)

// A nil recorder records nothing and does not fail: services built without one.
func TestNilRecorder(t *testing.T) {
	var r *metrics.Recorder
	r.Order("provision", metrics.OrderCreated, "")
	r.ProvisioningJob(metrics.ProvisionFailed, "port_in_use", time.Second)
	r.WebhookFailure("p", true)
	r.BillRun("p", time.Second, 3, false)
	r.DunningStep("declined", 1, false)
	r.SwitchError("sw1", "switch_unavailable")
}

func TestRecorderLabels(t *testing.T) {
	reg := prometheus.NewRegistry()
	r := metrics.New(reg)
	r.Order("", metrics.OrderRefused, "validation_error")
	r.DunningStep("unpaid", 4, true)
	r.WebhookFailure("p", false)
	r.BillRun("p", 2*time.Second, 5, false)
	r.BillRun("p", time.Second, 2, true)
	got := exposed(t, reg)
	for series, want := range map[string]float64{
		`subprov_bill_run_lines_total{provider="p"}`:                                     7,
		`subprov_dunning_steps_total{kind="unpaid",step="cutoff"}`:                       1,
		`subprov_orders_total{outcome="refused",reason="validation_error",route="none"}`: 1,
		`subprov_webhook_delivery_failures_total{next="retry",provider="p"}`:             1,
		`subprov_bill_run_duration_seconds_count{outcome="finished"}`:                    1,
		`subprov_bill_run_duration_seconds_count{outcome="failed"}`:                      1,
		`subprov_bill_run_duration_seconds_sum{outcome="finished"}`:                      2,
	} {
		if v, ok := got[series]; !ok || v != want {
			t.Errorf("%s = %v (exposed %t), want %v", series, v, ok, want)
		}
	}
}

// exposed serves g as /metrics does and returns each series with its value.
func exposed(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	w := httptest.NewRecorder()
	promhttp.HandlerFor(g, promhttp.HandlerOpts{}).ServeHTTP(w, httptest.NewRequest("GET", "/metrics", nil))
	out, err := promtext.Parse(w.Body)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type source struct {
	backlogs  []store.WebhookBacklog
	invoices  map[string]int
	runs      map[string]time.Time
	since     time.Time
	failBills bool
}

func (s *source) WebhookBacklogs(ctx context.Context) ([]store.WebhookBacklog, error) {
	return s.backlogs, nil
}

func (s *source) InvoiceCounts(ctx context.Context) (map[string]int, error) { return s.invoices, nil }

func (s *source) BillingRisks(ctx context.Context) (map[string]int, error) { return nil, nil }

func (s *source) UnfinishedBillRuns(ctx context.Context, since time.Time) (map[string]time.Time, error) {
	s.since = since
	if s.failBills {
		return nil, errors.New("database down")
	}
	return s.runs, nil
}

// The gauges are the source's answers at the clock's time; a read that fails leaves only its
// own gauges out.
func TestCollector(t *testing.T) {
	now := time.Date(2026, 11, 29, 6, 30, 0, 0, time.UTC)
	src := &source{
		backlogs: []store.WebhookBacklog{{ProviderID: "p", Pending: 4, Oldest: now.Add(-11 * time.Minute)}},
		invoices: map[string]int{"open": 2, "paid": 5},
		runs:     map[string]time.Time{"p": now.Add(-6*time.Hour - 30*time.Minute)},
	}
	c := &metrics.Collector{Source: src, Now: func() time.Time { return now }}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	want := map[string]float64{
		`subprov_bill_run_unfinished_age_seconds{provider="p"}`:    23400,
		`subprov_invoices{status="open"}`:                          2,
		`subprov_invoices{status="paid"}`:                          5,
		`subprov_webhook_backlog_events{provider="p"}`:             4,
		`subprov_webhook_oldest_pending_age_seconds{provider="p"}`: 660,
	}
	got := exposed(t, reg)
	if len(got) != len(want) {
		t.Errorf("series %v, want %v", got, want)
	}
	for series, v := range want {
		if got[series] != v {
			t.Errorf("%s = %v, want %v", series, got[series], v)
		}
	}
	if !src.since.Equal(now.Add(-24 * time.Hour)) {
		t.Errorf("bill runs read since %v, want the last 24 hours", src.since)
	}
	src.failBills = true
	got = exposed(t, reg)
	if _, ok := got[`subprov_bill_run_unfinished_age_seconds{provider="p"}`]; ok || len(got) != 4 {
		t.Errorf("series with the bill runs' read failing: %v, want the other four", got)
	}
}
