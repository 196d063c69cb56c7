package subprov

import "time"

// Delivery states of a webhook event.
const (
	// WebhookPending waits for delivery: production events are flushed in seq order and retried;
	// sandbox events wait for their one synchronous attempt.
	WebhookPending = "pending"
	// WebhookDelivered: a receiver answered 2xx.
	WebhookDelivered = "delivered"
	// WebhookFailed: production retries ran out (3 days) or the one sandbox attempt failed.
	WebhookFailed = "failed"
	// WebhookNoEndpoint: the provider had no webhook_url when the event was recorded; the event
	// is kept (listable) but never sent.
	WebhookNoEndpoint = "no_endpoint"
)

// WebhookEvent is an event with its delivery bookkeeping, which Event leaves out
// because only the webhook machinery and the sandbox listing care about it.
type WebhookEvent struct {
	Event
	SubscriptionID string // "" when the event concerns no subscription (a ping)
	// Seq is the per-provider order: a production event's delivery order, given to pending
	// events only, when recorded on SQLite (the store's InsertEvent) and by the provider's webhook
	// flusher on PostgreSQL (SequenceEvents), 0 until then; a sandbox event's recording order
	// (NextEventSeq).
	Seq           int64
	DeliveryState string
	Attempts      int
	NextAttemptAt *time.Time // nil unless pending on the production retry schedule
	// Trace is the trace the event was recorded in, which its delivery attempts continue, as
	// the tracing package writes it (tracing.Origin.Text); "" when tracing was off. Internal:
	// the reads that deliver an event fill it, and nothing shows it.
	Trace string
}

// WebhookAttempt is one delivery attempt, kept whatever its outcome.
type WebhookAttempt struct {
	ID          string
	EventID     string
	URL         string
	StatusCode  int // 0: no HTTP answer (refused, timeout); stored as NULL
	LatencyMS   int
	Error       string
	AttemptedAt time.Time
}
