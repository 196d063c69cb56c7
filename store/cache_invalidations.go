package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"

	"github.com/subprov/subprov/store/internal/engine"
)

// The change log of the reads the store remembers (account views, API keys): triggers append
// to cache_invalidations the login, subscriber or provider each change of what those reads show
// concerns (migration 0054), and every process's change feed reads what was appended since it
// last looked (engine.ChangeFeed).

// Subjects of the change log, as its kind column names them.
const (
	subjectAccount    = "account"
	subjectSubscriber = "subscriber"
	subjectProvider   = "provider"
)

// sqliteChangeLog reads the log in the order of its key: SQLite's one writer assigns keys in
// commit order (AUTOINCREMENT never reuses one), so every entry after a mark was committed after
// it. It reads on conn, a read-only connection of its own; deletes go through the writer.
func sqliteChangeLog(s *Store, conn *sql.DB) engine.ChangeLog {
	return engine.ChangeLog{
		End: func(ctx context.Context) (string, error) {
			var seq int64
			err := conn.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM cache_invalidations`).Scan(&seq)
			if err != nil {
				return "", fmt.Errorf("change log end: %w", err)
			}
			return strconv.FormatInt(seq, 10), nil
		},
		Since: func(ctx context.Context, mark string) (string, []engine.Subject, error) {
			after, err := strconv.ParseInt(mark, 10, 64)
			if err != nil {
				return "", nil, fmt.Errorf("change log mark %q: %w", mark, err)
			}
			rows, err := conn.QueryContext(ctx, `SELECT seq, kind, id FROM cache_invalidations WHERE seq > ? ORDER BY seq`, after)
			if err != nil {
				return "", nil, fmt.Errorf("change log since %s: %w", mark, err)
			}
			defer rows.Close()
			next, changed := mark, []engine.Subject(nil)
			for rows.Next() {
				var seq int64
				var sub engine.Subject
				if err := rows.Scan(&seq, &sub.Kind, &sub.ID); err != nil {
					return "", nil, fmt.Errorf("change log since %s: %w", mark, err)
				}
				next, changed = strconv.FormatInt(seq, 10), append(changed, sub)
			}
			if err := rows.Err(); err != nil {
				return "", nil, fmt.Errorf("change log since %s: %w", mark, err)
			}
			return next, changed, nil
		},
		Prune: func(ctx context.Context, mark string) error {
			through, err := strconv.ParseInt(mark, 10, 64)
			if err != nil {
				return fmt.Errorf("change log mark %q: %w", mark, err)
			}
			return s.InTx(ctx, func(tx *Tx) error {
				if _, err := tx.Exec(ctx, `DELETE FROM cache_invalidations WHERE seq <= ?`, through); err != nil {
					return fmt.Errorf("prune the change log up to %d: %w", through, err)
				}
				return nil
			})
		},
		Close: conn.Close,
	}
}

// postgresChangeLog reads the log on reader, a pool of one session of its own (prunes go
// through db), by transaction: a mark is a snapshot, and the entries after
// it are those of the transactions it did not see (begun after it, or in progress then) that
// the current snapshot sees, read in the same statement as that snapshot (the next mark). A
// transaction that commits late is read when it commits, whatever its id; a long one (a
// backup's) does not make each read go back to it.
func postgresChangeLog(reader, db *sql.DB) engine.ChangeLog {
	return engine.ChangeLog{
		End: func(ctx context.Context) (string, error) {
			var snap string
			if err := reader.QueryRowContext(ctx, `SELECT pg_current_snapshot()::text`).Scan(&snap); err != nil {
				return "", fmt.Errorf("change log end: %w", err)
			}
			return snap, nil
		},
		Since: func(ctx context.Context, mark string) (string, []engine.Subject, error) {
			rows, err := reader.QueryContext(ctx, `SELECT pg_current_snapshot()::text, NULL, NULL
				UNION ALL
				SELECT NULL, kind, id FROM cache_invalidations
				WHERE xid >= pg_snapshot_xmax($1::pg_snapshot) OR xid = ANY (ARRAY(SELECT pg_snapshot_xip($1::pg_snapshot)))`, mark)
			if err != nil {
				return "", nil, fmt.Errorf("change log since %s: %w", mark, err)
			}
			defer rows.Close()
			var next string
			var changed []engine.Subject
			for rows.Next() {
				var snap, kind, id sql.NullString
				if err := rows.Scan(&snap, &kind, &id); err != nil {
					return "", nil, fmt.Errorf("change log since %s: %w", mark, err)
				}
				if snap.Valid {
					next = snap.String
				} else {
					changed = append(changed, engine.Subject{Kind: kind.String, ID: id.String})
				}
			}
			if err := rows.Err(); err != nil {
				return "", nil, fmt.Errorf("change log since %s: %w", mark, err)
			}
			if next == "" {
				return "", nil, fmt.Errorf("change log since %s: no snapshot read", mark)
			}
			return next, changed, nil
		},
		Prune: func(ctx context.Context, mark string) error {
			_, err := db.ExecContext(ctx, `DELETE FROM cache_invalidations
				WHERE xid < pg_snapshot_xmax($1::pg_snapshot) AND pg_visible_in_snapshot(xid, $1::pg_snapshot)`, mark)
			if err != nil {
				return fmt.Errorf("prune the change log up to %s: %w", mark, err)
			}
			return nil
		},
		Close: reader.Close,
	}
}

// rememberedTables are the tables whose rows the remembered reads show, those the log's
// triggers follow.
var rememberedTables = []string{"accounts", "checkout_sessions", "subscribers", "contacts", "subscriptions",
	"providers", "api_keys", "plans", "plan_versions"}

// mayChangeRemembered tells whether a statement may write a row a remembered read shows: a
// write naming one of their tables. A commit with such a statement reads the change log before
// its caller goes on (engine.ChangeFeed.Committed), so that the caller reads its own writes;
// the others' changes, if any, are read within the feed's next poll.
func mayChangeRemembered(query string) bool {
	q := strings.TrimLeft(query, " \t\n")
	if len(q) < 6 {
		return false
	}
	if !strings.EqualFold(q[:6], "INSERT") && !strings.EqualFold(q[:6], "UPDATE") && !strings.EqualFold(q[:6], "DELETE") &&
		!strings.EqualFold(q[:4], "WITH") {
		return false
	}
	for _, t := range rememberedTables {
		if strings.Contains(q, t) {
			return true
		}
	}
	return false
}

// EmptyChangeLog deletes the whole change log: after a bulk load (subprov gen) into a
// database no process serves yet, whose entries no one will read.
func (s *Store) EmptyChangeLog(ctx context.Context) error {
	return s.InTx(ctx, func(tx *Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM cache_invalidations`); err != nil {
			return fmt.Errorf("empty the change log: %w", err)
		}
		return nil
	})
}
