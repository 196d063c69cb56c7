package identity

import (
	"errors"
	"fmt"
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
}

// Signer issues and verifies HS256 tokens with the service secret.
type Signer struct {
	key []byte
}

// NewSigner returns a signer for secret (SUBPROV_SECRET or the generated one).
func NewSigner(secret string) *Signer { return &Signer{key: []byte("subprov-jwt:" + secret)} }

// Issue returns a signed token for subject with the given audience and lifetime from now.
func (s *Signer) Issue(audience, subject, providerID, accountID string, now time.Time, ttl time.Duration) (string, error) {
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
	var c Claims
	_, err := jwt.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return s.key, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithAudience(audience),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(func() time.Time { return now }),
	)
	if err != nil {
		return nil, ErrInvalidToken
	}
	return &c, nil
}
