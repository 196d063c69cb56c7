package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov/internal/sqltext"
)

// Preferences are a portal login's stored choices: its language ("" for the provider's
// default) and its optional mails.
type Preferences struct {
	Language         string
	Billing, Service bool
}

const preferencesColumns = `language, notify_billing, notify_service`

func scanPreferences(row interface{ Scan(...any) error }) (Preferences, bool, error) {
	var p Preferences
	var lang sql.NullString
	err := row.Scan(&lang, &p.Billing, &p.Service)
	if errors.Is(err, sql.ErrNoRows) {
		return Preferences{}, false, nil
	}
	p.Language = lang.String
	return p, err == nil, err
}

// Preferences reads a login's choices; found is false when it has made none.
func (s *Store) Preferences(ctx context.Context, accountID string) (p Preferences, found bool, err error) {
	p, found, err = scanPreferences(s.R().QueryRow(ctx, `SELECT `+preferencesColumns+` FROM account_preferences WHERE account_id = ?`, accountID))
	if err != nil {
		return p, false, fmt.Errorf("preferences of %s: %w", accountID, err)
	}
	return p, found, nil
}

// LockPreferences is Preferences inside a write transaction, the login's row locked until tx
// ends so that two changes at once both apply.
func (tx *Tx) LockPreferences(ctx context.Context, accountID string) (p Preferences, found bool, err error) {
	var id string
	if err := tx.QueryRow(ctx, `SELECT id FROM accounts WHERE id = ?`+tx.d.ForUpdate(), accountID).Scan(&id); err != nil {
		return p, false, fmt.Errorf("lock login %s: %w", accountID, err)
	}
	p, found, err = scanPreferences(tx.QueryRow(ctx, `SELECT `+preferencesColumns+` FROM account_preferences WHERE account_id = ?`, accountID))
	if err != nil {
		return p, false, fmt.Errorf("preferences of %s: %w", accountID, err)
	}
	return p, found, nil
}

// PutPreferences stores a login's choices.
func (tx *Tx) PutPreferences(ctx context.Context, accountID string, p Preferences, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO account_preferences (account_id, language, notify_billing, notify_service, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (account_id) DO UPDATE SET language = excluded.language, notify_billing = excluded.notify_billing,
		notify_service = excluded.notify_service, updated_at = excluded.updated_at`,
		accountID, nullStr(p.Language), p.Billing, p.Service, now.UTC())
	if err != nil {
		return fmt.Errorf("preferences of %s: %w", accountID, err)
	}
	return nil
}

// LoginPreferences is one login of an account with its choices (Chosen false: none made).
type LoginPreferences struct {
	Email       string
	Holder      bool
	Chosen      bool
	Preferences Preferences
}

// AccountPreferences lists the logins of subscriber subscriberID's account (the holder's and
// its authorized users') with their choices.
func (tx *Tx) AccountPreferences(ctx context.Context, subscriberID string) ([]LoginPreferences, error) {
	return sqltext.QueryAll(ctx, tx, "preferences of the account's logins", func(r interface{ Scan(...any) error }) (LoginPreferences, error) {
		var l LoginPreferences
		var lang sql.NullString
		var billing, service sql.NullBool
		if err := r.Scan(&l.Email, &l.Holder, &l.Chosen, &lang, &billing, &service); err != nil {
			return l, err
		}
		l.Preferences = Preferences{Language: lang.String, Billing: billing.Bool, Service: service.Bool}
		return l, nil
	}, `SELECT a.email, a.authorized_user_id IS NULL, p.account_id IS NOT NULL, p.language, p.notify_billing, p.notify_service
		FROM accounts a LEFT JOIN account_preferences p ON p.account_id = a.id WHERE a.subscriber_id = ?`, subscriberID)
}

// PersonLanguage is the language the login with e-mail address email at providerID chose
// ("" for none) and whether the address is one of that provider's logins at all.
func (tx *Tx) PersonLanguage(ctx context.Context, providerID, email string) (lang string, login bool, err error) {
	var l sql.NullString
	err = tx.QueryRow(ctx, `SELECT p.language FROM accounts a LEFT JOIN account_preferences p ON p.account_id = a.id
		WHERE a.email = ? AND a.provider_id = ?`, email, providerID).Scan(&l)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("language of a login of %s: %w", providerID, err)
	}
	return l.String, true, nil
}

// HolderLanguage is the language the holder of subscriber subscriberID at providerID chose, ""
// for none (or no such holder login).
func (tx *Tx) HolderLanguage(ctx context.Context, providerID, subscriberID string) (string, error) {
	var l sql.NullString
	err := tx.QueryRow(ctx, `SELECT p.language FROM accounts a JOIN account_preferences p ON p.account_id = a.id
		WHERE a.subscriber_id = ? AND a.provider_id = ? AND a.authorized_user_id IS NULL`, subscriberID, providerID).Scan(&l)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("language of the holder of %s: %w", subscriberID, err)
	}
	return l.String, nil
}
