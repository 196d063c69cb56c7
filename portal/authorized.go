package portal

import (
	"context"
	"errors"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/store"
)

// AuthorizedUserInput is a new authorized user.
type AuthorizedUserInput struct {
	FirstName, LastName, Email, PhoneNumber string
}

// Tokens mails single-use links (the set-up link of an authorized user).
type Tokens interface {
	MailToken(ctx context.Context, tx *store.Tx, subjectID, to, providerID string, kind auth.TokenKind) error
}

// AuthorizedUsers lists the account's authorized users.
func (s *Service) AuthorizedUsers(ctx context.Context, acc *subprov.AccountLogin) ([]*subprov.AuthorizedUser, error) {
	if acc.SubscriberID == "" {
		return nil, noSubscriber()
	}
	return s.Store.AuthorizedUsers(ctx, acc.SubscriberID)
}

// AddAuthorizedUser creates the person's login and mails a set-up link valid 14 days. At most
// five per account (the subscriber row is locked so concurrent adds cannot pass the limit);
// an e-mail that already has a portal login anywhere is refused.
func (s *Service) AddAuthorizedUser(ctx context.Context, acc *subprov.AccountLogin, in AuthorizedUserInput) (*subprov.AuthorizedUser, error) {
	if err := holder(acc); err != nil {
		return nil, err
	}
	email := subprov.NormalizeEmail(in.Email)
	problems := map[string]string{}
	if strings.TrimSpace(in.FirstName) == "" {
		problems["firstname"] = "required"
	}
	if strings.TrimSpace(in.LastName) == "" {
		problems["lastname"] = "required"
	}
	switch {
	case email == "":
		problems["email"] = "required"
	case !auth.ValidEmail(email):
		problems["email"] = "not a valid e-mail address"
	}
	if len(problems) > 0 {
		return nil, subprov.Invalid(problems)
	}
	var out *subprov.AuthorizedUser
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.LockSubscriber(ctx, acc.SubscriberID); err != nil {
			return err
		}
		existing, err := tx.AuthorizedUsers(ctx, acc.SubscriberID)
		if err != nil {
			return err
		}
		if len(existing) >= subprov.MaxAuthorizedUsers {
			return subprov.Errorf(subprov.ECONFLICT, "limit_reached", "An account has at most %d authorized users", subprov.MaxAuthorizedUsers)
		}
		if taken, err := tx.EmailHasLogin(ctx, email); err != nil {
			return err
		} else if taken {
			return subprov.Errorf(subprov.ECONFLICT, "email_has_portal_account", "This e-mail address already has a portal account")
		}
		now := s.Clock.Now()
		u := &subprov.AuthorizedUser{ID: store.NewID(), SubscriberID: acc.SubscriberID, Contact: subprov.Contact{
			FirstName: strings.TrimSpace(in.FirstName), LastName: strings.TrimSpace(in.LastName), Email: email, PhoneNumber: strings.TrimSpace(in.PhoneNumber)}}
		accountID := store.NewID()
		if err := tx.InsertAuthorizedUser(ctx, acc.ProviderID, u, accountID, now); err != nil {
			if errors.Is(err, subprov.ErrDuplicate) {
				return subprov.Errorf(subprov.ECONFLICT, "email_has_portal_account", "This e-mail address already has a portal account")
			}
			return err
		}
		if err := s.invite(ctx, tx, acc.ProviderID, u.ID, accountID, email); err != nil {
			return err
		}
		out, err = tx.AuthorizedUser(ctx, acc.SubscriberID, u.ID)
		return err
	})
	return out, err
}

func (s *Service) invite(ctx context.Context, tx *store.Tx, providerID, userID, accountID, email string) error {
	if err := s.Tokens.MailToken(ctx, tx, accountID, email, providerID, auth.TokenSetup); err != nil {
		return err
	}
	return tx.MarkInvitationSent(ctx, userID, s.Clock.Now())
}

// ResendInvite mails a fresh set-up link while the person has not chosen a password.
func (s *Service) ResendInvite(ctx context.Context, acc *subprov.AccountLogin, id string) (*subprov.AuthorizedUser, error) {
	if err := holder(acc); err != nil {
		return nil, err
	}
	var out *subprov.AuthorizedUser
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		u, err := tx.AuthorizedUser(ctx, acc.SubscriberID, id)
		if err != nil {
			if errors.Is(err, subprov.ErrNotFound) {
				return subprov.NotFound("Authorized user")
			}
			return err
		}
		if u.Activated {
			return subprov.Errorf(subprov.ECONFLICT, "already_activated", "This person has already set a password")
		}
		if err := s.invite(ctx, tx, acc.ProviderID, u.ID, u.AccountID, u.Contact.Email); err != nil {
			return err
		}
		out, err = tx.AuthorizedUser(ctx, acc.SubscriberID, id)
		return err
	})
	return out, err
}

// RemoveAuthorizedUser deletes the person and their login.
func (s *Service) RemoveAuthorizedUser(ctx context.Context, acc *subprov.AccountLogin, id string) error {
	if err := holder(acc); err != nil {
		return err
	}
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		u, err := tx.AuthorizedUser(ctx, acc.SubscriberID, id)
		if err != nil {
			if errors.Is(err, subprov.ErrNotFound) {
				return subprov.NotFound("Authorized user")
			}
			return err
		}
		return tx.DeleteAuthorizedUser(ctx, u.ID, u.AccountID)
	})
}
