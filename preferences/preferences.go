// Package preferences keeps each portal login's own choices (its language and which optional
// mails it receives) and holds the one rule that decides whether a mail of a given kind goes
// to a person.
package preferences

import (
	"context"
	"slices"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// Languages are the languages a person may choose.
var Languages = []string{"en", "fr"}

// DefaultLanguage is the language of a person who chose none, at a provider that names none.
const DefaultLanguage = "en"

// Notifications are the optional mails a person receives, by what they are about.
type Notifications struct {
	Billing bool
	Service bool
}

// Preferences are a person's choices as they apply: the language chosen ("" for the
// provider's default) and the optional mails.
type Preferences struct {
	Language      string
	Notifications Notifications
}

// Defaults are the choices of a person who made none: the provider's language, every mail.
var Defaults = Preferences{Notifications: Notifications{Billing: true, Service: true}}

// of is the preferences a stored row holds; a person without one has made no choice.
func of(p store.Preferences, found bool) Preferences {
	if !found {
		return Defaults
	}
	return Preferences{Language: p.Language, Notifications: Notifications{Billing: p.Billing, Service: p.Service}}
}

// Language is the language of a person with preferences p at provider: their choice, else
// the provider's default.
func Language(p Preferences, provider *subprov.Provider) string {
	if p.Language != "" {
		return p.Language
	}
	return ProviderLanguage(provider)
}

// ProviderLanguage is the language a provider's subscribers get until they choose one: the
// provider's default_language; a provider that names none is served in English.
func ProviderLanguage(p *subprov.Provider) string {
	if p != nil && slices.Contains(Languages, p.DefaultLanguage) {
		return p.DefaultLanguage
	}
	return DefaultLanguage
}

// PersonLanguage is the language chosen by the person a mail to address to at providerID goes
// to, "" when they chose none (the provider's default then applies), read inside tx. The
// person is the provider's login with that address; an address that is no login (a separate
// billing contact) follows the account holder's choice when the mail is about subscriber
// subscriberID's account ("" when the sender knows no account).
func PersonLanguage(ctx context.Context, tx *store.Tx, providerID, subscriberID, to string) (string, error) {
	lang, login, err := tx.PersonLanguage(ctx, providerID, subprov.NormalizeEmail(to))
	if err != nil || login || subscriberID == "" {
		return lang, err
	}
	return tx.HolderLanguage(ctx, providerID, subscriberID)
}

// MailKind is what a mail is for, which decides whether a person's choices may hold it back.
type MailKind string

// The kinds of mail a subscriber receives. The first group is always sent, whatever the
// person chose: it carries a link or a code the person asked for, an appointment, money owed
// or paid, or the end of their service. The notifications govern the rest.
const (
	MailLink              MailKind = "link"               // set-up, reset, activation, booking and export links; verification codes
	MailBookingInvitation MailKind = "booking_invitation" // an invitation to book an installation
	MailBooking           MailKind = "booking"            // the confirmation of a booked visit
	MailInvoice           MailKind = "invoice"            // an invoice or a copy of one
	MailReceipt           MailKind = "receipt"            // a payment taken
	MailDunning           MailKind = "dunning"            // a payment failed, the next attempt
	MailCutOff            MailKind = "cut_off"            // service suspended for an unpaid invoice
	MailCancellation      MailKind = "cancellation"       // a line cancelled

	MailBillingNotice MailKind = "billing_notice" // billing notifications: where invoices go changed
	MailPlanChange    MailKind = "plan_change"    // service notifications: a plan change confirmed
	MailServiceNotice MailKind = "service_notice" // service notifications: outage, maintenance, service (back) on
	MailMarketing     MailKind = "marketing"      // service notifications: news and offers
)

// Receives reports whether a person with preferences p receives a mail of kind.
func (p Preferences) Receives(kind MailKind) bool {
	switch kind {
	case MailBillingNotice:
		return p.Notifications.Billing
	case MailPlanChange, MailServiceNotice, MailMarketing:
		return p.Notifications.Service
	}
	return true // the mails always sent, and any kind not listed
}

// optional reports whether a person's choices may hold back a mail of kind: whether a person
// who turned every notification off would not receive it.
func optional(kind MailKind) bool { return !(Preferences{}).Receives(kind) }

// Sends reports, inside tx, whether a mail of kind to address to about subscriber
// subscriberID's account goes out. A mail always sent goes out. Otherwise the recipient's own
// choices decide when the address is a login of the account (the holder's or an authorized
// user's); for any other address of the account (a separate billing contact) the holder's
// choices do, as the holder answers for the account.
func Sends(ctx context.Context, tx *store.Tx, subscriberID, to string, kind MailKind) (bool, error) {
	if !optional(kind) {
		return true, nil
	}
	logins, err := tx.AccountPreferences(ctx, subscriberID)
	if err != nil {
		return false, err
	}
	p := Defaults
	if i := slices.IndexFunc(logins, func(l store.LoginPreferences) bool { return strings.EqualFold(l.Email, to) }); i >= 0 {
		p = of(logins[i].Preferences, logins[i].Chosen)
	} else if i := slices.IndexFunc(logins, func(l store.LoginPreferences) bool { return l.Holder }); i >= 0 {
		p = of(logins[i].Preferences, logins[i].Chosen)
	}
	return p.Receives(kind), nil
}

// Service reads and changes the signed-in person's preferences.
type Service struct {
	Store *store.Store
	Clock subprov.Clock
}

// Patch changes only the fields it carries.
type Patch struct {
	Language         *string
	Billing, Service *bool
}

// Problems lists what is wrong with the patch, by field.
func (p Patch) Problems() map[string]string {
	out := map[string]string{}
	if p.Language != nil && !slices.Contains(Languages, *p.Language) {
		out["language"] = "must be one of " + strings.Join(Languages, ", ")
	}
	return out
}

// View is a person's preferences as they apply, the language resolved.
type View struct {
	Language      string
	Notifications Notifications
}

func (s *Service) view(ctx context.Context, acc *subprov.AccountLogin, p Preferences) (*View, error) {
	prov, err := s.Store.Provider(ctx, acc.ProviderID)
	if err != nil {
		return nil, err
	}
	return &View{Language: Language(p, prov), Notifications: p.Notifications}, nil
}

// Of is the signed-in person's preferences: their choices, the defaults for what they left.
func (s *Service) Of(ctx context.Context, acc *subprov.AccountLogin) (*View, error) {
	p, found, err := s.Store.Preferences(ctx, acc.ID)
	if err != nil {
		return nil, err
	}
	return s.view(ctx, acc, of(p, found))
}

// Update changes the fields patch carries of the signed-in person's preferences; a language
// other than those offered is 422 and changes nothing.
func (s *Service) Update(ctx context.Context, acc *subprov.AccountLogin, patch Patch) (*View, error) {
	if p := patch.Problems(); len(p) > 0 {
		return nil, subprov.Invalid(p)
	}
	var p Preferences
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		row, found, err := tx.LockPreferences(ctx, acc.ID)
		if err != nil {
			return err
		}
		p = of(row, found)
		if patch.Language != nil {
			p.Language = *patch.Language
		}
		if patch.Billing != nil {
			p.Notifications.Billing = *patch.Billing
		}
		if patch.Service != nil {
			p.Notifications.Service = *patch.Service
		}
		return tx.PutPreferences(ctx, acc.ID, store.Preferences{Language: p.Language, Billing: p.Notifications.Billing, Service: p.Notifications.Service}, s.Clock.Now())
	})
	if err != nil {
		return nil, err
	}
	return s.view(ctx, acc, p)
}
