package store

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

const privacyColumns = `id, provider_id, subscriber_id, status, COALESCE(ticket_id, ''), reason, created_at, decided_at`

func scanPrivacyRequest(r interface{ Scan(...any) error }) (*subprov.PrivacyRequest, error) {
	var p subprov.PrivacyRequest
	var decided nullTimeScan
	if err := r.Scan(&p.ID, &p.ProviderID, &p.SubscriberID, &p.Status, &p.TicketID, &p.Reason, &p.CreatedAt, &decided); err != nil {
		return nil, err
	}
	p.DecidedAt = decided.ptr()
	return &p, nil
}

// InsertPrivacyRequest stores a new privacy request.
func (tx *Tx) InsertPrivacyRequest(ctx context.Context, p *subprov.PrivacyRequest) error {
	_, err := tx.Exec(ctx, `INSERT INTO privacy_requests (id, provider_id, subscriber_id, status, ticket_id, reason, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, p.ID, p.ProviderID, p.SubscriberID, p.Status, nullStr(p.TicketID), p.Reason, p.CreatedAt.UTC())
	if err != nil {
		return fmt.Errorf("insert privacy request: %w", err)
	}
	return nil
}

// PrivacyFilter narrows a list of privacy requests; "" matches anything.
type PrivacyFilter struct {
	ProviderID string
	Status     string
}

// PrivacyRequests lists privacy requests newest first, page.Limit+1 after the page's position
// (PrivacyKey).
func (s *Store) PrivacyRequests(ctx context.Context, f PrivacyFilter, page subprov.Page) ([]*subprov.PrivacyRequest, error) {
	var where []string
	var args []any
	for _, c := range []struct{ col, v string }{{"provider_id", f.ProviderID}, {"status", f.Status}} {
		if c.v != "" {
			where, args = append(where, c.col+" = ?"), append(args, c.v)
		}
	}
	w, a, err := newestFirstAfter(page, "created_at")
	if err != nil {
		return nil, err
	}
	where, args = append(where, w...), append(args, a...)
	return sqltext.QueryAll(ctx, s.R(), "privacy requests", scanPrivacyRequest,
		`SELECT `+privacyColumns+` FROM privacy_requests`+whereOf(where)+` ORDER BY created_at DESC, id DESC LIMIT ?`, append(args, page.Limit+1)...)
}

// PrivacyKey is a request's position in its list's order, for the next page's cursor.
func PrivacyKey(p *subprov.PrivacyRequest) []string { return TimeKey(p.CreatedAt, p.ID) }

// LockPrivacyRequest reads a privacy request inside a write transaction, locked until it ends.
func (tx *Tx) LockPrivacyRequest(ctx context.Context, id string) (*subprov.PrivacyRequest, error) {
	p, err := scanPrivacyRequest(tx.QueryRow(ctx, `SELECT `+privacyColumns+` FROM privacy_requests WHERE id = ?`+tx.d.ForUpdate(), id))
	if err != nil {
		return nil, fmt.Errorf("privacy request %s: %w", id, err)
	}
	return p, nil
}

// DecidePrivacyRequest records an operator's decision on a pending request.
func (tx *Tx) DecidePrivacyRequest(ctx context.Context, p *subprov.PrivacyRequest, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE privacy_requests SET status = ?, reason = ?, decided_at = ? WHERE id = ?`, p.Status, p.Reason, now.UTC(), p.ID)
	if err != nil {
		return fmt.Errorf("decide privacy request %s: %w", p.ID, err)
	}
	p.DecidedAt = &now
	return nil
}

// LinesOfSubscriberTx lists a subscriber's lines inside a write transaction, newest first (the
// caller holds the subscriber's row locked, so no line is added meanwhile).
func (tx *Tx) LinesOfSubscriberTx(ctx context.Context, subscriberID string) ([]*subprov.Subscription, error) {
	return listSubscriptions(ctx, tx, "lines of subscriber", `WHERE s.subscriber_id = ? ORDER BY s.created_at DESC, s.id`, subscriberID)
}

// ErasedName is the placeholder an erased person's name becomes; ErasedText replaces an
// erased free text (a note, a ticket's subject and texts, a queued mail).
const (
	ErasedName = "Deleted"
	ErasedText = "[deleted]"
)

// ErasedEmail is the placeholder address an erased subscriber keeps: unique, and never a
// mailbox (the .invalid domain does not exist).
func ErasedEmail(subscriberID string) string { return "deleted-" + subscriberID + "@erased.invalid" }

// EraseSubscriber removes a subscriber's logins (with their mailed links, export links
// included, their preferences and their second factors) and replaces its personal data with
// placeholders, inside tx: the names, e-mails, phones and addresses of its contacts and
// authorized users, its notes, the texts of its tickets and their comments, its search terms,
// and its mail (queued or sent). Its lines, invoices and credit notes, with their amounts and
// numbers, are kept, and so are the reasons of its lines' status changes that keepReasons
// lists (the service's own, which say nothing personal).
func (tx *Tx) EraseSubscriber(ctx context.Context, subscriberID string, keepReasons []string, now time.Time) error {
	emails, err := QueryStrings(ctx, tx, "e-mails of the subscriber", `
		SELECT LOWER(email) FROM subscribers WHERE id = ? AND email <> ''
		UNION SELECT LOWER(email) FROM contacts WHERE subscriber_id = ? AND email <> ''
		UNION SELECT LOWER(email) FROM authorized_users WHERE subscriber_id = ? AND email <> ''
		UNION SELECT LOWER(email) FROM accounts WHERE subscriber_id = ? OR authorized_user_id IN (SELECT id FROM authorized_users WHERE subscriber_id = ?)`,
		subscriberID, subscriberID, subscriberID, subscriberID, subscriberID)
	if err != nil {
		return err
	}
	logins := `SELECT id FROM accounts WHERE subscriber_id = ? OR authorized_user_id IN (SELECT id FROM authorized_users WHERE subscriber_id = ?)`
	type step struct {
		what, query string
		args        []any
	}
	steps := []step{
		{"tokens", `DELETE FROM tokens WHERE subject_id IN (` + logins + `) OR subject_id = ?`, []any{subscriberID, subscriberID, subscriberID}},
		{"checkout sessions", `UPDATE checkout_sessions SET account_id = NULL WHERE account_id IN (` + logins + `)`, []any{subscriberID, subscriberID}},
		// The logins' own choices and second factors (the key is in the login's row, gone with it).
		{"preferences", `DELETE FROM account_preferences WHERE account_id IN (` + logins + `)`, []any{subscriberID, subscriberID}},
		{"recovery codes", `DELETE FROM account_recovery_codes WHERE account_id IN (` + logins + `)`, []any{subscriberID, subscriberID}},
		{"logins", `DELETE FROM accounts WHERE id IN (` + logins + `)`, []any{subscriberID, subscriberID}},
		{"authorized users", `UPDATE authorized_users SET firstname = ?, lastname = '', email = '', phonenumber = '', company = '' WHERE subscriber_id = ?`,
			[]any{ErasedName, subscriberID}},
		{"contacts", `UPDATE contacts SET firstname = ?, lastname = '', email = '', phonenumber = '', company = '', street = '', city = '',
			postal_code = '', province = '', country = '', updated_at = ? WHERE subscriber_id = ?`, []any{ErasedName, now.UTC(), subscriberID}},
		{"subscriber", `UPDATE subscribers SET email = ?, search_text = '', phone_digits = '', search_terms = NULL, search_card = NULL,
			updated_at = ? WHERE id = ?`, []any{ErasedEmail(subscriberID), now.UTC(), subscriberID}},
		// The terms a release before migration 0050 indexed (the table stays for such releases).
		{"search terms", `DELETE FROM customer_search_terms WHERE subscriber_id = ?`, []any{subscriberID}},
		{"verification codes", `DELETE FROM verification_codes WHERE subscriber_id = ?`, []any{subscriberID}},
		{"notes", `UPDATE notes SET body = ? WHERE subscriber_id = ?`, []any{ErasedText, subscriberID}},
		// The reasons people gave for the lines' status changes (an operator's words).
		{"status history", `UPDATE subscription_status_history SET reason = ? WHERE reason NOT IN ` + inList(len(keepReasons)) + `
			AND subscription_id IN (SELECT id FROM subscriptions WHERE subscriber_id = ?)`,
			append(append([]any{ErasedText}, anyList(keepReasons)...), subscriberID)},
	}
	tickets := `subscriber_id = ?`
	targs := []any{subscriberID}
	if len(emails) > 0 {
		tickets += ` OR LOWER(contact_email) IN ` + inList(len(emails))
		targs = append(targs, anyList(emails)...)
	}
	steps = append(steps,
		step{"ticket comments", `UPDATE ticket_comments SET body = ? WHERE ticket_id IN (SELECT id FROM tickets WHERE ` + tickets + `)`,
			append([]any{ErasedText}, targs...)},
		step{"tickets", `UPDATE tickets SET subject = ?, article = '', internal_note = '', contact_email = '' WHERE ` + tickets,
			append([]any{ErasedText}, targs...)})
	if len(emails) > 0 {
		// Queued mail is not sent any more: its status says why.
		steps = append(steps, step{"mail", `UPDATE outbox SET to_addr = ?, subject = ?, body = ?, links = '[]',
			status = CASE WHEN status IN ('queued', 'retrying') THEN '` + MailErased + `' ELSE status END WHERE LOWER(to_addr) IN ` + inList(len(emails)),
			append([]any{ErasedEmail(subscriberID), ErasedText, ErasedText}, anyList(emails)...)})
	}
	for _, s := range steps {
		if _, err := tx.Exec(ctx, s.query, s.args...); err != nil {
			return fmt.Errorf("erase subscriber %s: %s: %w", subscriberID, s.what, err)
		}
	}
	// The search index no longer holds the subscriber's terms (its row lists none now).
	stx := tx.forSearch()
	if err := stx.Index().Write(ctx, stx, "", subscriberID, nil); err != nil {
		return fmt.Errorf("erase subscriber %s: search index: %w", subscriberID, err)
	}
	return nil
}

// MailErased is the status of a message a privacy deletion erased before it was sent: it is
// never sent.
const MailErased = "erased"

// PendingPrivacyRequest returns a subscriber's pending privacy request, subprov.ErrNotFound
// when it has none.
func (tx *Tx) PendingPrivacyRequest(ctx context.Context, subscriberID string) (*subprov.PrivacyRequest, error) {
	p, err := scanPrivacyRequest(tx.QueryRow(ctx, `SELECT `+privacyColumns+` FROM privacy_requests WHERE subscriber_id = ? AND status = ?
		ORDER BY created_at LIMIT 1`, subscriberID, subprov.PrivacyPending))
	if err != nil {
		return nil, fmt.Errorf("pending privacy request of %s: %w", subscriberID, err)
	}
	return p, nil
}

// SubscriberNumber returns a subscriber's provider and customer number ("" for none), locking
// the subscriber's row until tx ends.
func (tx *Tx) SubscriberNumber(ctx context.Context, subscriberID string) (providerID, customerNumber string, err error) {
	err = tx.QueryRow(ctx, `SELECT provider_id, COALESCE(customer_number, '') FROM subscribers WHERE id = ?`+tx.d.ForUpdate(), subscriberID).
		Scan(&providerID, &customerNumber)
	if err != nil {
		return "", "", fmt.Errorf("subscriber %s: %w", subscriberID, err)
	}
	return providerID, customerNumber, nil
}
