package identity

import (
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"strings"
	"time"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"
)

// The second factor is a time-based one-time password (RFC 6238) as authenticator apps make
// them: HMAC-SHA-1, 6 digits, 30-second steps, with one step of drift accepted either way.
const (
	TOTPPeriod = 30
	totpSkew   = 1
)

var totpOpts = totp.ValidateOpts{Period: TOTPPeriod, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1}

// NewTOTP makes a new second-factor key for account at issuer: its secret (base32, what the
// service keeps, sealed) and the otpauth:// URL an authenticator app reads from a QR code.
func NewTOTP(issuer, account string) (secret, url string, err error) {
	k, err := totp.Generate(totp.GenerateOpts{Issuer: issuer, AccountName: account, Period: TOTPPeriod,
		Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1, SecretSize: 20})
	if err != nil {
		return "", "", fmt.Errorf("totp key: %w", err)
	}
	return k.Secret(), k.URL(), nil
}

// TOTPCode is the code of secret at t (for tests and for tools that act as the app).
func TOTPCode(secret string, t time.Time) (string, error) {
	return totp.GenerateCodeCustom(secret, t, totpOpts)
}

// MatchTOTP finds the time step, within one step of now either way and later than after (the
// last step a code was accepted for: a code is accepted once), whose code is code. ok is false
// when there is none.
func MatchTOTP(secret, code string, now time.Time, after int64) (step int64, ok bool) {
	if len(code) != int(otp.DigitsSix) {
		return 0, false
	}
	cur := now.Unix() / TOTPPeriod
	for st := cur - totpSkew; st <= cur+totpSkew; st++ {
		if st <= after {
			continue
		}
		want, err := totp.GenerateCodeCustom(secret, time.Unix(st*TOTPPeriod, 0), totpOpts)
		if err == nil && subtle.ConstantTimeCompare([]byte(want), []byte(code)) == 1 {
			return st, true
		}
	}
	return 0, false
}

// recoveryAlphabet is Crockford's base32: 32 symbols, none of i, l, o and u.
const recoveryAlphabet = "0123456789abcdefghjkmnpqrstvwxyz"

// NewRecoveryCode is a single-use code that stands in for the second factor when the app is
// lost: 12 characters (60 bits) shown as xxxx-xxxx-xxxx.
func NewRecoveryCode() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	var sb strings.Builder
	for i, c := range b {
		if i > 0 && i%4 == 0 {
			sb.WriteByte('-')
		}
		sb.WriteByte(recoveryAlphabet[c&31])
	}
	return sb.String()
}

// RecoveryCodeHash is the stored hash of a recovery code as its owner may type it: case,
// spaces and dashes do not matter.
func RecoveryCodeHash(code string) string {
	c := strings.NewReplacer("-", "", " ", "").Replace(strings.ToLower(strings.TrimSpace(code)))
	return HashSecret("recovery:" + c)
}
