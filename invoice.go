package subprov

import "time"

// IssuedInvoice is an invoice the bill run issues, with its lines and when AutoPay next
// charges it (nil: not charged); the store inserts a batch of them at once.
type IssuedInvoice struct {
	Invoice      *Invoice
	Lines        []InvoiceLine
	NextChargeAt *time.Time
}

// Adjustment is money carried between invoices of one line.
type Adjustment struct {
	ID           string
	Kind         string // next_invoice_line, carry
	Description  string
	UnitPrice    Money
	Days         int
	DaysInPeriod int
	Amount       Money // signed
}

// InvoiceLine is one line of an invoice.
type InvoiceLine struct {
	Kind         string // setup_fee, plan, plan_change, credit, final
	Description  string
	UnitPrice    Money
	Days         int // 0: not prorated
	DaysInPeriod int
	Amount       Money
}

// ChargeAttempt is one AutoPay attempt on an invoice.
type ChargeAttempt struct {
	InvoiceID      string
	ProviderID     string
	IdempotencyKey string
	Amount         Money
	Status         string // succeeded, declined
	ProcessorRef   string
	FailureCode    string
	// PayNow: the holder's own payment (portal or pay link), not an AutoPay attempt. Its
	// decline leaves the invoice's AutoPay schedule and dunning as they were.
	PayNow bool
}

// UnpaidInvoice is an open invoice of a line: what it still asks for, and whether an AutoPay
// attempt is under way (claimed and not yet recorded), which charges that whole amount.
type UnpaidInvoice struct {
	ID        string
	Total     Money
	Attempted bool
}

// InvoiceChargeState is what the charge job needs to know about an invoice.
type InvoiceChargeState struct {
	Invoice  *Invoice
	Attempts int  // every attempt, AutoPay's and pay-now's: the next one's idempotency key counts them
	PayNow   int  // the attempts the holder made (pay now); dunning counts the others
	Claimed  bool // an attempt is under way: queued for AutoPay, or a pay-now being charged
}
