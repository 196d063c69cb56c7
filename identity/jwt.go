package identity

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// Audiences keep a token of one kind from being accepted as another.
const (
	AudienceSubscriber = "subscriber"
	AudienceOperator   = "operator"
	AudienceVerified   = "agent-verified"
)

// Claims are the access-token claims of every kind.
type Claims struct {
	jwt.RegisteredClaims
	ProviderID string `json:"pid,omitempty"`
	AccountID  string `json:"aid,omitempty"`
	// Generation is the token generation of the subscriber's login when the token was issued;
	// a token of an earlier one is refused (auth).
	Generation int64 `json:"gen,omitempty"`
}

// Signer issues and verifies HS256 tokens with the service secret.
type Signer struct {
	key []byte

	// verified remembers tokens whose signature, algorithm and audience checked out, so a
	// token sent again (every portal request sends the same one for an hour) is not decoded
	// and MACed again (docs/performance.md). The time claims
	// (exp, nbf) are checked again on every call, and what the token grants (the login still
	// existing) is the caller's per-request lookup, so nothing about authorization is cached.
	mu       sync.Mutex
	verified map[verifiedKey]*Claims
}

// verifiedKey is a token's SHA-256 digest with the audience it was checked for: the memory
// holds no token, and a lookup compares digests, never the secret-bearing token itself.
type verifiedKey struct {
	digest   [sha256.Size]byte
	audience string
}

// maxVerified bounds the verified-token memory (a few hundred bytes a token); when full it
// starts again empty.
const maxVerified = 8192

// NewSigner returns a signer for secret (SUBPROV_SECRET or the generated one).
func NewSigner(secret string) *Signer {
	return &Signer{key: []byte("subprov-jwt:" + secret), verified: map[verifiedKey]*Claims{}}
}

// Issue returns a signed token for subject with the given audience and lifetime from now.
func (s *Signer) Issue(audience, subject, providerID, accountID string, now time.Time, ttl time.Duration) (string, error) {
	return s.IssueGeneration(audience, subject, providerID, accountID, 0, now, ttl)
}

// IssueGeneration is Issue for a login whose tokens are of generation.
func (s *Signer) IssueGeneration(audience, subject, providerID, accountID string, generation int64, now time.Time, ttl time.Duration) (string, error) {
	c := Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   subject,
			Audience:  jwt.ClaimStrings{audience},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(ttl)),
			ID:        NewToken(9),
		},
		ProviderID: providerID,
		AccountID:  accountID,
		Generation: generation,
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(s.key)
	if err != nil {
		return "", fmt.Errorf("sign token: %w", err)
	}
	return tok, nil
}

// ErrInvalidToken covers every way a token can be wrong; callers need no finer reason.
var ErrInvalidToken = errors.New("invalid or expired token")

// Verify checks signature, algorithm (HS256 only), audience and expiry against now.
func (s *Signer) Verify(token, audience string, now time.Time) (*Claims, error) {
	timeAt := jwt.WithTimeFunc(func() time.Time { return now })
	k := verifiedKey{sha256.Sum256([]byte(token)), audience}
	s.mu.Lock()
	seen := s.verified[k]
	s.mu.Unlock()
	if seen != nil {
		c := *seen
		if err := jwt.NewValidator(jwt.WithAudience(audience), jwt.WithExpirationRequired(), timeAt).Validate(&c); err != nil {
			return nil, ErrInvalidToken
		}
		return &c, nil
	}
	var c Claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return s.key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithAudience(audience),
		jwt.WithExpirationRequired(),
		timeAt,
	)
	if err != nil {
		return nil, ErrInvalidToken
	}
	kept := c
	s.mu.Lock()
	if len(s.verified) >= maxVerified {
		clear(s.verified)
	}
	s.verified[k] = &kept
	s.mu.Unlock()
	return &c, nil
}
