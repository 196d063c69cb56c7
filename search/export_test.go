package search

import "github.com/subprov/subprov/internal/sqltext"

// Statement is a statement with its arguments, for the plan tests in queryplans_test.go.
// (an alias of an unnamed struct: the same type as every package's, for testdb's checks).
type Statement = struct {
	Query string
	Args  []any
}

// CardStatements are the statements that read a search page's cards, by id with their
// provider checked besides, with arguments for providerID and ids.
func CardStatements(providerID string, ids []string) map[string]Statement {
	n, keyed := len(ids), sqltext.Args(providerID, ids)
	return map[string]Statement{
		"search cards":           {candidateCards(n), keyed},
		"search cards from rows": {joinedCards(n), keyed},
	}
}

// SubscribersByIDPrefixStatement is the customer-id search, with arguments for providerIDs
// and prefix.
func SubscribersByIDPrefixStatement(providerIDs []string, prefix string) Statement {
	args := append([]any{prefix}, sqltext.Args(prefix+"{", providerIDs)...)
	return Statement{subscribersByIDPrefix(len(providerIDs)), append(args, 101)}
}
