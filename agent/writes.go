package agent

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/portal"
	"github.com/subprov/subprov/store"
)

// AuthorAI is the author of every note the agent writes.
const AuthorAI = "ai_agent"

const maxNoteLen = 10_000

// NoteReceipt is a stored note.
type NoteReceipt struct {
	NoteID     string `json:"note_id"`
	CustomerID string `json:"customer_id"`
	Author     string `json:"author"`
	CreatedAt  string `json:"created_at"`
}

// AddNote appends an internal, operator-visible note attributed to the AI; the customer never
// sees it (verified session required).
func (s *Service) AddNote(ctx context.Context, c Caller, customerID, body string) (*NoteReceipt, error) {
	rec, err := s.customer(ctx, c, customerID, true)
	if err != nil {
		return nil, err
	}
	body = strings.TrimSpace(body)
	switch {
	case body == "":
		return nil, subprov.Invalid(map[string]string{"note": "required"})
	case utf8.RuneCountInString(body) > maxNoteLen:
		return nil, subprov.Invalid(map[string]string{"note": "at most 10000 characters"})
	}
	n := &subprov.CustomerNote{ID: store.NewID(), ProviderID: c.Provider.ID, SubscriberID: rec.ID, Author: AuthorAI, Body: body, CreatedAt: s.Clock.Now()}
	if err := s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.InsertNote(ctx, n) }); err != nil {
		return nil, err
	}
	return &NoteReceipt{NoteID: n.ID, CustomerID: rec.ID, Author: AuthorAI, CreatedAt: n.CreatedAt.UTC().Format(time.RFC3339)}, nil
}

// Contact types of the contact patch.
const (
	ContactContract = "contract"
	ContactInvoice  = "invoice"
)

// ContactPatch is the agent's contact edit: only the fields sent change.
type ContactPatch struct {
	ContactType string  `json:"contact_type,omitempty"`
	FirstName   *string `json:"firstname,omitempty"`
	LastName    *string `json:"lastname,omitempty"`
	Email       *string `json:"email,omitempty"`
	PhoneNumber *string `json:"phonenumber,omitempty"`
	Company     *string `json:"company,omitempty"`
}

// Problems lists every problem of the patch.
func (p ContactPatch) Problems() map[string]string {
	problems := map[string]string{}
	if p.ContactType != "" && p.ContactType != ContactContract && p.ContactType != ContactInvoice {
		problems["contact_type"] = "must be contract or invoice"
	}
	fields := map[string]*string{"firstname": p.FirstName, "lastname": p.LastName, "email": p.Email, "phonenumber": p.PhoneNumber, "company": p.Company}
	sent := 0
	for name, v := range fields {
		if v == nil {
			continue
		}
		sent++
		if utf8.RuneCountInString(*v) > 200 {
			problems[name] = "at most 200 characters"
		}
	}
	if sent == 0 {
		problems["body"] = "send at least one of firstname, lastname, email, phonenumber, company"
	}
	for name, v := range map[string]*string{"firstname": p.FirstName, "lastname": p.LastName, "email": p.Email} {
		if v != nil && strings.TrimSpace(*v) == "" && (name != "email" || p.ContactType != ContactInvoice) {
			problems[name] = "must not be empty"
		}
	}
	if p.Email != nil && strings.TrimSpace(*p.Email) != "" && !auth.ValidEmail(strings.TrimSpace(*p.Email)) {
		problems["email"] = "not a valid e-mail address"
	}
	return problems
}

func (p ContactPatch) portal() portal.ContactPatch {
	return portal.ContactPatch{FirstName: p.FirstName, LastName: p.LastName, Email: p.Email, PhoneNumber: p.PhoneNumber, Company: p.Company}
}

// ContactResult is a contact after a patch.
type ContactResult struct {
	CustomerID  string      `json:"customer_id"`
	ContactType string      `json:"contact_type"`
	Contact     ContactView `json:"contact"`
}

// PatchContact changes the contract contact (default) or the invoice contact at once; no
// confirmation e-mail or rollback exists (verified session required). A contract e-mail
// change moves the portal login too; an e-mail another account uses is refused.
func (s *Service) PatchContact(ctx context.Context, c Caller, customerID string, p ContactPatch) (*ContactResult, error) {
	rec, err := s.customer(ctx, c, customerID, true)
	if err != nil {
		return nil, err
	}
	if problems := p.Problems(); len(problems) > 0 {
		return nil, subprov.Invalid(problems)
	}
	if p.ContactType == "" {
		p.ContactType = ContactContract
	}
	var updated subprov.Contact
	if p.ContactType == ContactInvoice {
		updated, err = s.Portal.UpdateInvoiceContact(ctx, c.Provider, rec.ID, p.portal())
	} else {
		updated, err = s.patchContract(ctx, c, rec.ID, p)
	}
	if err != nil {
		return nil, err
	}
	return &ContactResult{CustomerID: rec.ID, ContactType: p.ContactType, Contact: contactView(updated)}, nil
}

func (s *Service) patchContract(ctx context.Context, c Caller, subscriberID string, p ContactPatch) (subprov.Contact, error) {
	var out subprov.Contact
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		now := s.Clock.Now()
		holder, invoice, err := tx.Contacts(ctx, subscriberID)
		if err != nil {
			return err
		}
		out = p.portal().Apply(holder)
		out.Email = subprov.NormalizeEmail(out.Email)
		if !strings.EqualFold(out.Email, holder.Email) {
			taken, err := tx.ChangeHolderEmail(ctx, c.Provider.ID, subscriberID, out.Email, now)
			if err != nil {
				return err
			}
			if taken {
				return subprov.Invalid(map[string]string{"email": "another account already uses this e-mail address"})
			}
		}
		if err := tx.UpdateHolderContact(ctx, subscriberID, out, now); err != nil {
			return err
		}
		// A billing contact that describes the same person follows the change.
		if invoice != nil && invoice.SameParty(holder) {
			follow := out
			follow.ID = invoice.ID
			return tx.PutInvoiceContact(ctx, subscriberID, follow, now)
		}
		return nil
	})
	return out, err
}

// Actions of the account-link call.
const (
	ActionPasswordReset    = "password_reset"
	ActionResendActivation = "resend_activation"
)

// LinkSent is the answer of the account-link call.
type LinkSent struct {
	CustomerID string `json:"customer_id"`
	Action     string `json:"action"`
	SentTo     string `json:"sent_to"`
	ExpiresIn  int    `json:"expires_in"`
}

// SendAccountLink e-mails the holder a self-service link (verified session required):
// password_reset (the default) is the 15-minute reset link, whether or not the holder has chosen
// a password yet; resend_activation is the 72-hour activation link, only while no password was
// chosen (else 409 already_activated). A holder without a portal login gets one, without a
// password, so either link sets the first password at the portal (reset-confirm or activate);
// when another login already uses the holder's e-mail the call is refused (422 naming email)
// and that login is left alone.
func (s *Service) SendAccountLink(ctx context.Context, c Caller, customerID, action string) (*LinkSent, error) {
	rec, err := s.customer(ctx, c, customerID, true)
	if err != nil {
		return nil, err
	}
	kind := auth.TokenPasswordReset
	switch action {
	case "", ActionPasswordReset:
		action = ActionPasswordReset
	case ActionResendActivation:
		kind = auth.TokenActivation
	default:
		return nil, subprov.Invalid(map[string]string{"action": "must be password_reset or resend_activation"})
	}
	email := subprov.NormalizeEmail(rec.Holder.Email)
	if email == "" {
		return nil, subprov.Invalid(map[string]string{"email": "the customer has no e-mail address on file"})
	}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		acc, err := tx.HolderAccount(ctx, c.Provider.ID, rec.ID)
		if err != nil && !errors.Is(err, subprov.ErrNotFound) {
			return err
		}
		var accountID string
		switch {
		case acc != nil && acc.PasswordSet && kind == auth.TokenActivation:
			return subprov.Errorf(subprov.ECONFLICT, "already_activated", "The customer already chose a password; use password_reset")
		case acc != nil:
			accountID = acc.ID
		default:
			id, taken, err := tx.CreateHolderAccount(ctx, c.Provider.ID, rec.ID, email, s.Clock.Now())
			if err != nil {
				return err
			}
			if taken {
				return subprov.Invalid(map[string]string{"email": "another portal login uses the customer's e-mail address; correct the contract e-mail first"})
			}
			accountID = id
		}
		return s.Auth.MailToken(ctx, tx, accountID, rec.Holder.Email, c.Provider.ID, kind)
	})
	if err != nil {
		return nil, err
	}
	return &LinkSent{CustomerID: rec.ID, Action: action, SentTo: MaskEmail(rec.Holder.Email), ExpiresIn: int(kind.Lifetime.Seconds())}, nil
}

// InvoiceSent is the answer of an invoice resend.
type InvoiceSent struct {
	CustomerID string `json:"customer_id"`
	InvoiceID  string `json:"invoice_id"`
	Number     string `json:"number"`
	SentTo     string `json:"sent_to"`
}

// ResendInvoice e-mails a copy of one of the customer's invoices to the billing contact
// (verified session required). Another customer's invoice is not found.
func (s *Service) ResendInvoice(ctx context.Context, c Caller, customerID, invoiceID string) (*InvoiceSent, error) {
	rec, err := s.customer(ctx, c, customerID, true)
	if err != nil {
		return nil, err
	}
	inv, err := s.Store.Invoice(ctx, c.Provider.ID, strings.TrimSpace(invoiceID))
	if err != nil || inv.SubscriberID != rec.ID {
		if err == nil || errors.Is(err, subprov.ErrNotFound) {
			return nil, subprov.NotFound("Invoice")
		}
		return nil, err
	}
	to := rec.BillingContact().Email
	if to == "" {
		to = rec.Holder.Email
	}
	body := locale.Texts{locale.Msg("mail.hello"), locale.Msg("agent.invoice.body", c.Provider.Name, inv.Number, locale.DateOf(inv.InvoiceDate),
		inv.Period, locale.Amount{Money: inv.Total, Currency: inv.Currency}, locale.Msg("status."+inv.Status))}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		return s.Mail.QueueLocalized(ctx, tx, c.Provider.ID, to, locale.Mail{Subject: locale.Msg("agent.invoice.subject", inv.Number), Body: body, Account: rec.ID})
	})
	if err != nil {
		return nil, err
	}
	return &InvoiceSent{CustomerID: rec.ID, InvoiceID: inv.ID, Number: inv.Number, SentTo: MaskEmail(to)}, nil
}
