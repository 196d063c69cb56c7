package operators

import (
	"context"
	"errors"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/store"
)

// Put creates the operator n names, or updates the operator with its e-mail to n's role, scope
// and password and enables it if it was disabled: how a fresh database gets its first admin,
// and how a locked-out admin gets back in (subprov operator add). It acts as the system, in
// every provider's scope, under the rules of Create: every problem listed, and the last active
// platform admin kept. A new password ends the operator's tokens. created reports which it did.
func (s *Service) Put(ctx context.Context, n New) (o *subprov.Operator, created bool, err error) {
	n.Email = subprov.NormalizeEmail(n.Email)
	p, err := s.problems(ctx, n, subprov.Everything)
	if err != nil {
		return nil, false, err
	}
	if len(p) > 0 {
		return nil, false, subprov.Invalid(p)
	}
	cur, _, err := s.Store.OperatorByEmail(ctx, n.Email)
	if errors.Is(err, subprov.ErrNotFound) {
		o, err := s.create(ctx, n, subprov.Everything)
		return o, err == nil, err
	}
	if err != nil {
		return nil, false, err
	}
	newHash, err := s.Auth.PasswordCost.Hash(n.Password)
	if err != nil {
		return nil, false, err
	}
	now := s.now()
	o, err = s.edit(ctx, subprov.Everything, cur.ID, func(tx *store.Tx, o *subprov.Operator) error {
		before := *o
		e := subprov.NewAudit(ctx, n.ProviderID, "operator.updated", "operator", o.ID)
		o.Role, o.ProviderID = n.Role, n.ProviderID
		e.Changes.Set("role", string(before.Role), string(o.Role))
		e.Changes.Set("provider_id", nullable(before.ProviderID), nullable(o.ProviderID))
		if o.DisabledAt != nil {
			o.DisabledAt = nil
			e.Changes.Set("disabled", true, false)
		}
		if err := keepLastAdmin(ctx, tx, &before, o); err != nil {
			return err
		}
		if len(e.Changes) > 0 {
			o.Version++
			if err := tx.SaveOperator(ctx, o); err != nil {
				return err
			}
			if err := tx.RecordAudit(ctx, e, now); err != nil {
				return err
			}
		}
		hash, err := tx.OperatorPassword(ctx, o.ID)
		if err != nil || identity.CheckPassword(hash, n.Password) {
			return err // the same password: nothing to change
		}
		return setPassword(ctx, tx, o, newHash, now)
	})
	return o, false, err
}

// System is the operator the command line acts as: a platform admin with no account of its
// own (its entries in the audit log name the system).
var System = &subprov.Operator{Role: subprov.RoleAdmin}

// All lists every operator by e-mail, one page at a time, for the command line.
func (s *Service) All(ctx context.Context, page subprov.Page) ([]*subprov.Operator, string, error) {
	return s.list(ctx, subprov.Everything, page)
}
