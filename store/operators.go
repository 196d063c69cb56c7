package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

const operatorColumns = `id, email, role, provider_id, disabled_at, version, token_generation, created_at, totp_enabled`

// operatorColumnsOf is operatorColumns of the operators table named alias in a join.
func operatorColumnsOf(alias string) string {
	cols := strings.Split(operatorColumns, ", ")
	for i, c := range cols {
		cols[i] = alias + "." + c
	}
	return strings.Join(cols, ", ")
}

func scanOperatorAnd(row rowScanner, extra ...any) (*subprov.Operator, error) {
	var o subprov.Operator
	var provider *string
	var disabled nullTimeScan
	if err := row.Scan(append([]any{&o.ID, &o.Email, &o.Role, &provider, &disabled, &o.Version, &o.TokenGeneration, &o.CreatedAt, &o.TOTPEnabled}, extra...)...); err != nil {
		return nil, err
	}
	o.ProviderID, o.DisabledAt = subprov.Deref(provider), disabled.ptr()
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

func scanOperator(row rowScanner) (*subprov.Operator, error) { return scanOperatorAnd(row) }

// Operators lists the operators of providerID ("" for every operator) by e-mail,
// page.Limit+1 of them after the page's position (an e-mail, as OperatorKey gives it).
func (s *Store) Operators(ctx context.Context, providerID string, page subprov.Page) ([]*subprov.Operator, error) {
	var where []string
	var args []any
	if providerID != "" {
		where, args = append(where, "provider_id = ?"), append(args, providerID)
	}
	if !page.First() {
		where, args = append(where, "email > ?"), append(args, page.After[0])
	}
	q := `SELECT ` + operatorColumns + ` FROM operators`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY email LIMIT ?`
	args = append(args, page.Limit+1)
	return sqltext.QueryAll(ctx, s.R(), "operators", scanOperator, q, args...)
}

// OperatorKey is an operator's position in the list's order, for the next page's cursor.
func OperatorKey(o *subprov.Operator) []string { return []string{o.Email} }

// LockOperator reads an operator by id for an edit in tx, locked until tx ends.
func (tx *Tx) LockOperator(ctx context.Context, id string) (*subprov.Operator, error) {
	o, err := scanOperator(tx.QueryRow(ctx, `SELECT `+operatorColumns+` FROM operators WHERE id = ?`+tx.d.ForUpdate(), id))
	if err != nil {
		return nil, fmt.Errorf("operator %s: %w", id, err)
	}
	return o, nil
}

// LockOperatorByEmail reads an operator and its password hash by e-mail for an edit in tx,
// locked until tx ends.
func (tx *Tx) LockOperatorByEmail(ctx context.Context, email string) (*subprov.Operator, string, error) {
	var hash string
	o, err := scanOperatorAnd(tx.QueryRow(ctx, `SELECT `+operatorColumns+`, password_hash FROM operators WHERE email = ?`+tx.d.ForUpdate(), email), &hash)
	if err != nil {
		return nil, "", fmt.Errorf("operator by email: %w", err)
	}
	return o, hash, nil
}

// OperatorPassword is the password hash of the operator with id.
func (tx *Tx) OperatorPassword(ctx context.Context, id string) (string, error) {
	var hash string
	if err := tx.QueryRow(ctx, `SELECT password_hash FROM operators WHERE id = ?`, id).Scan(&hash); err != nil {
		return "", fmt.Errorf("operator %s password: %w", id, err)
	}
	return hash, nil
}

// LockActivePlatformAdmins locks and lists the ids of the platform-wide admins not disabled,
// so that two edits that would each leave one of them cannot both commit.
func (tx *Tx) LockActivePlatformAdmins(ctx context.Context) ([]string, error) {
	return sqltext.Strings(ctx, tx, "active platform admins", `SELECT id FROM operators
		WHERE role = 'admin' AND provider_id IS NULL AND disabled_at IS NULL ORDER BY id`+tx.d.ForUpdate())
}

// InsertOperator creates an operator; an e-mail already taken is subprov.ErrDuplicate.
func (tx *Tx) InsertOperator(ctx context.Context, o *subprov.Operator, passwordHash string) error {
	_, err := tx.Exec(ctx, `INSERT INTO operators (id, email, password_hash, role, provider_id, disabled_at, version, token_generation, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		o.ID, o.Email, passwordHash, string(o.Role), nullStr(o.ProviderID), nullTime(o.DisabledAt), o.Version, o.TokenGeneration, o.CreatedAt.UTC())
	if err != nil {
		return fmt.Errorf("insert operator: %w", err)
	}
	return nil
}

// SaveOperator writes an operator's role, scope, disabling, version and token generation as o
// holds them.
func (tx *Tx) SaveOperator(ctx context.Context, o *subprov.Operator) error {
	_, err := tx.Exec(ctx, `UPDATE operators SET role = ?, provider_id = ?, disabled_at = ?, version = ?, token_generation = ? WHERE id = ?`,
		string(o.Role), nullStr(o.ProviderID), nullTime(o.DisabledAt), o.Version, o.TokenGeneration, o.ID)
	if err != nil {
		return fmt.Errorf("save operator %s: %w", o.ID, err)
	}
	return nil
}

// SetOperatorPasswordHash stores an operator's new password hash.
func (tx *Tx) SetOperatorPasswordHash(ctx context.Context, id, hash string) error {
	if _, err := tx.Exec(ctx, `UPDATE operators SET password_hash = ? WHERE id = ?`, hash, id); err != nil {
		return fmt.Errorf("operator %s password: %w", id, err)
	}
	return nil
}
