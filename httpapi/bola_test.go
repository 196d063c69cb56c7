package httpapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/httpapi"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/store"
)

// Provider isolation (OWASP API1, BOLA): every route that names an object by id answers
// another provider's caller exactly as it answers an id that does not exist: 404 with the
// same body (request ids aside), so nobody can learn that another provider's object exists.

// bolaCase probes one route: own is a Northwind object's path (or body), missing the same
// with an id that does not exist; owner is a Northwind caller, other a Maple caller.
type bolaCase struct {
	method, own, missing string
	ownBody, missingBody any
	owner, other         map[string]string
}

// bolaOperatorRoutes are the id-taking routes that need no probe here: operator routes are
// probed by TestOperatorScope (another provider's object answers a provider's operator as an
// unknown id), and the public ones listed show every provider's objects.
var bolaOperatorRoutes = map[string]bool{
	"GET /partner/marketplace/plans/{plan_version_id}": true, // public: sellable plans of every provider
}

// bolaProbed are the id-taking provider routes TestProviderIsolation probes.
var bolaProbed = []string{
	"GET /partner/subscriptions/{subscription_id}/change-plan/preview",
	"POST /partner/subscriptions/{subscription_id}/change-plan",
	"GET /partner/external-checkout/sessions/{session_id}",
	"PATCH /partner/external-checkout/sessions/{session_id}",
	"POST /partner/external-checkout/sessions/{session_id}/cancel",
	"GET /partner/external-checkout/subscriptions/{external_subscription_id}",
	"POST /partner/subscriber/me/authorized-users/{id}/resend-invite",
	"DELETE /partner/subscriber/me/authorized-users/{id}",
	"POST /partner/subscriber/me/subscriptions/{subscription_id}/reactivation",
	"GET /api/v1/credit-notes/{credit_note_id}/pdf",
	"GET /api/v1/invoices/{invoice_id}/pdf",
	"POST /partner/subscriber/me/invoices/{invoice_id}/pay",
	"GET /partner/agent/customers/{customerId}",
	"GET /partner/agent/customers/{customerId}/billing-summary",
	"GET /partner/agent/customers/{customerId}/payments",
	"GET /partner/agent/customers/{customerId}/network-health",
	"GET /partner/agent/customers/{customerId}/tickets",
	"POST /partner/agent/customers/{customerId}/notes",
	"PATCH /partner/agent/customers/{customerId}/contact",
	"POST /partner/agent/customers/{customerId}/password-reset",
	"POST /partner/agent/customers/{customerId}/invoices/{invoiceId}/resend",
	"POST /partner/agent/customers/{customerId}/plan-change/preview",
	"POST /partner/agent/customers/{customerId}/plan-change",
}

func TestProviderIsolationCoversIDRoutes(t *testing.T) {
	t.Parallel()
	probed := map[string]bool{}
	for _, k := range bolaProbed {
		probed[k] = true
	}
	for _, rt := range httpapi.Routes() {
		if !strings.Contains(rt.Path, "{") || rt.Auth == "operator" { // TestOperatorScope's
			continue
		}
		k := rt.Method + " " + rt.Path
		mirrorOf := rt.Method + " /partner/" + strings.TrimPrefix(rt.Path, "/api/v1/")
		if !probed[k] && !bolaOperatorRoutes[k] && !probed[mirrorOf] && !bolaOperatorRoutes[mirrorOf] {
			t.Errorf("%s takes an id but is neither probed by TestProviderIsolation nor listed as platform-wide", k)
		}
	}
}

// withoutRequestIDs drops every request_id, so two answers compare on what they say.
func withoutRequestIDs(raw []byte) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	var strip func(v any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "request_id")
			for k, e := range x {
				x[k] = strip(e)
			}
		case []any:
			for i, e := range x {
				x[i] = strip(e)
			}
		}
		return v
	}
	out, _ := json.Marshal(strip(v))
	return string(out)
}

func TestProviderIsolation(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		invoice, creditNote := northwindBillingDocuments(t, s)
		marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		liam := s.Login("liam.chen@example.ca", "demo-password-4")
		addAuthorizedUser(t, s, "luc.tremblay@example.ca")
		marieSession := verify(t, s, fixture.DemoAgentKey, marieID, fixture.DemoSubscriberEmail)
		liamSession := verify(t, s, fixture.DemoOtherProviderKey, liamID, "liam.chen@example.ca")
		northwindAgent := agentHeaders(fixture.DemoAgentKey, marieSession)
		mapleAgent := agentHeaders(fixture.DemoOtherProviderKey, liamSession)
		sess := session(t, s, nil)
		missing := store.NewID()
		planChange := map[string]any{"plan_version_id": planFibre1000}

		cases := map[string]bolaCase{
			"GET /partner/subscriptions/{subscription_id}/change-plan/preview": {own: "/partner/subscriptions/" + marieLine + "/change-plan/preview?plan_version_id=" + planFibre1000,
				missing: "/partner/subscriptions/" + missing + "/change-plan/preview?plan_version_id=" + planFibre1000,
				owner:   apptest.Key(storeKey), other: apptest.Key(mapleKey)},
			"POST /partner/subscriptions/{subscription_id}/change-plan": {own: "/partner/subscriptions/" + marieLine + "/change-plan", ownBody: planChange,
				missing: "/partner/subscriptions/" + missing + "/change-plan", owner: apptest.Key(storeKey), other: apptest.Key(mapleKey)},
			"GET /partner/external-checkout/sessions/{session_id}": {own: "/partner/external-checkout/sessions/" + sess,
				missing: "/partner/external-checkout/sessions/" + missing, owner: secret(northwindSecret), other: secret(mapleSecret)},
			"PATCH /partner/external-checkout/sessions/{session_id}": {own: "/partner/external-checkout/sessions/" + sess, ownBody: map[string]any{},
				missing: "/partner/external-checkout/sessions/" + missing, owner: secret(northwindSecret), other: secret(mapleSecret)},
			"POST /partner/external-checkout/sessions/{session_id}/cancel": {own: "/partner/external-checkout/sessions/" + sess + "/cancel",
				missing: "/partner/external-checkout/sessions/" + missing + "/cancel", owner: nil, other: secret(mapleSecret)},
			"GET /partner/external-checkout/subscriptions/{external_subscription_id}": {own: "/partner/external-checkout/subscriptions/shop-sub-88a-101",
				missing: "/partner/external-checkout/subscriptions/shop-sub-does-not-exist", owner: secret(northwindSecret), other: secret(mapleSecret)},
			"POST /partner/subscriber/me/authorized-users/{id}/resend-invite": {own: "/partner/subscriber/me/authorized-users/au-1/resend-invite",
				missing: "/partner/subscriber/me/authorized-users/" + missing + "/resend-invite", owner: marie, other: liam},
			"DELETE /partner/subscriber/me/authorized-users/{id}": {own: "/partner/subscriber/me/authorized-users/au-1",
				missing: "/partner/subscriber/me/authorized-users/" + missing, owner: nil, other: liam},
			"POST /partner/subscriber/me/subscriptions/{subscription_id}/reactivation": {own: "/partner/subscriber/me/subscriptions/" + marieLine + "/reactivation",
				ownBody: map[string]any{}, missing: "/partner/subscriber/me/subscriptions/" + missing + "/reactivation", owner: marie, other: liam},
			"GET /api/v1/credit-notes/{credit_note_id}/pdf": {own: "/api/v1/credit-notes/" + creditNote + "/pdf",
				missing: "/api/v1/credit-notes/" + missing + "/pdf", owner: marie, other: liam},
			"GET /api/v1/invoices/{invoice_id}/pdf": {own: "/api/v1/invoices/" + invoice + "/pdf",
				missing: "/api/v1/invoices/" + missing + "/pdf", owner: marie, other: liam},
			"POST /partner/subscriber/me/invoices/{invoice_id}/pay": {own: "/partner/subscriber/me/invoices/" + invoice + "/pay",
				missing: "/partner/subscriber/me/invoices/" + missing + "/pay", owner: marie, other: liam},
			"POST /partner/agent/customers/{customerId}/invoices/{invoiceId}/resend": {own: "/partner/agent/customers/" + liamID + "/invoices/" + invoice + "/resend",
				missing: "/partner/agent/customers/" + liamID + "/invoices/" + missing + "/resend", owner: nil, other: mapleAgent},
		}
		for _, sub := range []string{"", "/billing-summary", "/payments", "/network-health", "/tickets", "/notes", "/contact", "/password-reset", "/plan-change/preview", "/plan-change"} {
			method := map[string]string{"/notes": "POST", "/contact": "PATCH", "/password-reset": "POST", "/plan-change/preview": "POST", "/plan-change": "POST"}[sub]
			if method == "" {
				method = "GET"
			}
			body := agentBody(sub)
			cases[method+" /partner/agent/customers/{customerId}"+sub] = bolaCase{own: "/partner/agent/customers/" + marieID + sub, ownBody: body,
				missing: "/partner/agent/customers/" + missing + sub, owner: northwindAgent, other: mapleAgent}
		}

		for _, key := range bolaProbed {
			c, ok := cases[key]
			if !ok {
				t.Errorf("%s: no probe", key)
				continue
			}
			c.method = strings.Fields(key)[0]
			if c.missingBody == nil {
				c.missingBody = c.ownBody
			}
			if c.owner != nil { // the object exists for its own provider
				if res := s.Do(apptest.Request{Method: c.method, Path: c.own, Headers: c.owner, Body: c.ownBody}); res.Status == 404 {
					t.Errorf("%s: the owner gets 404, so the probe proves nothing: %s", key, res.Raw)
				}
			}
			theirs := s.Do(apptest.Request{Method: c.method, Path: c.own, Headers: c.other, Body: c.ownBody})
			none := s.Do(apptest.Request{Method: c.method, Path: c.missing, Headers: c.other, Body: c.missingBody})
			if theirs.Status != 404 || none.Status != 404 {
				t.Errorf("%s: another provider's object %d, a missing one %d; want 404 for both: %s | %s", key, theirs.Status, none.Status, theirs.Raw, none.Raw)
				continue
			}
			if a, b := withoutRequestIDs(theirs.Raw), withoutRequestIDs(none.Raw); a != b {
				t.Errorf("%s: bodies differ:\n another provider's: %s\n missing:            %s", key, a, b)
			}
		}
	})
}

// northwindBillingDocuments bills Marie's December and credits her, returning the
// invoice's and the credit note's ids.
func northwindBillingDocuments(t *testing.T, s *apptest.Service) (invoice, creditNote string) {
	t.Helper()
	ctx := context.Background()
	s.DevClock.Set(time.Date(2026, 12, 5, 15, 0, 0, 0, time.UTC))
	apptest.Eventually(t, 15*time.Second, "Marie's December invoice", func() bool {
		return count(t, s, `SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND period = '2026-12'`, marieLine) == 1
	})
	if err := s.Store.R().QueryRow(ctx, `SELECT id FROM invoices WHERE subscription_id = ?`, marieLine).Scan(&invoice); err != nil {
		t.Fatal(err)
	}
	p, _ := s.Store.Provider(ctx, northwind)
	sub, _ := s.Store.SubscriptionByID(ctx, marieLine)
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		cn, err := s.Billing.IssueCredit(ctx, tx, p, sub, 1500, "goodwill", "", time.Now())
		if err == nil {
			creditNote = cn.ID
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return invoice, creditNote
}

// TestProviderIsolationOfIDsInBodies probes routes that name an object in the body: another
// provider's object answers as a missing one does.
func TestProviderIsolationOfIDsInBodies(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		sess := session(t, s, nil)
		missing := store.NewID()
		cases := []struct {
			name, path       string
			headers          map[string]string
			theirs, notThere map[string]any
		}{
			{"subscription-status", "/partner/external-checkout/subscription-status", secret(mapleSecret),
				map[string]any{"action": "suspend", "external_subscription_id": "shop-sub-88a-101", "service_provider_document_id": "mpl-spd-2026"},
				map[string]any{"action": "suspend", "external_subscription_id": "shop-sub-does-not-exist", "service_provider_document_id": "mpl-spd-2026"}},
			{"complete with a session", "/partner/external-checkout/complete", secret(mapleSecret),
				completeBody(map[string]any{"session_id": sess}), completeBody(map[string]any{"session_id": missing})},
			{"anonymous-complete with a session", "/partner/external-checkout/anonymous-complete", secret(mapleSecret),
				map[string]any{"session_id": sess, "contact_email": "x@example.ca"}, map[string]any{"session_id": missing, "contact_email": "x@example.ca"}},
			{"agent verify/issue", "/partner/agent/verify/issue", apptest.Key(mapleKey),
				map[string]any{"customer_id": marieID}, map[string]any{"customer_id": missing}},
			{"agent verify/check", "/partner/agent/verify/check", apptest.Key(mapleKey),
				map[string]any{"customer_id": marieID, "code": "123456"}, map[string]any{"customer_id": missing, "code": "123456"}},
			{"agent ticket", "/partner/agent/tickets", apptest.Key(mapleKey),
				map[string]any{"customer_id": marieID, "ai_summary": "x"}, map[string]any{"customer_id": missing, "ai_summary": "x"}},
		}
		for _, c := range cases {
			theirs := s.Do(apptest.Request{Method: "POST", Path: c.path, Headers: c.headers, Body: c.theirs})
			none := s.Do(apptest.Request{Method: "POST", Path: c.path, Headers: c.headers, Body: c.notThere})
			if theirs.Status != 404 || none.Status != 404 {
				t.Errorf("%s: another provider's object %d, a missing one %d; want 404 for both: %s | %s", c.name, theirs.Status, none.Status, theirs.Raw, none.Raw)
				continue
			}
			if a, b := withoutRequestIDs(theirs.Raw), withoutRequestIDs(none.Raw); a != b {
				t.Errorf("%s: bodies differ:\n another provider's: %s\n missing:            %s", c.name, a, b)
			}
		}
	})
}
