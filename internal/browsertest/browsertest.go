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
	"path/filepath"
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

// New returns a tab of its own for the test, which closes when the test ends. Every action in
// it is bounded by timeout, counted once the tab is open. A test's subtests and further tabs
// each get their own too, but wait for no turn (see enter).
//
// The tabs of a test process share one Chromium, started by the first: a browser costs about
// a second of a core to start, and the page tests opened some twenty-five per package. Each
// tab is in a browser context of its own (as a private window is), so that no cookie, storage
// or cache of one test reaches another's.
func New(t testing.TB, timeout time.Duration) context.Context {
	t.Helper()
	path := require(t)
	enter(t)
	browser, err := shared(path)
	if err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	ctx, cancelTab := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
	t.Cleanup(cancelTab)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab in Chromium: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancelTimeout)
	return ctx
}

// browser is the test process's Chromium, started once. It is never closed: the kernel kills
// it when the test process exits (chromedp asks for that on Linux), and the next process
// removes the profile it left (removeStaleProfiles).
var browser struct {
	once sync.Once
	ctx  context.Context
	err  error
}

// profilePrefix names the profile directories of the shared browsers in the temporary
// directory.
const profilePrefix = "subprov-chromium-"

// shared returns the context of the process's Chromium at path, starting it the first time.
func shared(path string) (context.Context, error) {
	browser.once.Do(func() {
		removeStaleProfiles(time.Now())
		dir, err := os.MkdirTemp("", profilePrefix)
		if err != nil {
			browser.err = err
			return
		}
		alloc, _ := chromedp.NewExecAllocator(context.Background(), options(path, dir)...)
		ctx, _ := chromedp.NewContext(alloc)
		if err := chromedp.Do(ctx); err != nil {
			browser.err = err
			return
		}
		browser.ctx = ctx
	})
	return browser.ctx, browser.err
}

// removeStaleProfiles removes the profile directories of shared browsers whose processes
// exited: those not written for an hour (a test process's browser writes to its profile as
// its pages load; no package's tests run an hour).
func removeStaleProfiles(now time.Time) {
	entries, err := os.ReadDir(os.TempDir())
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), profilePrefix) {
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > time.Hour {
			_ = os.RemoveAll(filepath.Join(os.TempDir(), e.Name()))
		}
	}
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
