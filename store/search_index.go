package store

import (
	"context"
	"crypto/md5" //nolint:gosec // a provider's mark in the search index, not a secret (searchKey)
	"database/sql"
	"database/sql/driver"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
	"github.com/subprov/subprov/search"
	"github.com/subprov/subprov/store/internal/engine"
)

// The customer search index's upkeep (subscribers.search_terms and search_card, and the
// engine's index of the terms): what a transaction changed is re-indexed just before it
// commits; package search holds the terms, the cards and the searches.

// reindexAtCommit rewrites the subscriber's search terms once, just before tx commits, from
// its rows as they stand then: a transaction that creates a subscriber and its line (an
// order) indexes it once, not once per row.
func (tx *Tx) reindexAtCommit(subscriberID string) {
	if subscriberID != "" && !slices.Contains(tx.reindex, subscriberID) {
		tx.reindex = append(tx.reindex, subscriberID)
	}
}

// beforeCommit runs the work deferred to the end of tx.
func (tx *Tx) beforeCommit(ctx context.Context) error {
	for _, id := range tx.reindex {
		if err := tx.ReindexSubscriber(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// ReindexSubscriber rewrites a subscriber's search terms and card from its current rows, inside
// tx (search.Reindex).
func (tx *Tx) ReindexSubscriber(ctx context.Context, subscriberID string) error {
	return search.Reindex(ctx, tx.forSearch(), subscriberID)
}

// forSearch is tx as package search runs in it, with the engine's index.
func (tx *Tx) forSearch() searchTx { return searchTx{searchQuerier{tx, searchIndexOf(tx.d)}, tx} }

// BackfillSearchTerms indexes subscribers that have no search terms yet (rows written before
// the index existed). It runs once per database: a setting records that it finished.
func (s *Store) BackfillSearchTerms(ctx context.Context) error {
	const done = "customer_search_terms_backfilled"
	if _, ok, err := s.Setting(ctx, done); err != nil || ok {
		return err
	}
	after := ""
	for {
		ids, err := QueryStrings(ctx, s.R(), "subscribers to index", `SELECT id FROM subscribers WHERE id > ? ORDER BY id LIMIT 500`, after)
		if err != nil {
			return err
		}
		if len(ids) == 0 {
			return s.PutSetting(ctx, done, "1")
		}
		err = s.InTx(ctx, func(tx *Tx) error {
			for _, id := range ids {
				if err := tx.ReindexSubscriber(ctx, id); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		after = ids[len(ids)-1]
	}
}

// ReindexAfterOlderRelease indexes again the subscribers a release before migration 0050
// indexed in its own terms table (customer_search_terms) while it ran on this database, a
// rollback, and empties the table: on SQLite that release did not write the FTS5 table, so
// those subscribers were missing from it or stale in it. It returns how many it indexed. With
// nothing there, the usual case, it is one read of an empty table.
func (s *Store) ReindexAfterOlderRelease(ctx context.Context) (int, error) {
	done := 0
	for {
		ids, err := QueryStrings(ctx, s.R(), "subscribers an older release indexed",
			`SELECT DISTINCT subscriber_id FROM customer_search_terms LIMIT 500`)
		if err != nil || len(ids) == 0 {
			return done, err
		}
		err = s.InTx(ctx, func(tx *Tx) error {
			in, args := sqltext.Placeholders(len(ids)), make([]any, len(ids))
			for i, id := range ids {
				args[i] = id
			}
			// Listing no terms makes the re-index write the engine's index whatever it holds.
			if _, err := tx.Exec(ctx, `UPDATE subscribers SET search_terms = NULL WHERE id IN (`+in+`)`, args...); err != nil {
				return err
			}
			for _, id := range ids {
				// Terms of a subscriber no longer there are only deleted.
				if err := tx.ReindexSubscriber(ctx, id); err != nil && !errors.Is(err, subprov.ErrNotFound) {
					return err
				}
			}
			_, err := tx.Exec(ctx, `DELETE FROM customer_search_terms WHERE subscriber_id IN (`+in+`)`, args...)
			return err
		})
		if err != nil {
			return done, fmt.Errorf("index again what an older release indexed: %w", err)
		}
		done += len(ids)
	}
}

// SearchR returns the querier agent search reads through: the read pool on SQLite, the search
// pool on PostgreSQL, whose sessions run generic plans (see openPostgres).
func (s *Store) SearchR() search.Querier {
	if s.searchDB != nil {
		return searchQuerier{reader{s.searchDB, s.Dialect}, searchIndexOf(s.Dialect)}
	}
	return searchQuerier{s.R(), searchIndexOf(s.Dialect)}
}

// searchQuerier hands package search a querier of the store, whose rows scan with translated
// errors, and the engine's index; search names its own Row, since it cannot import the store
// that re-indexes through it.
type searchQuerier struct {
	q  Querier
	ix search.Index
}

func (a searchQuerier) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return a.q.Query(ctx, query, args...)
}

func (a searchQuerier) QueryRow(ctx context.Context, query string, args ...any) search.Row {
	return a.q.QueryRow(ctx, query, args...)
}

func (a searchQuerier) Index() search.Index { return a.ix }

// searchTx is a transaction of the store as search's index upkeep runs in it.
type searchTx struct {
	searchQuerier
	tx *Tx
}

func (a searchTx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return a.tx.Exec(ctx, query, args...)
}

// The engines' text indexes of the terms a subscriber row lists (subscribers.search_terms).
// Each term is indexed behind its provider's mark (searchKey), so a prefix reads the entries
// of the providers searched only (one, or each of a platform's for a search over every
// provider: a prefix behind each one's mark), however many the platform serves; the provider's
// id is still checked (PostgreSQL on the subscriber's row, SQLite on the FTS5 row), as two
// providers may share a mark.
//   - PostgreSQL: the GIN index subscribers_search, of subscriber_search_lexemes(provider_id,
//     search_terms), a function of the row: it follows the row, nothing more to write.
//   - SQLite: the FTS5 table customer_search, one row per indexed subscriber holding its id and
//     its provider's, whose rowid the subscriber's row names (search_row).
// A query's prefixes must all match (AND), each as a prefix of some term, behind one of the
// providers' marks (the groups of each mark OR'ed).

// searchKeyLen is the length of a provider's mark, in hex digits.
const searchKeyLen = 6

// searchKey is a provider's mark on its customers' index entries: the first six hex digits of
// the MD5 of its id, as PostgreSQL's left(md5(provider_id), 6) computes it. It spreads providers,
// it protects nothing: results are checked against the provider's id.
func searchKey(providerID string) string {
	sum := md5.Sum([]byte(providerID))
	return hex.EncodeToString(sum[:])[:searchKeyLen]
}

// SearchLexemes is a list of terms as the engines index it, each behind the provider's mark;
// bulk loaders (subprov gen) write SQLite's FTS5 table with it.
func SearchLexemes(providerID string, terms []string) string {
	key := searchKey(providerID)
	var b strings.Builder
	for i, t := range terms {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(key)
		b.WriteString(t)
	}
	return b.String()
}

// subscriber_search_lexemes(provider_id, search_terms) on SQLite, as on PostgreSQL (where
// migration 0050 defines it in SQL): the migration fills the FTS5 table with it.
func init() {
	engine.RegisterSQLiteFunction("subscriber_search_lexemes", 2, func(args []driver.Value) (driver.Value, error) {
		provider, _ := args[0].(string)
		terms, _ := args[1].(string)
		return SearchLexemes(provider, strings.Fields(terms)), nil
	})
}

func searchIndexOf(d Dialect) search.Index {
	if d == Postgres {
		return pgSearch{}
	}
	return sqliteSearch{}
}

type pgSearch struct{}

// Write has nothing to do: the index follows the row's search_terms.
func (pgSearch) Write(context.Context, search.Tx, string, string, []string) error { return nil }

// pgSearchMatch reads the GIN index: the subscribers of n providers whose lexemes match the
// tsquery, each prefix as key+prefix:*. The providers are checked per row (unindexed), so no
// plan reads a provider's whole range of an index led by provider_id instead. Arguments: the
// tsquery, the providers, the limit.
func pgSearchMatch(n int) string {
	return `SELECT id FROM subscribers WHERE subscriber_search_lexemes(provider_id, search_terms) @@ CAST(? AS tsquery)
	AND ` + sqltext.Unindexed("provider_id") + ` IN ` + inList(n) + ` LIMIT ?`
}

func (pgSearch) Match(ctx context.Context, q search.Querier, providerIDs []string, prefixes []string, max int) ([]string, error) {
	return sqltext.Strings(ctx, q, "search subscribers", pgSearchMatch(len(providerIDs)), matchArgs(pgTSQuery(providerIDs, prefixes), providerIDs, max)...)
}

// matchArgs are a match statement's arguments: the engine's query, the providers, the limit.
func matchArgs(query string, providerIDs []string, max int) []any {
	return append(sqltext.Args(query, providerIDs), max)
}

// pgTSQuery is the tsquery of prefixes for the providers: terms are [a-z0-9], nothing to quote.
func pgTSQuery(providerIDs []string, prefixes []string) string {
	return markedPrefixes(providerIDs, prefixes, ":*", " & ", " | ")
}

// markedPrefixes is the engine's query of prefixes for the providers: for each distinct mark
// of theirs, the prefixes behind it, each followed by sign (the engine's sign of a prefix)
// and joined with and, in parentheses; the groups joined with or.
func markedPrefixes(providerIDs []string, prefixes []string, sign, and, or string) string {
	var groups []string
	for _, id := range providerIDs {
		key := searchKey(id)
		parts := make([]string, len(prefixes))
		for i, p := range prefixes {
			parts[i] = key + p + sign
		}
		if g := "(" + strings.Join(parts, and) + ")"; !slices.Contains(groups, g) {
			groups = append(groups, g)
		}
	}
	return strings.Join(groups, or)
}

type sqliteSearch struct{}

// Write replaces the subscriber's row of the FTS5 table, under the same rowid when it has one
// (a NULL rowid is a new one).
func (sqliteSearch) Write(ctx context.Context, tx search.Tx, providerID, subscriberID string, terms []string) error {
	var row sql.NullInt64
	if err := tx.QueryRow(ctx, `SELECT search_row FROM subscribers WHERE id = ?`, subscriberID).Scan(&row); err != nil {
		return err
	}
	if row.Valid {
		if _, err := tx.Exec(ctx, `DELETE FROM customer_search WHERE rowid = ?`, row.Int64); err != nil {
			return err
		}
	}
	if len(terms) == 0 {
		_, err := tx.Exec(ctx, `UPDATE subscribers SET search_row = NULL WHERE id = ?`, subscriberID)
		return err
	}
	res, err := tx.Exec(ctx, `INSERT INTO customer_search (rowid, subscriber_id, provider_id, terms) VALUES (?, ?, ?, ?)`,
		row, subscriberID, providerID, SearchLexemes(providerID, terms))
	if err != nil || row.Valid {
		return err
	}
	id, err := res.LastInsertId()
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, `UPDATE subscribers SET search_row = ? WHERE id = ?`, id, subscriberID)
	return err
}

// sqliteSearchMatch reads the FTS5 table, whose rows hold their subscriber's provider: checked
// there, no read of the subscriber's row (which made a search of 101 matches a quarter
// slower). Arguments: the FTS5 query, n providers, the limit.
func sqliteSearchMatch(n int) string {
	return `SELECT subscriber_id FROM customer_search WHERE customer_search MATCH ? AND provider_id IN ` + inList(n) + ` LIMIT ?`
}

func (sqliteSearch) Match(ctx context.Context, q search.Querier, providerIDs []string, prefixes []string, max int) ([]string, error) {
	return sqltext.Strings(ctx, q, "search subscribers", sqliteSearchMatch(len(providerIDs)), matchArgs(ftsQuery(providerIDs, prefixes), providerIDs, max)...)
}

// ftsQuery is the FTS5 query of prefixes for the providers: barewords with a *, all of which
// must match, behind one of the providers' marks.
func ftsQuery(providerIDs []string, prefixes []string) string {
	return markedPrefixes(providerIDs, prefixes, "*", " ", " OR ")
}
