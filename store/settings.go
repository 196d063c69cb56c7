package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Setting returns a stored setting and whether it exists.
func (s *Store) Setting(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := s.R().QueryRow(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("read setting %s: %w", key, err)
	}
	return v, true, nil
}

// SettingOrInit returns the stored value of key, storing init first if there is none. Two
// processes starting together agree on one value: the loser of the insert reads the winner's.
func (s *Store) SettingOrInit(ctx context.Context, key, init string) (string, error) {
	var v string
	err := s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`, key, init); err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT value FROM settings WHERE key = ?`, key).Scan(&v)
	})
	if err != nil {
		return "", fmt.Errorf("init setting %s: %w", key, err)
	}
	return v, nil
}

// PutSetting stores key = value.
func (s *Store) PutSetting(ctx context.Context, key, value string) error {
	return s.InTx(ctx, func(tx *Tx) error { return tx.PutSetting(ctx, key, value) })
}

// PutSetting stores key = value inside tx.
func (tx *Tx) PutSetting(ctx context.Context, key, value string) error {
	_, err := tx.Exec(ctx, `INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`, key, value)
	if err != nil {
		return fmt.Errorf("write setting %s: %w", key, err)
	}
	return nil
}

// InsertSettingIfAbsent stores key = value unless key exists; fresh reports whether it was stored.
func (tx *Tx) InsertSettingIfAbsent(ctx context.Context, key, value string) (bool, error) {
	res, err := tx.Exec(ctx, `INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING`, key, value)
	if err != nil {
		return false, fmt.Errorf("insert setting %s: %w", key, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// SwapSetting stores key = value inside tx and returns the value it replaced ("" when none).
func (tx *Tx) SwapSetting(ctx context.Context, key, value string) (string, error) {
	var old string
	err := tx.QueryRow(ctx, `SELECT value FROM settings WHERE key = ?`+tx.d.ForUpdate(), key).Scan(&old)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("read setting %s: %w", key, err)
	}
	if err := tx.PutSetting(ctx, key, value); err != nil {
		return "", err
	}
	return old, nil
}
