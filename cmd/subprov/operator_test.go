package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

func TestOperatorCommand(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) {
		e := env(map[string]string{"DATABASE_URL": u})
		provider := seedProvider(t, e)
		tests := []struct {
			name     string
			args     []string
			password string
			usage    bool     // a usage error (exit status 2)
			fails    []string // the failure names these
			out      []string // the output has these
		}{
			{"first admin", []string{"add", "Root@Example.com", "--role", "admin"}, "first-admin-password\n", false, nil,
				[]string{"created operator root@example.com (admin, platform-wide)"}},
			{"flags before the e-mail", []string{"add", "--role=viewer", "--provider", provider, "desk@example.com"}, "desk-long-password\r\n", false, nil,
				[]string{"created operator desk@example.com (viewer, provider " + provider + ")"}},
			{"update", []string{"add", "desk@example.com", "--role", "support", "--provider", provider}, "another-long-password", false, nil,
				[]string{"updated operator desk@example.com (support"}},
			{"every problem", []string{"add", "not-an-address", "--role", "owner", "--provider", "nowhere"}, "short\n", false,
				[]string{"email: must be an e-mail address", "password: at least 10 characters", "provider_id: no such provider", "role: must be one of"}, nil},
			{"no password", []string{"add", "x@example.com", "--role", "viewer"}, "", false, []string{"password: required"}, nil},
			{"demote the last platform admin", []string{"add", "root@example.com", "--role", "viewer"}, "first-admin-password\n", false,
				[]string{"last active platform admin"}, nil},
			{"no role", []string{"add", "x@example.com"}, "long-enough-password\n", true, nil, nil},
			{"no e-mail", []string{"add", "--role", "admin"}, "long-enough-password\n", true, nil, nil},
			{"unknown subcommand", []string{"remove", "x@example.com"}, "", true, nil, nil},
			{"list", []string{"list"}, "", false, nil, []string{"EMAIL", "root@example.com  admin", "desk@example.com", "support", provider, "off"}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				stdin = strings.NewReader(tt.password)
				var out, errOut bytes.Buffer
				err := run(context.Background(), append([]string{"operator"}, tt.args...), e, &out, &errOut)
				switch {
				case tt.usage:
					if !errors.Is(err, errUsage) || !strings.Contains(errOut.String(), "Usage: subprov operator") {
						t.Fatalf("want a usage error: %v %s", err, errOut.String())
					}
					return
				case len(tt.fails) > 0:
					if err == nil {
						t.Fatalf("want a failure; output %s", out.String())
					}
					for _, f := range tt.fails {
						if !strings.Contains(err.Error(), f) {
							t.Errorf("failure %q lacks %q", err, f)
						}
					}
					return
				case err != nil:
					t.Fatalf("run: %v %s", err, errOut.String())
				}
				for _, w := range tt.out {
					if !strings.Contains(out.String(), w) {
						t.Errorf("output lacks %q:\n%s", w, out.String())
					}
				}
				if strings.Contains(out.String(), "argon2") {
					t.Errorf("output shows a hash:\n%s", out.String())
				}
			})
		}
	})
}

// seedProvider loads a provider for operators to work for and returns its id.
func seedProvider(t *testing.T, e func(string) string) string {
	t.Helper()
	file := t.TempDir() + "/p.json"
	writeFile(t, file, `{"providers": [{"id": "p1", "name": "P", "time_zone": "America/Toronto", "currency": "CAD", "webhook_secret": "0123456789abcdef"}]}`)
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"seed", file}, e, &out, &errOut); err != nil {
		t.Fatalf("seed: %v %s", err, errOut.String())
	}
	return "p1"
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// An admin locked out of its second factor (its authenticator lost, or SUBPROV_SECRET changed)
// gets back in from the command line: --reset-second-factor turns it off; without the flag the
// second factor stays on.
func TestOperatorAddResetsSecondFactor(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) {
		ctx := context.Background()
		e := env(map[string]string{"DATABASE_URL": u})
		add := func(args ...string) string {
			t.Helper()
			stdin = strings.NewReader("first-admin-password\n")
			var out, errOut bytes.Buffer
			if err := run(ctx, append([]string{"operator", "add", "root@example.com", "--role", "admin"}, args...), e, &out, &errOut); err != nil {
				t.Fatalf("operator add %v: %v %s", args, err, errOut.String())
			}
			return out.String()
		}
		add()
		st, err := store.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		enabled := func() bool {
			o, _, err := st.OperatorByEmail(ctx, "root@example.com")
			if err != nil {
				t.Fatal(err)
			}
			return o.TOTPEnabled
		}
		err = st.InTx(ctx, func(tx *store.Tx) error {
			o, _, err := st.OperatorByEmail(ctx, "root@example.com")
			if err != nil {
				return err
			}
			return tx.SetSecondFactor(ctx, store.OperatorFactor(o.ID), store.SecondFactor{Sealed: "sealed under another secret", Enabled: true})
		})
		if err != nil {
			t.Fatal(err)
		}
		if out := add(); strings.Contains(out, "second factor") || !enabled() {
			t.Fatalf("without the flag the second factor must stay on: %s", out)
		}
		if out := add("--reset-second-factor"); !strings.Contains(out, "second factor of root@example.com turned off") || enabled() {
			t.Fatalf("--reset-second-factor: %s (still on: %v)", out, enabled())
		}
	})
}
