package store

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov"
)

// FactorOwner names whose second factor a query reads or writes: an operator's or a portal
// login's. Both keep it alike (the key sealed, whether it is on, the last step accepted, and
// hashed recovery codes), in their own row and their own table of codes.
type FactorOwner struct {
	table, codes, key string
	ID                string
}

// OperatorFactor is operator id's second factor.
func OperatorFactor(id string) FactorOwner {
	return FactorOwner{table: "operators", codes: "operator_recovery_codes", key: "operator_id", ID: id}
}

// AccountFactor is portal login id's second factor.
func AccountFactor(id string) FactorOwner {
	return FactorOwner{table: "accounts", codes: "account_recovery_codes", key: "account_id", ID: id}
}

func (o FactorOwner) String() string { return o.table + " " + o.ID }

// SecondFactor is a second factor as stored: its sealed key ("" when none is being enrolled
// or on), whether it is on, and the last time step a code was accepted for.
type SecondFactor struct {
	Sealed   string
	Enabled  bool
	LastStep int64
}

// LockSecondFactor reads owner's second factor in tx, locked until tx ends.
func (tx *Tx) LockSecondFactor(ctx context.Context, owner FactorOwner) (SecondFactor, error) {
	var f SecondFactor
	var sealed *string
	err := tx.QueryRow(ctx, `SELECT totp_secret, totp_enabled, totp_last_step FROM `+owner.table+` WHERE id = ?`+tx.d.ForUpdate(), owner.ID).
		Scan(&sealed, &f.Enabled, &f.LastStep)
	if err != nil {
		return f, fmt.Errorf("%s second factor: %w", owner, err)
	}
	f.Sealed = subprov.Deref(sealed)
	return f, nil
}

// SetSecondFactor writes owner's second factor.
func (tx *Tx) SetSecondFactor(ctx context.Context, owner FactorOwner, f SecondFactor) error {
	_, err := tx.Exec(ctx, `UPDATE `+owner.table+` SET totp_secret = ?, totp_enabled = ?, totp_last_step = ? WHERE id = ?`,
		nullStr(f.Sealed), f.Enabled, f.LastStep, owner.ID)
	if err != nil {
		return fmt.Errorf("%s second factor: %w", owner, err)
	}
	return nil
}

// ReplaceRecoveryCodes drops owner's recovery codes and stores hashes as its new ones.
func (tx *Tx) ReplaceRecoveryCodes(ctx context.Context, owner FactorOwner, hashes []string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM `+owner.codes+` WHERE `+owner.key+` = ?`, owner.ID); err != nil {
		return fmt.Errorf("%s recovery codes: %w", owner, err)
	}
	for _, h := range hashes {
		if _, err := tx.Exec(ctx, `INSERT INTO `+owner.codes+` (`+owner.key+`, code_hash) VALUES (?, ?)`, owner.ID, h); err != nil {
			return fmt.Errorf("%s recovery codes: %w", owner, err)
		}
	}
	return nil
}

// UseRecoveryCode marks owner's unused recovery code with hash used; false when it has no
// such unused code.
func (tx *Tx) UseRecoveryCode(ctx context.Context, owner FactorOwner, hash string, now time.Time) (bool, error) {
	res, err := tx.Exec(ctx, `UPDATE `+owner.codes+` SET used_at = ? WHERE `+owner.key+` = ? AND code_hash = ? AND used_at IS NULL`,
		now.UTC(), owner.ID, hash)
	if err != nil {
		return false, fmt.Errorf("%s recovery code: %w", owner, err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
