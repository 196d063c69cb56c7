// Package browsertest starts headless Chromium for page tests through chromedp. Pages are tested
// as a person uses them: fill the form with the keyboard, press the button, read what the page
// says. On a machine without Chromium the tests skip, except under CI (CI=true), where a
// missing browser is a failure: .ci/run installs Debian's chromium.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// candidates are where Debian and other distributions put Chromium.
var candidates = []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"}

// Path finds the Chromium executable, or "".
func Path() string {
	if p := os.Getenv("SUBPROV_TEST_CHROMIUM"); p != "" {
		return p
	}
	for _, c := range candidates {
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	return ""
}

// New returns a browser tab context that closes when the test ends. Every action in it is
// bounded by timeout.
func New(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), options(require(t), t.TempDir())...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(func() {
		cancelTimeout()
		cancelTab()
		cancelAlloc()
	})
	return ctx
}

// require is the Chromium executable, or it skips t (fails it under CI).
func require(t testing.TB) string {
	t.Helper()
	path := Path()
	if path == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is not installed; .ci/run installs Debian's chromium package")
		}
		t.Skip("Chromium not installed (apt-get install chromium); browser test skipped")
	}
	return path
}

// options are the allocator's options for Chromium at path with its profile in dir.
func options(path, dir string) []chromedp.ExecAllocatorOption {
	opts := append([]chromedp.ExecAllocatorOption{}, chromedp.DefaultExecAllocatorOptions[:]...)
	return append(opts,
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // CI runs as root
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(dir),
	)
}
