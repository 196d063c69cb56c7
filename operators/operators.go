// Package operators manages the people who use the operations surface and the console: their
// creation in the creator's scope, their role, their disabling, their own password and their
// second factor. The HTTP handlers and the command line (subprov operator) both call it, so
// one set of rules holds however an operator is made.
package operators

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/store"
)

// Service manages operators. Auth supplies the service's clock, its password cost, the limits
// on guessing passwords and the sealer of second-factor keys.
type Service struct {
	Store *store.Store
	Auth  *auth.Service
}

// New is an operator to create: ProviderID "" makes it platform-wide.
type New struct {
	Email      string
	Password   string
	Role       subprov.Role
	ProviderID string
}

// Change is an edit of an operator: nil fields are left as they are.
type Change struct {
	Role     *subprov.Role
	Disabled *bool
}

func notFound() error { return subprov.NotFound("Operator") }

func (s *Service) now() time.Time { return s.Auth.Clock.Now() }

// roleNames is "admin, support, billing, installer or viewer".
func roleNames() string {
	names := make([]string, len(subprov.Roles))
	for i, r := range subprov.Roles {
		names[i] = string(r)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// problems lists every problem of n, created in scope: an e-mail address, a password of at
// least 10 characters, one of the roles, and a provider that exists and is in scope (a
// provider's admin names its own; a platform admin any, or none for a platform-wide operator).
func (s *Service) problems(ctx context.Context, n New, scope subprov.Scope) (map[string]string, error) {
	p := map[string]string{}
	if !auth.ValidEmail(n.Email) {
		p["email"] = "must be an e-mail address"
	}
	if msg := subprov.PasswordProblem(n.Password); msg != "" {
		p["password"] = msg
	}
	if !n.Role.Valid() {
		p["role"] = "must be one of " + roleNames()
	}
	switch {
	case scope.ProviderID != "" && n.ProviderID != scope.ProviderID:
		p["provider_id"] = "must be your own provider, " + scope.ProviderID
	case n.ProviderID != "":
		if _, err := s.Store.Provider(ctx, n.ProviderID); errors.Is(err, subprov.ErrNotFound) {
			p["provider_id"] = "no such provider"
		} else if err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Create makes an operator in by's scope: a provider's admin makes operators of its own
// provider only (another provider, or none, is a problem with provider_id), a platform admin
// any. Every problem is listed (422) and nothing is written; an e-mail another operator has is
// 409.
func (s *Service) Create(ctx context.Context, by *subprov.Operator, n New) (*subprov.Operator, error) {
	if err := by.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	return s.create(ctx, n, by.Scope())
}

func (s *Service) create(ctx context.Context, n New, scope subprov.Scope) (*subprov.Operator, error) {
	n.Email = subprov.NormalizeEmail(n.Email)
	p, err := s.problems(ctx, n, scope)
	if err != nil {
		return nil, err
	}
	if len(p) > 0 {
		return nil, subprov.Invalid(p)
	}
	hash, err := s.Auth.PasswordCost.Hash(n.Password)
	if err != nil {
		return nil, err
	}
	now := s.now()
	o := &subprov.Operator{ID: store.NewID(), Email: n.Email, Role: n.Role, ProviderID: n.ProviderID, Version: 1, CreatedAt: now}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertOperator(ctx, o, hash); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, o.ProviderID, "operator.created", "operator", o.ID)
		e.Changes.SetRedacted("email")
		e.Changes.SetRedacted("password")
		e.Changes.Set("role", nil, string(o.Role))
		e.Changes.Set("provider_id", nil, nullable(o.ProviderID))
		return tx.RecordAudit(ctx, e, now)
	})
	if errors.Is(err, subprov.ErrDuplicate) {
		return nil, subprov.Errorf(subprov.ECONFLICT, "duplicate", "An operator with this e-mail already exists")
	}
	if err != nil {
		return nil, err
	}
	return o, nil
}

// nullable is s, or nil for "" (a platform-wide operator's provider, as the log shows it).
func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// List lists the operators in by's scope by e-mail, one page at a time.
func (s *Service) List(ctx context.Context, by *subprov.Operator, page subprov.Page) ([]*subprov.Operator, string, error) {
	if err := by.Authorize(subprov.PermAdminister); err != nil {
		return nil, "", err
	}
	return s.list(ctx, by.Scope(), page)
}

func (s *Service) list(ctx context.Context, scope subprov.Scope, page subprov.Page) ([]*subprov.Operator, string, error) {
	os, err := s.Store.Operators(ctx, scope.ProviderID, page)
	if err != nil {
		return nil, "", err
	}
	os, next := subprov.Cut(page, os, store.OperatorKey)
	return os, next, nil
}

// Get reads one operator in by's scope; another provider's is not found, as an unknown id.
func (s *Service) Get(ctx context.Context, by *subprov.Operator, id string) (*subprov.Operator, error) {
	if err := by.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	o, err := s.Store.Operator(ctx, id)
	if errors.Is(err, subprov.ErrNotFound) {
		return nil, notFound()
	}
	if err != nil {
		return nil, err
	}
	if err := by.Scope().Check(o.ProviderID, "Operator"); err != nil {
		return nil, err
	}
	return o, nil
}

// edit runs fn on the operator id, read and locked in the write transaction, in scope: an
// operator outside it is not found.
func (s *Service) edit(ctx context.Context, scope subprov.Scope, id string, fn func(tx *store.Tx, o *subprov.Operator) error) (*subprov.Operator, error) {
	var out *subprov.Operator
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		o, err := tx.LockOperator(ctx, id)
		if errors.Is(err, subprov.ErrNotFound) {
			return notFound()
		}
		if err != nil {
			return err
		}
		if err := scope.Check(o.ProviderID, "Operator"); err != nil {
			return err
		}
		if err := fn(tx, o); err != nil {
			return err
		}
		out = o
		return nil
	})
	return out, err
}

// activePlatformAdmin reports whether o is an active platform-wide admin.
func activePlatformAdmin(o *subprov.Operator) bool {
	return o.Role == subprov.RoleAdmin && o.Platform() && o.DisabledAt == nil
}

// keepLastAdmin refuses (409) an edit that would leave no active platform-wide admin: before
// is the operator as it was, after as the edit leaves it. The active platform admins are
// locked, so two edits that would each remove one of the last two cannot both commit.
func keepLastAdmin(ctx context.Context, tx *store.Tx, before, after *subprov.Operator) error {
	if !activePlatformAdmin(before) || activePlatformAdmin(after) {
		return nil
	}
	ids, err := tx.LockActivePlatformAdmins(ctx)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if id != before.ID {
			return nil
		}
	}
	return subprov.Errorf(subprov.ECONFLICT, "last_admin", "Nobody may disable or demote the last active platform admin")
}

// Update changes an operator's role or disables or enables it, under If-Match (ifMatch 0: not
// sent). Disabling ends the operator's tokens at once, on every process. Nobody disables or
// demotes the last active platform admin (409).
func (s *Service) Update(ctx context.Context, by *subprov.Operator, id string, ifMatch int64, c Change) (*subprov.Operator, error) {
	if err := by.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	p := map[string]string{}
	if c.Role == nil && c.Disabled == nil {
		p["body"] = "name role or disabled"
	}
	if c.Role != nil && !c.Role.Valid() {
		p["role"] = "must be one of " + roleNames()
	}
	if len(p) > 0 {
		return nil, subprov.Invalid(p)
	}
	now := s.now()
	return s.edit(ctx, by.Scope(), id, func(tx *store.Tx, o *subprov.Operator) error {
		if err := subprov.CheckVersion(ifMatch, o.Version); err != nil {
			return err
		}
		before := *o
		e := subprov.NewAudit(ctx, o.ProviderID, "operator.updated", "operator", o.ID)
		if c.Role != nil {
			o.Role = *c.Role
			e.Changes.Set("role", string(before.Role), string(o.Role))
		}
		if c.Disabled != nil && *c.Disabled != (o.DisabledAt != nil) {
			if *c.Disabled {
				o.DisabledAt = &now
				o.TokenGeneration++ // its tokens end, and stay ended once it is enabled again
			} else {
				o.DisabledAt = nil
			}
			e.Changes.Set("disabled", !*c.Disabled, *c.Disabled)
		}
		if len(e.Changes) == 0 {
			return nil // nothing to change: nothing is written
		}
		if err := keepLastAdmin(ctx, tx, &before, o); err != nil {
			return err
		}
		o.Version++
		if err := tx.SaveOperator(ctx, o); err != nil {
			return err
		}
		return tx.RecordAudit(ctx, e, now)
	})
}

// ChangePassword changes the signed-in operator's own password. The current password is
// checked first, from client under the limits on guessing of the operator's login (a wrong one
// is 400 "Current password is incorrect" and a failure of that login); then the new one (at
// least 10 characters, 422). The change ends every token of the operator, on every process,
// the caller's included: it signs in again with the new password.
func (s *Service) ChangePassword(ctx context.Context, by *subprov.Operator, current, next, client string) error {
	if err := by.Authorize(subprov.PermNone); err != nil {
		return err
	}
	if current == "" {
		p := map[string]string{"current_password": "required"}
		if msg := subprov.PasswordProblem(next); msg != "" {
			p["new_password"] = msg
		}
		return subprov.Invalid(p)
	}
	_, hash, err := s.Store.OperatorByEmail(ctx, by.Email)
	if err != nil {
		return err
	}
	ok, err := s.Auth.CheckOperatorPassword(ctx, by, hash, current, client)
	if err != nil {
		return err
	}
	if !ok {
		return subprov.Errorf(subprov.EBADREQUEST, "incorrect_password", "Current password is incorrect")
	}
	if msg := subprov.PasswordProblem(next); msg != "" {
		return subprov.Invalid(map[string]string{"new_password": msg})
	}
	newHash, err := s.Auth.PasswordCost.Hash(next)
	if err != nil {
		return err
	}
	now := s.now()
	_, err = s.edit(ctx, subprov.Everything, by.ID, func(tx *store.Tx, o *subprov.Operator) error {
		return setPassword(ctx, tx, o, newHash, now)
	})
	return err
}

// setPassword stores o's new password hash, ends its tokens and records the change (the
// password only as changed).
func setPassword(ctx context.Context, tx *store.Tx, o *subprov.Operator, hash string, now time.Time) error {
	if err := tx.SetOperatorPasswordHash(ctx, o.ID, hash); err != nil {
		return err
	}
	o.TokenGeneration++
	if err := tx.SaveOperator(ctx, o); err != nil {
		return err
	}
	e := subprov.NewAudit(ctx, o.ProviderID, "operator.password_changed", "operator", o.ID)
	e.Changes.SetRedacted("password")
	return tx.RecordAudit(ctx, e, now)
}
