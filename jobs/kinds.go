package jobs

import (
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
)

// DeliverMail sends one outbox message through the configured transport.
type DeliverMail struct {
	MailID string `json:"mail_id"`
}

// Kind names the job in the queue.
func (DeliverMail) Kind() string { return "mail.deliver" }

// SendPasswordReset mails a password-reset link when the e-mail has a portal login. The
// request only enqueues it, whether or not the address has one, so the request does the same
// work either way and its answer and timing tell nothing (docs/security.md).
type SendPasswordReset struct {
	Email string `json:"email"`
	// RequestedAt is the service time of the request: a link issued since then answers it
	// already, so a run repeated after a crash mails no second link.
	RequestedAt time.Time `json:"requested_at"`
}

// Kind names the job in the queue.
func (SendPasswordReset) Kind() string { return "auth.password_reset" }

// ProvisionPort switches on the port of a line on the provision route (VLAN, bandwidth, MAC)
// and records provisioning.completed or, finally, provisioning.failed.
type ProvisionPort struct {
	SubscriptionID string `json:"subscription_id"`
	// Quiet: the line was ordered on the subscriber portal, whose actions emit no events
	// (docs/portal.md, No events), so the job records neither provisioning.completed nor
	// provisioning.failed.
	Quiet bool `json:"quiet,omitempty"`
}

// Kind names the job in the queue.
func (ProvisionPort) Kind() string { return "port.provision" }

// provisionJobs is the namespace of the provisioning jobs' ids (a fixed random UUID).
var provisionJobs = uuid.MustParse("9c4ce4ac-1cfe-4b32-9737-cc221223faf6")

// JobID is the id partners know the job by: the order's job_id and data.job_id of the
// provisioning.completed or provisioning.failed event that reports its outcome. It is a
// name-based UUID (version 5) of the line it provisions, so it needs no storage, every retry
// of the job and every process names it alike, and jobs queued before it existed have it too.
// River's own job id is an internal integer and is not shown.
func (a ProvisionPort) JobID() string {
	return uuid.NewSHA1(provisionJobs, []byte(a.SubscriptionID)).String()
}

// DeprovisionPort resets an ended line's port to the captive-portal VLAN.
type DeprovisionPort struct {
	SubscriptionID string `json:"subscription_id"`
}

// Kind names the job in the queue.
func (DeprovisionPort) Kind() string { return "port.deprovision" }

// ConvergePort writes a switch port to its desired setting (the port_states row), read when
// the job runs. Any number may be queued for one port: one converger at a time holds the
// port, and a job that finds the port already converged changes nothing.
type ConvergePort struct {
	PortID string `json:"port_id"`
	// JobID names a convergence an operator asked for (a reprovision), as its answer and audit
	// entry do; "" for the convergence a line's change queues.
	JobID string `json:"job_id,omitempty"`
}

// Kind names the job in the queue.
func (ConvergePort) Kind() string { return "port.converge" }

// InsertOpts: the handler counts its own attempts (and marks the port unconverged on the
// last), so the queue's limit is the handler's.
func (ConvergePort) InsertOpts() river.InsertOpts {
	return river.InsertOpts{MaxAttempts: ConvergeAttempts}
}

// ConvergeAttempts is how often a port.converge job tries before the port is marked
// unconverged (with the queue's backoff, about four minutes).
const ConvergeAttempts = 8

// FlushWebhooks delivers a provider's due webhook events in order.
type FlushWebhooks struct {
	ProviderID string `json:"provider_id"`
}

// Kind names the job in the queue.
func (FlushWebhooks) Kind() string { return "webhooks.flush" }

// ChargeInvoice makes one AutoPay attempt on an open invoice.
type ChargeInvoice struct {
	InvoiceID string `json:"invoice_id"`
}

// Kind names the job in the queue.
func (ChargeInvoice) Kind() string { return "billing.charge" }

// BillRun issues a provider's due recurring invoices for a period, and first for every
// period from From (YYYY-MM, inclusive) up to it that a dev-clock jump skipped.
type BillRun struct {
	ProviderID string `json:"provider_id"`
	Period     string `json:"period"`
	From       string `json:"from,omitempty"`
	// RunID names the run in the record of bill runs; every attempt of the job adds to it.
	// A job queued without one records each attempt as a run of its own.
	RunID string `json:"run_id,omitempty"`
}

// Kind names the job in the queue.
func (BillRun) Kind() string { return "billing.run" }

// InsertOpts: bill runs have a queue of their own, whose workers a process bounds apart from
// the rest (Options.BillRunsAtOnce).
func (BillRun) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: QueueBillRuns} }

// OutageCredits applies a provider's outage credit policy: every outage of its billed lines
// ports in the last weeks that the policy credits and that no credit note names yet gets one.
// The clock-driven sweep queues one per provider with the policy and local day.
type OutageCredits struct {
	ProviderID string `json:"provider_id"`
	Day        string `json:"day"` // the provider's local day it was queued for, YYYY-MM-DD
}

// Kind names the job in the queue.
func (OutageCredits) Kind() string { return "billing.outage_credits" }

// InsertOpts: the next day's run looks back over the same weeks, so a failed run is retried
// only a few times.
func (OutageCredits) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 5} }

// SetLineService suspends (dunning cut-off) or restores (paid) a line's port and status.
type SetLineService struct {
	SubscriptionID string `json:"subscription_id"`
	On             bool   `json:"on"`
	Reason         string `json:"reason"`
}

// Kind names the job in the queue.
func (SetLineService) Kind() string { return "line.service" }

// RefundCredits refunds a line's open credit notes to its card.
type RefundCredits struct {
	SubscriptionID string `json:"subscription_id"`
}

// Kind names the job in the queue.
func (RefundCredits) Kind() string { return "billing.refund" }

// SendSandboxEvent makes the one delivery attempt of a sandbox event (docs/checkout.md, Sandbox:
// one attempt, 10-second timeout, no retries, no dead-letter queue).
type SendSandboxEvent struct {
	EventID    string `json:"event_id"`
	ProviderID string `json:"provider_id"`
}

// Kind names the job in the queue.
func (SendSandboxEvent) Kind() string { return "webhooks.sandbox_send" }

// InsertOpts: one attempt; a failed sandbox delivery is listed and can be replayed by hand.
func (SendSandboxEvent) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 1} }

// ReconcileSwitch reads every port of a switch that has a desired setting and compares it with
// what the port's lines say: drift is reported (and, where the provider opts in, repaired),
// a billed line on a port out of service is flagged. The clock-driven sweep queues one per
// switch when it falls due.
type ReconcileSwitch struct {
	Switch string `json:"switch"`
	// After, when set, continues a run that stopped before its time ran out: the ports named
	// after it (in name order) are still to be read.
	After string `json:"after,omitempty"`
}

// Kind names the job in the queue.
func (ReconcileSwitch) Kind() string { return "switch.reconcile" }

// InsertOpts: the next sweep queues the next run, so a failed reconciliation is retried only
// a few times.
func (ReconcileSwitch) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 3} }

// SampleSwitch reads the interface counters and link state of every port that lines hold on
// a switch whose driver reads them, and records the traffic since the last reading and the
// link's outages. The clock-driven sweep queues one per switch every counters interval.
type SampleSwitch struct {
	Switch string `json:"switch"`
}

// Kind names the job in the queue.
func (SampleSwitch) Kind() string { return "switch.sample" }

// InsertOpts: one attempt; the next sweep samples again, and the traffic in between is
// counted then.
func (SampleSwitch) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 1} }
