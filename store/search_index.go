package store

import (
	"context"
	"database/sql"
	"slices"

	"github.com/subprov/subprov/search"
)

// The customer search index's upkeep (table customer_search_terms, subscribers.search_terms and
// search_card): what a transaction changed is re-indexed just before it commits; package search
// holds the terms, the cards and the searches.

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
	return search.Reindex(ctx, searchTx{searchQuerier{tx}, tx}, subscriberID, slices.Contains(tx.created, subscriberID))
}

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

// SearchR returns the querier agent search reads through: the read pool on SQLite, the search
// pool on PostgreSQL, whose sessions run generic plans (see openPostgres).
func (s *Store) SearchR() search.Querier {
	if s.searchDB != nil {
		return searchQuerier{reader{s.searchDB, s.Dialect}}
	}
	return searchQuerier{s.R()}
}

// searchQuerier hands package search a querier of the store, whose rows scan with translated
// errors; search names its own Row, since it cannot import the store that re-indexes through it.
type searchQuerier struct{ q Querier }

func (a searchQuerier) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return a.q.Query(ctx, query, args...)
}

func (a searchQuerier) QueryRow(ctx context.Context, query string, args ...any) search.Row {
	return a.q.QueryRow(ctx, query, args...)
}

// searchTx is a transaction of the store as search's index upkeep runs in it.
type searchTx struct {
	searchQuerier
	tx *Tx
}

func (a searchTx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return a.tx.Exec(ctx, query, args...)
}
