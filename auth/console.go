package auth

import (
	"context"
	"crypto/subtle"
	"errors"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/store"
)

// ConsoleSession is a live console session: the operator signed in, read afresh with the
// session on every request, and the CSRF token every form of the session carries.
type ConsoleSession struct {
	Operator  *subprov.Operator
	CSRFToken string
}

// CheckCSRF reports, in constant time, whether token is the session's CSRF token.
func (c *ConsoleSession) CheckCSRF(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(c.CSRFToken)) == 1
}

// noConsoleSession is the answer for a console cookie that names no live session: unknown,
// signed out, expired, idle too long, or of an operator since disabled or whose password or
// second factor changed.
func noConsoleSession() error { return unauthorized("Not signed in") }

// StartConsoleSession signs an operator in to the console: the same check, limits on
// guessing and audit entries as the API's login (LoginOperator), then a session kept on the
// server. It returns the session's cookie value, which is stored only as its SHA-256.
func (s *Service) StartConsoleSession(ctx context.Context, email, password, secondFactor, client string) (string, *ConsoleSession, error) {
	op, err := s.checkOperatorLogin(ctx, email, password, secondFactor, client)
	if err != nil {
		return "", nil, err
	}
	raw, csrf := identity.NewToken(32), identity.NewToken(32)
	now := s.Clock.Now()
	cs := store.ConsoleSession{IDHash: identity.HashSecret(raw), OperatorID: op.ID, TokenGeneration: op.TokenGeneration,
		CSRFToken: csrf, CreatedAt: now, LastSeenAt: now}
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		return tx.InsertConsoleSession(ctx, cs, now.Add(-subprov.ConsoleSessionIdle))
	})
	if err != nil {
		return "", nil, err
	}
	return raw, &ConsoleSession{Operator: op, CSRFToken: csrf}, nil
}

// ConsoleSession resolves a console cookie's value to its live session. The session is read
// with its operator on every request, so one that has ended is refused on every process as
// soon as the change commits: ConsoleSessionLifetime after its sign-in, ConsoleSessionIdle
// after its last request, and at once when its operator is disabled or its token generation
// has moved on (a password change, a second-factor reset). An ended session is dropped.
// Its last request is recorded at most once every ConsoleSessionTouch.
func (s *Service) ConsoleSession(ctx context.Context, raw string) (*ConsoleSession, error) {
	if raw == "" {
		return nil, noConsoleSession()
	}
	h := identity.HashSecret(raw)
	cs, op, err := s.Store.ConsoleSession(ctx, h)
	if errors.Is(err, subprov.ErrNotFound) {
		return nil, noConsoleSession()
	}
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	if op.DisabledAt != nil || op.TokenGeneration != cs.TokenGeneration ||
		!now.Before(cs.CreatedAt.Add(subprov.ConsoleSessionLifetime)) || !now.Before(cs.LastSeenAt.Add(subprov.ConsoleSessionIdle)) {
		if err := s.Store.DeleteConsoleSession(ctx, h); err != nil {
			return nil, err
		}
		return nil, noConsoleSession()
	}
	if now.Sub(cs.LastSeenAt) >= subprov.ConsoleSessionTouch {
		if err := s.Store.TouchConsoleSession(ctx, h, now); err != nil {
			return nil, err
		}
	}
	return &ConsoleSession{Operator: op, CSRFToken: cs.CSRFToken}, nil
}

// EndConsoleSession signs a console session out; an unknown one is already out.
func (s *Service) EndConsoleSession(ctx context.Context, raw string) error {
	if raw == "" {
		return nil
	}
	return s.Store.DeleteConsoleSession(ctx, identity.HashSecret(raw))
}

// consoleSweepEvery is how often SweepConsoleSessions removes the ended sessions: a session
// that ended is refused on its next request anyway, so only the table's size depends on it.
const consoleSweepEvery = 10 * time.Minute

// SweepConsoleSessions removes, at most once every consoleSweepEvery, the console sessions
// that have ended but were never dropped: ConsoleSessionLifetime after their sign-in,
// ConsoleSessionIdle after their last request, or whose operator was disabled or changed its
// password or second factor since, and that no request came back to (a request drops its own
// ended session). It is one of the scheduler's sweeps.
func (s *Service) SweepConsoleSessions(ctx context.Context) error {
	now := s.Clock.Now()
	s.consoleSweep.Lock()
	defer s.consoleSweep.Unlock()
	if last := s.consoleSweep.at; !last.IsZero() && now.Sub(last) < consoleSweepEvery && !now.Before(last) {
		return nil
	}
	if _, err := s.Store.DeleteEndedConsoleSessions(ctx, now.Add(-subprov.ConsoleSessionLifetime), now.Add(-subprov.ConsoleSessionIdle)); err != nil {
		return err
	}
	s.consoleSweep.at = now
	return nil
}
