package httpapi_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/promtext"
)

// scrape reads /metrics and returns each series (its name and labels as exposed, labels in
// name order) with its value.
func scrape(t *testing.T, s *apptest.Service) map[string]float64 {
	t.Helper()
	res := s.Do(apptest.Request{Method: "GET", Path: "/metrics"})
	if res.Status != 200 {
		t.Fatalf("metrics: %d", res.Status)
	}
	out, err := promtext.Parse(bytes.NewReader(res.Raw))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// awaitSeries waits until a series of /metrics has the value want (a counter is incremented
// just after the work it counts commits).
func awaitSeries(t *testing.T, s *apptest.Service, series string, want float64) {
	t.Helper()
	var got float64
	apptest.Eventually(t, 15*time.Second, series, func() bool {
		got = scrape(t, s)[series]
		return got == want
	})
}

// TestBusinessMetrics: orders created and refused, a provisioning job that succeeds and one the
// switch refuses, a declined first charge, failed webhook deliveries and the bill run each
// show on /metrics, and the gauges read at scrape time match the database.
func TestBusinessMetrics(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		s.AwaitStartupBillRun(t)
		op := s.Operator()
		h := newHook(t, s, fixture.DemoWebhookSecret)
		h.setAnswer(500) // every delivery fails: the events stay pending

		res := h.post(s, platformOrder("lh_7f3a9c1205", "metrics@example.ca", "cus_demo_declines"))
		if res.Status != 200 {
			t.Fatalf("order: %d %s", res.Status, res.Raw)
		}
		ok := res.JSON["subscription_id"].(string)
		awaitLine(t, s, "provisioned", ok, `workflow_state = 'provisioned'`)

		setFault(s, op, "switch", "port_in_use")
		res = h.post(s, order(map[string]any{"location_hash": "lh_7f3a9c1206", "subscriber": person("metrics-switch@example.ca")}))
		if res.Status != 200 {
			t.Fatalf("order: %d %s", res.Status, res.Raw)
		}
		failed := res.JSON["subscription_id"].(string)
		awaitLine(t, s, "provisioning failed", failed, `workflow_state = 'provisioning_failed'`)
		setFault(s, op, "switch", "ok")

		taken := order(map[string]any{"location_hash": "lh_7f3a9c1205", "subscriber": person("metrics-taken@example.ca")})
		if res := h.post(s, taken); res.Status != 409 {
			t.Fatalf("an order for a place in use: %d %s", res.Status, res.Raw)
		}

		awaitSeries(t, s, `subprov_orders_total{outcome="created",reason="",route="provision"}`, 2)
		awaitSeries(t, s, `subprov_orders_total{outcome="refused",reason="location_in_use",route="provision"}`, 1)
		awaitSeries(t, s, `subprov_provisioning_jobs_total{outcome="provisioned",reason=""}`, 1)
		awaitSeries(t, s, `subprov_provisioning_jobs_total{outcome="failed",reason="port_in_use"}`, 1)
		awaitSeries(t, s, `subprov_provisioning_job_duration_seconds_count{outcome="provisioned"}`, 1)
		awaitSeries(t, s, `subprov_dunning_steps_total{kind="declined",step="1"}`, 1)
		awaitSeries(t, s, `subprov_webhook_delivery_failures_total{next="retry",provider="`+northwind+`"}`, 1)

		m := scrape(t, s)
		switchErrors := 0.0
		for series, v := range m {
			if strings.HasPrefix(series, `subprov_switch_errors_total{reason="port_in_use",switch="`) {
				switchErrors += v
			}
		}
		if switchErrors != 1 {
			t.Errorf("switch errors for port_in_use: %v, want 1", switchErrors)
		}
		if m[`subprov_bill_run_duration_seconds_count{outcome="finished"}`] < 1 {
			t.Error("no finished bill run observed")
		}
		if _, ok := m[`subprov_bill_run_lines_total{provider="`+northwind+`"}`]; !ok {
			t.Error("no bill run lines series for the provider")
		}
		// The gauges are the database's answers at scrape time.
		pending := count(t, s, `SELECT COUNT(*) FROM events WHERE provider_id = ? AND delivery_state = 'pending' AND sandbox = FALSE`, northwind)
		if pending == 0 || m[`subprov_webhook_backlog_events{provider="`+northwind+`"}`] != float64(pending) {
			t.Errorf("webhook backlog %v, want %d", m[`subprov_webhook_backlog_events{provider="`+northwind+`"}`], pending)
		}
		if age, ok := m[`subprov_webhook_oldest_pending_age_seconds{provider="`+northwind+`"}`]; !ok || age < 0 {
			t.Errorf("oldest pending age %v (reported %t)", age, ok)
		}
		open := count(t, s, `SELECT COUNT(*) FROM invoices WHERE status = 'open'`)
		if open == 0 || m[`subprov_invoices{status="open"}`] != float64(open) {
			t.Errorf("open invoices %v, want %d", m[`subprov_invoices{status="open"}`], open)
		}
		for series := range m {
			if strings.HasPrefix(series, "subprov_bill_run_unfinished_age_seconds") {
				t.Errorf("an unfinished bill run reported after the run finished: %s", series)
			}
		}
	})
}
