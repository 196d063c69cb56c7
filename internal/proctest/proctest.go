// Package proctest runs the real subprov binary as a child process for the tests that need a
// process they can kill (crash safety) or load for minutes (soak): it builds the binary,
// writes a generated fixture, starts and SIGKILLs the process on a fixed loopback address,
// and talks to it over HTTP.
package proctest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// Build compiles cmd/subprov into a temporary directory and returns the binary's path.
func Build(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "subprov")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/subprov/subprov/cmd/subprov").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// FreeAddr returns a loopback address nothing listens on right now.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// Process is one subprov serve (or worker) process, restartable on the same address and
// database.
type Process struct {
	URL string
	// LogPath is the file the process's JSON log (stderr and stdout) is written to.
	LogPath string
	t       testing.TB
	bin     string
	args    []string
	env     []string
	log     *os.File

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// NewProcess prepares (without starting) 'subprov serve' in dev mode on databaseURL, loading
// the fixture at seed on every start. Its stderr goes to a log file dumped when the test fails.
func NewProcess(t testing.TB, bin, databaseURL, seed string) *Process {
	t.Helper()
	return NewCommand(t, bin, databaseURL, seed, []string{"serve"})
}

// NewCommand prepares (without starting) the subprov command args ("serve", "serve
// --no-workers" or "worker") like NewProcess, with env added to its environment. A worker
// listens on nothing: Start waits for its log to say it runs.
func NewCommand(t testing.TB, bin, databaseURL, seed string, args []string, env ...string) *Process {
	t.Helper()
	addr := FreeAddr(t)
	logPath := filepath.Join(t.TempDir(), "subprov.log")
	f, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	p := &Process{URL: "http://" + addr, LogPath: logPath, t: t, bin: bin, args: args, log: f,
		env: append(append(os.Environ(), "DATABASE_URL="+databaseURL, "SUBPROV_SEED="+seed, "SUBPROV_DEV=1",
			"SUBPROV_ADDR="+addr, "SUBPROV_LOG_FORMAT=json"), env...)}
	t.Cleanup(func() {
		p.Kill()
		f.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			t.Logf("subprov %s log (last 8 KiB):\n%s", strings.Join(args, " "), tail(b, 8<<10))
		}
	})
	return p
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// Start runs the process and waits until /readyz answers 200 (a worker: until it logs that
// it runs).
func (p *Process) Start() {
	p.t.Helper()
	p.mu.Lock()
	var logged int64 // the log's size before this start: a worker's start is logged after it
	if fi, err := p.log.Stat(); err == nil {
		logged = fi.Size()
	}
	cmd := exec.Command(p.bin, p.args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = p.env, p.log, p.log
	if err := cmd.Start(); err != nil {
		p.mu.Unlock()
		p.t.Fatalf("start subprov: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	p.cmd, p.done = cmd, done
	p.mu.Unlock()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-done:
			p.t.Fatalf("subprov exited during start: %v", cmd.ProcessState)
		default:
		}
		if p.ready(logged) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.t.Fatal("subprov did not become ready within 60 s")
}

// ready reports whether the process just started serves: /readyz answers 200, or a worker
// logged that it runs after the log's first logged bytes.
func (p *Process) ready(logged int64) bool {
	if p.args[0] == "worker" {
		b, _ := os.ReadFile(p.LogPath)
		return int64(len(b)) > logged && bytes.Contains(b[logged:], []byte("subprov worker running"))
	}
	res, err := http.Get(p.URL + "/readyz")
	if err != nil {
		return false
	}
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// Kill ends the process with SIGKILL (nothing flushed, no shutdown) and waits until it is gone.
func (p *Process) Kill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	p.cmd = nil
}

// Stop ends the process with SIGTERM (graceful shutdown) and waits until it is gone.
func (p *Process) Stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(40 * time.Second):
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
	p.cmd = nil
}

// PID returns the running process's id (0 when stopped).
func (p *Process) PID() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Response is an answer: its status and its JSON body (nil when not an object).
type Response struct {
	Status int
	JSON   map[string]any
	Body   []byte
}

// Client calls a subprov over HTTP; a zero Client is ready to use.
type Client struct {
	HTTP *http.Client
}

// Do sends one request; a transport error (process down, connection cut) is returned as err.
func (c *Client) Do(ctx context.Context, method, url string, header map[string]string, body any) (*Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	out := &Response{Status: res.StatusCode, Body: b}
	if strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
		_ = json.Unmarshal(b, &out.JSON)
	}
	return out, nil
}

// Login signs in at path (operator or subscriber login) and returns the Authorization header.
func (c *Client) Login(ctx context.Context, base, path, email, password string) (map[string]string, error) {
	res, err := c.Do(ctx, "POST", base+path, nil, map[string]string{"email": email, "password": password})
	if err != nil {
		return nil, err
	}
	tok, _ := res.JSON["access_token"].(string)
	if res.Status != http.StatusOK || tok == "" {
		return nil, errors.New("login " + email + ": " + res.status())
	}
	return map[string]string{"Authorization": "Bearer " + tok}, nil
}

func (r *Response) status() string { return fmt.Sprintf("%d %s", r.Status, tail(r.Body, 300)) }

// String is the status and the start of the body, for failure messages.
func (r *Response) String() string { return r.status() }

// UnfinishedJobs selects each job left to do (available, running or retrying) in the job
// queue: what WaitUntilIdle waits for.
const UnfinishedJobs = `SELECT kind || ':' || state FROM river_job WHERE state IN ('available', 'running', 'retryable')`

// WaitUntilIdle waits until the query pending (one text column naming what is left to do)
// selects nothing and goes on selecting nothing for three seconds: due work (an invoice to
// charge, an event to send) is found by a sweep each second, so an empty queue right after a
// restart does not yet mean that everything is done. It fails the test, naming what is left,
// when that does not happen within the given time.
func WaitUntilIdle(t testing.TB, st *store.Store, within time.Duration, pending string) {
	t.Helper()
	const quiet = 3 * time.Second
	deadline := time.Now().Add(within)
	var left []string
	var emptySince time.Time
	for time.Now().Before(deadline) {
		left = testdb.Strings(t, st.R().Query, pending)
		switch {
		case len(left) > 0:
			emptySince = time.Time{}
		case emptySince.IsZero():
			emptySince = time.Now()
		case time.Since(emptySince) >= quiet:
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("work still unfinished after %v: %v", within, left)
}
