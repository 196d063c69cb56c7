package identity

import (
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestPasswordHashRoundTrip(t *testing.T) {
	h, err := HashPassword("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("unexpected encoding %q", h)
	}
	tests := []struct {
		name    string
		encoded string
		pw      string
		want    bool
	}{
		{"right password", h, "correct horse battery", true},
		{"wrong password", h, "correct horse battery!", false},
		{"garbage hash", "not-a-hash", "x", false},
		{"absurd memory parameter is refused", "$argon2id$v=19$m=99999999,t=2,p=1$AAAA$AAAA", "x", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckPassword(tt.encoded, tt.pw); got != tt.want {
				t.Fatalf("CheckPassword = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	s := NewSigner("secret-1")
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	tok, err := s.Issue(AudienceSubscriber, "acc-1", "prov-1", "acc-1", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	noneTok, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "acc-1", "aud": AudienceSubscriber, "exp": now.Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	tests := []struct {
		name     string
		token    string
		audience string
		at       time.Time
		signer   *Signer
		ok       bool
	}{
		{"valid", tok, AudienceSubscriber, now.Add(59 * time.Minute), s, true},
		{"expired after its lifetime", tok, AudienceSubscriber, now.Add(61 * time.Minute), s, false},
		{"other audience refused", tok, AudienceOperator, now, s, false},
		{"other secret refused", tok, AudienceSubscriber, now, NewSigner("secret-2"), false},
		{"alg none refused", noneTok, AudienceSubscriber, now, s, false},
		{"garbage refused", "a.b.c", AudienceSubscriber, now, s, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := tt.signer.Verify(tt.token, tt.audience, tt.at)
			if (err == nil) != tt.ok {
				t.Fatalf("Verify err = %v, want ok=%v", err, tt.ok)
			}
			if tt.ok && (c.Subject != "acc-1" || c.ProviderID != "prov-1") {
				t.Fatalf("claims = %+v", c)
			}
		})
	}
}

func TestSignIsHMACSHA256(t *testing.T) {
	// Known vector: HMAC-SHA256("key", "The quick brown fox jumps over the lazy dog").
	got := Sign("key", []byte("The quick brown fox jumps over the lazy dog"))
	if got != "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8" {
		t.Fatalf("Sign = %s", got)
	}
}

// A token verified once is remembered, but its expiry and audience are checked again on every
// call, and a token differing in any byte is verified from scratch.
func TestVerifiedTokensAreRecheckedForTimeAndAudience(t *testing.T) {
	s := NewSigner("secret-1")
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	tok, err := s.Issue(AudienceSubscriber, "acc-1", "prov-1", "acc-1", now, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ { // the second round is answered from the memory of the first
		if _, err := s.Verify(tok, AudienceSubscriber, now.Add(time.Minute)); err != nil {
			t.Fatalf("round %d: valid token refused: %v", i, err)
		}
		if _, err := s.Verify(tok, AudienceSubscriber, now.Add(time.Hour)); err == nil {
			t.Fatalf("round %d: expired token accepted", i)
		}
		if _, err := s.Verify(tok, AudienceOperator, now.Add(time.Minute)); err == nil {
			t.Fatalf("round %d: token accepted for another audience", i)
		}
	}
	if _, err := NewSigner("secret-2").Verify(tok, AudienceSubscriber, now.Add(time.Minute)); err == nil {
		t.Fatal("another secret's signer accepted the token")
	}
	tampered := tok[:len(tok)-2] + map[bool]string{true: "AA", false: "BB"}[tok[len(tok)-2:] != "AA"]
	if _, err := s.Verify(tampered, AudienceSubscriber, now.Add(time.Minute)); err == nil {
		t.Fatal("tampered signature accepted")
	}
}

// TestPasswordCosts: a hash records its cost, so a check needs no configuration; the zero cost
// is the production one, and the test cost counts as below it.
func TestPasswordCosts(t *testing.T) {
	cheap, err := TestPasswordCost.Hash("correct horse battery")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(cheap, "$argon2id$v=19$m=64,t=1,p=1$") {
		t.Fatalf("unexpected encoding %q", cheap)
	}
	if !CheckPassword(cheap, "correct horse battery") || CheckPassword(cheap, "correct horse battery!") {
		t.Fatal("a hash made at the test cost does not check as one made at the production cost does")
	}
	zero, err := PasswordCost{}.Hash("x")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(zero, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("the zero cost hashed as %q, want the production cost", zero)
	}
	for _, c := range []struct {
		cost PasswordCost
		want bool
	}{
		{PasswordCost{}, false},
		{DefaultPasswordCost, false},
		{PasswordCost{Time: 3, MemoryKiB: 64 * 1024, Threads: 2}, false},
		{TestPasswordCost, true},
		{PasswordCost{Time: 2, MemoryKiB: 19*1024 - 1, Threads: 1}, true},
	} {
		if got := c.cost.BelowDefault(); got != c.want {
			t.Errorf("%+v.BelowDefault() = %v, want %v", c.cost, got, c.want)
		}
	}
}
