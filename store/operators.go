package store

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov"
)

const operatorColumns = `id, email, role, provider_id, disabled_at, version, token_generation, created_at`

func scanOperatorAnd(row rowScanner, extra ...any) (*subprov.Operator, error) {
	var o subprov.Operator
	var provider *string
	var disabled nullTimeScan
	if err := row.Scan(append([]any{&o.ID, &o.Email, &o.Role, &provider, &disabled, &o.Version, &o.TokenGeneration, &o.CreatedAt}, extra...)...); err != nil {
		return nil, err
	}
	o.ProviderID, o.DisabledAt = deref(provider), disabled.ptr()
	return &o, nil
}

// UpsertOperator writes an operator by e-mail: its password hash, role and scope. Writing what
// is already there changes nothing, its version included.
func (tx *Tx) UpsertOperator(ctx context.Context, o *subprov.Operator, passwordHash string, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO operators (id, email, password_hash, role, provider_id, created_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (email) DO UPDATE SET password_hash = excluded.password_hash, role = excluded.role,
			provider_id = excluded.provider_id, version = operators.version + 1
		WHERE operators.password_hash <> excluded.password_hash OR operators.role <> excluded.role
			OR operators.provider_id IS DISTINCT FROM excluded.provider_id`,
		o.ID, o.Email, passwordHash, string(o.Role), nullStr(o.ProviderID), now.UTC())
	if err != nil {
		return fmt.Errorf("upsert operator: %w", err)
	}
	return nil
}

// OperatorByEmail returns an operator and its password hash.
func (s *Store) OperatorByEmail(ctx context.Context, email string) (*subprov.Operator, string, error) {
	var hash string
	o, err := scanOperatorAnd(s.R().QueryRow(ctx, `SELECT `+operatorColumns+`, password_hash FROM operators WHERE email = ?`, email), &hash)
	if err != nil {
		return nil, "", fmt.Errorf("operator by email: %w", err)
	}
	return o, hash, nil
}

// Operator returns an operator by id.
func (s *Store) Operator(ctx context.Context, id string) (*subprov.Operator, error) {
	o, err := scanOperatorAnd(s.R().QueryRow(ctx, `SELECT `+operatorColumns+` FROM operators WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("operator %s: %w", id, err)
	}
	return o, nil
}
