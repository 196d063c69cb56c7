package operators

import (
	"context"
	"fmt"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/store"
)

// Issuer is the name authenticator apps show for the second factor's key.
const Issuer = "subprov"

// RecoveryCodes is how many single-use recovery codes confirming a second factor gives.
const RecoveryCodes = 10

// Enrolment is a second-factor key being enrolled: its secret (base32, to type into an app)
// and its otpauth:// URL (to show as a QR code).
type Enrolment struct {
	Secret string
	URL    string
}

func alreadyOn() error {
	return subprov.Errorf(subprov.ECONFLICT, "second_factor_on", "The second factor is already on")
}

// StartSecondFactor starts, or before confirmation restarts, the signed-in operator's
// enrolment of a second factor: a new key, stored sealed. While a second factor is on it is
// 409: an admin resets it first.
func (s *Service) StartSecondFactor(ctx context.Context, by *subprov.Operator) (*Enrolment, error) {
	if err := by.Authorize(subprov.PermNone); err != nil {
		return nil, err
	}
	secret, url, err := identity.NewTOTP(Issuer, by.Email)
	if err != nil {
		return nil, err
	}
	sealed, err := s.Auth.Sealer.Seal(auth.SecondFactorPurpose(by.ID), []byte(secret))
	if err != nil {
		return nil, err
	}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		f, err := tx.LockSecondFactor(ctx, by.ID)
		if err != nil {
			return err
		}
		if f.Enabled {
			return alreadyOn()
		}
		return tx.SetSecondFactor(ctx, by.ID, store.SecondFactor{Sealed: sealed})
	})
	if err != nil {
		return nil, err
	}
	return &Enrolment{Secret: secret, URL: url}, nil
}

// ConfirmSecondFactor turns the signed-in operator's second factor on with a current code of
// the key being enrolled, and returns its recovery codes: shown this once, stored hashed, each
// accepted once at the login instead of a code. The code is used: it does not also sign in.
func (s *Service) ConfirmSecondFactor(ctx context.Context, by *subprov.Operator, code string) ([]string, error) {
	if err := by.Authorize(subprov.PermNone); err != nil {
		return nil, err
	}
	if code == "" {
		return nil, subprov.Invalid(map[string]string{"code": "required"})
	}
	codes := make([]string, RecoveryCodes)
	hashes := make([]string, RecoveryCodes)
	for i := range codes {
		codes[i] = identity.NewRecoveryCode()
		hashes[i] = identity.RecoveryCodeHash(codes[i])
	}
	now := s.now()
	_, err := s.edit(ctx, subprov.Everything, by.ID, func(tx *store.Tx, o *subprov.Operator) error {
		f, err := tx.LockSecondFactor(ctx, o.ID)
		if err != nil {
			return err
		}
		switch {
		case f.Enabled:
			return alreadyOn()
		case f.Sealed == "":
			return subprov.Errorf(subprov.ECONFLICT, "no_enrolment", "No second factor is being enrolled: start the enrolment first")
		}
		secret, err := s.Auth.Sealer.Open(auth.SecondFactorPurpose(o.ID), f.Sealed)
		if err != nil {
			return fmt.Errorf("operator %s second factor: %w", o.ID, err)
		}
		step, ok := s.Auth.ValidTOTPCode(string(secret), code, f.LastStep)
		if !ok {
			return subprov.Invalid(map[string]string{"code": "is not a current code of the key being enrolled"})
		}
		f.Enabled, f.LastStep = true, step
		if err := tx.SetSecondFactor(ctx, o.ID, f); err != nil {
			return err
		}
		if err := tx.ReplaceRecoveryCodes(ctx, o.ID, hashes); err != nil {
			return err
		}
		o.TOTPEnabled = true
		o.Version++
		if err := tx.SaveOperator(ctx, o); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, o.ProviderID, "operator.totp_enrolled", "operator", o.ID)
		e.Changes.Set("totp_enabled", false, true)
		return tx.RecordAudit(ctx, e, now)
	})
	if err != nil {
		return nil, err
	}
	return codes, nil
}

// ResetSecondFactor turns an operator's second factor off (an admin's, in its scope), when
// its owner lost the key and its recovery codes: the key and the codes are dropped and the
// operator's tokens end at once, on every process. It may then sign in with its password alone
// and enrol again.
func (s *Service) ResetSecondFactor(ctx context.Context, by *subprov.Operator, id string) (*subprov.Operator, error) {
	if err := by.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	now := s.now()
	return s.edit(ctx, by.Scope(), id, func(tx *store.Tx, o *subprov.Operator) error {
		if err := tx.SetSecondFactor(ctx, o.ID, store.SecondFactor{}); err != nil {
			return err
		}
		if err := tx.ReplaceRecoveryCodes(ctx, o.ID, nil); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, o.ProviderID, "operator.totp_reset", "operator", o.ID)
		e.Changes.Set("totp_enabled", o.TOTPEnabled, false)
		o.TOTPEnabled = false
		o.TokenGeneration++
		o.Version++
		if err := tx.SaveOperator(ctx, o); err != nil {
			return err
		}
		return tx.RecordAudit(ctx, e, now)
	})
}
