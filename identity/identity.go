// Package identity holds the service's credentials: password hashing (argon2id), signed access
// tokens (JWT, HS256 pinned), hashed API keys and webhook secrets, and single-use random tokens.
// Nothing here touches storage; callers persist only the hashes it returns.
package identity

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"
)

// PasswordCost is the argon2id work spent on each password hash. A hash records the cost it
// was made with, so CheckPassword verifies a hash of any cost; the cost only decides how new
// hashes are made. The zero value is the production cost.
type PasswordCost struct {
	Time      uint32 // iterations
	MemoryKiB uint32
	Threads   uint8
}

// DefaultPasswordCost is OWASP's second recommended argon2id set (19 MiB, 2 iterations, 1 lane):
// what every hash costs unless a test asks otherwise.
var DefaultPasswordCost = PasswordCost{Time: 2, MemoryKiB: 19 * 1024, Threads: 1}

// TestPasswordCost is a cost too cheap to protect anything, for tests that hash or check many
// passwords: the flows are the same, only the work is not. Nothing outside tests may use it;
// the service refuses it outside dev mode.
var TestPasswordCost = PasswordCost{Time: 1, MemoryKiB: 64, Threads: 1}

const (
	argonKeyLen  = 32
	argonSaltLen = 16
)

// orDefault is c, or the production cost for the zero value, so a configuration that does not
// name a cost hashes as production does.
func (c PasswordCost) orDefault() PasswordCost {
	if c == (PasswordCost{}) {
		return DefaultPasswordCost
	}
	return c
}

// BelowDefault reports whether c is cheaper than the production cost in any parameter.
func (c PasswordCost) BelowDefault() bool {
	c = c.orDefault()
	d := DefaultPasswordCost
	return c.Time < d.Time || c.MemoryKiB < d.MemoryKiB || c.Threads < d.Threads
}

// HashPassword returns an encoded argon2id hash ($argon2id$v=19$m=…,t=…,p=…$salt$hash) at the
// production cost.
func HashPassword(password string) (string, error) { return DefaultPasswordCost.Hash(password) }

// Hash returns an encoded argon2id hash of password at cost c.
func (c PasswordCost) Hash(password string) (string, error) {
	c = c.orDefault()
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, c.Time, c.MemoryKiB, c.Threads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, c.MemoryKiB, c.Time, c.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// CheckPassword reports whether password matches an encoded hash, in constant time.
func CheckPassword(encoded, password string) bool {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var mem uint32
	var t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &t, &p); err != nil || mem == 0 || t == 0 || p == 0 || mem > 1<<20 || t > 10 {
		return false
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	want, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, mem, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// dummyHashes holds, per cost, the hash checked against when a login names an unknown e-mail,
// so that a wrong e-mail and a wrong password take the same time (no account enumeration by
// timing). The production cost's is made at start, so even the first refusal takes the time of
// a check alone; another cost's on first use.
var dummyHashes sync.Map // PasswordCost → func() string

func init() { dummyHash(DefaultPasswordCost) }

func dummyHash(c PasswordCost) string {
	h, _ := dummyHashes.LoadOrStore(c, sync.OnceValue(func() string {
		h, _ := c.Hash("subprov-dummy-password")
		return h
	}))
	return h.(func() string)()
}

// BurnCheck spends the time of one check of a hash made at cost c.
func (c PasswordCost) BurnCheck(password string) { CheckPassword(dummyHash(c.orDefault()), password) }

// HashSecret is the lookup hash of a high-entropy secret (API key, webhook secret, mailed
// token): SHA-256 hex. Such secrets are random, so a fast hash is safe and lets the store find
// the row by hash; a password never goes through this.
func HashSecret(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

// EqualHash compares two hex hashes in constant time.
func EqualHash(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// NewToken returns a random URL-safe token with n bytes of entropy.
func NewToken(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // the OS RNG failing is not recoverable
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// KeyPrefix is the part of an API key shown to operators to recognise it. It identifies no
// key (a provider's keys share their first characters), so nothing is keyed by it: a key's
// rate-limit bucket is its HashSecret, the value it is stored and looked up by.
func KeyPrefix(key string) string {
	if len(key) <= 8 {
		return key
	}
	return key[:8]
}

// Sign returns hex HMAC-SHA256 of body under secret: the webhook signature.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// ErrWeakPassword is returned for passwords shorter than the minimum.
var ErrWeakPassword = errors.New("password too short")
