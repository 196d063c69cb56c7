// Package browsertest starts headless Chromium for page tests through chromedp. Pages are tested
// as a person uses them: fill the form with the keyboard, press the button, read what the page
// says. On a machine without Chromium the tests skip, except under CI (CI=true), where a
// missing browser is a failure: .ci/run installs Debian's chromium.
//
// Tests name elements with chromedp.CSS selectors (DOM.querySelector). chromedp reads a plain
// string as a DOM.performSearch query, which Chromium was seen to leave unanswered on a busy
// machine, hanging the test until its timeout; keep chromedp.Search for the rare XPath.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
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

// New returns a tab of a Chromium of the test's own, which closes when the test ends. Every
// action in it is bounded by timeout, counted once the browser has started. A test's subtests
// and further tabs each start their own browser too, but wait for no turn (see enter).
//
// Each test has its own browser rather than a tab of a shared one, so that nothing one test
// does to its browser reaches another's.
func New(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	path := require(t)
	enter(t)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), options(path, t.TempDir())...)
	ctx, cancelTab := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancelTimeout)
	return ctx
}

// gate lets a few top-level tests drive a browser at once: on a busy machine, more browsers
// than cores would each run out of their time.
var gate = struct {
	mu   sync.Mutex
	free *sync.Cond     // signalled when a test gives its slot back
	busy int            // slots taken
	held map[string]int // browsers open, by top-level test name
}{held: map[string]int{}}

// slots is how many top-level tests drive browsers at once (one each, or one per engine).
const slots = 2

func init() { gate.free = sync.NewCond(&gate.mu) }

// enter waits for a slot for t's top-level test unless it holds one already, and gives it back
// when the test's last browser closes. A subtest never waits for a slot its test holds.
func enter(t testing.TB) {
	root, _, _ := strings.Cut(t.Name(), "/")
	gate.mu.Lock()
	for gate.held[root] == 0 && gate.busy == slots {
		gate.free.Wait()
	}
	if gate.held[root] == 0 {
		gate.busy++
	}
	gate.held[root]++
	gate.mu.Unlock()
	t.Cleanup(func() {
		gate.mu.Lock()
		defer gate.mu.Unlock()
		if gate.held[root]--; gate.held[root] == 0 {
			gate.busy--
			gate.free.Broadcast()
		}
	})
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
