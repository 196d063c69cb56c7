package operators_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/servicetest"
	"github.com/subprov/subprov/operators"
	"github.com/subprov/subprov/store"
)

func service(e *servicetest.Env) *operators.Service {
	return &operators.Service{Store: e.Store, Auth: e.Auth}
}

// demoAdmin is the fixture's platform admin.
func demoAdmin(t *testing.T, e *servicetest.Env) *subprov.Operator {
	t.Helper()
	o, _, err := e.Store.OperatorByEmail(context.Background(), fixture.DemoOperatorEmail)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func mustCreate(t *testing.T, svc *operators.Service, by *subprov.Operator, n operators.New) *subprov.Operator {
	t.Helper()
	o, err := svc.Create(context.Background(), by, n)
	if err != nil {
		t.Fatalf("create %s: %v", n.Email, err)
	}
	return o
}

func fields(err error) []string {
	e, ok := subprov.AsError(err)
	if !ok {
		return nil
	}
	return slices.Sorted(maps.Keys(e.Fields))
}

func TestOperatorRules(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	servicetest.EachRules(t,
		servicetest.Rule{Name: "create lists every problem and writes nothing", Test: func(t *testing.T, e *servicetest.Env) {
			svc := service(e)
			admin := demoAdmin(t, e)
			tests := []struct {
				name   string
				n      operators.New
				code   string
				fields []string
			}{
				{"everything wrong", operators.New{Email: "not-an-address", Password: "short", Role: "owner", ProviderID: "no-such-provider"},
					"invalid/validation_error", []string{"email", "password", "provider_id", "role"}},
				{"no password", operators.New{Email: "a@ops.test", Role: subprov.RoleViewer}, "invalid/validation_error", []string{"password"}},
				{"taken e-mail", operators.New{Email: " OPS@subprov.test", Password: "long-enough-password", Role: subprov.RoleViewer},
					"conflict/duplicate", nil},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					_, err := svc.Create(ctx, admin, tt.n)
					if got := servicetest.Code(err); got != tt.code || !slices.Equal(fields(err), tt.fields) {
						t.Fatalf("%s %v, want %s %v", got, fields(err), tt.code, tt.fields)
					}
				})
			}
			all, _, err := svc.All(ctx, subprov.Page{Limit: 50})
			if err != nil || len(all) != 2 { // the fixture's two
				t.Fatalf("operators after refused creates: %d, %v", len(all), err)
			}
		}},
		servicetest.Rule{Name: "a provider's admin works in its own provider only", Test: func(t *testing.T, e *servicetest.Env) {
			svc := service(e)
			admin := demoAdmin(t, e)
			nw := mustCreate(t, svc, admin, operators.New{Email: "admin@northwind.test", Password: "long-enough-password", Role: subprov.RoleAdmin, ProviderID: servicetest.Northwind})
			mp := mustCreate(t, svc, admin, operators.New{Email: "admin@maple.test", Password: "long-enough-password", Role: subprov.RoleAdmin, ProviderID: servicetest.Maple})
			for _, other := range []string{servicetest.Maple, ""} {
				_, err := svc.Create(ctx, nw, operators.New{Email: "x@northwind.test", Password: "long-enough-password", Role: subprov.RoleViewer, ProviderID: other})
				if !slices.Equal(fields(err), []string{"provider_id"}) {
					t.Errorf("provider %q from Northwind's admin: %v", other, err)
				}
			}
			own := mustCreate(t, svc, nw, operators.New{Email: "desk@northwind.test", Password: "long-enough-password", Role: subprov.RoleSupport, ProviderID: servicetest.Northwind})
			for _, id := range []string{mp.ID, demoAdmin(t, e).ID, store.NewID()} {
				if _, err := svc.Get(ctx, nw, id); servicetest.Code(err) != "not_found/not_found" {
					t.Errorf("Get %s: %v", id, err)
				}
				if _, err := svc.ResetSecondFactor(ctx, nw, id); servicetest.Code(err) != "not_found/not_found" {
					t.Errorf("ResetSecondFactor %s: %v", id, err)
				}
			}
			list, _, err := svc.List(ctx, nw, subprov.Page{Limit: 50})
			if err != nil {
				t.Fatal(err)
			}
			var emails []string
			for _, o := range list {
				emails = append(emails, o.Email)
			}
			if want := []string{nw.Email, own.Email, fixture.DemoSupportEmail}; !slices.Equal(emails, want) {
				t.Errorf("Northwind's list %v, want %v", emails, want)
			}
			viewer := &subprov.Operator{ID: own.ID, Email: own.Email, Role: subprov.RoleSupport, ProviderID: servicetest.Northwind}
			if _, _, err := svc.List(ctx, viewer, subprov.Page{Limit: 50}); servicetest.Code(err) != "forbidden/forbidden" {
				t.Errorf("support lists operators: %v", err)
			}
		}},
		servicetest.Rule{Name: "the last active platform admin stays", Test: func(t *testing.T, e *servicetest.Env) {
			svc := service(e)
			admin := demoAdmin(t, e)
			yes, viewer := true, subprov.RoleViewer
			// Only platform admins count: Northwind's admin made above is no help.
			for _, c := range []operators.Change{{Disabled: &yes}, {Role: &viewer}} {
				if _, err := svc.Update(ctx, admin, admin.ID, 0, c); servicetest.Code(err) != "conflict/last_admin" {
					t.Fatalf("%+v of the last platform admin: %v", c, err)
				}
			}
			second := mustCreate(t, svc, admin, operators.New{Email: "second@ops.test", Password: "long-enough-password", Role: subprov.RoleAdmin})
			o, err := svc.Update(ctx, admin, second.ID, second.Version, operators.Change{Disabled: &yes})
			if err != nil || o.DisabledAt == nil || o.Version != second.Version+1 || o.TokenGeneration != second.TokenGeneration+1 {
				t.Fatalf("disable a second admin: %+v %v", o, err)
			}
			if _, err := svc.Update(ctx, admin, admin.ID, 0, operators.Change{Role: &viewer}); servicetest.Code(err) != "conflict/last_admin" {
				t.Fatalf("a disabled admin does not count: %v", err)
			}
			if _, err := svc.Update(ctx, admin, second.ID, second.Version, operators.Change{Role: &viewer}); servicetest.Code(err) != "conflict/stale" {
				t.Fatalf("stale If-Match: %v", err)
			}
		}},
		servicetest.Rule{Name: "put creates, then updates and ends tokens only for a new password", Test: func(t *testing.T, e *servicetest.Env) {
			svc := service(e)
			n := operators.New{Email: "Root@Ops.test", Password: "first-password-1", Role: subprov.RoleAdmin}
			o, created, err := svc.Put(ctx, n)
			if err != nil || !created || o.Email != "root@ops.test" {
				t.Fatalf("put: %+v %v %v", o, created, err)
			}
			again, created, err := svc.Put(ctx, n)
			if err != nil || created || again.Version != o.Version || again.TokenGeneration != o.TokenGeneration {
				t.Fatalf("put again: %+v %v %v", again, created, err)
			}
			n.Password, n.Role, n.ProviderID = "second-password-2", subprov.RoleSupport, servicetest.Maple
			changed, _, err := svc.Put(ctx, n)
			if err != nil || changed.TokenGeneration != o.TokenGeneration+1 || changed.Role != subprov.RoleSupport || changed.ProviderID != servicetest.Maple {
				t.Fatalf("put with a new password: %+v %v", changed, err)
			}
			if _, err := e.Auth.LoginOperator(ctx, n.Email, "second-password-2", "", ""); err != nil {
				t.Fatalf("login with the new password: %v", err)
			}
			if _, _, err := svc.Put(ctx, operators.New{Email: "bad", Role: "root"}); !slices.Equal(fields(err), []string{"email", "password", "role"}) {
				t.Fatalf("put with problems: %v", err)
			}
		}},
		servicetest.Rule{Name: "second factor: enrol, each code once, recovery codes once, reset", Test: func(t *testing.T, e *servicetest.Env) {
			svc := service(e)
			admin := demoAdmin(t, e)
			me := mustCreate(t, svc, admin, operators.New{Email: "totp@ops.test", Password: "long-enough-password", Role: subprov.RoleViewer})
			if _, err := svc.ConfirmSecondFactor(ctx, me, "123456"); servicetest.Code(err) != "conflict/no_enrolment" {
				t.Fatalf("confirm before start: %v", err)
			}
			if _, err := svc.StartSecondFactor(ctx, me); err != nil { // restarted below: the first key is replaced
				t.Fatal(err)
			}
			enr, err := svc.StartSecondFactor(ctx, me)
			if err != nil {
				t.Fatal(err)
			}
			var sealed string
			if err := e.Store.R().QueryRow(ctx, `SELECT totp_secret FROM operators WHERE id = ?`, me.ID).Scan(&sealed); err != nil || sealed == enr.Secret || sealed[:3] != "v1." {
				t.Fatalf("stored key %q (%v): want it sealed", sealed, err)
			}
			code := func() string {
				c, err := identity.TOTPCode(enr.Secret, e.Clock.Now())
				if err != nil {
					t.Fatal(err)
				}
				return c
			}
			if _, err := svc.ConfirmSecondFactor(ctx, me, "000000"); !slices.Equal(fields(err), []string{"code"}) {
				t.Fatalf("a wrong code: %v", err)
			}
			first := code()
			recovery, err := svc.ConfirmSecondFactor(ctx, me, first)
			if err != nil || len(recovery) != operators.RecoveryCodes {
				t.Fatalf("confirm: %v %v", recovery, err)
			}
			if _, err := svc.StartSecondFactor(ctx, me); servicetest.Code(err) != "conflict/second_factor_on" {
				t.Fatalf("start while on: %v", err)
			}
			login := func(second string) string {
				_, err := e.Auth.LoginOperator(ctx, me.Email, "long-enough-password", second, "")
				return servicetest.Code(err)
			}
			bad := "unauthorized/invalid_credentials"
			steps := []struct {
				name, code, want string
				advance          time.Duration
			}{
				{"no code", "", bad, 0},
				{"the code the confirmation used", first, bad, 0},
				{"a code of the next step", "", "", 30 * time.Second},
				{"that code again", "", bad, 0},
				{"a recovery code, typed in capitals", "", "", 0},
				{"that recovery code again", recovery[0], bad, 0},
			}
			var last string
			for i, st := range steps {
				e.Clock.Advance(st.advance)
				c := st.code
				switch i {
				case 2:
					c = code()
				case 3:
					c = last
				case 4:
					c = strings.ToUpper(recovery[0])
				}
				last = c
				if got := login(c); got != st.want {
					t.Fatalf("%s (%q): %q, want %q", st.name, c, got, st.want)
				}
			}
			before, _ := e.Store.Operator(ctx, me.ID)
			reset, err := svc.ResetSecondFactor(ctx, admin, me.ID)
			if err != nil || reset.TOTPEnabled || reset.TokenGeneration != before.TokenGeneration+1 {
				t.Fatalf("reset: %+v %v", reset, err)
			}
			if got := login(""); got != "" {
				t.Fatalf("login after the reset without a code: %s", got)
			}
		}},
		servicetest.Rule{Name: "password change checks the current one under the login's limits", Test: func(t *testing.T, e *servicetest.Env) {
			svc := service(e)
			admin := demoAdmin(t, e)
			me := mustCreate(t, svc, admin, operators.New{Email: "pw@ops.test", Password: "long-enough-password", Role: subprov.RoleBilling, ProviderID: servicetest.Northwind})
			tests := []struct {
				current, next, want string
			}{
				{"", "short", "invalid/validation_error"},
				{"wrong-password-here", "another-long-password", "bad_request/incorrect_password"},
				{"long-enough-password", "short", "invalid/validation_error"},
				{"long-enough-password", "another-long-password", ""},
			}
			for _, tt := range tests {
				if got := servicetest.Code(svc.ChangePassword(ctx, me, tt.current, tt.next, "")); got != tt.want {
					t.Fatalf("change %q -> %q: %s, want %s", tt.current, tt.next, got, tt.want)
				}
			}
			after, _ := e.Store.Operator(ctx, me.ID)
			if after.TokenGeneration != me.TokenGeneration+1 {
				t.Fatalf("token generation %d, want %d", after.TokenGeneration, me.TokenGeneration+1)
			}
			if _, err := e.Auth.LoginOperator(ctx, me.Email, "another-long-password", "", ""); err != nil {
				t.Fatalf("login with the new password: %v", err)
			}
			entries, err := e.Store.AuditEntries(ctx, store.AuditFilter{ObjectID: me.ID, Action: "operator.password_changed"}, subprov.Page{Limit: 5})
			if err != nil || len(entries) != 1 || entries[0].Changes["password"] != [2]any{subprov.Redacted, subprov.Redacted} {
				t.Fatalf("audit: %+v %v", entries, err)
			}
		}},
	)
}
