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

	"golang.org/x/crypto/argon2"
)

// argon2id parameters: OWASP's second recommended set (19 MiB, 2 iterations, 1 lane).
const (
	argonTime    = 2
	argonMemory  = 19 * 1024
	argonThreads = 1
	argonKeyLen  = 32
	argonSaltLen = 16
)

// HashPassword returns an encoded argon2id hash ($argon2id$v=19$m=…,t=…,p=…$salt$hash).
func HashPassword(password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("password salt: %w", err)
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads,
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

// dummyHash is checked against when a login names an unknown e-mail, so that a wrong e-mail
// and a wrong password take the same time (no account enumeration by timing).
var dummyHash, _ = HashPassword("subprov-dummy-password")

// BurnPasswordCheck spends the time of one password check.
func BurnPasswordCheck(password string) { CheckPassword(dummyHash, password) }

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
