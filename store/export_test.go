package store

import (
	"context"
	"time"

	"github.com/subprov/subprov"

	"github.com/subprov/subprov/internal/sqltext"
)

// MigrateTo applies the migrations up to version last, so a test can write data in an older
// schema and then migrate it.
func (s *Store) MigrateTo(ctx context.Context, last int) ([]string, error) {
	return s.migrateTo(ctx, last)
}

// StandInLaterTables gives a database migrated to a version before 0050 the tables today's
// writes expect of later migrations: the lines' counts (line_counts, 0052, which subprov gen
// recounts), the change log of remembered reads (cache_invalidations, 0054, which gen empties)
// and, on SQLite, the search index (subscribers.search_row and the FTS5 table
// customer_search, 0050; PostgreSQL's index needs nothing from the writes). A test can then
// load rows into the older schema through today's code; the function returned takes the
// tables out again before the migrations run (0050 indexes the rows anew, 0052 counts them).
func (s *Store) StandInLaterTables(ctx context.Context) (func() error, error) {
	create := []string{`CREATE TABLE line_counts (provider_id TEXT NOT NULL, status TEXT NOT NULL, shard TEXT NOT NULL, n BIGINT NOT NULL,
		PRIMARY KEY (provider_id, status, shard))`, `CREATE TABLE cache_invalidations (kind TEXT NOT NULL, id TEXT NOT NULL)`}
	drop := []string{`DROP TABLE line_counts`, `DROP TABLE cache_invalidations`}
	if s.Dialect == SQLite {
		create = append(create, `ALTER TABLE subscribers ADD COLUMN search_row INTEGER`,
			`CREATE VIRTUAL TABLE customer_search USING fts5 (subscriber_id UNINDEXED, provider_id UNINDEXED, terms, content = '', contentless_delete = 1,
				contentless_unindexed = 1, detail = none, tokenize = 'ascii')`)
		// Dropping the FTS5 table leaves the table of its unindexed column behind (SQLite 3.54).
		drop = append(drop, `DROP TABLE customer_search`, `DROP TABLE IF EXISTS customer_search_content`, `ALTER TABLE subscribers DROP COLUMN search_row`)
	}
	for _, q := range create {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			return nil, err
		}
	}
	return func() error {
		for _, q := range drop {
			if _, err := s.db.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// SearchMatchStatements is agent search's lookup in d's index, a two-phrase query's, for one
// provider and for three at once (a platform-wide search of the operations surface).
func SearchMatchStatements(d Dialect) map[string]Statement {
	return map[string]Statement{
		"search match":                      SearchMatchStatement(d, []string{"p-search"}),
		"search match over three providers": SearchMatchStatement(d, []string{"p-search", "p-other", "p-third"}),
	}
}

// SearchMatchStatement is agent search's lookup of a two-phrase query in d's index over the
// providers.
func SearchMatchStatement(d Dialect, providerIDs []string) Statement {
	phrases := []string{"marietremblay", "1204"}
	if d == Postgres {
		return Statement{pgSearchMatch(len(providerIDs)), matchArgs(pgTSQuery(providerIDs, phrases), providerIDs, 101)}
	}
	return Statement{sqliteSearchMatch(len(providerIDs)), matchArgs(ftsQuery(providerIDs, phrases), providerIDs, 101)}
}

// LineHolding is the read of the line that holds a place.
const LineHolding = lineHolding

// Statement is a statement with its arguments, for the plan tests in queryplans_test.go.
// (an alias of an unnamed struct: the same type as every package's, for testdb's checks).
type Statement = struct {
	Query string
	Args  []any
}

// PendingEventStatements are the statements on a provider's pending events as d writes them,
// with arguments for providerID.
func PendingEventStatements(d Dialect, providerID string) map[string]Statement {
	return map[string]Statement{
		"events to number":        {eventsToSequence(d), []any{providerID, 50}},
		"any event to number":     {hasEventsToSequence(d), []any{providerID}},
		"pending events in order": {pendingInOrder(d), []any{providerID, 0, 50}},
		"hold queued events":      {holdQueuedEvents(d), []any{providerID, providerID, providerID}},
	}
}

// PortLineStatements are the reads of a port's lines, with arguments for portID (and for the
// switch it is on, switchName).
func PortLineStatements(portID, switchName string) map[string]Statement {
	return map[string]Statement{
		"port holders":              {portHoldersQuery, []any{portID}},
		"latest line on port":       {latestLineOnPortQuery, []any{portID}},
		"line in service on port":   {lineInServiceOnPortQuery, []any{portID, "l-0"}},
		"ports to sample on switch": {portsToSampleQuery, []any{switchName}},
	}
}

// RecurringCandidateStatements are the bill run's reads of a page of a provider's
// platform-billed lines and of which of ids have an invoice for the period, with arguments for
// providerID.
func RecurringCandidateStatements(providerID string, ids []string) map[string]Statement {
	return map[string]Statement{
		"page of platform-billed lines": {`SELECT ` + subscriptionColumns + ` FROM subscriptions s ` + recurringPage,
			[]any{providerID, 31, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), "", 500}},
		"lines invoiced for the period": {periodInvoicedOf(len(ids)), append(anyList(ids), "2026-12")},
	}
}

// KeyedStatements are the statements that name their rows by id and check their provider
// besides, with arguments for providerID and ids.
func KeyedStatements(providerID string, ids []string) map[string]Statement {
	n, keyed := len(ids), sqltext.Args(providerID, ids)
	var number []any
	for i, id := range ids {
		number = append(number, id, int64(i+1))
	}
	return map[string]Statement{
		"mark events delivered": {markDelivered(n), keyed},
		"number events":         {numberEvents(n), append(number, keyed...)},
		"service locations":     {serviceLocationsOf(n), keyed},
	}
}

// WebhookEventsQuery is the read of one page of the operators' list of webhook events.
func WebhookEventsQuery(f WebhookEventFilter, page subprov.Page) Statement {
	q, args, err := webhookEventsQuery(f, page)
	if err != nil {
		panic(err)
	}
	return Statement{q, args}
}

// SubscriberListStatements are the reads of a page of the operations surface's list of a
// provider's subscribers, of the slices of its subscribers with a line in a status, of every
// provider's with a line pending installation or suspended, and of those (its own, every
// provider's) with a line being provisioned or whose provisioning failed, and
// the overview's counts of those lines and of the overdue invoices (the provider's, every
// provider's), as d writes them, with arguments for providerID.
func SubscriberListStatements(d Dialect, providerID string) map[string]Statement {
	where, args := SubscriberFilter{ProviderID: providerID}.where()
	out := map[string]Statement{
		"a provider's page":                           {subscriberPage(append(where, "b.id > ?")), append(args, "s-1", 51)},
		"subscribers with a line in status":           {subscribersWithStatus, []any{providerID, "SUSPENDED", "s-1", 200}},
		"a page of subscribers with a line in status": {subscribersIn(subscribersWithStatus), []any{providerID, "SUSPENDED", "s-1", 51}},
	}
	for name, provider := range map[string]string{"a provider's": providerID, "every provider's": ""} {
		q, args := subscribersInWorkflowState(ProvisioningFailed, provider, "s-1", 200)
		out[name+" subscribers failing provisioning"] = Statement{q, args}
		out["a page of "+name+" subscribers failing provisioning"] = Statement{subscribersIn(q), args}
		q, args = subscribersInWorkflowState(Provisioning, provider, "s-1", 200)
		out[name+" subscribers being provisioned"] = Statement{q, args}
		out["a page of "+name+" subscribers being provisioned"] = Statement{subscribersIn(q), args}
		q, args = failedProvisioningCount(ProvisioningFailed, provider)
		out["the overview's count of "+name+" lines failing provisioning"] = Statement{q, args}
		q, args = d.overdueCount(InvoiceOpen, "2026-12-01", provider)
		out["the overview's count of "+name+" overdue invoices"] = Statement{q, args}
	}
	for _, status := range indexedStatuses {
		q, args := subscribersWithRareStatus(status, "s-1", 200)
		out["every provider's subscribers with a line "+status] = Statement{q, args}
		out["a page of every provider's subscribers with a line "+status] = Statement{subscribersIn(q), args}
	}
	return out
}

// RemembersView and RemembersKey report whether an account view or an API key (by the hash
// of its secret) is remembered; RememberedResets how many times the change feed forgot every
// remembered read (after a gap in its reads of the log).
func (s *Store) RemembersView(accountID string) bool {
	held, _ := s.views.Holds(accountID)
	return held
}
func (s *Store) RemembersKey(keyHash string) bool { held, _ := s.keys.Holds(keyHash); return held }
func (s *Store) RememberedResets() uint64         { _, n := s.views.Holds(""); return n }

// RememberedTables are the tables whose writes make a commit read the change log.
var RememberedTables = rememberedTables

// AccountViewQuery and APIKeyQuery are the remembered reads' statements; ProviderColumns the
// columns a provider is read with.
var (
	AccountViewQuery = accountViewQuery
	APIKeyQuery      = apiKeyQuery
	ProviderColumns  = providerColumns
)
