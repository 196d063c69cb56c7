package subprov

import "time"

// BillRun is one provider's bill run: the daily job that issues the recurring invoices due.
// A run that fails is retried; FinishedAt stays nil until an attempt completes, Invoices
// counts what every attempt issued and Failed how many attempts ended in an error.
type BillRun struct {
	ID         string
	ProviderID string
	Period     string // YYYY-MM
	StartedAt  time.Time
	FinishedAt *time.Time
	Invoices   int
	Failed     int
}
