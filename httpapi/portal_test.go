package httpapi_test

import (
	"context"
	"testing"
	"time"

	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/apptest"
)

// addAuthorizedUser gives Marie's account an authorized user with a portal login.
func addAuthorizedUser(t *testing.T, s *apptest.Service, email string) map[string]string {
	t.Helper()
	hash, _ := identity.HashPassword("authorized-password")
	ctx := context.Background()
	_, err := s.Store.DB.ExecContext(ctx, s.Store.Dialect.Rebind(`INSERT INTO authorized_users (id, subscriber_id, firstname, lastname, email, created_at)
		VALUES ('au-1', 's1000000-0000-4000-8000-000000000001', 'Luc', 'Tremblay', ?, ?)`), email, time.Now().UTC())
	if err == nil {
		_, err = s.Store.DB.ExecContext(ctx, s.Store.Dialect.Rebind(`INSERT INTO accounts (id, email, provider_id, subscriber_id, authorized_user_id, password_hash, created_at)
			VALUES ('acc-au-1', ?, ?, 's1000000-0000-4000-8000-000000000001', 'au-1', ?, ?)`), email, northwind, hash, time.Now().UTC())
	}
	if err != nil {
		t.Fatal(err)
	}
	return s.Login(email, "authorized-password")
}

func TestInvoiceContact(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marie := s.Login("marie.tremblay@example.ca", "demo-password-1")
		priya := s.Login("priya.patel@example.ca", "demo-password-2")
		nobody := s.Login("new.neighbour@example.ca", "demo-password-3")
		luc := addAuthorizedUser(t, s, "luc.tremblay@example.ca")
		op := s.Operator()
		patch := func(h map[string]string, body any) *apptest.Response {
			return s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/invoice-contact", Headers: h, Body: body})
		}
		useHolder := func(h map[string]string) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/invoice-contact/use-holder", Headers: h})
		}
		mails := func(to string) int { return count(t, s, `SELECT COUNT(*) FROM outbox WHERE to_addr = ?`, to) }

		res := patch(marie, map[string]any{"email": "billing@tremblay.example.ca", "company": "Tremblay Conseil"})
		c, _ := res.JSON["contact"].(map[string]any)
		if res.Status != 200 || res.JSON["state"] != "separate" || c["email"] != "billing@tremblay.example.ca" || c["firstname"] != "Marie" || c["phonenumber"] != "+1 514-555-0142" {
			t.Fatalf("separate contact: %d %s", res.Status, res.Raw)
		}
		if mails("marie.tremblay@example.ca") != 1 || mails("billing@tremblay.example.ca") != 1 {
			t.Fatal("old and new billing addresses must each be told")
		}
		// A field left out keeps its value; an empty string clears it; no e-mail change, no mail.
		res = patch(marie, map[string]any{"company": ""})
		c = res.JSON["contact"].(map[string]any)
		if c["company"] != "" || c["email"] != "billing@tremblay.example.ca" || mails("billing@tremblay.example.ca") != 1 {
			t.Fatalf("clear company: %s", res.Raw)
		}
		// The billing system being down does not undo the change.
		setFault(s, op, "billing_system", "down")
		res = patch(marie, map[string]any{"firstname": "M."})
		setFault(s, op, "billing_system", "up")
		if res.Status != 200 || count(t, s, `SELECT COUNT(*) FROM contacts WHERE role = 'invoice' AND firstname = 'M.'`) != 1 {
			t.Fatalf("billing system down: %d %s", res.Status, res.Raw)
		}
		for _, tt := range []struct {
			name   string
			res    *apptest.Response
			status int
			code   string
		}{
			{"bad e-mail", patch(marie, map[string]any{"email": "not-an-email"}), 422, "validation_error"},
			{"unknown field", patch(marie, map[string]any{"fax": "1"}), 422, "validation_error"},
			{"authorized user", patch(luc, map[string]any{"company": "x"}), 403, "holder_only"},
			{"authorized user use-holder", useHolder(luc), 403, "holder_only"},
			{"authorized user billing day", s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/billing-day", Headers: luc,
				Body: map[string]any{"subscription_id": "c1000000-0000-4000-8000-000000000001", "billing_day": 3}}), 403, "holder_only"},
			{"no subscriber record", patch(nobody, map[string]any{"company": "x"}), 404, "no_subscriber"},
			{"use holder", useHolder(marie), 200, ""},
			{"use holder again", useHolder(marie), 409, "not_separate"},
			{"a provider-split billing contact can be dropped too", useHolder(priya), 200, ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if tt.res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", tt.res.Status, tt.status, tt.res.Raw)
				}
				if tt.code != "" && tt.res.JSON["detail"].(map[string]any)["code"] != tt.code {
					t.Fatalf("code: %s", tt.res.Raw)
				}
				if tt.status == 200 && (tt.res.JSON["state"] != "shared" || tt.res.JSON["contact"] == nil) {
					t.Fatalf("answer %s", tt.res.Raw)
				}
			})
		}
		if mails("billing@tremblay.example.ca") != 2 || mails("marie.tremblay@example.ca") != 2 {
			t.Fatal("use-holder must tell both addresses")
		}
	})
}
