package store

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov"
)

// ConsoleSession is a signed-in operator's console session as stored: the SHA-256 of its
// cookie's value, the operator's token generation at sign-in, its CSRF token and its times.
type ConsoleSession struct {
	IDHash          string
	OperatorID      string
	TokenGeneration int64
	CSRFToken       string
	CreatedAt       time.Time
	LastSeenAt      time.Time
}

// InsertConsoleSession stores a new session and drops the operator's sessions that were
// last seen before stale: every sign-in tidies its operator's ended ones.
func (tx *Tx) InsertConsoleSession(ctx context.Context, cs ConsoleSession, stale time.Time) error {
	if _, err := tx.Exec(ctx, `DELETE FROM console_sessions WHERE operator_id = ? AND last_seen_at < ?`, cs.OperatorID, stale.UTC()); err != nil {
		return fmt.Errorf("drop ended console sessions: %w", err)
	}
	_, err := tx.Exec(ctx, `INSERT INTO console_sessions (id_hash, operator_id, token_generation, csrf_token, created_at, last_seen_at)
		VALUES (?, ?, ?, ?, ?, ?)`, cs.IDHash, cs.OperatorID, cs.TokenGeneration, cs.CSRFToken, cs.CreatedAt.UTC(), cs.LastSeenAt.UTC())
	if err != nil {
		return fmt.Errorf("insert console session: %w", err)
	}
	return nil
}

// ConsoleSession reads a session by the hash of its cookie's value, with its operator, in one
// query; subprov.ErrNotFound when there is none.
func (s *Store) ConsoleSession(ctx context.Context, idHash string) (*ConsoleSession, *subprov.Operator, error) {
	var cs ConsoleSession
	row := s.R().QueryRow(ctx, `SELECT `+operatorColumnsOf("o")+`, c.id_hash, c.operator_id, c.token_generation, c.csrf_token, c.created_at, c.last_seen_at
		FROM console_sessions c JOIN operators o ON o.id = c.operator_id WHERE c.id_hash = ?`, idHash)
	o, err := scanOperatorAnd(row, &cs.IDHash, &cs.OperatorID, &cs.TokenGeneration, &cs.CSRFToken, &cs.CreatedAt, &cs.LastSeenAt)
	if err != nil {
		return nil, nil, fmt.Errorf("console session: %w", err)
	}
	return &cs, o, nil
}

// TouchConsoleSession records that a session was seen at at.
func (s *Store) TouchConsoleSession(ctx context.Context, idHash string, at time.Time) error {
	return s.WriteOne(ctx, func(q Execer) error {
		if _, err := q.Exec(ctx, `UPDATE console_sessions SET last_seen_at = ? WHERE id_hash = ?`, at.UTC(), idHash); err != nil {
			return fmt.Errorf("touch console session: %w", err)
		}
		return nil
	})
}

// DeleteConsoleSession drops a session (sign-out, or one found ended).
func (s *Store) DeleteConsoleSession(ctx context.Context, idHash string) error {
	return s.WriteOne(ctx, func(q Execer) error {
		if _, err := q.Exec(ctx, `DELETE FROM console_sessions WHERE id_hash = ?`, idHash); err != nil {
			return fmt.Errorf("delete console session: %w", err)
		}
		return nil
	})
}

// DeleteEndedConsoleSessions drops every session that has ended without being dropped: signed
// in before signedInBefore, last seen before seenBefore, or of an operator disabled or whose
// token generation has moved on since. It returns how many went.
func (s *Store) DeleteEndedConsoleSessions(ctx context.Context, signedInBefore, seenBefore time.Time) (int64, error) {
	var n int64
	err := s.WriteOne(ctx, func(q Execer) error {
		res, err := q.Exec(ctx, `DELETE FROM console_sessions WHERE created_at < ? OR last_seen_at < ?
			OR EXISTS (SELECT 1 FROM operators o WHERE o.id = console_sessions.operator_id
				AND (o.disabled_at IS NOT NULL OR o.token_generation <> console_sessions.token_generation))`,
			signedInBefore.UTC(), seenBefore.UTC())
		if err != nil {
			return fmt.Errorf("delete ended console sessions: %w", err)
		}
		n, err = res.RowsAffected()
		return err
	})
	return n, err
}
