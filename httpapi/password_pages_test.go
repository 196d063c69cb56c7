package httpapi_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
)

// postPage posts a form to a page and returns its status and body; a page always answers HTML.
func postPage(t *testing.T, u string, form url.Values) (int, string) {
	t.Helper()
	res, err := http.PostForm(u, form)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("POST %s: content type %q", u, ct)
	}
	return res.StatusCode, string(b)
}

// The links of the reset and set-up mails (decisions §5: SUBPROV_PUBLIC_URL/…?token=TOKEN)
// open a page that sets the password. Showing the page does not use the link; a refused
// password shows the form again and leaves it usable; a set password uses it (single use), and
// each page takes its own kind of link only.
func TestPasswordPagesSetThePasswordFromTheMailedLink(t *testing.T) {
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		local := func(link string) string { return strings.Replace(link, "http://subprov.test", s.URL, 1) }
		tokenOf := func(link string) string { return link[strings.Index(link, "token=")+6:] }

		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/password-reset",
			Body: map[string]string{"email": fixture.DemoSubscriberEmail}}); res.Status != 202 {
			t.Fatalf("password reset: %d %s", res.Status, res.Raw)
		}
		reset := local(newestLink(t, s, op, fixture.DemoSubscriberEmail, "Reset your password"))
		if !strings.HasPrefix(reset, s.URL+"/portal/reset-password?token=") {
			t.Fatalf("reset link %s", reset)
		}
		const invited = "eliane.lefebvre@example.ca"
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/me/authorized-users",
			Headers: s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass), Body: person(invited)}); res.Status != 201 {
			t.Fatalf("add authorized user: %d %s", res.Status, res.Raw)
		}
		setup := local(newestLink(t, s, op, invited, "You have been added to an internet account"))
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
			{"a short password shows the form again", "POST", resetPage, form(tokenOf(reset), "short", "short"), 422, "at least 10 characters"},
			{"no password shows the form again", "POST", resetPage, form(tokenOf(reset), "", ""), 422, "Enter a new password."},
			{"a mistyped repeat shows the form again", "POST", resetPage, form(tokenOf(reset), "a-long-new-password", "a-long-new-passw0rd"), 422, "The two passwords differ"},
			{"the refused forms left the link usable", "GET", reset, nil, 200, `name="token" value="` + tokenOf(reset) + `"`},
			{"a password sets", "POST", resetPage, form(tokenOf(reset), "a-long-new-password", "a-long-new-password"), 200, "Your password is set"},
			{"the used link is dead", "GET", reset, nil, 410, "This link no longer works"},
			{"the used link sets nothing", "POST", resetPage, form(tokenOf(reset), "another-password", "another-password"), 410, "This link no longer works"},
			{"the set-up link shows its form", "GET", setup, nil, 200, "<h1>Set your password</h1>"},
			{"the set-up link sets the first password", "POST", setupPage, form(tokenOf(setup), "elianes-password", "elianes-password"), 200, "Your password is set"},
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
		if res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/login",
			Body: map[string]string{"email": fixture.DemoSubscriberEmail, "password": fixture.DemoSubscriberPass}}); res.Status != 401 {
			t.Fatalf("the old password still signs in: %d", res.Status)
		}
	})
}
