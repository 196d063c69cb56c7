package apptest

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/subprov/subprov"
)

// Console is a console client without a browser: it keeps its cookies (the session's among
// them) and the CSRF token of the last page it read, and follows no redirect, so a test sees
// each 303 and where it leads.
type Console struct {
	s      *Service
	t      testing.TB
	Client *http.Client
	// CSRF is the CSRF token of the last page read that carried a form.
	CSRF string
}

// Page is a console answer.
type Page struct {
	Status int
	Header http.Header
	Body   string
}

// Location is where a redirect leads.
func (p *Page) Location() string { return p.Header.Get("Location") }

// NewConsole returns a console client that is not signed in.
func (s *Service) NewConsole(t testing.TB) *Console {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &Console{s: s, t: t, Client: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// ConsoleAs signs in to the console as a new operator with role and scope (PutOperator).
func (s *Service) ConsoleAs(t testing.TB, role subprov.Role, providerID string) *Console {
	email, password := s.PutOperator(role, providerID)
	return s.ConsoleSignIn(t, email, password, "")
}

// ConsoleSignIn signs in to the console with the sign-in form, failing the test unless it
// signs in, and reads the home page for its CSRF token.
func (s *Service) ConsoleSignIn(t testing.TB, email, password, code string) *Console {
	t.Helper()
	c := s.NewConsole(t)
	if p := c.SignIn(email, password, code); p.Status != http.StatusSeeOther || p.Location() != "/console/" {
		t.Fatalf("console sign-in %s: %d %s %s", email, p.Status, p.Location(), p.Body)
	}
	c.Get("/console/")
	return c
}

// SignIn posts the sign-in form as a browser does (the form's page first, for its token).
func (c *Console) SignIn(email, password, code string) *Page {
	c.t.Helper()
	c.Get("/console/sign-in")
	return c.Post("/console/sign-in", url.Values{"email": {email}, "password": {password}, "code": {code}})
}

var csrfPattern = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// Get reads a console page.
func (c *Console) Get(path string) *Page {
	c.t.Helper()
	req, err := http.NewRequest("GET", c.s.URL+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	return c.Do(req)
}

// Post sends a form with the CSRF token of the last page read.
func (c *Console) Post(path string, form url.Values) *Page {
	c.t.Helper()
	f := url.Values{"csrf": {c.CSRF}}
	for k, v := range form {
		f[k] = v
	}
	return c.PostRaw(path, f)
}

// PostRaw sends a form as it is, with no CSRF token added.
func (c *Console) PostRaw(path string, form url.Values) *Page {
	c.t.Helper()
	req, err := http.NewRequest("POST", c.s.URL+path, strings.NewReader(form.Encode()))
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.Do(req)
}

// Do sends req with the client's cookies and keeps the CSRF token of the page it answers.
func (c *Console) Do(req *http.Request) *Page {
	c.t.Helper()
	res, err := c.Client.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	p := &Page{Status: res.StatusCode, Header: res.Header, Body: string(b)}
	if m := csrfPattern.FindStringSubmatch(p.Body); m != nil {
		c.CSRF = m[1]
	}
	return p
}

// Cookie is the client's cookie name for the console's paths, "" if none.
func (c *Console) Cookie(name string) string {
	u, _ := url.Parse(c.s.URL + "/console/")
	for _, ck := range c.Client.Jar.Cookies(u) {
		if ck.Name == name {
			return ck.Value
		}
	}
	return ""
}
