package store

import (
	"context"
	"fmt"
	"time"
)

// ExportSection is one kind of record a person's data export reads (privacy.Export decides
// which sections a person's export holds and whom each is read for).
type ExportSection string

// The sections, each read for the id (or e-mail) its comment names.
const (
	ExportLogin          ExportSection = "login"           // a login id: its metadata, never its hash
	ExportPreferences    ExportSection = "preferences"     // a login id
	ExportSubscriber     ExportSection = "subscriber"      // a subscriber id: the account record
	ExportHolderContact  ExportSection = "holder_contact"  // a subscriber id: the holder's contact
	ExportAuthorizedUser ExportSection = "authorized_user" // an authorized user id: their record
	ExportLines          ExportSection = "lines"           // a subscriber id
	ExportInvoices       ExportSection = "invoices"        // a subscriber id
	ExportCreditNotes    ExportSection = "credit_notes"    // a subscriber id
	ExportNotes          ExportSection = "notes"           // a subscriber id: notes staff kept about the account
	ExportTickets        ExportSection = "tickets"         // a provider id and an e-mail: tickets the person opened
	ExportMail           ExportSection = "mail"            // an e-mail: what was mailed to it (never a body, which may hold a live link)
	ExportAudit          ExportSection = "audit"           // a login id and an object id: what the login did, and what was done to it or the object
)

var exportQueries = map[ExportSection]string{
	ExportLogin:          `SELECT email, created_at, password_set_at, totp_enabled AS second_factor_on FROM accounts WHERE id = ?`,
	ExportPreferences:    `SELECT language, notify_billing, notify_service, updated_at FROM account_preferences WHERE account_id = ?`,
	ExportSubscriber:     `SELECT customer_number, email, created_at FROM subscribers WHERE id = ?`,
	ExportHolderContact:  `SELECT firstname, lastname, email, phonenumber, company, street, city, postal_code, province, country FROM contacts WHERE subscriber_id = ? AND role = 'holder'`,
	ExportAuthorizedUser: `SELECT firstname, lastname, email, phonenumber, company, created_at FROM authorized_users WHERE id = ?`,
	ExportLines: `SELECT id, status, plan_version_id, building_id, unit_id, billing_owner, billing_day, started_at, canceled_at, ended_at, created_at
		FROM subscriptions WHERE subscriber_id = ? ORDER BY created_at, id`,
	ExportInvoices: `SELECT number, invoice_date, period, kind, status, net_minor, tax_minor, total_minor, currency, due_date, paid_at
		FROM invoices WHERE subscriber_id = ? ORDER BY created_at, id`,
	ExportCreditNotes: `SELECT number, state, reason, amount_minor, currency, created_at FROM credit_notes WHERE subscriber_id = ? ORDER BY created_at, id`,
	ExportNotes:       `SELECT author, body, created_at FROM notes WHERE subscriber_id = ? ORDER BY created_at, id`,
	ExportTickets: `SELECT number, kind, subject, article, status, created_at FROM tickets
		WHERE provider_id = ? AND LOWER(contact_email) = LOWER(?) ORDER BY created_at, id`,
	ExportMail: `SELECT to_addr, subject, status, created_at, sent_at FROM outbox WHERE LOWER(to_addr) = LOWER(?) ORDER BY created_at, id`,
	ExportAudit: `SELECT action, object_type, subject_id AS object_id, actor_type, reason, changes, created_at FROM audit_log
		WHERE (actor_type = 'subscriber' AND actor_id = ?) OR subject_id IN (?, ?) ORDER BY created_at, id`,
}

// Record is one row of an export section, by column.
type Record map[string]any

// ExportRecords reads one section of a person's export for args, inside tx (so the export is
// read with its link used, at one moment).
func (tx *Tx) ExportRecords(ctx context.Context, section ExportSection, args ...any) ([]Record, error) {
	rows, err := tx.Query(ctx, exportQueries[section], args...)
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", section, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, fmt.Errorf("export %s: %w", section, err)
	}
	out := []Record{}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, fmt.Errorf("export %s: %w", section, err)
		}
		r := Record{}
		for i, c := range cols {
			r[c] = exportValue(c, vals[i])
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("export %s: %w", section, err)
	}
	return out, nil
}

// exportBooleans are the export queries' boolean columns, by the name they are read as.
// SQLite stores a boolean as 0 or 1 and its driver reports no column type to tell them from
// numbers, so the export names them.
var exportBooleans = map[string]bool{"second_factor_on": true, "notify_billing": true, "notify_service": true}

// exportValue is one column's value as the export writes it, the same on both engines: a
// boolean as true or false, a timestamp as RFC 3339 in UTC, text as a string, a number as a
// number, NULL as null.
func exportValue(column string, v any) any {
	switch x := v.(type) {
	case int64:
		if exportBooleans[column] {
			return x != 0
		}
	case []byte:
		return string(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	}
	return v
}
