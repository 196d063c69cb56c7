// Package portal is the subscriber's self-service: the account's contacts and billing contact
// (and, as they arrive, authorized users, orders and reactivation). Every operation acts on
// the signed-in account's own subscriber record; what changes who may use the account, or what
// it pays with and for, is the holder's alone (Account.CheckHolder).
package portal

import (
	"context"
	"log/slog"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/monitoring"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/preferences"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/tickets"
)

// Mailer queues a message inside the caller's transaction.
type Mailer interface {
	QueueLocalized(ctx context.Context, tx *store.Tx, providerID, to string, m locale.Mail) error
}

// Service runs the portal's rules.
type Service struct {
	Store     *store.Store
	Clock     subprov.Clock
	Ledger    billing.Ledger
	Mail      Mailer
	Tokens    Tokens
	Processor payments.Processor
	// Monitoring reads traffic and outages; nil when the switch driver offers none.
	Monitoring monitoring.Source
	// Provisioning and Billing run the line and money steps of orders and reactivation.
	Provisioning *provisioning.Service
	Billing      *billing.Service
	// Desk opens the tickets the holder's requests raise (paper billing); nil for none.
	Desk tickets.Desk
	Log  *slog.Logger
}

// ContactPatch changes only the fields it carries; an empty string clears a field.
type ContactPatch struct {
	FirstName, LastName, Email, PhoneNumber, Company *string
}

// Apply returns c with the patch's fields set (the agent's contact patch uses it too).
func (p ContactPatch) Apply(c subprov.Contact) subprov.Contact { return p.apply(c) }

func (p ContactPatch) apply(c subprov.Contact) subprov.Contact {
	set := func(dst *string, v *string) {
		if v != nil {
			*dst = strings.TrimSpace(*v)
		}
	}
	set(&c.FirstName, p.FirstName)
	set(&c.LastName, p.LastName)
	set(&c.Email, p.Email)
	set(&c.PhoneNumber, p.PhoneNumber)
	set(&c.Company, p.Company)
	return c
}

// UpdateInvoiceContact sets a separate billing contact, starting from the current one (the
// holder's details when invoices still go to the holder). When the billing e-mail changes,
// the old and the new address are each told. The provider's billing system is updated after
// the change commits; if that fails the change stands and the answer is still a success.
func (s *Service) UpdateInvoiceContact(ctx context.Context, p *subprov.Provider, subscriberID string, patch ContactPatch) (subprov.Contact, error) {
	if patch.Email != nil && *patch.Email != "" && !auth.ValidEmail(strings.TrimSpace(*patch.Email)) {
		return subprov.Contact{}, subprov.Invalid(map[string]string{"email": "not a valid e-mail address"})
	}
	var updated subprov.Contact
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		holder, invoice, err := tx.Contacts(ctx, subscriberID)
		if err != nil {
			return err
		}
		current := holder
		if invoice != nil {
			current = *invoice
		}
		updated = patch.apply(current)
		updated.ID = ""
		if err := tx.PutInvoiceContact(ctx, subscriberID, updated, s.Clock.Now()); err != nil {
			return err
		}
		return s.tellBillingAddressChange(ctx, tx, p, subscriberID, current.Email, updated.Email)
	})
	if err != nil {
		return subprov.Contact{}, err
	}
	s.sync(ctx, p, subscriberID, updated)
	return updated, nil
}

// UseHolderForInvoices removes the separate billing contact; 409 not_separate when invoices
// already go to the holder.
func (s *Service) UseHolderForInvoices(ctx context.Context, p *subprov.Provider, subscriberID string) (subprov.Contact, error) {
	var holder subprov.Contact
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		h, invoice, err := tx.Contacts(ctx, subscriberID)
		if err != nil {
			return err
		}
		if invoice == nil {
			return subprov.Errorf(subprov.ECONFLICT, "not_separate", "Invoices already go to the account holder")
		}
		holder = h
		if err := tx.DeleteInvoiceContact(ctx, subscriberID); err != nil {
			return err
		}
		return s.tellBillingAddressChange(ctx, tx, p, subscriberID, invoice.Email, holder.Email)
	})
	if err != nil {
		return subprov.Contact{}, err
	}
	s.sync(ctx, p, subscriberID, holder)
	return holder, nil
}

// tellBillingAddressChange mails the old and the new billing address when they differ: a
// billing notice, which each recipient's choices may hold back (preferences.Sends).
func (s *Service) tellBillingAddressChange(ctx context.Context, tx *store.Tx, p *subprov.Provider, subscriberID, old, new string) error {
	if strings.EqualFold(old, new) {
		return nil
	}
	for _, m := range []struct {
		to   string
		mail locale.Mail
	}{
		{old, locale.Mail{Subject: locale.Msg("portal.billing_removed.subject"),
			Body: locale.Texts{locale.Msg("mail.hello"), locale.Msg("portal.billing_removed.body", p.Name, p.Name)}}},
		{new, locale.Mail{Subject: locale.Msg("portal.billing_added.subject"),
			Body: locale.Texts{locale.Msg("mail.hello"), locale.Msg("portal.billing_added.body", p.Name)}}},
	} {
		if m.to == "" {
			continue
		}
		send, err := preferences.Sends(ctx, tx, subscriberID, m.to, preferences.MailBillingNotice)
		if err != nil {
			return err
		}
		if !send {
			continue
		}
		m.mail.Account = subscriberID
		if err := s.Mail.QueueLocalized(ctx, tx, p.ID, m.to, m.mail); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) sync(ctx context.Context, p *subprov.Provider, subscriberID string, c subprov.Contact) {
	if err := s.Ledger.SyncContact(ctx, p, subscriberID, c); err != nil {
		s.Log.Warn("billing contact not synced to the billing system; the change stands", "subscriber_id", subscriberID, "err", err)
	}
}
