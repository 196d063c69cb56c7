package auth

import (
	"context"
	"fmt"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/store"
)

// The second factor (RFC 6238 codes from an authenticator app, and single-use recovery codes)
// works the same for an operator and for a portal login; these are its steps, which each
// owner's service wraps with what it adds (an operator's audit entry and version, a login's
// tokens).

// RecoveryCodes is how many single-use recovery codes confirming a second factor gives.
const RecoveryCodes = 10

// SecondFactorOwner is whose second factor a step acts on: where it is stored, what its key is
// sealed for (it opens for that row only), and how an authenticator app names it.
type SecondFactorOwner struct {
	Store   store.FactorOwner
	Purpose string
	Issuer  string
	Account string
}

// OperatorIssuer is the name authenticator apps show for an operator's key.
const OperatorIssuer = "subprov"

// OperatorSecondFactor is operator o's second factor.
func OperatorSecondFactor(o *subprov.Operator) SecondFactorOwner {
	return SecondFactorOwner{Store: store.OperatorFactor(o.ID), Purpose: SecondFactorPurpose(o.ID), Issuer: OperatorIssuer, Account: o.Email}
}

// AccountSecondFactor is portal login acc's second factor; apps name it by the provider
// (issuer) the login belongs to.
func AccountSecondFactor(acc *subprov.AccountLogin, issuer string) SecondFactorOwner {
	return SecondFactorOwner{Store: store.AccountFactor(acc.ID), Purpose: "account totp:" + acc.ID, Issuer: issuer, Account: acc.Email}
}

// Enrolment is a second-factor key being enrolled: its secret (base32, to type into an app)
// and its otpauth:// URL (to show as a QR code).
type Enrolment struct {
	Secret string
	URL    string
}

// SecondFactorOn is the 409 of enrolling while a second factor is on.
func SecondFactorOn() error {
	return subprov.Errorf(subprov.ECONFLICT, "second_factor_on", "The second factor is already on")
}

// StartSecondFactor starts, or before confirmation restarts, owner's enrolment: a new key,
// stored sealed. While a second factor is on it is 409 (SecondFactorOn).
func (s *Service) StartSecondFactor(ctx context.Context, owner SecondFactorOwner) (*Enrolment, error) {
	secret, url, err := identity.NewTOTP(owner.Issuer, owner.Account)
	if err != nil {
		return nil, err
	}
	sealed, err := s.Sealer.Seal(owner.Purpose, []byte(secret))
	if err != nil {
		return nil, err
	}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		f, err := tx.LockSecondFactor(ctx, owner.Store)
		if err != nil {
			return err
		}
		if f.Enabled {
			return SecondFactorOn()
		}
		return tx.SetSecondFactor(ctx, owner.Store, store.SecondFactor{Sealed: sealed})
	})
	if err != nil {
		return nil, err
	}
	return &Enrolment{Secret: secret, URL: url}, nil
}

// ConfirmSecondFactor turns owner's second factor on in tx with a current code of the key
// being enrolled, and returns its recovery codes: shown this once, stored hashed, each
// accepted once instead of a code. The code is used: it does not also sign in. A wrong code is
// 422 naming code.
func (s *Service) ConfirmSecondFactor(ctx context.Context, tx *store.Tx, owner SecondFactorOwner, code string) ([]string, error) {
	if code == "" {
		return nil, subprov.Invalid(map[string]string{"code": "required"})
	}
	f, err := tx.LockSecondFactor(ctx, owner.Store)
	if err != nil {
		return nil, err
	}
	switch {
	case f.Enabled:
		return nil, SecondFactorOn()
	case f.Sealed == "":
		return nil, subprov.Errorf(subprov.ECONFLICT, "no_enrolment", "No second factor is being enrolled: start the enrolment first")
	}
	secret, err := s.Sealer.Open(owner.Purpose, f.Sealed)
	if err != nil {
		return nil, fmt.Errorf("%s second factor: %w", owner.Store, err)
	}
	step, ok := identity.MatchTOTP(string(secret), code, s.Clock.Now(), f.LastStep)
	if !ok {
		return nil, subprov.Invalid(map[string]string{"code": "is not a current code of the key being enrolled"})
	}
	f.Enabled, f.LastStep = true, step
	if err := tx.SetSecondFactor(ctx, owner.Store, f); err != nil {
		return nil, err
	}
	codes := make([]string, RecoveryCodes)
	hashes := make([]string, RecoveryCodes)
	for i := range codes {
		codes[i] = identity.NewRecoveryCode()
		hashes[i] = identity.RecoveryCodeHash(codes[i])
	}
	if err := tx.ReplaceRecoveryCodes(ctx, owner.Store, hashes); err != nil {
		return nil, err
	}
	return codes, nil
}

// TurnOffSecondFactor drops owner's key and recovery codes in tx.
func TurnOffSecondFactor(ctx context.Context, tx *store.Tx, owner store.FactorOwner) error {
	if err := tx.SetSecondFactor(ctx, owner, store.SecondFactor{}); err != nil {
		return err
	}
	return tx.ReplaceRecoveryCodes(ctx, owner, nil)
}

// UseSecondFactor checks code against owner's second factor in tx, on the service's clock: a
// code of its key within one step either way, later than the last step accepted (each code is
// accepted once), or one of its unused recovery codes (used up by this). What it accepts is
// used in tx, so two requests cannot both use one code. A second factor that is off accepts
// nothing.
func (s *Service) UseSecondFactor(ctx context.Context, tx *store.Tx, owner SecondFactorOwner, code string) (bool, error) {
	if code == "" {
		return false, nil
	}
	f, err := tx.LockSecondFactor(ctx, owner.Store)
	if err != nil || !f.Enabled {
		return false, err
	}
	secret, err := s.Sealer.Open(owner.Purpose, f.Sealed)
	if err != nil {
		// Sealed under another SUBPROV_SECRET: no code matches until the key is reset.
		if s.Log != nil {
			s.Log.Error("a second-factor key cannot be opened: SUBPROV_SECRET changed since it was enrolled; reset it",
				"owner", owner.Store.String(), "err", err)
		}
		return false, nil
	}
	now := s.Clock.Now()
	if step, match := identity.MatchTOTP(string(secret), code, now, f.LastStep); match {
		f.LastStep = step
		return true, tx.SetSecondFactor(ctx, owner.Store, f)
	}
	return tx.UseRecoveryCode(ctx, owner.Store, identity.RecoveryCodeHash(code), now)
}
