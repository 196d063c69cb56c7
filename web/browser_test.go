package web

import (
	"github.com/subprov/subprov/locale"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/subprov/subprov/internal/browsertest"
)

// TestMessagePageInBrowser checks the layout in a real browser: the page loads from subprov
// alone and its heading is what a person reads first.
func TestMessagePageInBrowser(t *testing.T) {
	r := MustRenderer()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = r.Message(w, 200, locale.EN, "Booking paused", "Your provider paused this booking.")
	}))
	defer srv.Close()
	ctx := browsertest.New(t, 60*time.Second)
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL)); err != nil {
		t.Fatal(err)
	}
	h1, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
	if err != nil {
		t.Fatal(err)
	}
	status, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`[role="status"]`)))
	if err != nil {
		t.Fatal(err)
	}
	if h1 != "Booking paused" || status != "Your provider paused this booking." {
		t.Fatalf("h1 %q status %q", h1, status)
	}
}
