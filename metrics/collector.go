package metrics

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/subprov/subprov/store"
)

// Source is what the scrape-time gauges read: the shared database.
type Source interface {
	WebhookBacklogs(ctx context.Context) ([]store.WebhookBacklog, error)
	InvoiceCounts(ctx context.Context) (map[string]int, error)
	UnfinishedBillRuns(ctx context.Context, since time.Time) (map[string]time.Time, error)
	BillingRisks(ctx context.Context) (map[string]int, error)
}

// ScrapeTimeout bounds each read of a scrape: a slow database costs the scrape a gauge, never
// a hung scrape.
const ScrapeTimeout = 2 * time.Second

// unfinishedWindow is how far back an unfinished bill run counts: the runs are daily, so an
// older one that never finished has been followed by newer runs and no longer says anything
// about today's.
const unfinishedWindow = 24 * time.Hour

var (
	backlogDesc = prometheus.NewDesc("subprov_webhook_backlog_events",
		"Production webhook events pending delivery, by provider.", []string{"provider"}, nil)
	oldestDesc = prometheus.NewDesc("subprov_webhook_oldest_pending_age_seconds",
		"Age of the oldest production webhook event pending delivery, by provider.", []string{"provider"}, nil)
	invoicesDesc = prometheus.NewDesc("subprov_invoices",
		"Invoices by status.", []string{"status"}, nil)
	billRunDesc = prometheus.NewDesc("subprov_bill_run_unfinished_age_seconds",
		"Age of the oldest bill run of the last 24 hours that has not finished, by provider (no series when every run finished).", []string{"provider"}, nil)
	billingRiskDesc = prometheus.NewDesc("subprov_billing_risk_ports",
		"Ports whose last reconciliation found a line billed as ACTIVE while the port is not in service, by switch (no series for a switch without any).", []string{"switch"}, nil)
)

// Collector reports the gauges read from the database at scrape time, each with one query;
// a query that fails or times out leaves its gauges out of that scrape (and is logged).
type Collector struct {
	Source Source
	Now    func() time.Time // the service's clock
	Log    *slog.Logger
}

// Describe implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	ch <- backlogDesc
	ch <- oldestDesc
	ch <- invoicesDesc
	ch <- billRunDesc
	ch <- billingRiskDesc
}

// Collect implements prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	now := c.Now()
	c.read("webhook backlogs", func(ctx context.Context) error {
		backlogs, err := c.Source.WebhookBacklogs(ctx)
		for _, b := range backlogs {
			ch <- prometheus.MustNewConstMetric(backlogDesc, prometheus.GaugeValue, float64(b.Pending), b.ProviderID)
			ch <- prometheus.MustNewConstMetric(oldestDesc, prometheus.GaugeValue, max(now.Sub(b.Oldest).Seconds(), 0), b.ProviderID)
		}
		return err
	})
	c.read("invoice counts", func(ctx context.Context) error {
		counts, err := c.Source.InvoiceCounts(ctx)
		for status, n := range counts {
			ch <- prometheus.MustNewConstMetric(invoicesDesc, prometheus.GaugeValue, float64(n), status)
		}
		return err
	})
	c.read("unfinished bill runs", func(ctx context.Context) error {
		runs, err := c.Source.UnfinishedBillRuns(ctx, now.Add(-unfinishedWindow))
		for provider, started := range runs {
			ch <- prometheus.MustNewConstMetric(billRunDesc, prometheus.GaugeValue, max(now.Sub(started).Seconds(), 0), provider)
		}
		return err
	})
	c.read("billing risks", func(ctx context.Context) error {
		risks, err := c.Source.BillingRisks(ctx)
		for sw, n := range risks {
			ch <- prometheus.MustNewConstMetric(billingRiskDesc, prometheus.GaugeValue, float64(n), sw)
		}
		return err
	})
}

func (c *Collector) read(what string, f func(ctx context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), ScrapeTimeout)
	defer cancel()
	if err := f(ctx); err != nil && c.Log != nil {
		c.Log.Warn("metrics: read "+what, "err", err)
	}
}
