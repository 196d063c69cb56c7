package auth

import (
	"context"
	"errors"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/store"
)

// invalidOperatorLogin is the one answer of a dashboard login that does not sign in: a wrong
// e-mail, a wrong password, a disabled operator and a missing or wrong second factor alike.
func invalidOperatorLogin() error {
	return subprov.Errorf(subprov.EUNAUTHORIZED, "invalid_credentials", "Invalid credentials or second factor")
}

// Reasons a dashboard login failed, as its audit entry records them (the caller is only ever
// told invalidOperatorLogin).
const (
	failedPassword     = "wrong e-mail or password"
	failedDisabled     = "operator disabled"
	failedSecondFactor = "missing or wrong second factor"
)

// LoginOperator checks a dashboard login from client and issues an access token, under the
// limits on guessing as the subscriber login. An operator with a second factor on must also
// send a code of it (or one of its unused recovery codes) as secondFactor; the code is checked
// only after the password is right, and a wrong one is a failure like a wrong password, with
// the same answer. Every checked attempt is recorded in the audit log, in the transaction
// that records its outcome for the limits: operator.logged_in or operator.login_failed (for
// an unknown e-mail too, naming the e-mail).
func (s *Service) LoginOperator(ctx context.Context, email, password, secondFactor, client string) (*Token, error) {
	op, err := s.checkOperatorLogin(ctx, email, password, secondFactor, client)
	if err != nil {
		return nil, err
	}
	tok, err := s.Signer.IssueGeneration(identity.AudienceOperator, op.ID, op.ProviderID, "", op.TokenGeneration, s.Clock.Now(), subprov.OperatorTokenLifetime)
	if err != nil {
		return nil, err
	}
	return &Token{AccessToken: tok, ExpiresIn: int(subprov.OperatorTokenLifetime.Seconds())}, nil
}

// checkOperatorLogin is a dashboard login's check, shared by the API's login and the
// console's sign-in: the operator it signs in, or invalidOperatorLogin (or the limits' 429).
func (s *Service) checkOperatorLogin(ctx context.Context, email, password, secondFactor, client string) (*subprov.Operator, error) {
	email = subprov.NormalizeEmail(email)
	a, err := s.begin(ctx, loginOperator, client, email)
	if err != nil {
		return nil, err
	}
	op, hash, err := s.Store.OperatorByEmail(ctx, email)
	if err != nil && !errors.Is(err, subprov.ErrNotFound) {
		return nil, errors.Join(err, a.abandon(ctx))
	}
	ok, reason := false, failedPassword
	switch {
	case op == nil || hash == "":
		s.PasswordCost.BurnCheck(password)
	case op.DisabledAt != nil:
		// A disabled operator's right password is still a wrong one: the same answer, and the
		// same hashing cost, as any other.
		s.PasswordCost.BurnCheck(password)
		reason = failedDisabled
	default:
		ok = identity.CheckPassword(hash, password)
	}
	if ok && op.TOTPEnabled {
		if ok, err = s.secondFactorAtLogin(ctx, OperatorSecondFactor(op), secondFactor); err != nil {
			return nil, errors.Join(err, a.abandon(ctx))
		}
		reason = failedSecondFactor
	}
	entry := loginAudit(ctx, op, email, ok, reason)
	if err := a.endWith(ctx, ok, func(tx *store.Tx) error { return tx.RecordAudit(ctx, entry, s.Clock.Now()) }); err != nil {
		return nil, err
	}
	if !ok {
		return nil, invalidOperatorLogin()
	}
	return op, nil
}

// loginAudit is the audit entry of a checked dashboard login: the operator it names (by
// e-mail only when there is none), its provider when known, and why it failed.
func loginAudit(ctx context.Context, op *subprov.Operator, email string, ok bool, reason string) subprov.AuditEntry {
	action := "operator.login_failed"
	if ok {
		action, reason = "operator.logged_in", ""
	}
	actor := subprov.Actor{Type: subprov.ActorOperator, Email: email}
	var providerID, id string
	if op != nil {
		actor.ID, providerID, id = op.ID, op.ProviderID, op.ID
	}
	e := subprov.NewAudit(ctx, providerID, action, "operator", id)
	e.Actor, e.Reason = actor, reason
	return e
}

// SecondFactorPurpose is what an operator's second-factor key is sealed for: it opens for that
// operator's row only.
func SecondFactorPurpose(operatorID string) string { return "operator totp:" + operatorID }

// CheckOperatorPassword checks a signed-in operator's password (its current one, before a
// change) from client under the limits on guessing, as its login does: a wrong one is a
// failure of the operator's login, a right one ends its run of failures. A stolen token
// therefore guesses the password no faster than the login form.
func (s *Service) CheckOperatorPassword(ctx context.Context, op *subprov.Operator, hash, password, client string) (bool, error) {
	a, err := s.begin(ctx, loginOperator, client, op.Email)
	if err != nil {
		return false, err
	}
	ok := identity.CheckPassword(hash, password)
	return ok, a.end(ctx, ok)
}
