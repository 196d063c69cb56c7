package browsertest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// shared is the one browser of a test binary that Shared hands out tabs of: starting Chromium
// costs far more than a tab.
var shared struct {
	once sync.Once
	ctx  context.Context
	err  error
}

// Shared returns a tab of the test binary's one browser, in a browser context of its own (its
// own cookies, as a private window), that closes when the test ends. Every action in it is
// bounded by timeout. Tests that run in parallel each get their own.
func Shared(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	path := require(t)
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "subprov-chromium-")
		if err != nil {
			shared.err = err
			return
		}
		// The browser lives as long as the test binary: Chromium goes with its pipe.
		alloc, _ := chromedp.NewExecAllocator(context.Background(), options(path, dir)...)
		shared.ctx, _ = chromedp.NewContext(alloc)
		shared.err = chromedp.Do(shared.ctx)
	})
	if shared.err != nil {
		t.Fatalf("start Chromium: %v", shared.err)
	}
	ctx, cancelTab := chromedp.NewContext(shared.ctx, chromedp.WithNewBrowserContext())
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
	})
	return ctx
}

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
