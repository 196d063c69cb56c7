package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
)

const accountColumns = `id, email, provider_id, subscriber_id, authorized_user_id, password_hash, token_generation, totp_enabled`

func scanAccount(row interface{ Scan(...any) error }) (*subprov.AccountLogin, error) {
	var a subprov.AccountLogin
	var sub, au, hash sql.NullString
	if err := row.Scan(&a.ID, &a.Email, &a.ProviderID, &sub, &au, &hash, &a.TokenGeneration, &a.TOTPEnabled); err != nil {
		return nil, err
	}
	a.SubscriberID, a.AuthorizedUserID, a.PasswordHash = sub.String, au.String, hash.String
	a.PasswordSet = hash.Valid && hash.String != ""
	return &a, nil
}

// AccountByEmail returns the login for an e-mail (stored lower-case).
func (s *Store) AccountByEmail(ctx context.Context, email string) (*subprov.AccountLogin, error) {
	a, err := scanAccount(s.R().QueryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE email = ?`, email))
	if err != nil {
		return nil, fmt.Errorf("account by email: %w", err)
	}
	return a, nil
}

// Account returns a login by id.
func (s *Store) Account(ctx context.Context, id string) (*subprov.AccountLogin, error) {
	a, err := scanAccount(s.R().QueryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("account %s: %w", id, err)
	}
	return a, nil
}

// UpsertAccount writes a login by e-mail (fixture loads). A password hash given is the
// fixture's: the login is marked as having its password from the fixture (password_by_fixture)
// until its owner sets one (SetPassword). A nil passwordHash leaves an existing password alone.
func (tx *Tx) UpsertAccount(ctx context.Context, a *subprov.Account, passwordHash *string, now time.Time) (string, error) {
	var hash any
	var setAt any
	if passwordHash != nil {
		hash, setAt = *passwordHash, now.UTC()
	}
	var id string
	err := tx.QueryRow(ctx, `INSERT INTO accounts (id, email, provider_id, subscriber_id, authorized_user_id, password_hash, password_set_at,
			password_by_fixture, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (email) DO UPDATE SET provider_id = excluded.provider_id, subscriber_id = excluded.subscriber_id,
			authorized_user_id = excluded.authorized_user_id,
			password_hash = COALESCE(excluded.password_hash, accounts.password_hash),
			password_set_at = COALESCE(excluded.password_set_at, accounts.password_set_at),
			password_by_fixture = CASE WHEN excluded.password_hash IS NULL THEN accounts.password_by_fixture ELSE excluded.password_by_fixture END
		RETURNING id`,
		a.ID, a.Email, a.ProviderID, nullStr(a.SubscriberID), nullStr(a.AuthorizedUserID), hash, setAt, passwordHash != nil, now.UTC()).Scan(&id)
	if err != nil {
		return "", fmt.Errorf("upsert account: %w", err)
	}
	return id, nil
}

// AccountPassword reads the password of the login with email: its hash ("" when none is
// set), whether a fixture set it (rather than its owner), and whether the login exists.
func (tx *Tx) AccountPassword(ctx context.Context, email string) (hash string, byFixture, found bool, err error) {
	var h sql.NullString
	err = tx.QueryRow(ctx, `SELECT password_hash, password_by_fixture FROM accounts WHERE email = ?`, email).Scan(&h, &byFixture)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, false, nil
	case err != nil:
		return "", false, false, fmt.Errorf("account password: %w", err)
	}
	return h.String, byFixture, true, nil
}

// SetPassword stores a new password hash, set by the login's owner (no fixture load changes it
// from now on), and moves the login's token generation on, so every access token issued
// before stops working.
func (tx *Tx) SetPassword(ctx context.Context, accountID, hash string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE accounts SET password_hash = ?, password_set_at = ?, password_by_fixture = FALSE,
		token_generation = token_generation + 1 WHERE id = ?`, hash, now.UTC(), accountID)
	if err != nil {
		return fmt.Errorf("set password: %w", err)
	}
	return nil
}

// LoginThrottle is a login's run of failed password attempts: how many in a row, and when the
// login takes its next attempt. The zero value is a login without failures.
type LoginThrottle struct {
	Failures int
	Until    time.Time
}

// LoginThrottle reads a login's throttle inside a write transaction, locking its row on
// PostgreSQL (SQLite's single writer serialises the transaction), so two attempts cannot
// both take the next slot. A login without a row has no failures.
func (tx *Tx) LoginThrottle(ctx context.Context, login string) (LoginThrottle, error) {
	var t LoginThrottle
	err := tx.QueryRow(ctx, `SELECT failures, throttled_until FROM login_throttles WHERE login = ?`+tx.d.ForUpdate(), login).Scan(&t.Failures, &t.Until)
	if errors.Is(err, sql.ErrNoRows) {
		return LoginThrottle{}, nil
	}
	if err != nil {
		return t, fmt.Errorf("login throttle: %w", err)
	}
	t.Until = t.Until.UTC()
	return t, nil
}

// LockLoginThrottle is LoginThrottle with the row created first when there is none, so that
// concurrent failures of a login without failures yet are counted one after the other.
func (tx *Tx) LockLoginThrottle(ctx context.Context, login string, now time.Time) (LoginThrottle, error) {
	if _, err := tx.Exec(ctx, `INSERT INTO login_throttles (login, failures, throttled_until) VALUES (?, 0, ?) ON CONFLICT (login) DO NOTHING`,
		login, now.UTC()); err != nil {
		return LoginThrottle{}, fmt.Errorf("login throttle: %w", err)
	}
	return tx.LoginThrottle(ctx, login)
}

// SetLoginThrottle stores a login's throttle; the zero value deletes it.
func (tx *Tx) SetLoginThrottle(ctx context.Context, login string, t LoginThrottle) error {
	var err error
	if t == (LoginThrottle{}) {
		_, err = tx.Exec(ctx, `DELETE FROM login_throttles WHERE login = ?`, login)
	} else {
		_, err = tx.Exec(ctx, `INSERT INTO login_throttles (login, failures, throttled_until) VALUES (?, ?, ?)
			ON CONFLICT (login) DO UPDATE SET failures = excluded.failures, throttled_until = excluded.throttled_until`,
			login, t.Failures, t.Until.UTC())
	}
	if err != nil {
		return fmt.Errorf("set login throttle: %w", err)
	}
	return nil
}

// ForgetLoginThrottles deletes up to n throttles whose next attempt was due before cutoff:
// each failure recorded clears a few, so the table holds about the logins failing lately.
func (tx *Tx) ForgetLoginThrottles(ctx context.Context, cutoff time.Time, n int) error {
	if _, err := tx.Exec(ctx, `DELETE FROM login_throttles WHERE login IN
		(SELECT login FROM login_throttles WHERE throttled_until < ? ORDER BY throttled_until LIMIT ?)`, cutoff.UTC(), n); err != nil {
		return fmt.Errorf("forget login throttles: %w", err)
	}
	return nil
}

// InsertToken stores the hash of a single-use token.
func (tx *Tx) InsertToken(ctx context.Context, hash string, t subprov.MailedToken, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO tokens (token_hash, kind, provider_id, subject_id, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		hash, t.Kind, nullStr(t.ProviderID), t.SubjectID, t.ExpiresAt.UTC(), now.UTC())
	if err != nil {
		return fmt.Errorf("insert %s token: %w", t.Kind, err)
	}
	return nil
}

// TokenIssuedSince reports whether a token of kind was issued for subject at or after t.
func (tx *Tx) TokenIssuedSince(ctx context.Context, subjectID, kind string, t time.Time) (bool, error) {
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM tokens WHERE subject_id = ? AND kind = ? AND created_at >= ?`,
		subjectID, kind, t.UTC()).Scan(&n); err != nil {
		return false, fmt.Errorf("%s tokens issued since: %w", kind, err)
	}
	return n > 0, nil
}

// RetireTokens marks every outstanding token of the kinds given for subject used, so none of
// them works any more.
func (tx *Tx) RetireTokens(ctx context.Context, subjectID string, kinds []string, now time.Time) error {
	if len(kinds) == 0 {
		return nil
	}
	_, err := tx.Exec(ctx, `UPDATE tokens SET used_at = ? WHERE subject_id = ? AND kind IN `+inList(len(kinds))+` AND used_at IS NULL`,
		append([]any{now.UTC(), subjectID}, anyList(kinds)...)...)
	if err != nil {
		return fmt.Errorf("retire tokens: %w", err)
	}
	return nil
}

// LiveToken returns the kind of the live (unused, unexpired) token with hash among kinds, without
// using it; a used, expired or unknown token gives subprov.ErrNotFound. The pages a mailed link opens ask
// it before they show a form, so a dead link says so at once.
func (s *Store) LiveToken(ctx context.Context, hash string, kinds []string, now time.Time) (string, error) {
	var kind string
	err := s.R().QueryRow(ctx, `SELECT kind FROM tokens WHERE token_hash = ? AND kind IN `+inList(len(kinds))+` AND used_at IS NULL AND expires_at > ?`,
		append(append([]any{hash}, anyList(kinds)...), now.UTC())...).Scan(&kind)
	if err != nil {
		return "", fmt.Errorf("live token: %w", err)
	}
	return kind, nil
}

// ConsumeToken marks a live token of one of kinds used and returns it; a used, expired or
// unknown token gives subprov.ErrNotFound. The conditional UPDATE makes single use hold under
// concurrency.
func (tx *Tx) ConsumeToken(ctx context.Context, hash string, kinds []string, now time.Time) (*subprov.MailedToken, error) {
	var t subprov.MailedToken
	var pid sql.NullString
	err := tx.QueryRow(ctx, `UPDATE tokens SET used_at = ? WHERE token_hash = ? AND kind IN `+inList(len(kinds))+` AND used_at IS NULL AND expires_at > ?
		RETURNING kind, provider_id, subject_id, expires_at`, append(append([]any{now.UTC(), hash}, anyList(kinds)...), now.UTC())...).Scan(&t.Kind, &pid, &t.SubjectID, &t.ExpiresAt)
	if err != nil {
		return nil, fmt.Errorf("consume %v token: %w", kinds, err)
	}
	t.ProviderID = pid.String
	return &t, nil
}

// HolderAccount returns the portal login of a subscriber's holder, if one exists.
func (tx *Tx) HolderAccount(ctx context.Context, providerID, subscriberID string) (*subprov.AccountLogin, error) {
	return scanAccount(tx.QueryRow(ctx, `SELECT `+accountColumns+` FROM accounts a WHERE a.provider_id = ? AND a.subscriber_id = ?
		AND a.authorized_user_id IS NULL`+tx.d.ForUpdate(), providerID, subscriberID))
}

// CreateHolderAccount creates the portal login of a subscriber's holder, without a password.
// taken reports that another login already uses the e-mail; that login is left as it is.
func (tx *Tx) CreateHolderAccount(ctx context.Context, providerID, subscriberID, email string, now time.Time) (id string, taken bool, err error) {
	err = tx.QueryRow(ctx, `INSERT INTO accounts (id, email, provider_id, subscriber_id, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING RETURNING id`, NewID(), email, providerID, subscriberID, now.UTC()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", true, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("create holder account: %w", err)
	}
	return id, false, nil
}

// ChangeHolderEmail moves a subscriber's holder e-mail (contact, subscriber and portal login).
// taken reports that another subscriber or login already uses it.
func (tx *Tx) ChangeHolderEmail(ctx context.Context, providerID, subscriberID, email string, now time.Time) (taken bool, err error) {
	email = subprov.NormalizeEmail(email)
	var n int
	err = tx.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM subscribers WHERE provider_id = ? AND email = ? AND id <> ?)
		+ (SELECT COUNT(*) FROM accounts WHERE email = ? AND (subscriber_id IS NULL OR subscriber_id <> ? OR authorized_user_id IS NOT NULL))`,
		providerID, email, subscriberID, email, subscriberID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("check e-mail in use: %w", err)
	}
	if n > 0 {
		return true, nil
	}
	if _, err := tx.Exec(ctx, `UPDATE subscribers SET email = ?, updated_at = ? WHERE provider_id = ? AND id = ?`, email, now.UTC(), providerID, subscriberID); err != nil {
		return false, fmt.Errorf("change subscriber e-mail: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE accounts SET email = ? WHERE subscriber_id = ? AND authorized_user_id IS NULL`, email, subscriberID); err != nil {
		return false, fmt.Errorf("change login e-mail: %w", err)
	}
	return false, nil
}

// EndAccountTokens ends every access token of a login issued before: its token generation
// moves on.
func (tx *Tx) EndAccountTokens(ctx context.Context, accountID string) error {
	if _, err := tx.Exec(ctx, `UPDATE accounts SET token_generation = token_generation + 1 WHERE id = ?`, accountID); err != nil {
		return fmt.Errorf("end tokens of %s: %w", accountID, err)
	}
	return nil
}

// AccountByID reads a login by id inside tx.
func (tx *Tx) AccountByID(ctx context.Context, id string) (*subprov.AccountLogin, error) {
	a, err := scanAccount(tx.QueryRow(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("account %s: %w", id, err)
	}
	return a, nil
}
