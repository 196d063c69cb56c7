package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/subprov/subprov/app"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/store"
)

func nowUTC() time.Time { return time.Now().UTC() }

func cmdDemo(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("demo", "demo [--addr HOST:PORT]", "Serves subprov on an embedded SQLite database under ./data/ (demo.db) with the built-in demo\n"+
		"fixture loaded and dev mode on, then prints the base URL, every credential and a working curl\n"+
		"line for each route. DATABASE_URL, if set, is used instead of ./data/demo.db. The fixture only\n"+
		"creates the rows that are missing: a restart keeps everything done in the demo (a changed\n"+
		"password, billing day or plan); delete ./data/demo.db to start over. When the machine can run a\n"+
		"NETCONF lab switch (the netconfd package installed), the Vancouver building's switch\n"+
		"(van-georgia-sw1) runs the netconf driver against one, on loopback and in a temporary directory,\n"+
		"stopped and removed when the demo exits; otherwise it stays on sim and the demo says why.\n"+
		"SUBPROV_DEMO_SWITCH=sim keeps it on sim.")
	addr := fs.String("addr", "", "listen address (overrides SUBPROV_ADDR)")
	if done, err := parse(fs, args, stdout, stderr); done {
		return err
	}
	cfg, log, err := loadConfig(demoEnv(getenv, *addr), stderr)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (try --addr 127.0.0.1:0)", cfg.Addr, err)
	}
	base := "http://" + ln.Addr().String()
	if getenv("SUBPROV_PUBLIC_URL") == "" {
		cfg.PublicURL = base
	}
	gogc := setGCPercent(getenv)
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		ln.Close()
		return err
	}
	f, err := fixture.Parse(fixture.DemoJSON)
	if err != nil {
		a.Close()
		return fmt.Errorf("demo fixture: %w", err)
	}
	sum, err := fixture.Load(ctx, a.Store, f, a.Clock.Now())
	if err != nil {
		a.Close()
		return fmt.Errorf("load demo fixture: %w", err)
	}
	if err := fixture.LoadDemoPreferences(ctx, a.Store, a.Clock.Now()); err != nil {
		a.Close()
		return err
	}
	if err := fixture.LoadDemoOutageCredit(ctx, a.Store); err != nil {
		a.Close()
		return err
	}
	log.Info("demo data loaded", "summary", sum.String(), "gogc", gogc)
	sw := startDemoSwitch(ctx, a, f, getenv)
	defer sw.Close()
	fmt.Fprint(stdout, demoBanner(base, cfg.DatabaseURL)+sw.banner(cfg.DatabaseURL))
	return a.Serve(ctx, ln)
}

// demoEnv is the demo's environment: dev mode on, ./data/demo.db unless DATABASE_URL names
// another database, and --addr over SUBPROV_ADDR.
func demoEnv(getenv func(string) string, addr string) func(string) string {
	return func(k string) string {
		switch k {
		case "SUBPROV_DEV":
			return "1"
		case "DATABASE_URL":
			if v := getenv(k); v != "" {
				return v
			}
			return "sqlite://./data/demo.db"
		case "SUBPROV_ADDR":
			if addr != "" {
				return addr
			}
		}
		return getenv(k)
	}
}

// demoBanner prints what a person needs to try every surface, as copy-paste lines, and the
// database the demo keeps its data in (./data/demo.db unless DATABASE_URL names another).
func demoBanner(base, databaseURL string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	w("")
	w("subprov demo is running at %s  (dev mode; data in %s; Ctrl-C to stop)", base, store.Describe(databaseURL))
	w("")
	w("API reference: %s/docs    OpenAPI: %s/openapi.json    Health: %s/readyz    Metrics: %s/metrics", base, base, base, base)
	w("")
	w("Operator console: %s/console/  (sign in with an operator login below)", base)
	w("  admin:   %s / %s", fixture.DemoOperatorEmail, fixture.DemoOperatorPassword)
	w("  support: %s / %s", fixture.DemoSupportEmail, fixture.DemoSupportPassword)
	w("")
	w("Credentials")
	w("  Operator (dashboard JWT):   %s / %s  (platform admin)", fixture.DemoOperatorEmail, fixture.DemoOperatorPassword)
	w("  Northwind support operator: %s / %s  (sees Northwind only)", fixture.DemoSupportEmail, fixture.DemoSupportPassword)
	w("  Northwind API key (agent):  %s", fixture.DemoAgentKey)
	w("  Northwind API key (store):  %s", fixture.DemoStoreKey)
	w("  Maple API key:              %s", fixture.DemoOtherProviderKey)
	w("  Northwind webhook secret:   %s", fixture.DemoWebhookSecret)
	w("  Sandbox webhook secret:     %s", fixture.DemoSandboxSecret)
	w("  Subscriber login:           %s / %s  (also priya.patel@example.ca / demo-password-2)", fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
	w("")
	w("Try it (copy a line into a shell):")
	w("  B=%s", base)
	w("  # Support agent (agent key): search, verify by e-mailed code (read it from the outbox below), then read")
	w(`  curl -s "$B/partner/agent/customers/search?q=marie+1204" -H "X-API-Key: %s"`, fixture.DemoAgentKey)
	w("  # ... or by the customer's number (0042-117), or its id (whole, or at least its first 8 characters)")
	w(`  curl -s "$B/partner/agent/customers/search?q=s1000000-0000-4000-8000-000000000001" -H "X-API-Key: %s"`, fixture.DemoAgentKey)
	w(`  curl -s -X POST "$B/partner/agent/verify/issue" -H "X-API-Key: %s" -H "Content-Type: application/json" -d '{"customer_id": "s1000000-0000-4000-8000-000000000001", "channel": "email"}'`, fixture.DemoAgentKey)
	w(`  curl -s -X POST "$B/partner/agent/verify/check" -H "X-API-Key: %s" -H "Content-Type: application/json" -d '{"customer_id": "s1000000-0000-4000-8000-000000000001", "code": "CODE"}'`, fixture.DemoAgentKey)
	w(`  curl -s "$B/partner/agent/customers/s1000000-0000-4000-8000-000000000001" -H "X-API-Key: %s" -H "X-Verified-Session: TOKEN"`, fixture.DemoAgentKey)
	w("  # Maple has SMS configured: with no SMS gateway set up, demo mode texts the code to the outbox (subject SMS)")
	w(`  curl -s -X POST "$B/partner/agent/verify/issue" -H "X-API-Key: %s" -H "Content-Type: application/json" -d '{"customer_id": "s2000000-0000-4000-8000-000000000001", "channel": "sms"}'`, fixture.DemoOtherProviderKey)
	w("  # Serviceability (API key)")
	w(`  curl -s "$B/partner/serviceability/autocomplete?q=120+rue+king" -H "X-API-Key: %s"`, fixture.DemoStoreKey)
	w(`  curl -s "$B/partner/serviceability/autocomplete?q=88+a+queen" -H "X-API-Key: %s"`, fixture.DemoStoreKey)
	w(`  curl -s -X POST "$B/partner/serviceability/check" -H "X-API-Key: %s" -H "Content-Type: application/json" -d '{"address": "120 rue King Ouest, Montréal QC h3c2b5"}'`, fixture.DemoStoreKey)
	w(`  curl -s -X POST "$B/partner/serviceability/check" -H "X-API-Key: %s" -H "Content-Type: application/json" -d '{"street": "4500 boul. de Maisonneuve O", "city": "Westmount", "unit": "2B"}'`, fixture.DemoStoreKey)
	w(`  curl -s "$B/partner/serviceability/units?building_id=%s" -H "X-API-Key: %s"`, fixture.DemoBuildingFirst, fixture.DemoStoreKey)
	w("  # Location (no auth), and the same on the internal surface")
	w(`  curl -s -X POST "$B/partner/location/" -H "Content-Type: application/json" -d '{"location_hash": "%s"}'`, fixture.DemoLocationHash)
	w(`  curl -s -X POST "$B/api/v1/location/" -H "Content-Type: application/json" -d '{"location_identifier": "MTL-KING-1204"}'`)
	w("  # Provisioning (API key): a first-line port provisions at once; a suite on a third-line building installs")
	w(`  curl -s -X POST "$B/partner/provisioning/provider-initiated" -H "X-API-Key: %s" -H "Content-Type: application/json" -d '{"plan_version_id": "pv100000-0000-4000-8000-000000000500", "location_hash": "%s", "mac_address": "3c:84:6a:12:05:01", "subscriber": {"firstname": "Amélie", "lastname": "Roy", "email": "amelie.roy@example.ca", "phonenumber": "514-555-0101"}}'`, fixture.DemoStoreKey, fixture.DemoLocationHash)
	w(`  curl -s -X POST "$B/partner/provisioning/provider-initiated" -H "X-API-Key: %s" -H "Content-Type: application/json" -d '{"plan_version_id": "pv100000-0000-4000-8000-000000000150", "delivery_mode": "home_drop", "unit_id": "u3000000-0000-4000-8000-00000000002b", "subscriber": {"firstname": "Noah", "lastname": "Lavoie", "email": "noah.lavoie@example.ca", "phonenumber": "438-555-0110"}}'`, fixture.DemoStoreKey)
	w(`  curl -s -X POST "$B/partner/provisioning/provider-initiated" -H "X-API-Key: %s" -H "Content-Type: application/json" -d '{"plan_version_id": "pv100000-0000-4000-8000-000000001000", "location_hash": "lh_7f3a9c1206", "subscriber": {"firstname": "Chloé", "lastname": "Bouchard", "email": "chloe.bouchard@example.ca", "phonenumber": "514-555-0177"}, "billing": {"owner": "platform", "processor_customer_id": "cus_demo_visa", "billing_day": 5}}'`, fixture.DemoStoreKey)
	w(`  curl -s -X POST "$B/partner/provisioning/bulk" -H "X-API-Key: %s" -H "Content-Type: application/json" -d '{"orders": [{"plan_version_id": "pv100000-0000-4000-8000-000000000150", "delivery_mode": "home_drop", "unit_id": "u2000000-0000-4000-8000-000000000102", "subscriber": {"firstname": "Olivia", "lastname": "Singh", "email": "olivia.singh@example.ca", "phonenumber": "416-555-0144"}}, {"plan_version_id": "nope", "location_hash": "lh_nope", "subscriber": {"firstname": "X", "lastname": "Y", "email": "x@example.ca", "phonenumber": "1"}}]}'`, fixture.DemoStoreKey)
	w(`  curl -s -X POST "$B/partner/provisioning/confirm-install" -H "X-API-Key: %s" -H "Content-Type: application/json" -d '{"subscription_id": "c1000000-0000-4000-8000-000000000003", "mac_address": "3c:84:6a:00:2a:01"}'`, fixture.DemoStoreKey)
	w(`  curl -s "$B/partner/subscriptions/c1000000-0000-4000-8000-000000000002/change-plan/preview?plan_version_id=pv100000-0000-4000-8000-000000000500" -H "X-API-Key: %s"`, fixture.DemoStoreKey)
	w(`  curl -s -X POST "$B/partner/subscriptions/c1000000-0000-4000-8000-000000000002/change-plan" -H "X-API-Key: %s" -H "Content-Type: application/json" -d '{"plan_version_id": "pv100000-0000-4000-8000-000000000500"}'`, fixture.DemoStoreKey)
	w(`  curl -s -X POST "$B/partner/cpe/config" -H "X-Device-Secret: nwf_device_demo_secret_0001" -H "Content-Type: application/json" -d '{"mac_address": "3c:84:6a:12:04:01"}'`)
	w("  # Subscriber login and password reset (the reset mail lands in the dev outbox)")
	w(`  curl -s -X POST "$B/partner/subscriber/auth/login" -H "Content-Type: application/json" -d '{"email": "%s", "password": "%s"}'`, fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
	w(`  curl -s -X POST "$B/partner/subscriber/auth/password-reset" -H "Content-Type: application/json" -d '{"email": "%s"}'`, fixture.DemoSubscriberEmail)
	w("  # The mail's link (read it from the dev outbox below) opens the password page in a browser: $B/portal/reset-password?token=…")
	w("  # Subscriber billing: invoices, credit notes, billing day (Marie is billed by the platform)")
	w(`  SUB=$(curl -s -X POST "$B/partner/subscriber/auth/login" -H "Content-Type: application/json" -d '{"email": "%s", "password": "%s"}' | sed -E 's/.*"access_token":"([^"]+)".*/\1/')`, fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
	w(`  curl -s "$B/partner/subscriber/me/invoices" -H "Authorization: Bearer $SUB"`)
	w(`  curl -s "$B/partner/subscriber/me/credit-notes" -H "Authorization: Bearer $SUB"`)
	w(`  curl -s -X PATCH "$B/partner/subscriber/me/billing-day" -H "Authorization: Bearer $SUB" -H "Content-Type: application/json" -d '{"subscription_id": "c1000000-0000-4000-8000-000000000001", "billing_day": 7}'`)
	w("  # Operator (dashboard) login, then dev mode: clock, faults, outbox, location details")
	w(`  OP=$(curl -s -X POST "$B/api/v1/auth/login" -H "Content-Type: application/json" -d '{"email": "%s", "password": "%s"}' | sed -E 's/.*"access_token":"([^"]+)".*/\1/')`, fixture.DemoOperatorEmail, fixture.DemoOperatorPassword)
	w(`  curl -s -X POST "$B/partner/location/details" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"location_hash": "%s"}'`, fixture.DemoLocationHash)
	w(`  curl -s "$B/api/v1/dev/clock" -H "Authorization: Bearer $OP"`)
	w(`  curl -s -X POST "$B/api/v1/dev/clock" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"advance_seconds": 3600}'`)
	w(`  curl -s -X POST "$B/api/v1/dev/faults" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"smtp": "up", "switch": "ok"}'`)
	w("  # The switch inventory: each switch's driver, ports, unconverged ports and breaker (never its password)")
	w(`  curl -s "$B/api/v1/switches" -H "Authorization: Bearer $OP"`)
	w(`  curl -s "$B/api/v1/switches/%s" -H "Authorization: Bearer $OP"`, fixture.DemoSwitchKing)
	w(`  curl -s -X POST "$B/api/v1/dev/faults" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"switch@mtl-king-sw1": "fail"}'   # one switch down, the others unaffected`)
	w("  # Reconciliation: read every port of a switch and compare it with its lines (--fix converges drifted ports back);")
	w("  # a provider that opts in has drifted ports repaired by the scheduled run (every SUBPROV_RECONCILE_INTERVAL)")
	w(`  subprov reconcile --switch mtl-king-sw1   # with the DATABASE_URL the demo runs on`)
	w(`  curl -s -X PATCH "$B/api/v1/providers/%s" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"auto_repair": true}'`, fixture.DemoProviderID)
	w(`  curl -s "$B/api/v1/providers/%s" -H "Authorization: Bearer $OP"   # "outage_credit":{"min_hours":%g}: Marie's outages over an hour come back as credit notes (docs/billing.md)`,
		fixture.DemoProviderID, fixture.DemoOutageCreditHours)
	w(`  curl -s "$B/api/v1/dev/outbox?to=%s" -H "Authorization: Bearer $OP"`, fixture.DemoSubscriberEmail)
	w("  # Marie prefers French: her mail, invoice PDFs and pages are in French (her provider's default stays English)")
	w(`  curl -s "$B/partner/subscriber/me/preferences" -H "Authorization: Bearer $SUB"`)
	w(`  curl -s "$B/api/v1/invoices/$(curl -s "$B/partner/subscriber/me/invoices" -H "Authorization: Bearer $SUB" | sed -E 's/.*"id":"([^"]+)".*/\1/')/pdf" -H "Authorization: Bearer $SUB" -o facture.pdf   # FACTURE, 1 234,56 $`)
	w(`  curl -s "$B/api/v1/dev/outbox?to=%s" -H "Authorization: Bearer $OP"   # after the password reset above: "Réinitialisez votre mot de passe"`, fixture.DemoSubscriberEmail)
	w(`  curl -s -X PATCH "$B/partner/subscriber/me/password" -H "Authorization: Bearer $SUB" -H "Content-Type: application/json" -d '{"current_password": "wrong", "new_password": "another-password-1"}'   # "Le mot de passe actuel est incorrect."`)
	w(`  curl -s "$B/api/v1/overview" -H "Authorization: Bearer $OP"  # what needs attention, as the console's home page shows it`)
	w(`  curl -s "$B/metrics" | grep -E '^subprov_(sweeps_leader|jobs)'  # this process leads the clock-driven sweeps (1); the job queue by state`)
	w("  # Cancellation (dashboard JWT): quote, cancel, read back; the port is reset at ended_at")
	w(`  curl -s "$B/api/v1/subscription/c2000000-0000-4000-8000-000000000001/cancel/preview?end_date=2030-01-31" -H "Authorization: Bearer $OP"`)
	w(`  curl -s -X POST "$B/api/v1/subscription/c2000000-0000-4000-8000-000000000001/cancel" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"end_date": "2030-01-31", "reason": "moving"}'`)
	w(`  curl -s "$B/api/v1/subscription/c2000000-0000-4000-8000-000000000001/cancel" -H "Authorization: Bearer $OP"`)
	// The operations surface: what the platform's and the providers' staff run subprov with.
	w("  # Operations surface (dashboard JWT, docs/operations.md): subscribers and lines, inventory, plans, keys, events, audit")
	w(`  curl -s "$B/api/v1/subscribers?q=marie" -H "Authorization: Bearer $OP"`)
	w(`  curl -s "$B/api/v1/subscribers/s1000000-0000-4000-8000-000000000001" -H "Authorization: Bearer $OP"`)
	w(`  curl -s -X POST "$B/api/v1/subscriptions/c1000000-0000-4000-8000-000000000002/suspend" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"reason": "customer away for the winter"}'`)
	w(`  curl -s -X POST "$B/api/v1/subscriptions/c1000000-0000-4000-8000-000000000002/restore" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"reason": "back home"}'`)
	w(`  curl -s -X POST "$B/api/v1/subscriptions/c1000000-0000-4000-8000-000000000002/notes" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"note": "Prefers calls after 5 pm"}'`)
	w(`  curl -s -X POST "$B/api/v1/buildings" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"street": "300 Rue Wellington", "city": "Montréal", "postal_code": "H3C 1T4", "province": "QC", "provider_ids": ["%s"], "line_type": "first", "orderable": true}'`, fixture.DemoProviderID)
	w(`  printf 'street,city,postal_code,province,provider_ids,line_type,orderable,unit_number,switch,port,location_hash\n310 Rue Wellington,Montréal,H3C 1T4,QC,%s,first,true,101,mtl-well-sw2,ge-0/0/1,lh_wellington_310_101\n' | curl -s -X POST "$B/api/v1/buildings/import" -H "Authorization: Bearer $OP" -H "Content-Type: text/csv" --data-binary @-`, fixture.DemoProviderID)
	w(`  curl -s "$B/partner/serviceability/autocomplete?q=310+wellington" -H "X-API-Key: %s"  # served at once`, fixture.DemoStoreKey)
	w(`  curl -s "$B/api/v1/plans?provider_id=%s" -H "Authorization: Bearer $OP"`, fixture.DemoProviderID)
	w(`  curl -s -X POST "$B/api/v1/providers/%s/api-keys" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"name": "Back office", "features": []}'`, fixture.DemoProviderID)
	w(`  curl -s "$B/api/v1/providers/%s/api-keys" -H "Authorization: Bearer $OP"`, fixture.DemoProviderID)
	w(`  curl -s "$B/api/v1/invoices?status=open" -H "Authorization: Bearer $OP"`)
	w(`  curl -s "$B/api/v1/webhook-events?limit=5" -H "Authorization: Bearer $OP"`)
	w(`  curl -s "$B/api/v1/audit?limit=10" -H "Authorization: Bearer $OP"`)
	w("  # A provider's own staff: Northwind's support operator sees Northwind alone (Maple's customer is 404 to it)")
	w(`  NW=$(curl -s -X POST "$B/api/v1/auth/login" -H "Content-Type: application/json" -d '{"email": "%s", "password": "%s"}' | sed -E 's/.*"access_token":"([^"]+)".*/\1/')`, fixture.DemoSupportEmail, fixture.DemoSupportPassword)
	w(`  curl -s "$B/api/v1/subscribers?q=chen" -H "Authorization: Bearer $NW"`)
	w(`  curl -s "$B/api/v1/subscribers/s2000000-0000-4000-8000-000000000001" -H "Authorization: Bearer $NW"`)
	w("  # Operators and the second factor (the first admin of a fresh database: echo PASSWORD | subprov operator add EMAIL --role admin)")
	w(`  curl -s -X POST "$B/api/v1/operators" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"email": "billing@northwind.test", "password": "demo-billing-pass", "role": "billing", "provider_id": "%s"}'`, fixture.DemoProviderID)
	w(`  curl -s -X POST "$B/api/v1/operators/me/totp" -H "Authorization: Bearer $OP"  # then confirm with a code from an authenticator app`)
	// Installations (issue 8).
	w("  # Installations: Jean's third-line line waits for its visit; book it on the booking page (a browser), or from the operator queue")
	w("  Booking page:  %s/book?token=%s", base, fixture.DemoBookingToken)
	w(`  curl -s "$B/api/v1/install-jobs?state=open" -H "Authorization: Bearer $OP"`)
	w(`  curl -s "$B/api/v1/install-jobs?flag=No%%20contact%%20e-mail" -H "Authorization: Bearer $OP"`)
	w(`  JOB=$(curl -s "$B/api/v1/install-jobs?state=open&provider_id=%s&limit=1" -H "Authorization: Bearer $OP" | grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4)`, fixture.DemoProviderID)
	w(`  SLOT=$(curl -s "$B/api/v1/install-jobs/$JOB/slots" -H "Authorization: Bearer $OP" | grep -o '"slot_id":"[^"]*"' | head -1 | cut -d'"' -f4)`)
	w(`  curl -s -X POST "$B/api/v1/install-jobs/$JOB/assign" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"assigned_to": "Team Westmount"}'`)
	w(`  curl -s -X POST "$B/api/v1/install-jobs/$JOB/book" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d "{\"slot_id\": \"$SLOT\"}"`)
	w(`  curl -s -X POST "$B/api/v1/install-jobs/$JOB/complete" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"mac_address": "3c:84:6a:00:2a:01"}'`)
	w("  # Portal orders and reactivation (Marie is the holder; her saved card pays)")
	w(`  SUB=$(curl -s -X POST "$B/partner/subscriber/auth/login" -H "Content-Type: application/json" -d '{"email": "%s", "password": "%s"}' | sed -E 's/.*"access_token":"([^"]+)".*/\1/')  # again: the clock moved an hour above`, fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
	w(`  curl -s "$B/partner/subscriber/me/orders/options?building_id=b1000000-0000-4000-8000-000000000002" -H "Authorization: Bearer $SUB"`)
	w(`  curl -s "$B/partner/subscriber/me/orders/preview?building_id=b1000000-0000-4000-8000-000000000001&plan_version_id=pv100000-0000-4000-8000-000000001000&unit_id=u1000000-0000-4000-8000-000000001205" -H "Authorization: Bearer $SUB"`)
	w(`  curl -s -X POST "$B/partner/subscriber/me/orders" -H "Authorization: Bearer $SUB" -H "Content-Type: application/json" -d '{"building_id": "b1000000-0000-4000-8000-000000000002", "plan_version_id": "pv100000-0000-4000-8000-000000000150", "unit_id": "u2000000-0000-4000-8000-000000000103"}'`)
	w(`  curl -s -X POST "$B/api/v1/subscription/c1000000-0000-4000-8000-000000000001/cancel" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"end_date": "2030-01-31"}'`)
	w(`  curl -s "$B/partner/subscriber/me/reactivation" -H "Authorization: Bearer $SUB"`)
	w(`  curl -s -X POST "$B/partner/subscriber/me/subscriptions/c1000000-0000-4000-8000-000000000001/reactivation" -H "Authorization: Bearer $SUB"`)
	// Marketplace checkout and the sandbox.
	w("  # Marketplace checkout: the marketplace opens a session, the provider's checkout page reads and completes it (webhook secret)")
	w(`  SESSION=$(curl -s -X POST "$B/partner/external-checkout/sessions" -H "Content-Type: application/json" -d '{"provider_id": "%s", "plan_version_id": "pv100000-0000-4000-8000-000000000500", "building_id": "%s", "unit_id": "u1000000-0000-4000-8000-000000001205", "delivery_mode": "home_drop"}' | grep -o '"session_id":"[^"]*"' | cut -d'"' -f4)`, fixture.DemoProviderID, fixture.DemoBuildingFirst)
	w(`  curl -s "$B/partner/external-checkout/sessions/$SESSION" -H "X-Webhook-Secret: %s"`, fixture.DemoWebhookSecret)
	w(`  curl -s -X PATCH "$B/partner/external-checkout/sessions/$SESSION" -H "X-Webhook-Secret: %s" -H "Content-Type: application/json" -d '{"partner_reference_id": "order-42"}'`, fixture.DemoWebhookSecret)
	w(`  curl -s -X POST "$B/partner/external-checkout/complete" -H "X-Webhook-Secret: %s" -H "Content-Type: application/json" -d "{\"session_id\": \"$SESSION\", \"external_subscription_id\": \"mkt-1001\", \"subscriber\": {\"firstname\": \"Léa\", \"lastname\": \"Côté\", \"email\": \"lea.cote@example.ca\", \"phonenumber\": \"514-555-0133\"}}"`, fixture.DemoWebhookSecret)
	w(`  curl -s -X POST "$B/partner/external-checkout/anonymous-complete" -H "X-Webhook-Secret: %s" -H "Content-Type: application/json" -d '{"external_subscription_id": "mkt-anon-1", "service_provider_document_id": "nwf-spd-2026", "plan_version_id": "pv100000-0000-4000-8000-000000000150", "unit_id": "u3000000-0000-4000-8000-00000000003a", "delivery_mode": "home_drop", "contact_email": "night.owl@example.ca"}'`, fixture.DemoWebhookSecret)
	w(`  curl -s "$B/partner/external-checkout/subscriptions/mkt-anon-1" -H "X-Webhook-Secret: %s"`, fixture.DemoWebhookSecret)
	w(`  curl -s -X POST "$B/partner/external-checkout/subscription-status" -H "X-Webhook-Secret: %s" -H "Content-Type: application/json" -d '{"action": "suspend", "external_subscription_id": "mkt-anon-1", "service_provider_document_id": "nwf-spd-2026"}'`, fixture.DemoWebhookSecret)
	w(`  curl -s "$B/partner/marketplace/plans/pv100000-0000-4000-8000-000000000500"`)
	w("  # Sandbox (dashboard JWT): the sandbox's checkout URL is subprov's payment page; open it in a browser and pay with 4242 4242 4242 4242")
	w(`  curl -s "$B/api/v1/sandbox/provider-info" -H "Authorization: Bearer $OP"`)
	w(`  curl -s -X POST "$B/partner/external-checkout/sessions" -H "Content-Type: application/json" -d '{"provider_id": "%s", "plan_version_id": "pv900000-0000-4000-8000-000000000100", "building_id": "b1000000-0000-4000-8000-000000000006", "unit_id": "u6000000-0000-4000-8000-0000000000s2", "delivery_mode": "home_drop"}'`, fixture.DemoSandboxProviderID)
	w(`  curl -s -X POST "$B/api/v1/sandbox/webhook-config" -H "Authorization: Bearer $OP" -H "Content-Type: application/json" -d '{"webhook_url": "http://127.0.0.1:9000/hooks"}'`)
	w(`  curl -s "$B/api/v1/sandbox/webhook-events?limit=5" -H "Authorization: Bearer $OP"`)
	w("")
	return b.String()
}
