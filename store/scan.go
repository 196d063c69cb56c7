package store

import (
	"context"
	"database/sql"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/subprov/subprov/internal/sqltext"
)

// NewID returns a new UUID string; every id the service creates is one.
func NewID() string { return uuid.NewString() }

// NewOrderedID returns a time-ordered UUID (version 7) for rows written in bulk whose id is
// no secret (invoices, their lines, ledger documents, audit rows): successive ids sort after
// each other, so a batch appends to the primary-key index instead of writing a random page
// of it per row (the bill run over 100,000 lines spent half its time reading and writing
// those pages). Ids that must be unguessable keep NewID.
func NewOrderedID() string {
	id, err := uuid.NewV7()
	if err != nil {
		return NewID()
	}
	return id.String()
}

// nullStr stores "" as NULL for optional text columns.
func nullStr(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullTime stores nil as NULL and everything else in UTC.
func nullTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC()
}

func timePtr(n sql.NullTime) *time.Time {
	if !n.Valid {
		return nil
	}
	t := n.Time.UTC()
	return &t
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// nullTimeScan scans a nullable instant.
type nullTimeScan struct{ sql.NullTime }

func (n nullTimeScan) ptr() *time.Time { return timePtr(n.NullTime) }

// QueryStrings runs a query that selects one text column on q and returns its values; what
// names the read in errors.
func QueryStrings(ctx context.Context, q Querier, what, query string, args ...any) ([]string, error) {
	return sqltext.Strings(ctx, q, what, query, args...)
}

// rowScanner is a row being read: *sql.Row or *sql.Rows.
type rowScanner = interface{ Scan(...any) error }
