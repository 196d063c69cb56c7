package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/store"
)

// postPage posts a form to a page and returns its status and body.
func postPage(t *testing.T, u string, form url.Values) (int, string) {
	t.Helper()
	status, _, body := postToPage(t, u, "application/x-www-form-urlencoded", form.Encode())
	return status, body
}

// postToPage posts body to a page as contentType; a page answers HTML whatever it is sent.
func postToPage(t *testing.T, u, contentType, body string) (int, http.Header, string) {
	t.Helper()
	res, err := http.Post(u, contentType, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("POST %s: content type %q: %s", u, ct, b)
	}
	return res.StatusCode, res.Header, string(b)
}

// resetLink asks for a password reset of email at the portal and returns the mailed link,
// pointed at the test server.
func resetLink(t *testing.T, s *apptest.Service, op map[string]string, email string) string {
	t.Helper()
	if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/password-reset",
		Body: map[string]string{"email": email}}); res.Status != 202 {
		t.Fatalf("password reset: %d %s", res.Status, res.Raw)
	}
	awaitPasswordResets(t, s)
	return localURL(s, newestLink(t, s, op, email, "Reset your password"))
}

// The links of the reset and set-up mails (SUBPROV_PUBLIC_URL/…?token=TOKEN)
// open a page that sets the password. Showing the page does not use the link; a refused
// password shows the form again and leaves it usable; a set password uses it (single use), and
// each page takes its own kind of link only.
func TestPasswordPagesSetThePasswordFromTheMailedLink(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		reset := resetLink(t, s, op, fixture.DemoSubscriberEmail)
		if !strings.HasPrefix(reset, s.URL+"/portal/reset-password?token=") {
			t.Fatalf("reset link %s", reset)
		}
		const invited = "eliane.lefebvre@example.ca"
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/authorized-users",
			Headers: s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass), Body: person(invited)}); res.Status != 201 {
			t.Fatalf("add authorized user: %d %s", res.Status, res.Raw)
		}
		setup := localURL(s, newestLink(t, s, op, invited, "You have been added to an internet account"))
		// The agent's resend_activation mails an activation link (72 hours); the set-up page
		// takes it too. Priya's is written here as the agent's call writes it.
		ctx := context.Background()
		priya, err := s.Store.AccountByEmail(ctx, "priya.patel@example.ca")
		if err != nil {
			t.Fatal(err)
		}
		const activation = "an-activation-link-token"
		if err := s.Store.InTx(ctx, func(tx *store.Tx) error {
			return tx.InsertToken(ctx, identity.HashSecret(activation), subprov.MailedToken{Kind: auth.TokenActivation.Name, ProviderID: priya.ProviderID,
				SubjectID: priya.ID, ExpiresAt: s.Clock.Now().Add(auth.TokenActivation.Lifetime)}, s.Clock.Now())
		}); err != nil {
			t.Fatal(err)
		}
		resetPage, setupPage := s.URL+"/portal/reset-password", s.URL+"/portal/activate"
		form := func(token, password, repeat string) url.Values {
			return url.Values{"token": {token}, "password": {password}, "repeat": {repeat}}
		}

		steps := []struct {
			name   string
			method string
			url    string
			form   url.Values
			status int
			want   string
		}{
			{"an unknown link says so", "GET", resetPage + "?token=nope", nil, 410, "This link no longer works"},
			{"the reset link shows the form", "GET", reset, nil, 200, `<form method="post" action="/portal/reset-password">`},
			{"the reset page takes no set-up link", "GET", resetPage + "?token=" + url.QueryEscape(tokenOf(setup)), nil, 410, "This link no longer works"},
			{"the set-up page takes no reset link", "GET", setupPage + "?token=" + url.QueryEscape(tokenOf(reset)), nil, 410, "This link no longer works"},
			{"the set-up page sets nothing with a reset link", "POST", setupPage, form(tokenOf(reset), "a-long-new-password", "a-long-new-password"), 410, "This link no longer works"},
			{"a short password shows the form again", "POST", resetPage, form(tokenOf(reset), "short", "short"), 422, "at least 10 characters"},
			{"no password shows the form again", "POST", resetPage, form(tokenOf(reset), "", ""), 422, "Enter a new password."},
			{"a mistyped repeat shows the form again", "POST", resetPage, form(tokenOf(reset), "a-long-new-password", "a-long-new-passw0rd"), 422, "The two passwords differ"},
			{"the refused forms left the link usable", "GET", reset, nil, 200, `name="token" value="` + tokenOf(reset) + `"`},
			{"a password sets", "POST", resetPage, form(tokenOf(reset), "a-long-new-password", "a-long-new-password"), 200, "Your password is set"},
			{"the used link is dead", "GET", reset, nil, 410, "This link no longer works"},
			{"the used link sets nothing", "POST", resetPage, form(tokenOf(reset), "another-password", "another-password"), 410, "This link no longer works"},
			{"the set-up link shows its form", "GET", setup, nil, 200, "<h1>Set your password</h1>"},
			{"the set-up link sets the first password", "POST", setupPage, form(tokenOf(setup), "elianes-password", "elianes-password"), 200, "Your password is set"},
			{"an activation link shows the set-up form", "GET", setupPage + "?token=" + activation, nil, 200, "<h1>Set your password</h1>"},
			{"an activation link sets the password", "POST", setupPage, form(activation, "priyas-new-password", "priyas-new-password"), 200, "Your password is set"},
		}
		for _, st := range steps {
			var status int
			var body string
			if st.method == "GET" {
				status, body = getPage(t, st.url)
			} else {
				status, body = postPage(t, st.url, st.form)
			}
			if status != st.status || !strings.Contains(body, st.want) {
				t.Fatalf("%s: %d, want %d with %q:\n%s", st.name, status, st.status, st.want, body)
			}
		}
		s.Login(fixture.DemoSubscriberEmail, "a-long-new-password")
		s.Login(invited, "elianes-password")
		s.Login("priya.patel@example.ca", "priyas-new-password")
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/login",
			Body: map[string]string{"email": fixture.DemoSubscriberEmail, "password": fixture.DemoSubscriberPass}}); res.Status != 401 {
			t.Fatalf("the old password still signs in: %d", res.Status)
		}
	})
}

// A page's form is read as a browser posts it, within a size, and every refusal answers a page
// with its status: another content type 400, a form larger than the page sends 413, and the
// rate limit (10 dead links a minute from one client; the refusals before count nothing) a 429
// page with Retry-After, never JSON. The link is left usable by each.
func TestPasswordPagesRefuseWhatNoBrowserSends(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		link := resetLink(t, s, s.Operator(), fixture.DemoSubscriberEmail)
		token := tokenOf(link)
		page := s.URL + "/portal/reset-password"
		huge := url.Values{"token": {token}, "password": {strings.Repeat("x", 9<<10)}, "repeat": {"x"}}.Encode()
		for _, tt := range []struct {
			name        string
			contentType string
			body        string
			status      int
			want        string
		}{
			{"JSON", "application/json", `{"token": "` + token + `", "password": "a-long-new-password", "repeat": "a-long-new-password"}`, 400, "The form could not be read"},
			{"no content type", "", "token=" + token, 400, "The form could not be read"},
			{"a form larger than the page sends", "application/x-www-form-urlencoded", huge, 413, "larger than this page ever sends"},
		} {
			if status, _, body := postToPage(t, page, tt.contentType, tt.body); status != tt.status || !strings.Contains(body, tt.want) {
				t.Fatalf("%s: %d, want %d with %q:\n%s", tt.name, status, tt.status, tt.want, body)
			}
		}
		if status, _ := getPage(t, link); status != 200 {
			t.Fatalf("the refused posts used the link: %d", status)
		}
		for i := 0; ; i++ {
			status, h, body := postToPage(t, page, "application/x-www-form-urlencoded", "token=nope")
			if status == 429 {
				if h.Get("Retry-After") == "" || !strings.Contains(body, "<h1>Please wait a moment</h1>") {
					t.Fatalf("429 page: %v %s", h, body)
				}
				break
			}
			if status != 410 || i >= 10 {
				t.Fatalf("post %d: %d, want 410 until the limit's 429", i+1, status)
			}
		}
	})
}
