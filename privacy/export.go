package privacy

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/store"
)

// ExportLifetime is how long the link to a personal-data export works.
const ExportLifetime = 72 * time.Hour

// TokenExport is the mailed link to a person's export.
var TokenExport = auth.TokenKind{Name: "privacy_export", Lifetime: ExportLifetime, Path: "/portal/privacy/export",
	Subject: "token.privacy_export.subject", Intro: "token.privacy_export.intro"}

// RequestExport mails the signed-in person a single-use link to a file of everything held
// about them. The link's token is stored hashed, as every mailed link's.
func (s *Service) RequestExport(ctx context.Context, acc *subprov.AccountLogin) error {
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		return s.Links.MailToken(ctx, tx, acc.ID, acc.Email, acc.ProviderID, TokenExport)
	})
}

// DeadExportLink is the 410 of an export link that is unknown, used or expired.
func DeadExportLink() error {
	return subprov.Errorf(subprov.EGONE, "invalid_token", "The link is invalid, used or expired")
}

// Export uses an export link and returns the person's export as JSON, read when the link is
// opened: what is held about them at that moment. The link is used in the transaction that
// reads the data, so a failure leaves it usable, and two openings at once get one export.
//
// It holds that person's data and nobody else's. Every login has its record, its preferences,
// the tickets it opened, the mail sent to its address and the audit entries about it. The
// holder's adds the account's record, the holder's contact, its lines, invoices, credit notes
// and the notes staff kept about it: the holder answers for the account and its money. An
// authorized user's adds their own record only: never the holder's contact or the account's
// lines and money.
func (s *Service) Export(ctx context.Context, token string) ([]byte, error) {
	var out []byte
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		t, err := tx.ConsumeToken(ctx, identity.HashSecret(token), []string{TokenExport.Name}, s.Clock.Now())
		if errors.Is(err, subprov.ErrNotFound) {
			return DeadExportLink()
		}
		if err != nil {
			return err
		}
		acc, err := tx.AccountByID(ctx, t.SubjectID)
		if errors.Is(err, subprov.ErrNotFound) {
			return DeadExportLink()
		}
		if err != nil {
			return err
		}
		e, err := s.export(ctx, tx, acc)
		if err != nil {
			return err
		}
		out, err = json.MarshalIndent(e, "", "  ")
		return err
	})
	return out, err
}

// export is the document of one person's data.
type export struct {
	GeneratedAt  time.Time       `json:"generated_at"`
	Person       string          `json:"person"` // holder or authorized_user
	Login        []store.Record  `json:"login"`
	Preferences  []store.Record  `json:"preferences"`
	Account      []store.Record  `json:"account,omitempty"`
	Contact      []store.Record  `json:"contact"`
	Lines        *[]store.Record `json:"lines,omitempty"`
	Invoices     *[]store.Record `json:"invoices,omitempty"`
	CreditNotes  *[]store.Record `json:"credit_notes,omitempty"`
	Notes        *[]store.Record `json:"notes,omitempty"`
	Tickets      []store.Record  `json:"tickets"`
	Mail         []store.Record  `json:"mail"`
	AuditEntries []store.Record  `json:"audit_entries"`
}

func (s *Service) export(ctx context.Context, tx *store.Tx, acc *subprov.AccountLogin) (*export, error) {
	e := &export{GeneratedAt: s.Clock.Now().UTC(), Person: "holder"}
	type read struct {
		into    *[]store.Record
		section store.ExportSection
		args    []any
	}
	// The object the audit entries are about besides the login: the account for the holder,
	// the authorized user's record for them.
	object := acc.SubscriberID
	reads := []read{
		{&e.Login, store.ExportLogin, []any{acc.ID}},
		{&e.Preferences, store.ExportPreferences, []any{acc.ID}},
		{&e.Tickets, store.ExportTickets, []any{acc.ProviderID, acc.Email}},
		{&e.Mail, store.ExportMail, []any{acc.Email}},
	}
	if acc.IsHolder() {
		e.Lines, e.Invoices, e.CreditNotes, e.Notes = &[]store.Record{}, &[]store.Record{}, &[]store.Record{}, &[]store.Record{}
		reads = append(reads,
			read{&e.Account, store.ExportSubscriber, []any{acc.SubscriberID}},
			read{&e.Contact, store.ExportHolderContact, []any{acc.SubscriberID}},
			read{e.Lines, store.ExportLines, []any{acc.SubscriberID}},
			read{e.Invoices, store.ExportInvoices, []any{acc.SubscriberID}},
			read{e.CreditNotes, store.ExportCreditNotes, []any{acc.SubscriberID}},
			read{e.Notes, store.ExportNotes, []any{acc.SubscriberID}})
	} else {
		e.Person, object = "authorized_user", acc.AuthorizedUserID
		reads = append(reads, read{&e.Contact, store.ExportAuthorizedUser, []any{acc.AuthorizedUserID}})
	}
	reads = append(reads, read{&e.AuditEntries, store.ExportAudit, []any{acc.ID, acc.ID, object}})
	for _, r := range reads {
		rows, err := tx.ExportRecords(ctx, r.section, r.args...)
		if err != nil {
			return nil, err
		}
		*r.into = rows
	}
	return e, nil
}
