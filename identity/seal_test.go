package identity_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/identity"
)

func TestSealer(t *testing.T) {
	t.Parallel()
	old, err := identity.NewSealer("the-old-service-secret")
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := identity.NewSealer("the-new-service-secret", "the-old-service-secret")
	if err != nil {
		t.Fatal(err)
	}
	sealedOld, _ := old.Seal("operator totp:1", []byte("JBSWY3DPEHPK3PXP"))
	sealedNew, _ := rotated.Seal("operator totp:1", []byte("JBSWY3DPEHPK3PXP"))
	if !strings.HasPrefix(sealedNew, "v1.") || strings.Contains(sealedNew, "JBSWY3DPEHPK3PXP") {
		t.Fatalf("sealed %q", sealedNew)
	}
	again, _ := rotated.Seal("operator totp:1", []byte("JBSWY3DPEHPK3PXP"))
	if again == sealedNew {
		t.Fatal("two seals of one value are alike: the nonce is not fresh")
	}
	tamper := []byte(sealedNew)
	tamper[len(tamper)-2] ^= 1
	tests := []struct {
		name    string
		s       *identity.Sealer
		purpose string
		sealed  string
		ok      bool
	}{
		{"same key", old, "operator totp:1", sealedOld, true},
		{"an older key after rotation", rotated, "operator totp:1", sealedOld, true},
		{"the current key", rotated, "operator totp:1", sealedNew, true},
		{"a newer key than the sealer has", old, "operator totp:1", sealedNew, false},
		{"another purpose", rotated, "operator totp:2", sealedNew, false},
		{"tampered with", rotated, "operator totp:1", string(tamper), false},
		{"not sealed", rotated, "operator totp:1", "JBSWY3DPEHPK3PXP", false},
		{"another format", rotated, "operator totp:1", "v2" + sealedNew[2:], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.s.Open(tt.purpose, tt.sealed)
			switch {
			case tt.ok && (err != nil || string(got) != "JBSWY3DPEHPK3PXP"):
				t.Fatalf("open: %q %v", got, err)
			case !tt.ok && !errors.Is(err, identity.ErrUnsealable):
				t.Fatalf("opened %q (%v), want ErrUnsealable", got, err)
			}
		})
	}
	if _, err := identity.NewSealer(""); err == nil {
		t.Fatal("an empty secret is accepted")
	}
}

func TestMatchTOTP(t *testing.T) {
	t.Parallel()
	secret, url, err := identity.NewTOTP("subprov", "ops@subprov.test")
	if err != nil || !strings.HasPrefix(url, "otpauth://totp/") || !strings.Contains(url, "secret="+secret) {
		t.Fatalf("key %q %q %v", secret, url, err)
	}
	now := time.Unix(1_800_000_015, 0) // mid-step
	step := now.Unix() / identity.TOTPPeriod
	code := func(d time.Duration) string {
		c, err := identity.TOTPCode(secret, now.Add(d))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	tests := []struct {
		name  string
		code  string
		after int64
		step  int64
		ok    bool
	}{
		{"this step", code(0), 0, step, true},
		{"the previous step", code(-30 * time.Second), 0, step - 1, true},
		{"the next step", code(30 * time.Second), 0, step + 1, true},
		{"two steps back", code(-60 * time.Second), 0, 0, false},
		{"two steps ahead", code(60 * time.Second), 0, 0, false},
		{"already used", code(0), step, 0, false},
		{"a later step than the one used", code(30 * time.Second), step, step + 1, true},
		{"not six digits", "12345", 0, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := identity.MatchTOTP(secret, tt.code, now, tt.after)
			if ok != tt.ok || got != tt.step {
				t.Fatalf("MatchTOTP: %d %v, want %d %v", got, ok, tt.step, tt.ok)
			}
		})
	}
	rc := identity.NewRecoveryCode()
	if len(rc) != 14 || identity.RecoveryCodeHash(rc) != identity.RecoveryCodeHash(" "+strings.ToUpper(strings.ReplaceAll(rc, "-", ""))) {
		t.Fatalf("recovery code %q", rc)
	}
}
