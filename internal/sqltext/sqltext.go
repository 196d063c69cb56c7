// Package sqltext builds the parts of SQL statements that the store and agent search both
// write with ? placeholders: lists of placeholders and their arguments, and the keyed
// condition that keeps the planner on a statement's ids.
package sqltext

import "strings"

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
