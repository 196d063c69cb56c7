package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// A rotation of the service secret: a switch password sealed under the old secret opens under
// neither secret alone once it changed, 'switches rekey' with the old secret as
// SUBPROV_SECRET_PREVIOUS seals it under the new one, and from then on the new secret alone
// opens it. The database never holds it in clear.
func TestSwitchesRekeyRotatesTheSecret(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) {
		ctx := context.Background()
		const password = "switch-admin-password-1"
		file := t.TempDir() + "/switches.json"
		writeFile(t, file, `{"switches": [{"id": "sw-1", "name": "lab-sw1", "driver": "sim", "username": "admin", "password": "`+password+`"}, {"name": "lab-sw2"}]}`)
		old := map[string]string{"DATABASE_URL": u, "SUBPROV_SECRET": "the-old-service-secret"}
		var out, errOut bytes.Buffer
		if err := run(ctx, []string{"seed", file}, env(old), &out, &errOut); err != nil {
			t.Fatalf("seed: %v %s", err, errOut.String())
		}
		rotated := map[string]string{"DATABASE_URL": u, "SUBPROV_SECRET": "the-new-service-secret"}
		during := map[string]string{"DATABASE_URL": u, "SUBPROV_SECRET": "the-new-service-secret", "SUBPROV_SECRET_PREVIOUS": "the-old-service-secret"}
		for _, step := range []struct {
			name string
			env  map[string]string
			out  string
			fail string
		}{
			{"the new secret alone", rotated, "0 switch password(s)", "lab-sw1"},
			{"with the previous secret", during, "1 switch password(s)", ""},
			{"the new secret alone, after", rotated, "1 switch password(s)", ""},
		} {
			out.Reset()
			errOut.Reset()
			err := run(ctx, []string{"switches", "rekey"}, env(step.env), &out, &errOut)
			if (step.fail == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), step.fail)) || !strings.Contains(out.String(), step.out) {
				t.Fatalf("%s: %v, output %q; want %q and failure %q", step.name, err, out.String(), step.out, step.fail)
			}
			if strings.Contains(out.String()+errOut.String(), password) {
				t.Fatalf("%s: the password is printed", step.name)
			}
		}
		st, err := store.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		sw, err := store.SwitchByName(ctx, st.R(), "lab-sw1")
		if err != nil {
			t.Fatal(err)
		}
		newOnly, _ := identity.NewSealer("the-new-service-secret")
		got, err := newOnly.Open(switches.PasswordPurpose(sw.ID), sw.Secret)
		if err != nil || string(got) != password || strings.Contains(sw.Secret, password) {
			t.Fatalf("after the rotation the new secret opens %q (%v) from %q", got, err, sw.Secret)
		}
	})
}
