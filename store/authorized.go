package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// LockSubscriber serialises changes to one subscriber's account (the authorized-user limit).
func (tx *Tx) LockSubscriber(ctx context.Context, id string) error {
	var got string
	if err := tx.QueryRow(ctx, `SELECT id FROM subscribers WHERE id = ?`+tx.d.ForUpdate(), id).Scan(&got); err != nil {
		return fmt.Errorf("lock subscriber %s: %w", id, err)
	}
	return nil
}

const authorizedColumns = `a.id, a.subscriber_id, a.firstname, a.lastname, a.email, a.phonenumber, a.invitation_sent_at, a.created_at,
	COALESCE(acc.id, ''), acc.password_hash IS NOT NULL`

func scanAuthorized(row interface{ Scan(...any) error }) (*subprov.AuthorizedUser, error) {
	var r subprov.AuthorizedUser
	var sent sql.NullTime
	err := row.Scan(&r.ID, &r.SubscriberID, &r.Contact.FirstName, &r.Contact.LastName, &r.Contact.Email, &r.Contact.PhoneNumber,
		&sent, &r.CreatedAt, &r.AccountID, &r.Activated)
	if err != nil {
		return nil, err
	}
	r.InvitationSent = sent.Valid
	return &r, nil
}

// AuthorizedUsers lists a subscriber's authorized users, oldest first.
func (s *Store) AuthorizedUsers(ctx context.Context, subscriberID string) ([]*subprov.AuthorizedUser, error) {
	return authorizedUsers(ctx, s.R(), subscriberID)
}

// AuthorizedUsersTx is AuthorizedUsers inside a transaction.
func (tx *Tx) AuthorizedUsers(ctx context.Context, subscriberID string) ([]*subprov.AuthorizedUser, error) {
	return authorizedUsers(ctx, tx, subscriberID)
}

func authorizedUsers(ctx context.Context, q Querier, subscriberID string) ([]*subprov.AuthorizedUser, error) {
	return sqltext.QueryAll(ctx, q, "authorized users", scanAuthorized, `SELECT `+authorizedColumns+` FROM authorized_users a LEFT JOIN accounts acc ON acc.authorized_user_id = a.id
		WHERE a.subscriber_id = ? ORDER BY a.created_at, a.id`, subscriberID)
}

// AuthorizedUser returns one of a subscriber's authorized users.
func (tx *Tx) AuthorizedUser(ctx context.Context, subscriberID, id string) (*subprov.AuthorizedUser, error) {
	r, err := scanAuthorized(tx.QueryRow(ctx, `SELECT `+authorizedColumns+` FROM authorized_users a
		LEFT JOIN accounts acc ON acc.authorized_user_id = a.id WHERE a.subscriber_id = ? AND a.id = ?`, subscriberID, id))
	if err != nil {
		return nil, err
	}
	return r, nil
}

// InsertAuthorizedUser stores the person and their login (without a password yet).
func (tx *Tx) InsertAuthorizedUser(ctx context.Context, providerID string, u *subprov.AuthorizedUser, accountID string, now time.Time) error {
	if _, err := tx.Exec(ctx, `INSERT INTO authorized_users (id, subscriber_id, firstname, lastname, email, phonenumber, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, u.ID, u.SubscriberID, u.Contact.FirstName, u.Contact.LastName, u.Contact.Email, u.Contact.PhoneNumber, now.UTC()); err != nil {
		return fmt.Errorf("insert authorized user: %w", err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO accounts (id, email, provider_id, subscriber_id, authorized_user_id, created_at) VALUES (?, ?, ?, ?, ?, ?)`,
		accountID, u.Contact.Email, providerID, u.SubscriberID, u.ID, now.UTC()); err != nil {
		return fmt.Errorf("insert authorized user login: %w", err)
	}
	return nil
}

// MarkInvitationSent records when the latest set-up link went out.
func (tx *Tx) MarkInvitationSent(ctx context.Context, id string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE authorized_users SET invitation_sent_at = ? WHERE id = ?`, now.UTC(), id)
	if err != nil {
		return fmt.Errorf("mark invitation: %w", err)
	}
	return nil
}

// DeleteAuthorizedUser removes the login, its tokens and the person.
func (tx *Tx) DeleteAuthorizedUser(ctx context.Context, id, accountID string) error {
	for _, q := range []struct {
		sql string
		arg string
	}{
		{`DELETE FROM tokens WHERE subject_id = ?`, accountID},
		{`UPDATE checkout_sessions SET account_id = NULL WHERE account_id = ?`, accountID},
		{`DELETE FROM accounts WHERE id = ?`, accountID},
		{`DELETE FROM authorized_users WHERE id = ?`, id},
	} {
		if _, err := tx.Exec(ctx, q.sql, q.arg); err != nil {
			return fmt.Errorf("delete authorized user: %w", err)
		}
	}
	return nil
}

// EmailHasLogin reports whether an e-mail already has a portal login anywhere.
func (tx *Tx) EmailHasLogin(ctx context.Context, email string) (bool, error) {
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM accounts WHERE email = ?`, email).Scan(&n); err != nil {
		return false, fmt.Errorf("email has login: %w", err)
	}
	return n > 0, nil
}

// AuthorizedUserContact reads an authorized user's own contact record.
func (tx *Tx) AuthorizedUserContact(ctx context.Context, id string) (subprov.Contact, error) {
	return authorizedUserContact(ctx, tx, id)
}

// AuthorizedUserContactOf is AuthorizedUserContact outside a transaction.
func (s *Store) AuthorizedUserContactOf(ctx context.Context, id string) (subprov.Contact, error) {
	return authorizedUserContact(ctx, s.R(), id)
}

func authorizedUserContact(ctx context.Context, q Querier, id string) (subprov.Contact, error) {
	var c subprov.Contact
	err := q.QueryRow(ctx, `SELECT id, firstname, lastname, email, phonenumber, company FROM authorized_users WHERE id = ?`, id).
		Scan(&c.ID, &c.FirstName, &c.LastName, &c.Email, &c.PhoneNumber, &c.Company)
	if err != nil {
		return c, fmt.Errorf("authorized user %s: %w", id, err)
	}
	return c, nil
}

// UpdateAuthorizedUserContact stores an authorized user's own details (not the e-mail).
func (tx *Tx) UpdateAuthorizedUserContact(ctx context.Context, id string, c subprov.Contact) error {
	_, err := tx.Exec(ctx, `UPDATE authorized_users SET firstname = ?, lastname = ?, phonenumber = ?, company = ? WHERE id = ?`,
		c.FirstName, c.LastName, c.PhoneNumber, c.Company, id)
	if err != nil {
		return fmt.Errorf("update authorized user: %w", err)
	}
	return nil
}
