package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/locale"
)

// TestFrenchSubscriberReadsFrench: once an operator sets the provider's default_language to
// fr, a password reset its subscriber asks for is mailed in French, and the page its link
// opens is French for a browser that asks for fr-CA; an unsupported language is refused.
func TestFrenchSubscriberReadsFrench(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		path := "/api/v1/providers/" + fixture.DemoProviderID
		got := s.Do(apptest.Request{Method: "GET", Path: path, Headers: s.Operator()})
		if got.Status != 200 || got.JSON["default_language"] != "en" {
			t.Fatalf("read: %d %s", got.Status, got.Raw)
		}
		version := fmt.Sprint(got.JSON["version"])
		bad := s.Do(apptest.Request{Method: "PATCH", Path: path, Headers: map[string]string{"Authorization": s.Operator()["Authorization"], "If-Match": version},
			Body: map[string]any{"default_language": "de"}})
		if bad.Status != 422 || !strings.Contains(string(bad.Raw), "default_language") {
			t.Fatalf("unsupported language: %d %s", bad.Status, bad.Raw)
		}
		res := s.Do(apptest.Request{Method: "PATCH", Path: path, Headers: map[string]string{"Authorization": s.Operator()["Authorization"], "If-Match": version},
			Body: map[string]any{"default_language": "fr"}})
		if res.Status != 200 || res.JSON["default_language"] != "fr" {
			t.Fatalf("patch: %d %s", res.Status, res.Raw)
		}
		s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/password-reset", Body: map[string]string{"email": "marie.tremblay@example.ca"}})
		awaitPasswordResets(t, s)
		var subject, body, link string
		for _, m := range s.Do(apptest.Request{Method: "GET", Path: "/api/v1/dev/outbox?to=marie.tremblay@example.ca", Headers: s.Operator()}).JSON["messages"].([]any) {
			msg := m.(map[string]any)
			if links, _ := msg["links"].([]any); len(links) > 0 {
				subject, body, link = fmt.Sprint(msg["subject"]), fmt.Sprint(msg["body"]), links[0].(string)
			}
		}
		if subject != "Réinitialisez votre mot de passe" || !strings.HasPrefix(body, "Bonjour,") || !strings.Contains(body, "nouveau mot de passe") {
			t.Fatalf("the reset mail is not French: %q\n%s", subject, body)
		}
		page := s.Do(apptest.Request{Method: "GET", Path: link[strings.Index(link, "/portal/"):], Headers: map[string]string{"Accept-Language": "fr-CA,fr;q=0.9"}})
		if page.Status != 200 || !strings.Contains(string(page.Raw), `<html lang="fr-CA">`) || !strings.Contains(string(page.Raw), "Choisissez un nouveau mot de passe") {
			t.Fatalf("the reset page is not French: %d %.600s", page.Status, page.Raw)
		}
		en := s.Do(apptest.Request{Method: "GET", Path: link[strings.Index(link, "/portal/"):], Headers: map[string]string{"Accept-Language": "en-US"}})
		if !strings.Contains(string(en.Raw), "Choose a new password") {
			t.Fatalf("the reset page is not English for an English browser: %.600s", en.Raw)
		}
	})
}

// TestPersonLanguageWins: at an English provider, a subscriber who chose French gets French
// mail (the password reset, in the dev outbox), her invoice PDF in French through the portal
// route, and the provider's other subscribers stay English.
func TestPersonLanguageWins(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marie := marieChoosesFrench(t, s)
		for _, to := range []string{fixture.DemoSubscriberEmail, "priya.patel@example.ca"} {
			s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/password-reset", Body: map[string]string{"email": to}})
		}
		awaitPasswordResets(t, s)
		for _, tt := range []struct{ to, subject string }{
			{fixture.DemoSubscriberEmail, "Réinitialisez votre mot de passe"},
			{"priya.patel@example.ca", "Reset your password"},
		} {
			msgs, _ := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/dev/outbox?to=" + tt.to, Headers: s.Operator()}).JSON["messages"].([]any)
			if len(msgs) == 0 || msgs[0].(map[string]any)["subject"] != tt.subject {
				t.Errorf("mail to %s: %v, want subject %q", tt.to, msgs, tt.subject)
			}
		}
		pdf := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/invoices/" + marieFirstInvoice(t, s, marie) + "/pdf", Headers: marie})
		// The document's title is kept uncompressed, in UTF-16: "Facture …" in French.
		if pdf.Status != 200 || !strings.Contains(string(pdf.Raw), utf16("Facture ")) {
			t.Fatalf("invoice PDF is not French: %d", pdf.Status)
		}
	})
}

// TestFrenchHolderPaysInFrench: a holder who chose French gets the invoice of her line with
// AutoPay off, its pay link, and the receipt of her payment in French, with money as French
// writes it.
func TestFrenchHolderPaysInFrench(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		marieChoosesFrench(t, s)
		invoiceID, _ := marieUnpaid(t, s)
		var number string
		var total subprov.Money
		if err := s.Store.R().QueryRow(context.Background(), `SELECT number, total_minor FROM invoices WHERE id = ?`, invoiceID).Scan(&number, &total); err != nil {
			t.Fatal(err)
		}
		marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass) // the clock moved on to December
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/invoices/" + invoiceID + "/pay", Headers: marie}); res.Status != 200 {
			t.Fatalf("pay now: %d %s", res.Status, res.Raw)
		}
		amount := locale.FR.Money(total, "CAD")
		want := map[string]string{ // subject: a sentence of the body
			"Facture " + number + " — " + amount:  "Votre facture " + number + " de " + amount + " est prête.",
			"Reçu — facture " + number + " payée": "la facture " + number + " (" + amount + ") est payée",
		}
		apptest.Eventually(t, 15*time.Second, "the invoice and its receipt in French", func() bool {
			found := 0
			for _, m := range outboxTo(s, s.Operator(), marieBillingAddress(t, s)) {
				subject, body := fmt.Sprint(m["subject"]), fmt.Sprint(m["body"])
				if sentence, ok := want[subject]; ok && strings.HasPrefix(body, "Bonjour,") && strings.Contains(body, sentence) {
					found++
				}
			}
			return found == len(want)
		})
	})
}

// TestRefusalsInTheReadersLanguage: the subscriber surface writes a refusal's message in the
// reader's language and keeps its code: the signed-in person's choice, else the provider's
// (English until Marie chooses French); before sign-in, the browser's Accept-Language.
func TestRefusalsInTheReadersLanguage(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		wrongPassword := map[string]any{"current_password": "wrong-password", "new_password": "another-password-1"}
		english := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
		res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/password", Headers: english, Body: wrongPassword})
		if d, _ := res.JSON["detail"].(map[string]any); res.Status != 400 || d["code"] != "incorrect_password" || d["message"] != "Current password is incorrect" {
			t.Fatalf("before choosing French: %d %s", res.Status, res.Raw)
		}
		marie := marieChoosesFrench(t, s)
		// Marie's November invoice, paid (or being paid): paying it again is refused.
		paid := marieFirstInvoice(t, s, marie)
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/invoices/" + paid + "/pay", Headers: marie}); res.Status != 200 && res.Status != 409 {
			t.Fatalf("pay now: %d %s", res.Status, res.Raw) // 409: AutoPay was quicker
		}
		badLogin := map[string]any{"email": fixture.DemoSubscriberEmail, "password": "wrong-password"}
		french := map[string]string{"Accept-Language": "fr-CA,fr;q=0.9"}
		tests := []struct {
			name, method, path string
			headers            map[string]string
			body               any
			status             int
			code, message      string
		}{
			{"French: wrong current password", "PATCH", "/partner/subscriber/me/password", marie, wrongPassword,
				400, "incorrect_password", "Le mot de passe actuel est incorrect."},
			{"French: paying a paid invoice", "POST", "/partner/subscriber/me/invoices/" + paid + "/pay", marie, nil,
				409, "not_payable", "La facture ne peut pas être payée maintenant : elle est payée, annulée ou un paiement est en cours."},
			{"French: an unsupported language", "PATCH", "/partner/subscriber/me/preferences", marie, map[string]any{"language": "de"},
				422, "validation_error", "Certains champs sont manquants ou invalides."},
			{"French: another account's invoice", "POST", "/partner/subscriber/me/invoices/inv_nobody/pay", marie, nil,
				404, "not_found", "Introuvable."},
			{"a French browser before sign-in", "POST", "/partner/subscriber/auth/login", french, badLogin,
				401, "invalid_credentials", "Courriel ou mot de passe invalide."},
			{"an English browser before sign-in", "POST", "/partner/subscriber/auth/login", nil, badLogin,
				401, "invalid_credentials", "Invalid e-mail or password"},
			{"a French browser with a bad token", "GET", "/partner/subscriber/me", map[string]string{"Authorization": "Bearer nonsense", "Accept-Language": "fr-CA"}, nil,
				401, "unauthorized", "Veuillez vous connecter."},
		}
		for _, tt := range tests {
			res := s.Do(apptest.Request{Method: tt.method, Path: tt.path, Headers: tt.headers, Body: tt.body})
			d, _ := res.JSON["detail"].(map[string]any)
			if res.Status != tt.status || d["code"] != tt.code || d["message"] != tt.message {
				t.Errorf("%s: %d %s, want %d %s %q", tt.name, res.Status, res.Raw, tt.status, tt.code, tt.message)
			}
			if tt.code == "validation_error" && d["fields"] == nil {
				t.Errorf("%s: the fields are gone: %s", tt.name, res.Raw)
			}
		}
	})
}

// marieFirstInvoice waits for the demo's bill run to issue Marie's first invoice, as her
// portal lists it, and returns its id.
func marieFirstInvoice(t *testing.T, s *apptest.Service, marie map[string]string) string {
	t.Helper()
	var id string
	apptest.Eventually(t, 15*time.Second, "Marie's first invoice", func() bool {
		invs, _ := s.Do(apptest.Request{Method: "GET", Path: "/partner/subscriber/me/invoices", Headers: marie}).JSON["invoices"].([]any)
		if len(invs) > 0 {
			id, _ = invs[len(invs)-1].(map[string]any)["id"].(string)
		}
		return id != ""
	})
	s.Settle(t)
	return id
}

// marieChoosesFrench signs the demo's Marie in and sets her language to French; it returns her
// login's headers.
func marieChoosesFrench(t *testing.T, s *apptest.Service) map[string]string {
	t.Helper()
	marie := s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass)
	if res := s.Do(apptest.Request{Method: "PATCH", Path: "/partner/subscriber/me/preferences", Headers: marie,
		Body: map[string]any{"language": "fr"}}); res.Status != 200 {
		t.Fatalf("choose French: %d %s", res.Status, res.Raw)
	}
	return marie
}

// utf16 is s as a PDF writes a Unicode string: UTF-16 big-endian.
func utf16(s string) string {
	var b strings.Builder
	for _, r := range s {
		b.WriteByte(byte(r >> 8))
		b.WriteByte(byte(r))
	}
	return b.String()
}
