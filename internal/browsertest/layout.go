package browsertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Widths are the window widths pages are checked at: a desktop's and a phone's.
var Widths = []int64{1280, 390}

// CheckLayout checks the page in ctx at every width of Widths: the page does not scroll
// sideways, every form field has a label, and every control is in the Tab order. It returns
// the problems found.
func CheckLayout(ctx context.Context) ([]string, error) {
	var problems []string
	for _, w := range Widths {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(w, 900)); err != nil {
			return nil, err
		}
		fits, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth <= window.innerWidth`))
		if err != nil {
			return nil, err
		}
		if !fits {
			sw, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.documentElement.scrollWidth`))
			problems = append(problems, fmt.Sprintf("scrolls sideways at %d px (%d px wide)", w, sw))
		}
	}
	unlabelled, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('input, select, textarea'))
		.filter(e => !['hidden', 'submit', 'button', 'reset'].includes(e.type))
		.filter(e => e.labels.length === 0 && !e.getAttribute('aria-label') && !e.getAttribute('aria-labelledby'))
		.map(e => e.name || e.id || e.outerHTML)`))
	if err != nil {
		return nil, err
	}
	for _, f := range unlabelled {
		problems = append(problems, "field without a label: "+f)
	}
	// Every control is reached with Tab: nothing a person acts on is taken out of the tab order
	// (tabindex="-1") or is an element the keyboard never stops at (a div that htmx or a
	// script makes clickable).
	untabbable, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll(
		'a[href], button, input:not([type="hidden"]), select, textarea, summary, [hx-get]:not(form), [hx-post]:not(form), [onclick]'))
		.filter(e => !e.disabled && e.tabIndex < 0)
		.map(e => e.outerHTML.slice(0, 120))`))
	if err != nil {
		return nil, err
	}
	for _, c := range untabbable {
		problems = append(problems, "control out of the Tab order: "+c)
	}
	return problems, chromedp.Do(ctx, chromedp.EmulateViewport(Widths[0], 900))
}

// Screenshot writes the page in ctx, whole, at 1280 px as PNG name.png into the folder
// $SUBPROV_SCREENSHOTS names; without it, it takes none (encoding a whole page as PNG was a
// good part of the page tests' time, and nobody looked at the images).
func Screenshot(t testing.TB, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("SUBPROV_SCREENSHOTS")
	if dir == "" {
		return
	}
	png := Capture(t, ctx)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(name)+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", file)
}

// Capture is the page in ctx, whole, at 1280 px, as PNG.
func Capture(t testing.TB, ctx context.Context) []byte {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return png
}

// AcceptLanguage makes the tab ask for pages in lang (an Accept-Language value), as a browser
// set to that language does.
func AcceptLanguage(lang string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{Headers: network.Headers{"Accept-Language": lang}})
		return err
	})
}
