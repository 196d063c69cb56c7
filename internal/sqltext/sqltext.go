// Package sqltext holds what the store and agent search both need of the statements they
// write with ? placeholders: lists of placeholders and their arguments, the keyed condition
// that keeps the planner on a statement's ids, and the loop that reads a statement's rows.
package sqltext

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Placeholders is a list of n placeholders: "?, ?, ?".
func Placeholders(n int) string { return strings.TrimSuffix(strings.Repeat("?, ", n), ", ") }

// Args are first and then ids, as a statement's arguments.
func Args(first any, ids []string) []any {
	args := []any{first}
	for _, id := range ids {
		args = append(args, id)
	}
	return args
}

// Unindexed is col as an expression that no index serves, for a statement that names its rows
// by key (a list of ids) and checks their provider besides: the key's index then does the
// work. With a few ids, both engines with the statistics of a new deployment (SQLite never
// gathers any itself; PostgreSQL's lag behind a growing table) preferred an index led by
// provider_id and read the provider's whole range of it: for a search page's cards every
// subscriber of the provider, for the webhook flusher's record of its deliveries every event
// the provider ever had (TestKeyedStatementsReadTheirKeys, TestSearchCardsReadTheirKeys).
func Unindexed(col string) string { return col + " || ''" }

// ProvidersKeys is the condition of such a statement: providerCol = ? through Unindexed, and
// keyCol in a list of n. Arguments: the provider, then the keys.
func ProvidersKeys(providerCol, keyCol string, n int) string {
	return Unindexed(providerCol) + ` = ? AND ` + keyCol + ` IN (` + Placeholders(n) + `)`
}

// Querier runs a read: the store's read pool or transaction, or the querier it hands search.
type Querier interface {
	Query(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// QueryAll runs query on q and reads every row with scan; what names the read in errors.
func QueryAll[T any](ctx context.Context, q Querier, what string, scan func(interface{ Scan(...any) error }) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// Strings runs a query that selects one text column on q and returns its values; what names
// the read in errors.
func Strings(ctx context.Context, q Querier, what, query string, args ...any) ([]string, error) {
	return QueryAll(ctx, q, what, func(r interface{ Scan(...any) error }) (v string, err error) { return v, r.Scan(&v) }, query, args...)
}
