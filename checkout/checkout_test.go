package checkout_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/checkout"
	"github.com/subprov/subprov/internal/servicetest"
	"github.com/subprov/subprov/provisioning"
)

const (
	wrongSecret  = "whsec_wrong"
	unitQueen102 = "u2000000-0000-4000-8000-000000000102"
)

// create opens a Northwind session on the King building for in's overrides.
func create(t *testing.T, e *servicetest.Env, in checkout.CreateInput) *subprov.CheckoutSession {
	t.Helper()
	if in.ProviderID == "" {
		in.ProviderID, in.PlanVersionID, in.BuildingID = servicetest.Northwind, servicetest.PlanFibre150, servicetest.BuildingKing
	}
	c, err := e.Checkout.Create(context.Background(), in, "")
	if err != nil {
		t.Fatalf("create %+v: %v", in, err)
	}
	return c.Session
}

func creation(t *testing.T, e *servicetest.Env) {
	nw := func(in checkout.CreateInput) checkout.CreateInput {
		in.ProviderID = servicetest.Northwind
		if in.PlanVersionID == "" {
			in.PlanVersionID = servicetest.PlanFibre150
		}
		if in.BuildingID == "" {
			in.BuildingID = servicetest.BuildingKing
		}
		return in
	}
	tests := []struct {
		name   string
		in     checkout.CreateInput
		code   string
		fields string // the fields named, sorted, comma-separated
		url    string // the checkout URL's start
	}{
		{"a live provider's own page", nw(checkout.CreateInput{UnitID: servicetest.UnitKing1205}), "", "", "https://shop.northwind.example/checkout?session_id="},
		{"a sandbox provider's page is subprov's own", checkout.CreateInput{ProviderID: servicetest.Sandbox, PlanVersionID: servicetest.PlanSandbox100,
			BuildingID: servicetest.BuildingSandbox}, "", "", "http://subprov.test" + checkout.SandboxCheckoutPath + "?session_id="},
		{"the required fields", checkout.CreateInput{}, "invalid/validation_error", "building_id,plan_version_id,provider_id", ""},
		{"an unknown delivery mode and a bad MAC", nw(checkout.CreateInput{DeliveryMode: "drone", MACAddress: "nope"}), "invalid/validation_error", "delivery_mode,mac_address", ""},
		{"an unknown provider", checkout.CreateInput{ProviderID: "no-such", PlanVersionID: "x", BuildingID: "y"}, "not_found/not_found", "", ""},
		{"another provider's plan", nw(checkout.CreateInput{PlanVersionID: servicetest.PlanEthernet300}), "invalid/validation_error", "plan_version_id", ""},
		{"a plan no longer sold", nw(checkout.CreateInput{PlanVersionID: servicetest.PlanFibre500Old}), "invalid/validation_error", "plan_version_id", ""},
		{"a building the provider does not cover", nw(checkout.CreateInput{BuildingID: servicetest.BuildingGeorgia}), "not_found/not_found", "", ""},
		{"a building not orderable", nw(checkout.CreateInput{BuildingID: servicetest.BuildingSaintPaul}), "invalid/validation_error", "building_id", ""},
		{"a suite of another building", nw(checkout.CreateInput{UnitID: servicetest.UnitQueen101}), "invalid/validation_error", "unit_id", ""},
		{"a port of another building", nw(checkout.CreateInput{LocationHash: servicetest.HashGeorgia}), "invalid/validation_error", "location_hash", ""},
		{"a suite that is not the port's", nw(checkout.CreateInput{LocationHash: servicetest.HashKing1205, UnitID: servicetest.UnitKing1204}), "invalid/validation_error", "unit_id", ""},
		{"a provider with no checkout page", checkout.CreateInput{ProviderID: servicetest.Maple, PlanVersionID: servicetest.PlanEthernet300,
			BuildingID: servicetest.BuildingQueen}, "unconfigured/checkout_unavailable", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Checkout.Create(context.Background(), tt.in, "")
			if servicetest.Code(err) != tt.code {
				t.Fatalf("Create = %v, want %q", err, tt.code)
			}
			if err != nil {
				ee, _ := subprov.AsError(err)
				if fields := slices.Sorted(maps.Keys(ee.Fields)); strings.Join(fields, ",") != tt.fields {
					t.Fatalf("fields %v, want %s", ee.Fields, tt.fields)
				}
				return
			}
			if got.Session.Status != subprov.SessionPending || got.CheckoutURL != tt.url+got.Session.ID {
				t.Fatalf("session %s at %s, want pending at %s…", got.Session.Status, got.CheckoutURL, tt.url)
			}
		})
	}
}

// sessionChecksInOrder: age first (whoever asks), then the secret, then cancellation.
func sessionChecksInOrder(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	live := create(t, e, checkout.CreateInput{})
	read := create(t, e, checkout.CreateInput{})
	if v, err := e.Checkout.Read(ctx, read.ID, servicetest.NorthwindSecret); err != nil || v.Session.Status != subprov.SessionRedirected {
		t.Fatalf("first read: %+v %v", v, err)
	}
	cancelled := create(t, e, checkout.CreateInput{})
	if err := e.Checkout.Cancel(ctx, cancelled.ID, servicetest.NorthwindSecret); err != nil {
		t.Fatal(err)
	}
	type row struct{ name, id, secret, code string }
	check := func(rows []row) {
		t.Helper()
		for _, tt := range rows {
			if err := e.Checkout.Check(ctx, tt.id, tt.secret); servicetest.Code(err) != tt.code {
				t.Errorf("%s: %v, want %q", tt.name, err, tt.code)
			}
		}
	}
	check([]row{
		{"an unknown session", "5b0c0000-0000-4000-8000-000000000000", servicetest.NorthwindSecret, "not_found/not_found"},
		{"no secret", live.ID, "", "unauthorized/unauthorized"},
		{"a wrong secret", live.ID, wrongSecret, "unauthorized/unauthorized"},
		{"another provider's secret is as unknown", live.ID, servicetest.MapleSecret, "not_found/not_found"},
		{"its provider's secret", live.ID, servicetest.NorthwindSecret, ""},
		{"a cancelled session, for anyone else, is what a live one is", cancelled.ID, servicetest.MapleSecret, "not_found/not_found"},
		{"a cancelled session, for its provider", cancelled.ID, servicetest.NorthwindSecret, "gone/session_cancelled"},
	})
	e.Clock.Advance(subprov.CheckoutSessionTTL)
	check([]row{
		{"an unread session expires, before the secret is checked", live.ID, "", "gone/session_expired"},
		{"and stays expired for its provider", live.ID, servicetest.NorthwindSecret, "gone/session_expired"},
		{"a read session never expires", read.ID, servicetest.NorthwindSecret, ""},
	})
	// Expiry marks the row and names when it expired.
	ee, _ := subprov.AsError(e.Checkout.Check(ctx, live.ID, ""))
	if ee == nil || ee.Extra["expired_at"] != live.ExpiresAt().Format(time.RFC3339) {
		t.Fatalf("expired: %v", ee)
	}
	if got, err := e.Store.CheckoutSession(ctx, live.ID); err != nil || got.Status != subprov.SessionExpired {
		t.Fatalf("the expired session is %+v (%v)", got, err)
	}
	// A signed-in shopper's list shows an unread session as expired without touching it.
	shopper := e.Login(t, servicetest.EmailNoAccount).ID
	mine, err := e.Checkout.Create(ctx, checkout.CreateInput{ProviderID: servicetest.Northwind, PlanVersionID: servicetest.PlanFibre150,
		BuildingID: servicetest.BuildingKing}, shopper)
	if err != nil {
		t.Fatal(err)
	}
	e.Clock.Advance(subprov.CheckoutSessionTTL)
	list, err := e.Checkout.SessionsOfAccount(ctx, shopper)
	if err != nil || len(list) != 1 || list[0].Status != subprov.SessionExpired {
		t.Fatalf("the shopper's sessions: %+v %v", list, err)
	}
	if got, _ := e.Store.CheckoutSession(ctx, mine.Session.ID); got.Status != subprov.SessionPending {
		t.Fatalf("a read of the list wrote the session: %s", got.Status)
	}
}

// patchAndCancel: only a pending or redirected session changes; a patch names its
// problems and changes nothing when refused.
func patchAndCancel(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	sess := create(t, e, checkout.CreateInput{LocationHash: servicetest.HashKing1206})
	str := func(s string) *string { return &s }
	tests := []struct {
		name string
		in   checkout.PatchInput
		code string
		plan string
	}{
		{"the plan and the reference", checkout.PatchInput{PlanVersionID: str("pv100000-0000-4000-8000-000000001000"), PartnerReferenceID: str("order-42")}, "", "pv100000-0000-4000-8000-000000001000"},
		{"another provider's plan", checkout.PatchInput{PlanVersionID: str(servicetest.PlanEthernet300)}, "invalid/validation_error", ""},
		{"a plan no longer sold", checkout.PatchInput{PlanVersionID: str(servicetest.PlanFibre500Old)}, "invalid/validation_error", ""},
		{"a reference over 200 characters", checkout.PatchInput{PartnerReferenceID: str(strings.Repeat("x", 201))}, "invalid/validation_error", ""},
		{"a reference of 200 characters", checkout.PatchInput{PartnerReferenceID: str(strings.Repeat("x", 200))}, "", "pv100000-0000-4000-8000-000000001000"},
	}
	for _, tt := range tests {
		v, err := e.Checkout.Patch(ctx, sess.ID, servicetest.NorthwindSecret, tt.in)
		if servicetest.Code(err) != tt.code || (err == nil && v.Session.PlanVersionID != tt.plan) {
			t.Errorf("%s: %+v %v, want plan %s, %q", tt.name, v, err, tt.plan, tt.code)
		}
	}
	if _, err := e.Checkout.Patch(ctx, sess.ID, servicetest.MapleSecret, checkout.PatchInput{PartnerReferenceID: str("x")}); servicetest.Code(err) != "not_found/not_found" {
		t.Errorf("another provider's patch: %v", err)
	}
	// A completed session no longer changes.
	if _, err := e.Checkout.Complete(ctx, servicetest.NorthwindSecret, checkout.CompleteInput{SessionID: sess.ID,
		Subscriber: provisioning.Subscriber{FirstName: "A", LastName: "B", Email: "patch@example.ca", PhoneNumber: "1"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Checkout.Patch(ctx, sess.ID, servicetest.NorthwindSecret, checkout.PatchInput{PartnerReferenceID: str("x")}); servicetest.Code(err) != "conflict/session_not_open" {
		t.Errorf("patch of a completed session: %v", err)
	}
	if err := e.Checkout.Cancel(ctx, sess.ID, servicetest.NorthwindSecret); servicetest.Code(err) != "conflict/session_not_open" {
		t.Errorf("cancel of a completed session: %v", err)
	}
	// Cancelling twice: the second call meets a cancelled session.
	other := create(t, e, checkout.CreateInput{})
	if err := e.Checkout.Cancel(ctx, other.ID, servicetest.NorthwindSecret); err != nil {
		t.Fatal(err)
	}
	if err := e.Checkout.Cancel(ctx, other.ID, servicetest.NorthwindSecret); servicetest.Code(err) != "gone/session_cancelled" {
		t.Errorf("second cancel: %v", err)
	}
}

// TestCompletion: a session completes once and replays after; the session wins over the
// payload; anonymous completion validates, replays by external id and refuses another line's.
func TestCompletion(t *testing.T) {
	servicetest.Each(t, func(t *testing.T, e *servicetest.Env) {
		ctx := context.Background()
		who := provisioning.Subscriber{FirstName: "A", LastName: "B", Email: "complete@example.ca", PhoneNumber: "1"}
		sess := create(t, e, checkout.CreateInput{LocationHash: servicetest.HashKing1205, MACAddress: "aa:bb:cc:00:11:22"})
		in := checkout.CompleteInput{SessionID: sess.ID, Subscriber: who, MACAddress: "aa:bb:cc:99:99:99", PlanVersionID: "ignored"}
		first, err := e.Checkout.Complete(ctx, servicetest.NorthwindSecret, in)
		if err != nil {
			t.Fatal(err)
		}
		sub := first.Subscription
		if first.Message != "" || first.Replay || sub.PlanVersionID != servicetest.PlanFibre150 || sub.MACAddress != "aa:bb:cc:00:11:22" || sub.UnitID != servicetest.UnitKing1205 {
			t.Fatalf("completed %+v (message %q)", sub, first.Message)
		}
		again, err := e.Checkout.Complete(ctx, servicetest.NorthwindSecret, in)
		if err != nil || !again.Replay || again.Subscription.ID != sub.ID || again.Message == "" {
			t.Fatalf("replay: %+v %v", again, err)
		}
		if got, _ := e.Store.CheckoutSession(ctx, sess.ID); got.Status != subprov.SessionCompleted || got.SubscriptionID != sub.ID {
			t.Fatalf("the session is %s for %s", got.Status, got.SubscriptionID)
		}
		if _, err := e.Checkout.Complete(ctx, servicetest.NorthwindSecret, checkout.CompleteInput{ServiceProviderDocumentID: "nope",
			PlanVersionID: servicetest.PlanFibre150, UnitID: servicetest.UnitKing1206, Subscriber: who}); servicetest.Code(err) != "invalid/validation_error" {
			t.Errorf("complete with another provider's document id: %v", err)
		}

		anon := func(ext, doc string) checkout.AnonymousInput {
			return checkout.AnonymousInput{ExternalSubscriptionID: ext, ServiceProviderDocumentID: doc, PlanVersionID: servicetest.PlanFibre150,
				DeliveryMode: subprov.DeliveryHomeDrop, UnitID: servicetest.UnitKing1206}
		}
		if _, err := e.Checkout.AnonymousComplete(ctx, servicetest.NorthwindSecret, checkout.AnonymousInput{}); servicetest.Code(err) != "invalid/validation_error" {
			t.Errorf("anonymous with nothing: %v", err)
		} else if ee, _ := subprov.AsError(err); ee.Fields["external_subscription_id"] == "" || ee.Fields["service_provider_document_id"] == "" {
			t.Errorf("anonymous with nothing names %v", ee.Fields)
		}
		if _, err := e.Checkout.AnonymousComplete(ctx, wrongSecret, anon("ext-1", servicetest.NorthwindDocID)); servicetest.Code(err) != "unauthorized/unauthorized" {
			t.Errorf("anonymous with a wrong secret: %v", err)
		}
		if _, err := e.Checkout.AnonymousComplete(ctx, servicetest.NorthwindSecret, anon("ext-1", servicetest.SandboxDocID)); servicetest.Code(err) != "invalid/validation_error" {
			t.Errorf("anonymous with another provider's document id: %v", err)
		}
		made, err := e.Checkout.AnonymousComplete(ctx, servicetest.NorthwindSecret, anon("ext-1", servicetest.NorthwindDocID))
		if err != nil || made.Replay || !made.Subscription.Anonymous || made.Route == "" {
			t.Fatalf("anonymous: %+v %v", made, err)
		}
		replay, err := e.Checkout.AnonymousComplete(ctx, servicetest.NorthwindSecret, anon("ext-1", servicetest.NorthwindDocID))
		if err != nil || !replay.Replay || replay.Subscription.ID != made.Subscription.ID || replay.Route != made.Route {
			t.Fatalf("anonymous replay: %+v %v", replay, err)
		}
		// The external id of a line with a subscriber record is not an anonymous line's to replay.
		if _, err := e.Checkout.Complete(ctx, servicetest.NorthwindSecret, checkout.CompleteInput{ExternalSubscriptionID: "ext-named",
			PlanVersionID: servicetest.PlanFibre150, UnitID: unitQueen102, Subscriber: provisioning.Subscriber{FirstName: "C", LastName: "D",
				Email: "named@example.ca", PhoneNumber: "1"}}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Checkout.AnonymousComplete(ctx, servicetest.NorthwindSecret, anon("ext-named", servicetest.NorthwindDocID)); servicetest.Code(err) != "conflict/external_id_in_use" {
			t.Errorf("anonymous over a named line's external id: %v", err)
		}

		// The partner's suspend and restore address a line by its own id and document id.
		p := e.Provider(t, servicetest.Northwind)
		status := []struct {
			name string
			in   checkout.StatusInput
			code string
		}{
			{"an unknown action and no address", checkout.StatusInput{Action: "pause"}, "invalid/validation_error"},
			{"another provider's document id is not found", checkout.StatusInput{Action: provisioning.ServiceSuspend, ExternalSubscriptionID: "ext-1",
				ServiceProviderDocumentID: servicetest.SandboxDocID}, "not_found/not_found"},
			{"an unknown external id is not found", checkout.StatusInput{Action: provisioning.ServiceSuspend, ExternalSubscriptionID: "ext-none",
				ServiceProviderDocumentID: servicetest.NorthwindDocID}, "not_found/not_found"},
		}
		for _, tt := range status {
			if _, err := e.Checkout.SetStatus(ctx, p, tt.in); servicetest.Code(err) != tt.code {
				t.Errorf("status, %s: %v, want %q", tt.name, err, tt.code)
			}
		}
		if _, err := e.Checkout.Subscription(ctx, e.Provider(t, servicetest.Maple), "ext-1"); servicetest.Code(err) != "not_found/not_found" {
			t.Errorf("another provider reads the line by its external id: %v", err)
		}
	})
}

// sandboxPay: the sandbox payment page names every field problem, a declined card or a
// processing error changes nothing, a good card completes the session once; a live
// provider's session is not the page's.
func sandboxPay(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	live := create(t, e, checkout.CreateInput{})
	sess := create(t, e, checkout.CreateInput{ProviderID: servicetest.Sandbox, PlanVersionID: servicetest.PlanSandbox100,
		BuildingID: servicetest.BuildingSandbox, LocationHash: servicetest.HashSandboxS1})
	good := checkout.Payment{FirstName: "Ada", LastName: "L", Email: "ada@example.ca", PhoneNumber: "1", CardNumber: "4242-4242 4242 4242", Expiry: "12 / 39", CVC: "123"}
	pay := func(f func(p *checkout.Payment)) checkout.Payment { p := good; f(&p); return p }
	tests := []struct {
		name   string
		p      checkout.Payment
		code   string
		fields string
	}{
		{"every field is required", checkout.Payment{}, "invalid/validation_error", "card_number,cvc,email,expiry,firstname,lastname,phonenumber"},
		{"an e-mail that is not one", pay(func(p *checkout.Payment) { p.Email = "nope" }), "invalid/validation_error", "email"},
		{"an expiry that is not MM/YY", pay(func(p *checkout.Payment) { p.Expiry = "13/39" }), "invalid/validation_error", "expiry"},
		{"an expired card", pay(func(p *checkout.Payment) { p.Expiry = "01/20" }), "invalid/validation_error", "expiry"},
		{"a CVC that is not 3 or 4 digits", pay(func(p *checkout.Payment) { p.CVC = "12a" }), "invalid/validation_error", "cvc"},
		{"a card not among the test cards", pay(func(p *checkout.Payment) { p.CardNumber = "4111 1111 1111 1111" }), "invalid/validation_error", "card_number"},
		{"a declined card", pay(func(p *checkout.Payment) { p.CardNumber = checkout.TestCards[1].Number }), "conflict/card_declined", ""},
		{"a processing error", pay(func(p *checkout.Payment) { p.CardNumber = checkout.TestCards[2].Number }), "unavailable/processing_error", ""},
	}
	for _, tt := range tests {
		_, err := e.Checkout.Pay(ctx, sess.ID, tt.p)
		if servicetest.Code(err) != tt.code {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.code)
			continue
		}
		if ee, _ := subprov.AsError(err); strings.Join(slices.Sorted(maps.Keys(ee.Fields)), ",") != tt.fields {
			t.Errorf("%s: fields %v, want %s", tt.name, ee.Fields, tt.fields)
		}
	}
	if got, _ := e.Store.CheckoutSession(ctx, sess.ID); got.Status == subprov.SessionCompleted {
		t.Fatal("a refused payment completed the session")
	}
	if _, err := e.Checkout.Pay(ctx, live.ID, good); servicetest.Code(err) != "not_found/not_found" {
		t.Errorf("paying a live provider's session on the sandbox page: %v", err)
	}
	first, err := e.Checkout.Pay(ctx, sess.ID, good)
	if err != nil || first.Replay {
		t.Fatalf("pay: %+v %v", first, err)
	}
	again, err := e.Checkout.Pay(ctx, sess.ID, good)
	if err != nil || !again.Replay || again.Subscription.ID != first.Subscription.ID {
		t.Fatalf("paying twice: %+v %v", again, err)
	}
}

// TestSessions runs creation and the session checks on one store per engine.
func TestSessions(t *testing.T) {
	servicetest.EachRules(t,
		servicetest.Rule{Name: "Creation", Test: creation},
		servicetest.Rule{Name: "SessionChecksInOrder", Test: sessionChecksInOrder},
	)
}

// TestChanges runs the changes to open sessions on one store per engine (the store is the
// costly part); each works on sessions of its own.
func TestChanges(t *testing.T) {
	servicetest.EachRules(t,
		servicetest.Rule{Name: "PatchAndCancel", Test: patchAndCancel},
		servicetest.Rule{Name: "SandboxPay", Test: sandboxPay},
	)
}
