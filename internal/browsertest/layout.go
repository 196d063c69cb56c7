package browsertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Widths are the window widths pages are checked at: a desktop's and a phone's.
var Widths = []int64{1280, 390}

// CheckLayout checks the page in ctx at every width of Widths: the page does not scroll
// sideways, and every form field has a label. It returns the problems found.
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
	return problems, chromedp.Do(ctx, chromedp.EmulateViewport(Widths[0], 900))
}

var screenshots struct {
	once sync.Once
	dir  string
	err  error
}

// Screenshot writes the page in ctx, whole, at 1280 px as PNG name.png into
// $SUBPROV_SCREENSHOTS, or a temporary folder of the test binary's, and returns the image.
func Screenshot(t testing.TB, ctx context.Context, name string) []byte {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	screenshots.once.Do(func() {
		screenshots.dir = os.Getenv("SUBPROV_SCREENSHOTS")
		if screenshots.dir == "" {
			screenshots.dir, screenshots.err = os.MkdirTemp("", "subprov-screenshots-")
		} else {
			screenshots.err = os.MkdirAll(screenshots.dir, 0o755)
		}
	})
	if screenshots.err != nil {
		t.Fatal(screenshots.err)
	}
	file := filepath.Join(screenshots.dir, strings.NewReplacer("/", "_", " ", "_").Replace(name)+".png")
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", file)
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
