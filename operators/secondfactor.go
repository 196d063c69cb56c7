package operators

import (
	"context"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/store"
)

// RecoveryCodes is how many single-use recovery codes confirming a second factor gives.
const RecoveryCodes = auth.RecoveryCodes

// StartSecondFactor starts, or before confirmation restarts, the signed-in operator's
// enrolment of a second factor: a new key, stored sealed. While a second factor is on it is
// 409: an admin resets it first.
func (s *Service) StartSecondFactor(ctx context.Context, by *subprov.Operator) (*auth.Enrolment, error) {
	if err := by.Authorize(subprov.PermNone); err != nil {
		return nil, err
	}
	return s.Auth.StartSecondFactor(ctx, auth.OperatorSecondFactor(by))
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
	var codes []string
	now := s.now()
	_, err := s.edit(ctx, subprov.Everything, by.ID, func(tx *store.Tx, o *subprov.Operator) error {
		var err error
		if codes, err = s.Auth.ConfirmSecondFactor(ctx, tx, auth.OperatorSecondFactor(o), code); err != nil {
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
		if err := auth.TurnOffSecondFactor(ctx, tx, store.OperatorFactor(o.ID)); err != nil {
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
