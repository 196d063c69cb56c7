// Package servicetest gives a capability package's own tests the services wired as the running
// service wires them (app.New), without the HTTP server or the job workers: a fresh store on
// each engine with the demo fixture loaded, and the dev mode's adjustable clock. Tests call a
// Service's methods directly, so a rule is tested where it lives; jobs the services enqueue
// stay queued (nothing works them), which keeps the tests fast and their outcome fixed.
package servicetest

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/app"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/tickets"
)

// The demo fixture's rows the capability tests name.
const (
	Northwind = "8d0c7f2e-1a3b-4c5d-9e6f-000000000001"
	Maple     = "8d0c7f2e-1a3b-4c5d-9e6f-000000000002"
	Sandbox   = "8d0c7f2e-1a3b-4c5d-9e6f-0000000000aa"

	NorthwindSecret = "whsec_northwind_demo_secret_0001"
	MapleSecret     = "whsec_maple_demo_secret_00000001"
	SandboxSecret   = "whsec_sandbox_demo_secret_000001"
	NorthwindDocID  = "nwf-spd-2026"
	SandboxDocID    = "nwf-spd-sandbox"

	BuildingKing       = "b1000000-0000-4000-8000-000000000001" // first line, Northwind, ports in 1204-1206
	BuildingQueen      = "b1000000-0000-4000-8000-000000000002" // second line, Northwind and Maple
	BuildingMaisonneuv = "b1000000-0000-4000-8000-000000000003" // third line, Northwind, presale from 2027-03-01
	BuildingSaintPaul  = "b1000000-0000-4000-8000-000000000004" // Northwind, not orderable, no line type
	BuildingGeorgia    = "b1000000-0000-4000-8000-000000000005" // first line, Maple only
	BuildingSandbox    = "b1000000-0000-4000-8000-000000000006" // the sandbox provider's

	UnitKing1204  = "u1000000-0000-4000-8000-000000001204"
	UnitKing1205  = "u1000000-0000-4000-8000-000000001205"
	UnitKing1206  = "u1000000-0000-4000-8000-000000001206" // postal unit PH-6
	UnitQueen101  = "u2000000-0000-4000-8000-000000000101"
	UnitSandboxS1 = "u6000000-0000-4000-8000-0000000000s1"

	HashKing1205  = "lh_7f3a9c1205"
	HashKing1206  = "lh_7f3a9c1206"
	HashGeorgia   = "lh_v6e3001"
	HashSandboxS1 = "lh_sandbox_s1"

	PlanFibre150    = "pv100000-0000-4000-8000-000000000150"
	PlanFibre500Old = "pv100000-0000-4000-8000-000000000499" // no longer sellable
	PlanEthernet300 = "pv200000-0000-4000-8000-000000000300" // Maple's
	PlanSandbox100  = "pv900000-0000-4000-8000-000000000100"

	SubscriberMarie = "s1000000-0000-4000-8000-000000000001" // Northwind, holder login, no billing contact
	SubscriberPriya = "s1000000-0000-4000-8000-000000000002" // Northwind, holder login, separate billing contact
	SubscriberLiam  = "s2000000-0000-4000-8000-000000000001" // Maple, holder login
	EmailMarie      = "marie.tremblay@example.ca"
	EmailPriya      = "priya.patel@example.ca"
	EmailLiam       = "liam.chen@example.ca"
	EmailNoAccount  = "new.neighbour@example.ca" // a Northwind login with no subscriber record
)

// Env is one engine's services on a fresh store holding the demo fixture; the capabilities
// (Portal, Checkout, Sandbox, Serviceability, ...) are the App's own.
type Env struct {
	*app.App
	Clock *clock.Adjustable
	Desk  *tickets.Builtin
}

// Each runs fn once per engine, in parallel with the caller's other parallel tests, each run
// with its own fresh Env.
func Each(t *testing.T, fn func(t *testing.T, e *Env)) {
	t.Helper()
	testdb.EachMigrated(t, testdb.AppSchema, func(t *testing.T, u string) {
		fn(t, New(t, u))
	})
}

// Rule is one rule's test, run on an Env another rule may have used before it.
type Rule struct {
	Name string
	Test func(t *testing.T, e *Env)
}

// EachRules runs rules in order as subtests of one Env per engine: each Env costs a database
// and a service's start, so rules that keep to rows of their own share one.
func EachRules(t *testing.T, rules ...Rule) {
	t.Helper()
	Each(t, func(t *testing.T, e *Env) {
		for _, r := range rules {
			t.Run(r.Name, func(t *testing.T) { r.Test(t, e) })
		}
	})
}

// New builds the services on the database at databaseURL and loads the demo fixture at the
// clock's now.
func New(t testing.TB, databaseURL string) *Env {
	t.Helper()
	ctx := context.Background()
	cfg := config.Config{DatabaseURL: databaseURL, MailFrom: "no-reply@localhost", Dev: true, SwitchDriver: "sim",
		PublicURL: "http://subprov.test", NoRateLimits: true,
		PasswordCost: identity.TestPasswordCost}
	a, err := app.New(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("build the services: %v", err)
	}
	t.Cleanup(func() { _ = a.Close() })
	f, err := fixture.Parse(fixture.DemoJSON)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.LoadAtCost(ctx, a.Store, f, a.Clock.Now(), cfg.PasswordCost); err != nil {
		t.Fatalf("load the demo fixture: %v", err)
	}
	return &Env{App: a, Clock: a.DevClock, Desk: &tickets.Builtin{Clock: a.Clock}}
}

// Provider reads a provider of the fixture.
func (e *Env) Provider(t testing.TB, id string) *subprov.Provider {
	t.Helper()
	p, err := e.Store.Provider(context.Background(), id)
	if err != nil {
		t.Fatalf("provider %s: %v", id, err)
	}
	return p
}

// Login reads the portal login of email.
func (e *Env) Login(t testing.TB, email string) *subprov.AccountLogin {
	t.Helper()
	acc, err := e.Store.AccountByEmail(context.Background(), email)
	if err != nil {
		t.Fatalf("login %s: %v", email, err)
	}
	return acc
}

// Mails lists the messages queued to addr, newest first.
func (e *Env) Mails(t testing.TB, addr string) []*subprov.Mail {
	t.Helper()
	m, err := e.Store.Outbox(context.Background(), addr, 100)
	if err != nil {
		t.Fatalf("outbox of %s: %v", addr, err)
	}
	return m
}

// Code is err's code and reason, "" for nil and for an error that is not a subprov error, so
// a table can name the answer it expects in one string ("conflict/limit_reached").
func Code(err error) string {
	if err == nil {
		return ""
	}
	e, ok := subprov.AsError(err)
	if !ok {
		return "uncoded: " + err.Error()
	}
	return string(e.Code) + "/" + e.Reason
}
