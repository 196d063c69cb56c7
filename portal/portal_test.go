package portal_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/servicetest"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/portal"
	"github.com/subprov/subprov/store"
)

const (
	lineMarie = "c1000000-0000-4000-8000-000000000001" // ACTIVE at King 1204
	linePriya = "c1000000-0000-4000-8000-000000000002" // ACTIVE at Queen 101
)

func str(s string) *string { return &s }

// mails counts the messages queued to addr.
func mails(t *testing.T, e *servicetest.Env, addr string) int {
	t.Helper()
	return len(e.Mails(t, addr))
}

// addUser adds an authorized user to acc's account and returns that person's login.
func addUser(t *testing.T, e *servicetest.Env, acc *subprov.AccountLogin, email string) (*subprov.AuthorizedUser, *subprov.AccountLogin) {
	t.Helper()
	u, err := e.Portal.AddAuthorizedUser(context.Background(), acc, portal.AuthorizedUserInput{FirstName: "Luc", LastName: "Tremblay", Email: email})
	if err != nil {
		t.Fatalf("add %s: %v", email, err)
	}
	login, err := e.Store.Account(context.Background(), u.AccountID)
	if err != nil {
		t.Fatal(err)
	}
	return u, login
}

// noSubscriberRecord: a login without a subscriber record has no account to act on, on
// every operation of the portal.
func noSubscriberRecord(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	acc := e.Login(t, servicetest.EmailNoAccount)
	ops := map[string]func() error{
		"details":      func() error { _, err := e.Portal.DetailsOf(ctx, acc); return err },
		"own contact":  func() error { _, err := e.Portal.UpdateOwnContact(ctx, acc, portal.ContactPatch{}); return err },
		"list users":   func() error { _, err := e.Portal.AuthorizedUsers(ctx, acc); return err },
		"add user":     func() error { _, err := e.Portal.AddAuthorizedUser(ctx, acc, portal.AuthorizedUserInput{}); return err },
		"resend":       func() error { _, err := e.Portal.ResendInvite(ctx, acc, "x"); return err },
		"remove user":  func() error { return e.Portal.RemoveAuthorizedUser(ctx, acc, "x") },
		"options":      func() error { _, err := e.Portal.OrderOptions(ctx, acc, servicetest.BuildingKing); return err },
		"preview":      func() error { _, err := e.Portal.PreviewOrder(ctx, acc, portal.OrderRequest{}); return err },
		"order":        func() error { _, err := e.Portal.PlaceOrder(ctx, acc, portal.OrderRequest{}); return err },
		"reactivation": func() error { _, err := e.Portal.Reactivation(ctx, acc); return err },
		"reactivate":   func() error { _, err := e.Portal.Reactivate(ctx, acc, lineMarie); return err },
	}
	for name, op := range ops {
		if err := op(); servicetest.Code(err) != "not_found/no_subscriber" {
			t.Errorf("%s: %v, want not_found/no_subscriber", name, err)
		}
	}
}

func authorizedUsers(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	marie, priya := e.Login(t, servicetest.EmailMarie), e.Login(t, servicetest.EmailPriya)
	person := func(email string) portal.AuthorizedUserInput {
		return portal.AuthorizedUserInput{FirstName: " Élodie ", LastName: "Tremblay", Email: email}
	}
	first, err := e.Portal.AddAuthorizedUser(ctx, marie, person(" Elodie.Tremblay@Example.ca "))
	if err != nil {
		t.Fatal(err)
	}
	if first.Contact.Email != "elodie.tremblay@example.ca" || first.Contact.FirstName != "Élodie" || first.Activated || mails(t, e, "elodie.tremblay@example.ca") != 1 {
		t.Fatalf("added %+v: want the e-mail normalised, names trimmed, not activated, a set-up link mailed", first)
	}
	adds := []struct {
		name   string
		in     portal.AuthorizedUserInput
		code   string
		fields []string
	}{
		{"names and e-mail are required", portal.AuthorizedUserInput{FirstName: " "}, "invalid/validation_error", []string{"firstname", "lastname", "email"}},
		{"an e-mail that is not one", person("nope"), "invalid/validation_error", []string{"email"}},
		{"an e-mail with a portal login", person(servicetest.EmailPriya), "conflict/email_has_portal_account", nil},
		{"an e-mail with another provider's login", person(servicetest.EmailLiam), "conflict/email_has_portal_account", nil},
		{"the same person twice", person("ELODIE.tremblay@example.ca"), "conflict/email_has_portal_account", nil},
	}
	for _, tt := range adds {
		_, err := e.Portal.AddAuthorizedUser(ctx, marie, tt.in)
		if servicetest.Code(err) != tt.code {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.code)
			continue
		}
		ee, _ := subprov.AsError(err)
		for _, f := range tt.fields {
			if ee.Fields[f] == "" {
				t.Errorf("%s: field %s not named in %v", tt.name, f, ee.Fields)
			}
		}
	}
	// At most five per account.
	for i := 2; i <= subprov.MaxAuthorizedUsers; i++ {
		addUser(t, e, marie, fmt.Sprintf("user%d@example.ca", i))
	}
	if _, err := e.Portal.AddAuthorizedUser(ctx, marie, person("user6@example.ca")); servicetest.Code(err) != "conflict/limit_reached" {
		t.Fatalf("a sixth: %v", err)
	}
	if list, err := e.Portal.AuthorizedUsers(ctx, priya); err != nil || len(list) != 0 {
		t.Fatalf("Priya's list holds %d of Marie's users (%v)", len(list), err)
	}

	// Another account's user is not found, for resend and remove alike.
	scoped := []struct {
		name string
		acc  *subprov.AccountLogin
		id   string
		code string
	}{
		{"another account's user", priya, first.ID, "not_found/not_found"},
		{"an unknown user", marie, "5b0c0000-0000-4000-8000-000000000000", "not_found/not_found"},
		{"the account's own user", marie, first.ID, ""},
	}
	for _, tt := range scoped {
		if _, err := e.Portal.ResendInvite(ctx, tt.acc, tt.id); servicetest.Code(err) != tt.code {
			t.Errorf("resend, %s: %v, want %q", tt.name, err, tt.code)
		}
		if tt.code != "" {
			if err := e.Portal.RemoveAuthorizedUser(ctx, tt.acc, tt.id); servicetest.Code(err) != tt.code {
				t.Errorf("remove, %s: %v, want %q", tt.name, err, tt.code)
			}
		}
	}
	if n := mails(t, e, "elodie.tremblay@example.ca"); n != 2 {
		t.Fatalf("%d set-up links after a resend, want 2", n)
	}
	// A person who chose a password gets no more set-up links.
	if err := e.Store.InTx(ctx, func(tx *store.Tx) error { return tx.SetPassword(ctx, first.AccountID, "x", e.Clock.Now()) }); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Portal.ResendInvite(ctx, marie, first.ID); servicetest.Code(err) != "conflict/already_activated" {
		t.Errorf("resend after activation: %v", err)
	}
	// Removing deletes the login; a second removal finds nothing.
	if err := e.Portal.RemoveAuthorizedUser(ctx, marie, first.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Store.Account(ctx, first.AccountID); err == nil {
		t.Error("the removed person's login is still there")
	}
	if err := e.Portal.RemoveAuthorizedUser(ctx, marie, first.ID); servicetest.Code(err) != "not_found/not_found" {
		t.Errorf("remove twice: %v", err)
	}
}

// TestContacts: the billing contact splits off the holder's and comes back to it, telling the
// old and the new address; the signed-in person edits only their own details, never the login.
func TestContacts(t *testing.T) {
	servicetest.Each(t, func(t *testing.T, e *servicetest.Env) {
		ctx := context.Background()
		northwind := e.Provider(t, servicetest.Northwind)
		marie := e.Login(t, servicetest.EmailMarie)
		const billing = "billing@tremblay.example.ca"

		if _, err := e.Portal.UseHolderForInvoices(ctx, northwind, servicetest.SubscriberMarie); servicetest.Code(err) != "conflict/not_separate" {
			t.Fatalf("use the holder when invoices already go there: %v", err)
		}
		if _, err := e.Portal.UpdateInvoiceContact(ctx, northwind, servicetest.SubscriberMarie, portal.ContactPatch{Email: str("nope")}); servicetest.Code(err) != "invalid/validation_error" {
			t.Fatalf("a billing e-mail that is not one: %v", err)
		}
		c, err := e.Portal.UpdateInvoiceContact(ctx, northwind, servicetest.SubscriberMarie, portal.ContactPatch{Email: str(billing), Company: str(" Tremblay Conseil ")})
		if err != nil || c.Email != billing || c.Company != "Tremblay Conseil" || c.FirstName != "Marie" {
			t.Fatalf("split off: %+v %v; want the holder's details with the patch", c, err)
		}
		if mails(t, e, servicetest.EmailMarie) != 1 || mails(t, e, billing) != 1 {
			t.Fatal("the old and the new billing address are each told")
		}
		for _, addr := range []string{"BILLING@tremblay.example.ca", billing} {
			if _, err := e.Portal.UpdateInvoiceContact(ctx, northwind, servicetest.SubscriberMarie, portal.ContactPatch{Email: str(addr)}); err != nil {
				t.Fatal(err)
			}
		}
		if mails(t, e, billing) != 1 || mails(t, e, "BILLING@tremblay.example.ca") != 0 {
			t.Fatal("a change of case only is no change of address, and mails nobody")
		}
		d, err := e.Portal.DetailsOf(ctx, marie)
		if err != nil || !d.BillingContactDiffers || d.User.Email != servicetest.EmailMarie {
			t.Fatalf("details after the split: %+v %v", d, err)
		}

		// The holder's own change never touches the login e-mail, and leaves a split-off
		// billing contact alone.
		own, err := e.Portal.UpdateOwnContact(ctx, marie, portal.ContactPatch{FirstName: str("Marie-Ève"), Email: str("new@example.ca")})
		if err != nil || own.FirstName != "Marie-Ève" || own.Email != servicetest.EmailMarie {
			t.Fatalf("own change: %+v %v", own, err)
		}
		if d, _ := e.Portal.DetailsOf(ctx, marie); d.InvoiceContact.FirstName != "Marie" {
			t.Fatalf("a split-off billing contact followed the holder: %+v", d.InvoiceContact)
		}
		// An authorized user edits their own details, not the holder's.
		_, luc := addUser(t, e, marie, "luc.tremblay@example.ca")
		if got, err := e.Portal.UpdateOwnContact(ctx, luc, portal.ContactPatch{PhoneNumber: str("514-555-0000")}); err != nil || got.PhoneNumber != "514-555-0000" || got.Email != "luc.tremblay@example.ca" {
			t.Fatalf("an authorized user's own change: %+v %v", got, err)
		}
		if d, err := e.Portal.DetailsOf(ctx, luc); err != nil || d.User.Email != "luc.tremblay@example.ca" || d.ContractContact.FirstName != "Marie-Ève" {
			t.Fatalf("an authorized user's details: %+v %v", d, err)
		}

		if h, err := e.Portal.UseHolderForInvoices(ctx, northwind, servicetest.SubscriberMarie); err != nil || h.Email != servicetest.EmailMarie {
			t.Fatalf("back to the holder: %+v %v", h, err)
		}
		if mails(t, e, billing) != 2 || mails(t, e, servicetest.EmailMarie) != 2 {
			t.Fatal("going back to the holder tells both addresses")
		}
		if d, _ := e.Portal.DetailsOf(ctx, marie); d.BillingContactDiffers {
			t.Fatal("the billing contact still differs")
		}
	})
}

// TestHolderChangeCarriesABillingContactOfTheSameParty: a billing contact that describes the
// holder (as the provider may have stored it) follows the holder's change.
func TestHolderChangeCarriesABillingContactOfTheSameParty(t *testing.T) {
	servicetest.Each(t, func(t *testing.T, e *servicetest.Env) {
		ctx := context.Background()
		northwind := e.Provider(t, servicetest.Northwind)
		marie := e.Login(t, servicetest.EmailMarie)
		if _, err := e.Portal.UpdateInvoiceContact(ctx, northwind, servicetest.SubscriberMarie, portal.ContactPatch{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.Portal.UpdateOwnContact(ctx, marie, portal.ContactPatch{LastName: str("Tremblay-Roy")}); err != nil {
			t.Fatal(err)
		}
		d, err := e.Portal.DetailsOf(ctx, marie)
		if err != nil || d.InvoiceContact.LastName != "Tremblay-Roy" || d.BillingContactDiffers {
			t.Fatalf("the billing contact of the same party did not follow: %+v %v", d, err)
		}
	})
}

// orderRules: the order checks in the order a person would fix them, each with its code.
func orderRules(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	marie := e.Login(t, servicetest.EmailMarie)
	ok := portal.OrderRequest{BuildingID: servicetest.BuildingKing, PlanVersionID: servicetest.PlanFibre150, UnitID: servicetest.UnitKing1205}
	with := func(f func(r *portal.OrderRequest)) portal.OrderRequest { r := ok; f(&r); return r }
	tests := []struct {
		name string
		r    portal.OrderRequest
		code string
	}{
		{"building, plan and suite are required", portal.OrderRequest{}, "invalid/validation_error"},
		{"a start date that is not a date", with(func(r *portal.OrderRequest) { r.RequestedStartDate = "soon" }), "invalid/validation_error"},
		{"a building only another provider serves", with(func(r *portal.OrderRequest) { r.BuildingID = servicetest.BuildingGeorgia }), "not_found/not_served"},
		{"a building nobody serves", with(func(r *portal.OrderRequest) { r.BuildingID = "no-such-building" }), "not_found/no_provider"},
		{"a building that cannot take orders", with(func(r *portal.OrderRequest) { r.BuildingID = servicetest.BuildingSaintPaul }), "conflict/not_served"},
		{"another provider's plan", with(func(r *portal.OrderRequest) { r.PlanVersionID = servicetest.PlanEthernet300 }), "not_found/plan_not_found"},
		{"a plan no longer sold", with(func(r *portal.OrderRequest) { r.PlanVersionID = servicetest.PlanFibre500Old }), "not_found/plan_not_found"},
		{"no suite once building and plan are there", with(func(r *portal.OrderRequest) { r.UnitID = "" }), "invalid/suite_required"},
		{"an unknown suite", with(func(r *portal.OrderRequest) { r.UnitID = "no-such-unit" }), "not_found/suite_not_found"},
		{"a suite of another building", with(func(r *portal.OrderRequest) { r.UnitID = servicetest.UnitQueen101 }), "invalid/suite_mismatch"},
		{"a start date before today", with(func(r *portal.OrderRequest) { r.RequestedStartDate = "2020-01-01" }), "invalid/order_window"},
		{"a start date past the window", with(func(r *portal.OrderRequest) { r.RequestedStartDate = "2099-01-01" }), "invalid/order_window"},
		{"a suite another line holds", with(func(r *portal.OrderRequest) { r.UnitID = servicetest.UnitKing1204 }), "conflict/suite_held"},
		{"ending another account's line", with(func(r *portal.OrderRequest) { r.EndCurrentSubscriptionID = linePriya }), "not_found/not_found"},
	}
	for _, tt := range tests {
		if _, err := e.Portal.PlaceOrder(ctx, marie, tt.r); servicetest.Code(err) != tt.code {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.code)
		}
	}
	// The preview answers the same problems as blockers, never as an error.
	pv, err := e.Portal.PreviewOrder(ctx, marie, with(func(r *portal.OrderRequest) { r.UnitID = servicetest.UnitKing1204 }))
	if err != nil || len(pv.Blockers) == 0 {
		t.Fatalf("preview of a held suite: %+v %v", pv, err)
	}
	pv, err = e.Portal.PreviewOrder(ctx, marie, portal.OrderRequest{BuildingID: servicetest.BuildingKing})
	if err != nil || len(pv.Blockers) == 0 || pv.Blockers[0] != "plan_version_id is required. unit_id is required." {
		t.Fatalf("preview naming what is missing: %+v %v", pv, err)
	}
	if _, err := e.Portal.OrderOptions(ctx, marie, " "); servicetest.Code(err) != "invalid/validation_error" {
		t.Errorf("options without a building: %v", err)
	}
	// Reactivation acts on the account's own cancelled lines only.
	for _, tt := range []struct{ name, id, code string }{
		{"another account's line", linePriya, "not_found/not_found"},
		{"a line that is not cancelled", lineMarie, "conflict/not_cancelled"},
	} {
		if _, err := e.Portal.Reactivate(ctx, marie, tt.id); servicetest.Code(err) != tt.code {
			t.Errorf("reactivate %s: %v, want %q", tt.name, err, tt.code)
		}
	}
	if v, err := e.Portal.Reactivation(ctx, marie); err != nil || v.Subscription != nil || v.Path != portal.PathNone || v.Eligible() {
		t.Errorf("reactivation with nothing cancelled: %+v %v", v, err)
	}
}

// paymentMethod: a provider without a processor connection has no card to show or save;
// a setup is confirmed only by the account it was opened for, and its card becomes the one
// the account pays with.
func paymentMethod(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	marie, priya, liam := e.Login(t, servicetest.EmailMarie), e.Login(t, servicetest.EmailPriya), e.Login(t, servicetest.EmailLiam)
	unconnected := map[string]func() error{
		"read":  func() error { _, err := e.Portal.PaymentMethod(ctx, liam); return err },
		"setup": func() error { _, err := e.Portal.StartCardSetup(ctx, liam); return err },
		"confirm": func() error {
			_, err := e.Portal.ConfirmCardSetup(ctx, liam, "seti_x", payments.TestCardSucceeds)
			return err
		},
	}
	for name, op := range unconnected {
		if err := op(); servicetest.Code(err) != "conflict/no_processor_connection" {
			t.Errorf("%s at a provider without a processor: %v", name, err)
		}
	}
	if m, err := e.Portal.PaymentMethod(ctx, priya); err != nil || m != nil {
		t.Fatalf("an account with no processor customer: %+v %v", m, err)
	}
	if _, err := e.Portal.ConfirmCardSetup(ctx, priya, "seti_x", payments.TestCardSucceeds); servicetest.Code(err) != "not_found/not_found" {
		t.Fatalf("confirm with no setup ever opened: %v", err)
	}
	before, err := e.Portal.PaymentMethod(ctx, marie)
	if err != nil || before == nil || before.Last4 != "4444" {
		t.Fatalf("Marie's card: %+v %v", before, err)
	}
	si, err := e.Portal.StartCardSetup(ctx, marie)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Portal.StartCardSetup(ctx, priya); err != nil { // creates Priya's processor customer
		t.Fatal(err)
	}
	confirms := []struct {
		name string
		acc  *subprov.AccountLogin
		id   string
		card string
		code string
	}{
		{"another account's setup is as unknown", priya, si.ID, payments.TestCardSucceeds, "not_found/not_found"},
		{"an unknown setup", marie, "seti_nope", payments.TestCardSucceeds, "not_found/not_found"},
		{"a card that is not a test card is declined", marie, si.ID, "4111111111111111", "conflict/card_declined"},
		{"a card whose setup fails at the processor", marie, si.ID, payments.TestCardFails, "unavailable/processor_unavailable"},
		{"its own account's setup", marie, si.ID, payments.TestCardSucceeds, ""},
	}
	for _, tt := range confirms {
		if _, err := e.Portal.ConfirmCardSetup(ctx, tt.acc, tt.id, tt.card); servicetest.Code(err) != tt.code {
			t.Errorf("confirm, %s: %v, want %q", tt.name, err, tt.code)
		}
	}
	if m, err := e.Portal.PaymentMethod(ctx, marie); err != nil || m == nil || m.Last4 != "4242" {
		t.Fatalf("Marie's card after the setup: %+v %v", m, err)
	}
	if m, err := e.Portal.PaymentMethod(ctx, priya); err != nil || m != nil {
		t.Fatalf("Priya's card after confirming Marie's setup: %+v %v", m, err)
	}
}

// TestAccount runs the rules that keep to rows of their own on one store per engine.
func TestAccount(t *testing.T) {
	servicetest.EachRules(t,
		servicetest.Rule{Name: "NoSubscriberRecord", Test: noSubscriberRecord},
		servicetest.Rule{Name: "OrderRules", Test: orderRules},
		servicetest.Rule{Name: "PaymentMethod", Test: paymentMethod},
		servicetest.Rule{Name: "AuthorizedUsers", Test: authorizedUsers},
	)
}
