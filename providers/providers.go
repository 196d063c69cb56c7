// Package providers is the operations surface's management of providers, their API keys and
// their webhook secrets (docs/operations.md, "Providers, API keys and webhook secrets"). A
// provider's fields follow the rules a fixture row does (subprov.ProviderFields); a webhook
// URL is held, in addition, to the webhook receivers' address rule. Secrets are shown once,
// in the answer that made them, and stored as the service needs them: an API key as its
// hash only, a webhook secret readable (it signs outgoing webhooks) and as a lookup hash.
package providers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/events"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/store"
)

// Service manages providers, their API keys and webhook secrets.
type Service struct {
	Store *store.Store
	Clock subprov.Clock
	// Dev allows a production provider's webhook URL on plain http to a loopback receiver
	// (http://localhost, http://127.0.0.1); outside dev mode a production URL is https.
	Dev bool
}

// Fields are a provider's fields as an operator writes them on creation: a fixture provider
// row without its id, API keys and webhook secret. Nil means not given (the default).
type Fields struct {
	Name                      string                `json:"name"`
	TimeZone                  string                `json:"time_zone"`
	Currency                  string                `json:"currency"`
	TaxRateBP                 int                   `json:"tax_rate_bp"`
	Sandbox                   bool                  `json:"sandbox"`
	WebhookURL                *string               `json:"webhook_url"`
	CheckoutURL               *string               `json:"checkout_url"`
	ServiceProviderDocumentID string                `json:"service_provider_document_id"`
	SMSConfigured             bool                  `json:"sms_configured"`
	BookingWindowDays         *int                  `json:"booking_window_days"`
	SupportGroup              string                `json:"support_group"`
	BrandColor                string                `json:"brand_color"`
	DeviceSecret              string                `json:"device_secret"`
	PaymentProcessor          string                `json:"payment_processor"`
	ProcessorAccountID        string                `json:"processor_account_id"`
	DefaultLanguage           *string               `json:"default_language"`
	AutoRepair                bool                  `json:"auto_repair"`
	OutageCredit              *subprov.OutageCredit `json:"outage_credit"`
}

// Rules are the fields whose rules a fixture row and the operations surface share.
func (f Fields) Rules() subprov.ProviderFields {
	return subprov.ProviderFields{Name: f.Name, TimeZone: f.TimeZone, Currency: f.Currency, TaxRateBP: f.TaxRateBP,
		PaymentProcessor: f.PaymentProcessor, WebhookURL: f.WebhookURL, CheckoutURL: f.CheckoutURL, BookingWindowDays: f.BookingWindowDays,
		DefaultLanguage: f.DefaultLanguage, OutageCredit: f.OutageCredit}
}

// Patch is an edit of a provider: each non-nil field is set. A URL set to "" is removed.
type Patch struct {
	Name                      *string
	TimeZone                  *string
	Currency                  *string
	TaxRateBP                 *int
	WebhookURL                *string
	CheckoutURL               *string
	ServiceProviderDocumentID *string
	SMSConfigured             *bool
	BookingWindowDays         *int
	SupportGroup              *string
	BrandColor                *string
	PaymentProcessor          *string
	ProcessorAccountID        *string
	DefaultLanguage           *string
	AutoRepair                *bool
	// OutageCredit sets the outage credit policy; OutageCreditOff removes it (null on the
	// operations surface) and wins over it.
	OutageCredit    *subprov.OutageCredit
	OutageCreditOff bool
}

// Created is a new provider with the webhook secret generated for it, shown this once.
type Created struct {
	Provider      *subprov.Provider
	WebhookSecret string
}

func notFound() error { return subprov.NotFound("Provider") }

// read returns a provider in op's scope; another provider's is not found, as an unknown id.
func (s *Service) read(ctx context.Context, op *subprov.Operator, id string) (*subprov.Provider, error) {
	p, err := s.Store.Provider(ctx, id)
	return inScope(op, p, err)
}

// readForUpdate is read inside a write transaction, locking the provider's row.
func readForUpdate(ctx context.Context, tx *store.Tx, op *subprov.Operator, id string) (*subprov.Provider, error) {
	p, err := tx.ProviderForUpdate(ctx, id)
	return inScope(op, p, err)
}

// inScope is a provider read for op: not found, as an unknown id, when it is another's.
func inScope(op *subprov.Operator, p *subprov.Provider, err error) (*subprov.Provider, error) {
	if errors.Is(err, subprov.ErrNotFound) {
		return nil, notFound()
	}
	if err != nil {
		return nil, err
	}
	if !op.Scope().Allows(p.ID) {
		return nil, notFound()
	}
	return p, nil
}

// List lists the providers op sees, by name: a provider's operator its own only.
func (s *Service) List(ctx context.Context, op *subprov.Operator, page subprov.Page) ([]*subprov.Provider, string, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, "", err
	}
	ps, err := s.Store.ProvidersPage(ctx, op.ProviderID, page)
	if err != nil {
		return nil, "", err
	}
	ps, next := subprov.Cut(page, ps, store.ProviderKey)
	return ps, next, nil
}

// Get reads one provider.
func (s *Service) Get(ctx context.Context, op *subprov.Operator, id string) (*subprov.Provider, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, err
	}
	return s.read(ctx, op, id)
}

// Create adds a provider with a generated webhook secret. Only a platform-wide admin creates
// providers.
func (s *Service) Create(ctx context.Context, op *subprov.Operator, f Fields) (*Created, error) {
	if err := op.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	if !op.Platform() {
		return nil, subprov.Forbidden()
	}
	problems := problemsOf(f.Rules())
	if f.WebhookURL != nil && problems["webhook_url"] == "" {
		s.checkWebhookURL(ctx, *f.WebhookURL, f.Sandbox, problems)
	}
	if len(problems) > 0 {
		return nil, subprov.Invalid(problems)
	}
	p := &subprov.Provider{ID: store.NewID(), Name: f.Name, TimeZone: f.TimeZone, Currency: f.Currency, TaxRateBP: f.TaxRateBP,
		Sandbox: f.Sandbox, WebhookSecret: NewWebhookSecret(), WebhookURL: subprov.Deref(f.WebhookURL), CheckoutURL: subprov.Deref(f.CheckoutURL),
		ServiceProviderDocumentID: f.ServiceProviderDocumentID, SMSConfigured: f.SMSConfigured, BookingWindowDays: 21,
		SupportGroup: cmp.Or(f.SupportGroup, f.Name+" Support"), BrandColor: f.BrandColor, PaymentProcessor: cmp.Or(f.PaymentProcessor, "builtin"),
		ProcessorAccountID: f.ProcessorAccountID, DefaultLanguage: cmp.Or(subprov.Deref(f.DefaultLanguage), "en"), AutoRepair: f.AutoRepair, OutageCredit: f.OutageCredit, Version: 1}
	if f.BookingWindowDays != nil {
		p.BookingWindowDays = *f.BookingWindowDays
	}
	deviceHash := ""
	if f.DeviceSecret != "" {
		deviceHash = identity.HashSecret(f.DeviceSecret)
	}
	now := s.Clock.Now()
	p.CreatedAt = now.UTC()
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.UpsertProvider(ctx, p, identity.HashSecret(p.WebhookSecret), deviceHash, now); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, p.ID, "provider.created", "provider", p.ID)
		recordFields(e.Changes, &subprov.Provider{}, p)
		e.Changes.Set("sandbox", nil, p.Sandbox)
		e.Changes.SetRedacted("webhook_secret")
		if f.DeviceSecret != "" {
			e.Changes.SetRedacted("device_secret")
		}
		return tx.RecordAudit(ctx, e, now)
	})
	if err != nil {
		return nil, err
	}
	return &Created{Provider: p, WebhookSecret: p.WebhookSecret}, nil
}

// Update edits a provider's fields (not its id, sandbox flag, secrets or keys) under
// If-Match (expected 0: none sent). Its time zone and currency change only while it has no
// invoice: invoices already issued are in them.
func (s *Service) Update(ctx context.Context, op *subprov.Operator, id string, expected int64, patch Patch) (*subprov.Provider, error) {
	if err := op.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	before, err := s.read(ctx, op, id)
	if err != nil {
		return nil, err
	}
	// The receiver's address is judged (a DNS lookup) outside the transaction.
	urlProblems := map[string]string{}
	if patch.WebhookURL != nil && *patch.WebhookURL != "" && *patch.WebhookURL != before.WebhookURL {
		s.checkWebhookURL(ctx, *patch.WebhookURL, before.Sandbox, urlProblems)
	}
	var after *subprov.Provider
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		cur, err := readForUpdate(ctx, tx, op, id)
		if err != nil {
			return err
		}
		if err := subprov.CheckVersion(expected, cur.Version); err != nil {
			return err
		}
		next := *cur
		patch.apply(&next)
		problems := problemsOf(fieldsOf(&next))
		for k, v := range urlProblems {
			if problems[k] == "" {
				problems[k] = v
			}
		}
		if next.TimeZone != cur.TimeZone || next.Currency != cur.Currency {
			invoiced, err := tx.ProviderHasInvoice(ctx, cur.ID)
			if err != nil {
				return err
			}
			if invoiced {
				for field, changed := range map[string]bool{"time_zone": next.TimeZone != cur.TimeZone, "currency": next.Currency != cur.Currency} {
					if changed && problems[field] == "" {
						problems[field] = "cannot change once the provider has invoices"
					}
				}
			}
		}
		if len(problems) > 0 {
			return subprov.Invalid(problems)
		}
		e := subprov.NewAudit(ctx, cur.ID, "provider.updated", "provider", cur.ID)
		recordFields(e.Changes, cur, &next)
		if len(e.Changes) == 0 {
			after = cur // nothing changed: nothing written, the version stays
			return nil
		}
		if err := tx.UpdateProvider(ctx, &next); err != nil {
			return err
		}
		after = &next
		return tx.RecordAudit(ctx, e, s.Clock.Now())
	})
	if err != nil {
		return nil, err
	}
	return after, nil
}

func (p Patch) apply(to *subprov.Provider) {
	setStr := func(dst *string, v *string) {
		if v != nil {
			*dst = *v
		}
	}
	setStr(&to.Name, p.Name)
	setStr(&to.TimeZone, p.TimeZone)
	setStr(&to.Currency, p.Currency)
	setStr(&to.WebhookURL, p.WebhookURL)
	setStr(&to.CheckoutURL, p.CheckoutURL)
	setStr(&to.ServiceProviderDocumentID, p.ServiceProviderDocumentID)
	setStr(&to.SupportGroup, p.SupportGroup)
	setStr(&to.BrandColor, p.BrandColor)
	setStr(&to.PaymentProcessor, p.PaymentProcessor)
	setStr(&to.ProcessorAccountID, p.ProcessorAccountID)
	setStr(&to.DefaultLanguage, p.DefaultLanguage)
	if p.TaxRateBP != nil {
		to.TaxRateBP = *p.TaxRateBP
	}
	if p.SMSConfigured != nil {
		to.SMSConfigured = *p.SMSConfigured
	}
	if p.AutoRepair != nil {
		to.AutoRepair = *p.AutoRepair
	}
	if p.OutageCredit != nil {
		policy := *p.OutageCredit
		to.OutageCredit = &policy
	}
	if p.OutageCreditOff {
		to.OutageCredit = nil
	}
	if p.BookingWindowDays != nil {
		to.BookingWindowDays = *p.BookingWindowDays
	}
}

// fieldsOf is a stored provider's fields under the shared rules. A stored provider always
// names a payment processor; "" would mean the default, so it is checked as given.
func fieldsOf(p *subprov.Provider) subprov.ProviderFields {
	f := subprov.ProviderFields{Name: p.Name, TimeZone: p.TimeZone, Currency: p.Currency, TaxRateBP: p.TaxRateBP,
		PaymentProcessor: p.PaymentProcessor, WebhookURL: &p.WebhookURL, CheckoutURL: &p.CheckoutURL, BookingWindowDays: &p.BookingWindowDays,
		DefaultLanguage: &p.DefaultLanguage, OutageCredit: p.OutageCredit}
	if p.PaymentProcessor == "" {
		f.PaymentProcessor = "-" // an emptied processor is not the default: it is refused
	}
	return f
}

func problemsOf(f subprov.ProviderFields) map[string]string {
	out := map[string]string{}
	for _, fp := range f.Problems() {
		out[fp.Field] = fp.Problem
	}
	return out
}

// checkWebhookURL holds a receiver URL to the webhook receivers' rule (events.CheckWebhookTarget:
// https, or http to a loopback receiver; never a private, link-local or otherwise reserved
// address, by literal or by what the name resolves to). Outside dev mode a production
// provider's receiver is https only.
func (s *Service) checkWebhookURL(ctx context.Context, raw string, sandbox bool, problems map[string]string) {
	if raw == "" {
		return
	}
	if err := events.CheckWebhookTarget(ctx, raw); err != nil {
		problems["webhook_url"] = strings.TrimPrefix(err.Error(), events.ErrBadWebhookURL.Error()+": ")
		return
	}
	if u, err := url.Parse(raw); err == nil && strings.EqualFold(u.Scheme, "http") && !sandbox && !s.Dev {
		problems["webhook_url"] = fmt.Sprintf("%q must use https:// (plain http:// to a loopback receiver only in dev mode)", raw)
	}
}

// recordFields records each changed editable field, as its values: none of them is a secret
// or personal.
func recordFields(c subprov.Changes, before, after *subprov.Provider) {
	c.Set("name", before.Name, after.Name)
	c.Set("time_zone", before.TimeZone, after.TimeZone)
	c.Set("currency", before.Currency, after.Currency)
	c.Set("tax_rate_bp", before.TaxRateBP, after.TaxRateBP)
	c.Set("webhook_url", before.WebhookURL, after.WebhookURL)
	c.Set("checkout_url", before.CheckoutURL, after.CheckoutURL)
	c.Set("service_provider_document_id", before.ServiceProviderDocumentID, after.ServiceProviderDocumentID)
	c.Set("sms_configured", before.SMSConfigured, after.SMSConfigured)
	c.Set("booking_window_days", before.BookingWindowDays, after.BookingWindowDays)
	c.Set("support_group", before.SupportGroup, after.SupportGroup)
	c.Set("brand_color", before.BrandColor, after.BrandColor)
	c.Set("payment_processor", before.PaymentProcessor, after.PaymentProcessor)
	c.Set("processor_account_id", before.ProcessorAccountID, after.ProcessorAccountID)
	c.Set("default_language", before.DefaultLanguage, after.DefaultLanguage)
	c.Set("auto_repair", before.AutoRepair, after.AutoRepair)
	c.Set("outage_credit", outageCreditValue(before.OutageCredit), outageCreditValue(after.OutageCredit))
}

// outageCreditValue is an outage credit policy as the audit log records it: its hours, or
// nil for none (a comparable value, so an unchanged policy is left out).
func outageCreditValue(o *subprov.OutageCredit) any {
	if o == nil {
		return nil
	}
	return o.MinHours
}

// NewWebhookSecret generates a webhook secret: 32 random bytes.
func NewWebhookSecret() string { return "whsec_" + identity.NewToken(32) }
