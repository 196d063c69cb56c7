package portal

import (
	"context"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// Details is GET /me/details.
type Details struct {
	CustomerNumber        string
	ContractContact       subprov.Contact
	InvoiceContact        subprov.Contact
	BillingContactDiffers bool
	User                  subprov.Contact
}

// DetailsOf reads the account's contacts: the holder, the billing contact (the holder unless a
// separate one is set; compared by name, e-mail, phone and company, not by row) and the
// signed-in person.
func (s *Service) DetailsOf(ctx context.Context, acc *subprov.AccountLogin) (*Details, error) {
	if acc.SubscriberID == "" {
		return nil, noSubscriber()
	}
	rec, err := s.Store.SubscriberRecordOf(ctx, acc.ProviderID, acc.SubscriberID)
	if err != nil {
		return nil, err
	}
	d := &Details{CustomerNumber: rec.CustomerNumber, ContractContact: rec.Holder, InvoiceContact: rec.BillingContact(), User: rec.Holder}
	d.BillingContactDiffers = !d.InvoiceContact.SameParty(rec.Holder)
	if !acc.IsHolder() {
		if d.User, err = s.Store.AuthorizedUserContactOf(ctx, acc.AuthorizedUserID); err != nil {
			return nil, err
		}
	}
	return d, nil
}

func noSubscriber() error {
	return &subprov.Error{Code: subprov.ENOTFOUND, Reason: "no_subscriber", Message: "No subscriber record found for this account"}
}

// holder admits the holder of a subscriber record to what is the holder's alone
// (Account.CheckHolder); an authorized user is refused before anything is read.
func holder(acc *subprov.AccountLogin) error {
	if err := acc.CheckHolder(); err != nil {
		return err
	}
	if acc.SubscriberID == "" {
		return noSubscriber()
	}
	return nil
}

// holderAccount is account for the holder's own operations (holder).
func (s *Service) holderAccount(ctx context.Context, acc *subprov.AccountLogin) (*subprov.Provider, error) {
	if err := holder(acc); err != nil {
		return nil, err
	}
	return s.Store.Provider(ctx, acc.ProviderID)
}

// UpdateOwnContact changes the signed-in person's own details (never the e-mail, which is the
// login). For the holder, a billing contact that describes the same person follows the change;
// one the provider split off is left alone.
func (s *Service) UpdateOwnContact(ctx context.Context, acc *subprov.AccountLogin, patch ContactPatch) (subprov.Contact, error) {
	if acc.SubscriberID == "" {
		return subprov.Contact{}, noSubscriber()
	}
	patch.Email = nil
	var out subprov.Contact
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		now := s.Clock.Now()
		if !acc.IsHolder() {
			c, err := tx.AuthorizedUserContact(ctx, acc.AuthorizedUserID)
			if err != nil {
				return err
			}
			out = patch.apply(c)
			return tx.UpdateAuthorizedUserContact(ctx, acc.AuthorizedUserID, out)
		}
		holder, invoice, err := tx.Contacts(ctx, acc.SubscriberID)
		if err != nil {
			return err
		}
		out = patch.apply(holder)
		if err := tx.UpdateHolderContact(ctx, acc.SubscriberID, out, now); err != nil {
			return err
		}
		if invoice != nil && invoice.SameParty(holder) {
			follow := out
			follow.ID = invoice.ID
			return tx.PutInvoiceContact(ctx, acc.SubscriberID, follow, now)
		}
		return nil
	})
	return out, err
}
