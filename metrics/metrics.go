// Package metrics defines subprov's business metrics, each once, and records them: one method
// per event, which the capabilities call after the event has happened (committed). The
// counters and histograms are per process, as Prometheus expects; the gauges (Collector) are
// read from the shared database at scrape time, so every process reports the same values.
// Nothing here decides anything: the capabilities say what happened.
package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Recorder records the business events of one process. A nil *Recorder records nothing, so a
// service built without one (a test's) needs no stand-in.
type Recorder struct {
	orders           *prometheus.CounterVec
	provisionJobs    *prometheus.CounterVec
	provisionLatency *prometheus.HistogramVec
	webhookFailures  *prometheus.CounterVec
	billRunDuration  *prometheus.HistogramVec
	billRunLines     *prometheus.CounterVec
	dunningSteps     *prometheus.CounterVec
	switchErrors     *prometheus.CounterVec
	drift            *prometheus.CounterVec
	samplings        *prometheus.CounterVec
	breakers         *prometheus.GaugeVec
}

// Outcomes of an order (Order).
const (
	OrderCreated  = "created"
	OrderReplayed = "replayed"
	OrderRefused  = "refused"
)

// Outcomes of a provisioning job's attempt (ProvisioningJob).
const (
	ProvisionSucceeded = "provisioned"
	ProvisionFailed    = "failed"
	ProvisionRetried   = "retried"
)

// New makes the recorder and registers its metrics with reg (nil: not registered, for tests
// that read the recorder directly).
func New(reg prometheus.Registerer) *Recorder {
	r := &Recorder{
		orders: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "subprov_orders_total",
			Help: "Orders placed, by route (provision, install; none when refused before routing), outcome (created, replayed, refused) and refusal reason code."},
			[]string{"route", "outcome", "reason"}),
		provisionJobs: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "subprov_provisioning_jobs_total",
			Help: "Port provisioning job attempts that decided something, by outcome (provisioned, failed, retried) and failure reason."},
			[]string{"outcome", "reason"}),
		provisionLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "subprov_provisioning_job_duration_seconds",
			Help:    "Duration of a port provisioning job's attempt, by outcome.",
			Buckets: []float64{.05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120}}, []string{"outcome"}),
		webhookFailures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "subprov_webhook_delivery_failures_total",
			Help: "Failed webhook delivery attempts of production events, by provider and what follows (retry, or failed when the event gives up)."},
			[]string{"provider", "next"}),
		billRunDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "subprov_bill_run_duration_seconds",
			Help:    "Duration of a bill run's attempt, by outcome (finished, failed).",
			Buckets: []float64{.1, .5, 1, 5, 15, 60, 300, 900, 1800, 3600, 7200}}, []string{"outcome"}),
		billRunLines: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "subprov_bill_run_lines_total",
			Help: "Lines invoiced by bill runs (one recurring invoice each), by provider."}, []string{"provider"}),
		dunningSteps: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "subprov_dunning_steps_total",
			Help: "Dunning steps taken, by kind (declined: an AutoPay attempt declined; unpaid: a reminder of an invoice the holder pays) and step (1 is the first; cutoff when the line is cut off)."},
			[]string{"kind", "step"}),
		switchErrors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "subprov_switch_errors_total",
			Help: "Switch port writes that failed, by switch and reason."}, []string{"switch", "reason"}),
		drift: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "subprov_port_drift_total",
			Help: "Ports a reconciliation found drifted from their lines, by switch and what followed (detected: newly reported; repaired: converged back)."},
			[]string{"switch", "action"}),
		samplings: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "subprov_counter_samplings_total",
			Help: "Samplings of a switch's interface counters, by switch and outcome (ok; failed: the switch or a port did not answer)."},
			[]string{"switch", "outcome"}),
		breakers: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "subprov_switch_breaker_open",
			Help: "1 while this process's circuit breaker for the switch is open (its operations fail at once until the cool-down ends), 0 once it closed again; no series for a switch whose breaker never opened here."},
			[]string{"switch"}),
	}
	if reg != nil {
		reg.MustRegister(r.orders, r.provisionJobs, r.provisionLatency, r.webhookFailures, r.billRunDuration, r.billRunLines,
			r.dunningSteps, r.switchErrors, r.drift, r.samplings, r.breakers)
	}
	return r
}

// Order records an order's outcome: route is the route it took ("" when refused before one was
// chosen), reason the refusal's reason code.
func (r *Recorder) Order(route, outcome, reason string) {
	if r == nil {
		return
	}
	if route == "" {
		route = "none"
	}
	r.orders.WithLabelValues(route, outcome, reason).Inc()
}

// ProvisioningJob records an attempt of the port provisioning job that took d: provisioned,
// failed with reason, or retried.
func (r *Recorder) ProvisioningJob(outcome, reason string, d time.Duration) {
	if r == nil {
		return
	}
	r.provisionJobs.WithLabelValues(outcome, reason).Inc()
	r.provisionLatency.WithLabelValues(outcome).Observe(d.Seconds())
}

// WebhookFailure records a failed delivery attempt of a provider's production event; final
// when the event is given up (failed) rather than retried.
func (r *Recorder) WebhookFailure(providerID string, final bool) {
	if r == nil {
		return
	}
	next := "retry"
	if final {
		next = "failed"
	}
	r.webhookFailures.WithLabelValues(providerID, next).Inc()
}

// BillRun records an attempt of a provider's bill run that took d and invoiced lines lines.
func (r *Recorder) BillRun(providerID string, d time.Duration, lines int, failed bool) {
	if r == nil {
		return
	}
	outcome := "finished"
	if failed {
		outcome = "failed"
	}
	r.billRunDuration.WithLabelValues(outcome).Observe(d.Seconds())
	r.billRunLines.WithLabelValues(providerID).Add(float64(lines))
}

// DunningStep records a dunning step of kind ("declined", "unpaid"): step counts from 1, and
// cutoff says it cut the line off.
func (r *Recorder) DunningStep(kind string, step int, cutoff bool) {
	if r == nil {
		return
	}
	label := strconv.Itoa(step)
	if cutoff {
		label = "cutoff"
	}
	r.dunningSteps.WithLabelValues(kind, label).Inc()
}

// SwitchError records a port write on a switch that failed, with its reason.
func (r *Recorder) SwitchError(switchName, reason string) {
	if r == nil {
		return
	}
	r.switchErrors.WithLabelValues(switchName, reason).Inc()
}

// Drift records a port found drifted on a switch: action is "detected" when the drift is newly
// reported, "repaired" when the port was converged back.
func (r *Recorder) Drift(switchName, action string) {
	if r == nil {
		return
	}
	r.drift.WithLabelValues(switchName, action).Inc()
}

// Sampling records a sampling of a switch's counters: failed when the switch, or any port of
// it, did not answer.
func (r *Recorder) Sampling(switchName string, failed bool) {
	if r == nil {
		return
	}
	outcome := "ok"
	if failed {
		outcome = "failed"
	}
	r.samplings.WithLabelValues(switchName, outcome).Inc()
}

// Breaker records that this process's breaker for the switch opened (open) or closed again.
func (r *Recorder) Breaker(switchName string, open bool) {
	if r == nil {
		return
	}
	v := 0.0
	if open {
		v = 1
	}
	r.breakers.WithLabelValues(switchName).Set(v)
}
