package store

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

const auditColumns = `id, created_at, provider_id, actor_type, actor_id, actor_email, action, object_type, subject_id,
	reason, changes, details, request_id, ip`

// auditInsert is the head of an audit entry's insert; auditRow gives its values. actor keeps
// the one-string name earlier entries used ("operator:EMAIL", "billing").
const auditInsert = `INSERT INTO audit_log (` + auditColumns + `, actor)`

func auditRow(e subprov.AuditEntry, now time.Time) ([]any, error) {
	changes, err := json.Marshal(e.Changes)
	if err != nil {
		return nil, fmt.Errorf("audit %s: changes: %w", e.Action, err)
	}
	if e.Changes == nil {
		changes = []byte("{}")
	}
	details := e.Details
	if details == "" {
		details = "{}"
	}
	id := e.ID
	if id == "" {
		id = NewOrderedID()
	}
	actor := string(e.Actor.Type)
	if e.Actor.Email != "" {
		actor += ":" + e.Actor.Email
	} else if e.Actor.ID != "" {
		actor += ":" + e.Actor.ID
	}
	return []any{id, now.UTC(), nullStr(e.ProviderID), string(e.Actor.Type), nullStr(e.Actor.ID), nullStr(e.Actor.Email),
		e.Action, e.ObjectType, e.ObjectID, nullStr(e.Reason), string(changes), details, nullStr(e.RequestID), nullStr(e.IP), actor}, nil
}

// RecordAudit appends an entry to the audit log, in the transaction of the change it records.
func (tx *Tx) RecordAudit(ctx context.Context, e subprov.AuditEntry, now time.Time) error {
	return tx.InsertAudits(ctx, []subprov.AuditEntry{e}, now)
}

// InsertAudit records an action of an earlier entry kind, whose actor is one string
// (subprov.ActorNamed) and whose object is the subject id; the action's object type is the
// part of the action before its dot.
func (tx *Tx) InsertAudit(ctx context.Context, providerID, actor, action, subjectID, details string, now time.Time) error {
	e := subprov.NewAudit(ctx, providerID, action, strings.SplitN(action, ".", 2)[0], subjectID)
	e.Actor, e.Details, e.Changes = subprov.ActorNamed(ctx, actor), details, nil
	return tx.RecordAudit(ctx, e, now)
}

// InsertAudits appends a batch of entries.
func (tx *Tx) InsertAudits(ctx context.Context, audits []subprov.AuditEntry, now time.Time) error {
	rows := make([][]any, len(audits))
	for i, a := range audits {
		row, err := auditRow(a, now)
		if err != nil {
			return err
		}
		rows[i] = row
	}
	if err := tx.insertRows(ctx, auditInsert, "", rows, nil); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// AuditFilter narrows a read of the audit log; "" matches anything.
type AuditFilter struct {
	ProviderID string // the reader's scope: a provider's entries only
	ActorID    string
	ObjectID   string
	Action     string
}

// AuditEntries lists the log newest first, page.Limit+1 entries after the page's position
// (an entry's time and id, as subprov.AuditEntry's key).
func (s *Store) AuditEntries(ctx context.Context, f AuditFilter, page subprov.Page) ([]subprov.AuditEntry, error) {
	var where []string
	var args []any
	for _, c := range []struct{ col, v string }{{"provider_id", f.ProviderID}, {"actor_id", f.ActorID}, {"subject_id", f.ObjectID}, {"action", f.Action}} {
		if c.v != "" {
			where = append(where, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	if !page.First() {
		at, err := time.Parse(time.RFC3339Nano, page.After[0])
		if err != nil || len(page.After) != 2 {
			return nil, subprov.Invalid(map[string]string{"cursor": "is not a cursor this list issued"})
		}
		where = append(where, "(created_at < ? OR (created_at = ? AND id < ?))")
		args = append(args, at.UTC(), at.UTC(), page.After[1])
	}
	q := `SELECT ` + auditColumns + ` FROM audit_log`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	args = append(args, page.Limit+1)
	return sqltext.QueryAll(ctx, s.R(), "audit entries", scanAudit, q, args...)
}

// AuditKey is an entry's position in the log's order, for the next page's cursor.
func AuditKey(e subprov.AuditEntry) []string {
	return []string{e.At.UTC().Format(time.RFC3339Nano), e.ID}
}

func scanAudit(r interface{ Scan(...any) error }) (subprov.AuditEntry, error) {
	var e subprov.AuditEntry
	var provider, actorID, actorEmail, reason, requestID, ip *string
	var changes string
	err := r.Scan(&e.ID, &e.At, &provider, &e.Actor.Type, &actorID, &actorEmail, &e.Action, &e.ObjectType, &e.ObjectID,
		&reason, &changes, &e.Details, &requestID, &ip)
	if err != nil {
		return e, err
	}
	e.ProviderID, e.Actor.ID, e.Actor.Email, e.Reason, e.RequestID, e.IP =
		subprov.Deref(provider), subprov.Deref(actorID), subprov.Deref(actorEmail), subprov.Deref(reason), subprov.Deref(requestID), subprov.Deref(ip)
	e.Changes = subprov.Changes{}
	if err := json.Unmarshal([]byte(changes), &e.Changes); err != nil {
		return e, fmt.Errorf("audit entry %s: changes: %w", e.ID, err)
	}
	return e, nil
}
