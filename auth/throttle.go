package auth

import (
	"context"
	"math"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/ratelimit"
	"github.com/subprov/subprov/store"
)

// Guessing a password is bounded three ways (docs/security.md, Guessing passwords), none of
// which locks anybody out:
//
//   - per client address and login: clientLoginFailures, in the rate limiter (in-process, or
//     shared through Redis), so one address guesses one login no faster than that;
//   - per login, from every address: after freeFailures failures in a row each further
//     attempt waits a delay that doubles with each failure, from firstDelay up to maxDelay
//     (throttleDelay), kept in the database, so every process sees it and a guesser with many
//     addresses is slowed as much as one with one;
//   - per client address across logins: the HTTP routes' limit on failures, higher than these.
//
// One client's failures therefore never refuse another login's right password from the same
// address, and a stranger's failures cost the owner at most the current delay: the owner's
// right password, sent once the Retry-After has passed, signs in.
const (
	freeFailures = 10
	firstDelay   = time.Second
	maxDelay     = time.Minute
	// failureMemory is how long a run of failures is remembered after its next attempt fell
	// due: a typo weeks later does not start at the delay the run had reached.
	failureMemory = 15 * time.Minute
)

// clientLoginFailures bounds the failed attempts of one client address on one login.
var clientLoginFailures = ratelimit.PerMinute(10)

// throttleDelay is how long a login waits for its next attempt after failures in a row.
func throttleDelay(failures int) time.Duration {
	n := failures - freeFailures
	switch {
	case n < 0:
		return 0
	case n >= 16:
		return maxDelay
	}
	return min(firstDelay<<n, maxDelay)
}

// Kinds of login a throttle counts for.
const (
	loginSubscriber = "subscriber"
	loginOperator   = "operator"
)

// attempt is one password attempt under the limits on guessing: its place in the client's
// window for the login, and the login's throttle it took its slot from.
type attempt struct {
	s      *Service
	login  string // kind and hash of the e-mail: no address is stored or sent to Redis
	key    string // the limiter's key, "" when there is no limiter
	ticket string
}

// RateLimited is the 429 of a password attempt that must wait, with its Retry-After: the
// limits on each login here, and a client IP's limit on failures at the console's sign-in.
func RateLimited(wait time.Duration) error {
	return &subprov.Error{Code: subprov.ERATELIMITED, Reason: "rate_limited", Message: "Too many failed attempts; wait before trying again",
		Extra: map[string]any{"retry_after": int(max(1, math.Ceil(wait.Seconds())))}}
}

// begin admits an attempt on the login of kind with e-mail from client, or refuses it with
// RateLimited: while the client has clientLoginFailures failures on the login in the window,
// and while the login is throttled. Admitted, the attempt holds a place in the client's window
// (so attempts sent at once cannot all pass) and, when a failure now would throttle the login,
// the login's next slot (so attempts from many addresses at once cannot all be checked either).
// The caller ends it with its outcome (end).
func (s *Service) begin(ctx context.Context, kind, client, email string) (*attempt, error) {
	a := &attempt{s: s, login: kind + ":" + identity.HashSecret(subprov.NormalizeEmail(email))}
	if s.Limiter != nil && client != "" {
		a.key = "failed login|" + client + "|" + a.login
		res, err := s.Limiter.Allow(ctx, a.key, clientLoginFailures)
		switch {
		case err != nil:
			s.limiterDown(err) // the login's throttle still holds
			a.key = ""
		case !res.Allowed:
			return nil, RateLimited(res.RetryAfter)
		default:
			a.ticket = res.Ticket
		}
	}
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		t, err := tx.LoginThrottle(ctx, a.login)
		if err != nil {
			return err
		}
		now := s.Clock.Now() // read with the row locked: no failure recorded since is later
		t = remembered(t, now)
		if throttleDelay(t.Failures) > 0 && t.Until.After(now) {
			return RateLimited(t.Until.Sub(now))
		}
		if d := throttleDelay(t.Failures + 1); d > 0 {
			t.Until = now.Add(d) // taken as if this attempt failed; a success clears it
			return tx.SetLoginThrottle(ctx, a.login, t)
		}
		return nil
	})
	if err != nil {
		a.giveBack(ctx)
		return nil, err
	}
	return a, nil
}

// remembered is t, or no failures when its run is over (failureMemory).
func remembered(t store.LoginThrottle, now time.Time) store.LoginThrottle {
	if !now.Before(t.Until.Add(failureMemory)) {
		return store.LoginThrottle{}
	}
	return t
}

// end records the attempt's outcome: a failure counts for the login (and moves its next slot
// on by the delay the run has reached) and keeps its place in the client's window; a success
// clears the login's run and gives the place back.
func (a *attempt) end(ctx context.Context, ok bool) error { return a.endWith(ctx, ok, nil) }

// endWith is end that also runs record (the login's audit entry) in the transaction that
// records the outcome.
func (a *attempt) endWith(ctx context.Context, ok bool, record func(*store.Tx) error) error {
	ctx = context.WithoutCancel(ctx) // the outcome is recorded even if the client has gone
	if record == nil {
		record = func(*store.Tx) error { return nil }
	}
	if ok {
		a.giveBack(ctx)
		return a.s.Store.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.SetLoginThrottle(ctx, a.login, store.LoginThrottle{}); err != nil {
				return err
			}
			return record(tx)
		})
	}
	return a.s.Store.InTx(ctx, func(tx *store.Tx) error {
		t, err := tx.LockLoginThrottle(ctx, a.login, a.s.Clock.Now())
		if err != nil {
			return err
		}
		now := a.s.Clock.Now()
		t = remembered(t, now)
		t.Failures++
		if next := now.Add(throttleDelay(t.Failures)); next.After(t.Until) {
			t.Until = next
		}
		if err := tx.SetLoginThrottle(ctx, a.login, t); err != nil {
			return err
		}
		if err := record(tx); err != nil {
			return err
		}
		return tx.ForgetLoginThrottles(ctx, now.Add(-failureMemory), 4)
	})
}

// abandon ends an attempt that could not be checked (the account could not be read): nothing
// is counted, the client's place is given back and the slot it took is freed.
func (a *attempt) abandon(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	a.giveBack(ctx)
	return a.s.Store.InTx(ctx, func(tx *store.Tx) error {
		t, err := tx.LoginThrottle(ctx, a.login)
		now := a.s.Clock.Now()
		if err != nil || t.Failures == 0 || !t.Until.After(now) {
			return err
		}
		t.Until = now
		return tx.SetLoginThrottle(ctx, a.login, t)
	})
}

// giveBack returns the attempt's place in the client's window.
func (a *attempt) giveBack(ctx context.Context) {
	if a.key == "" {
		return
	}
	if err := a.s.Limiter.Return(context.WithoutCancel(ctx), a.key, a.ticket); err != nil {
		a.s.limiterDown(err)
	}
}

func (s *Service) limiterDown(err error) {
	if s.Log != nil {
		s.Log.Warn("rate limiter unavailable; the login throttle still holds", "err", err)
	}
}
