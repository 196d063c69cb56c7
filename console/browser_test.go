package console_test

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/browsertest"
)

// updateDocs rewrites the README's screenshot of the console (docs/console-account.png):
// go test ./console -run TestConsoleScreenshots -update-docs
var updateDocs = flag.Bool("update-docs", false, "write the console's screenshot in docs/")

// docsScreenshotPage is the page the README's screenshot shows: the demo's Marie's account.
const docsScreenshotPage = "/console/subscribers/" + marieID

// browse opens path in the tab and waits for its heading.
func browse(t *testing.T, ctx context.Context, s *apptest.Service, path string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(s.URL+path), chromedp.WaitVisible(chromedp.CSS("h1"))); err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
}

// follow runs steps, the last of which clicks a link or a button, waits for the page the click
// leads to, and then for the element want on it. Waiting for want alone could find it on the
// page the click leaves.
func follow(ctx context.Context, want string, steps ...chromedp.Action[chromedp.Void]) error {
	if _, err := chromedp.RunResponse(ctx, steps...); err != nil {
		return err
	}
	return chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(want)))
}

// signIn signs in with the sign-in form, typing as a person does, and waits for the next page.
func signIn(t *testing.T, ctx context.Context, s *apptest.Service, email, password, code string) {
	t.Helper()
	browse(t, ctx, s, "/console/sign-in")
	steps := []chromedp.Action[chromedp.Void]{chromedp.SendKeys(chromedp.CSS("#email"), email), chromedp.SendKeys(chromedp.CSS("#password"), password)}
	if code != "" {
		steps = append(steps, chromedp.SendKeys(chromedp.CSS("#code"), code))
	}
	steps = append(steps, chromedp.Click(chromedp.CSS(`main button[type="submit"]`)))
	if err := follow(ctx, "h1", steps...); err != nil {
		t.Fatalf("sign in as %s: %v", email, err)
	}
}

// consoleTab signs an operator in, in a browser of the test's own.
func consoleTab(t *testing.T, s *apptest.Service, email, password string) context.Context {
	t.Helper()
	ctx := browsertest.New(t, 5*time.Minute)
	signIn(t, ctx, s, email, password, "")
	return ctx
}

// signedInAs signs a new operator of role in to s, in a browser of the test's own: a platform
// operator for providerID "", else one of that provider.
func signedInAs(t *testing.T, s *apptest.Service, role subprov.Role, providerID string) (ctx context.Context, email, password string) {
	t.Helper()
	email, password = s.PutOperator(role, providerID)
	return consoleTab(t, s, email, password), email, password
}

func heading(t *testing.T, ctx context.Context) string {
	t.Helper()
	h, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// checkPage checks the page in the tab at both widths and writes its screenshot.
func checkPage(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	problems, err := browsertest.CheckLayout(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", name, p)
	}
	browsertest.Screenshot(t, ctx, "console-"+name)
}

// TestConsoleScreenshots loads every page of the console in Chromium, checks it at 1280 and
// 390 px and writes its screenshot; with -update-docs it writes the README's.
func TestConsoleScreenshots(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := browsertest.New(t, 5*time.Minute)
		browse(t, ctx, s, "/console/sign-in")
		checkPage(t, ctx, "sign-in")
		signIn(t, ctx, s, fixture.DemoOperatorEmail, fixture.DemoOperatorPassword, "")
		pages := map[string]string{"home": "/console/", "password": "/console/account/password", "second-factor": "/console/account/second-factor"}
		for name, path := range subscriberPages(s) {
			pages[name] = path
		}
		for name, path := range pages {
			browse(t, ctx, s, path)
			checkPage(t, ctx, name)
			if *updateDocs && path == docsScreenshotPage && strings.HasSuffix(t.Name(), "/sqlite") { // one engine writes it
				if err := os.WriteFile("../docs/console-account.png", browsertest.Capture(t, ctx), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// TestConsoleSecondFactorJourney: an operator enrols a second factor from the QR code page,
// signs out, and signs in again with a code; without one it is refused.
func TestConsoleSecondFactorJourney(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx, email, password := signedInAs(t, s, subprov.RoleSupport, "")
		browse(t, ctx, s, "/console/account/second-factor")
		if err := follow(ctx, "svg.qr", chromedp.Click(chromedp.CSS(`main form button[type="submit"]`))); err != nil {
			t.Fatal(err)
		}
		checkPage(t, ctx, "second-factor-enrol")
		secret, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("code.secret")))
		if err != nil || secret == "" {
			t.Fatalf("the key is not shown as text: %q %v", secret, err)
		}
		code, err := identity.TOTPCode(secret, s.Clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := follow(ctx, "ol.codes", chromedp.SendKeys(chromedp.CSS("#code"), code), chromedp.Click(chromedp.CSS(`main form button[type="submit"]`))); err != nil {
			t.Fatalf("confirm: %v", err)
		}
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('ol.codes li').length`))
		if err != nil || n != 10 {
			t.Fatalf("%d recovery codes shown, want 10 (%v)", n, err)
		}
		if err := follow(ctx, "#email", chromedp.Click(chromedp.CSS(`.who button`))); err != nil {
			t.Fatalf("sign out: %v", err)
		}
		if h := heading(t, ctx); h != "Sign in" {
			t.Fatalf("after signing out: %q", h)
		}

		signIn(t, ctx, s, email, password, "")
		if msg, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[role="alert"]`))); !strings.Contains(msg, "not right") {
			t.Fatalf("signed in without the code: %q", msg)
		}
		s.DevClock.Advance(30 * time.Second) // each code signs in once: the next one
		code, _ = identity.TOTPCode(secret, s.Clock.Now())
		signIn(t, ctx, s, email, password, code)
		if h := heading(t, ctx); h != "Home" {
			t.Fatalf("with the code: %q", h)
		}
	})
}

// TestConsoleFromOutside: a page of another site cannot act in the console with the
// operator's session (the cookie is SameSite=Strict and the form has no CSRF token), and a
// script injected into a console page does not run (the Content-Security-Policy).
func TestConsoleFromOutside(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx, email, password := signedInAs(t, s, subprov.RoleViewer, "")
		if h := heading(t, ctx); h != "Home" {
			t.Fatalf("signed in: %q", h)
		}
		htmx, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`typeof htmx === 'object'`))
		if err != nil || !htmx {
			t.Errorf("htmx is not loaded from the console's assets (%v)", err)
		}
		ran, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(() => {
		const s = document.createElement('script'); s.textContent = 'window.injected = true';
		document.body.appendChild(s); return window.injected === true })()`))
		if err != nil || ran {
			t.Errorf("an injected inline script ran (%v)", err)
		}

		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `<!doctype html><title>Win a prize</title><h1>Prize</h1>
<form method="post" action="%s/console/account/password">
<input name="current_password" value="%s"><input name="new_password" value="taken-over-password">
<button type="submit" id="go">Claim</button></form>`, s.URL, password)
		}))
		defer evil.Close()
		if err := chromedp.Do(ctx, chromedp.Navigate(evil.URL), chromedp.WaitVisible(chromedp.CSS("#go"))); err != nil {
			t.Fatal(err)
		}
		if err := follow(ctx, "h1", chromedp.Click(chromedp.CSS("#go"))); err != nil {
			t.Fatal(err)
		}
		if h := heading(t, ctx); h == "Home" {
			t.Errorf("the other site's form was answered as the console's: %q", h)
		}
		// Nothing changed: the password still signs in.
		s.ConsoleSignIn(t, email, password, "")
	})
}
