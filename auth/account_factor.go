package auth

import (
	"context"
	"errors"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// A portal login's second factor: the operators' (secondfactor.go), enrolled and turned off
// by the signed-in person. Turning it on leaves the login's tokens as they are, as an
// operator's enrolment does; turning it off ends every token of the login issued before, the
// caller's included, as an operator's reset and a password change do.

// StartAccountSecondFactor starts, or before confirmation restarts, the signed-in person's
// enrolment; while it is on, 409. Authenticator apps name the key by issuer (the provider).
func (s *Service) StartAccountSecondFactor(ctx context.Context, acc *subprov.AccountLogin, issuer string) (*Enrolment, error) {
	return s.StartSecondFactor(ctx, AccountSecondFactor(acc, issuer))
}

// ConfirmAccountSecondFactor turns the signed-in person's second factor on with a current code
// of the key being enrolled and returns its recovery codes (audited as
// account.totp_enabled).
func (s *Service) ConfirmAccountSecondFactor(ctx context.Context, acc *subprov.AccountLogin, code string) ([]string, error) {
	var codes []string
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		if codes, err = s.ConfirmSecondFactor(ctx, tx, AccountSecondFactor(acc, ""), code); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, acc.ProviderID, "account.totp_enabled", "account", acc.ID)
		e.Changes.Set("totp_enabled", false, true)
		return tx.RecordAudit(ctx, e, s.Clock.Now())
	})
	return codes, err
}

// invalidCode is the 400 of a wrong code where one is asked for.
func invalidCode() error {
	return subprov.Errorf(subprov.EBADREQUEST, "invalid_code", "The code is not a current code of the second factor or an unused recovery code")
}

// TurnOffAccountSecondFactor turns the signed-in person's second factor off with a current
// code of it (or an unused recovery code), checked from client under the limits on guessing
// as a password is, so a stolen access token guesses codes no faster than the login form: a
// wrong code is 400 invalid_code and a failure of the login. Its key and recovery codes are
// dropped and every token of the login ends (audited as account.totp_disabled). 409
// second_factor_off when it is not on.
func (s *Service) TurnOffAccountSecondFactor(ctx context.Context, acc *subprov.AccountLogin, code, client string) error {
	if code == "" {
		return subprov.Invalid(map[string]string{"code": "required"})
	}
	a, err := s.begin(ctx, loginSubscriber, client, acc.Email)
	if err != nil {
		return err
	}
	owner := AccountSecondFactor(acc, "")
	var ok, on bool
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		f, err := tx.LockSecondFactor(ctx, owner.Store)
		if on = err == nil && f.Enabled; !on {
			return err
		}
		if ok, err = s.UseSecondFactor(ctx, tx, owner, code); err != nil || !ok {
			return err
		}
		if err := TurnOffSecondFactor(ctx, tx, owner.Store); err != nil {
			return err
		}
		if err := tx.EndAccountTokens(ctx, acc.ID); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, acc.ProviderID, "account.totp_disabled", "account", acc.ID)
		e.Changes.Set("totp_enabled", true, false)
		return tx.RecordAudit(ctx, e, s.Clock.Now())
	})
	switch {
	case err != nil:
		return errors.Join(err, a.abandon(ctx))
	case !on:
		if err := a.abandon(ctx); err != nil {
			return err
		}
		return subprov.Errorf(subprov.ECONFLICT, "second_factor_off", "The second factor is not on")
	}
	if err := a.end(ctx, ok); err != nil {
		return err
	}
	if !ok {
		return invalidCode()
	}
	return nil
}
