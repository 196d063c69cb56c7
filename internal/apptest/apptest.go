// Package apptest starts a whole subprov process in a test: a fresh database on each engine,
// the demo fixture loaded, dev mode on, the HTTP server on 127.0.0.1:0 and the job workers
// running. Tests then talk to it over real HTTP, as a partner would.
package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/app"
	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/scheduler"
	"github.com/subprov/subprov/store"
)

// Service is a running subprov.
type Service struct {
	*app.App
	URL  string
	t    testing.TB
	stop func() error
	logs *logBuffer
}

// Logs returns everything the service logged so far, at every level (JSON lines), so tests
// can check what reaches an operator's log pipeline.
func (s *Service) Logs() string { return s.logs.String() }

// logBuffer is a goroutine-safe in-memory log sink.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Shutdown stops the service as SIGTERM would and returns Serve's result.
func (s *Service) Shutdown() error { return s.stop() }

// Option adjusts the configuration before start.
type Option func(*config.Config)

// Main runs a package's tests, as a TestMain does, with more of them at once than go test's
// default of one per CPU: a test of a running service mostly waits (for its job queue, its
// sweeps, its database), not on a CPU. An explicit -parallel is kept.
func Main(m *testing.M) {
	flag.Parse()
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		if err := flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0))); err != nil {
			fmt.Fprintln(os.Stderr, "apptest:", err)
		}
	}
	os.Exit(m.Run())
}

// Each runs fn once per engine against a fresh running service.
func Each(t *testing.T, fn func(t *testing.T, s *Service), opts ...Option) {
	t.Helper()
	testdb.EachMigrated(t, testdb.AppSchema, func(t *testing.T, u string) { fn(t, Start(t, u, opts...)) })
}

// Start runs a service on databaseURL with the demo fixture loaded; it stops when t ends.
func Start(t testing.TB, databaseURL string, opts ...Option) *Service {
	t.Helper()
	cfg := config.Config{Addr: "127.0.0.1:0", DatabaseURL: databaseURL, MailFrom: "no-reply@localhost", Dev: true,
		SwitchDriver: "sim", LogFormat: "json", Workers: true, PublicURL: "http://subprov.test",
		// Logins and password changes run as in production, at a cost that takes microseconds.
		PasswordCost: identity.TestPasswordCost}
	for _, o := range opts {
		o(&cfg)
	}
	if !cfg.Dev {
		// A service out of dev mode refuses the test cost, as production would.
		cfg.PasswordCost = identity.PasswordCost{}
	}
	// Everything is captured (Service.Logs); with -v, warnings and errors also go to the test log.
	logs := &logBuffer{}
	var sink io.Writer = logs
	if testing.Verbose() {
		sink = io.MultiWriter(logs, warnings{testWriter{t}})
	}
	log := slog.New(slog.NewJSONHandler(sink, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		cancel()
		t.Fatalf("start app: %v", err)
	}
	f, err := fixture.Parse(fixture.DemoJSON)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.LoadAtCost(ctx, a.Store, f, a.Clock.Now(), cfg.PasswordCost); err != nil {
		t.Fatalf("load demo fixture: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, ln) }()
	var once sync.Once
	var result error
	stop := func() error {
		once.Do(func() {
			cancel()
			// The service drains its jobs and requests for up to 30 s; a loaded machine gets the
			// rest of a minute. Past that, what it is stuck on is logged for the failure.
			select {
			case result = <-done:
			case <-time.After(60 * time.Second):
				buf := make([]byte, 256<<10)
				t.Logf("goroutines of the service that did not stop:\n%s", buf[:runtime.Stack(buf, true)])
				result = errors.New("service did not stop within 60s")
			}
		})
		return result
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &Service{App: a, URL: "http://" + ln.Addr().String(), t: t, stop: stop, logs: logs}
}

// warnings passes on only the JSON log lines of level WARN or ERROR.
type warnings struct{ w io.Writer }

func (f warnings) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte(`"level":"WARN"`)) || bytes.Contains(p, []byte(`"level":"ERROR"`)) {
		return f.w.Write(p)
	}
	return len(p), nil
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// Response is a decoded HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Raw    []byte
	JSON   map[string]any
}

// Request is one call: Headers are added as given; Body is JSON-encoded unless it is a string
// or []byte, which are sent as they are.
type Request struct {
	Method  string
	Path    string
	Headers map[string]string
	Body    any
}

// Do sends r and decodes a JSON object answer.
func (s *Service) Do(r Request) *Response {
	s.t.Helper()
	var body io.Reader
	switch b := r.Body.(type) {
	case nil:
	case string:
		body = strings.NewReader(b)
	case []byte:
		body = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		body = bytes.NewReader(j)
	}
	req, err := http.NewRequest(r.Method, s.URL+r.Path, body)
	if err != nil {
		s.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := &Response{Status: res.StatusCode, Header: res.Header, Raw: raw}
	for _, p := range checkAgainstContract(r.Method, r.Path, res.StatusCode, res.Header, raw) {
		s.t.Errorf("the answer differs from the OpenAPI document: %s", p)
	}
	_ = json.Unmarshal(raw, &out.JSON)
	return out
}

// Login returns a bearer header for a subscriber login.
func (s *Service) Login(email, password string) map[string]string {
	s.t.Helper()
	res := s.Do(Request{Method: "POST", Path: "/partner/subscriber/auth/login", Body: map[string]string{"email": email, "password": password}})
	if res.Status != 200 {
		s.t.Fatalf("login %s: %d %s", email, res.Status, res.Raw)
	}
	return map[string]string{"Authorization": "Bearer " + res.JSON["access_token"].(string)}
}

// Operator returns a bearer header for the demo operator.
func (s *Service) Operator() map[string]string {
	s.t.Helper()
	res := s.Do(Request{Method: "POST", Path: "/api/v1/auth/login",
		Body: map[string]string{"email": fixture.DemoOperatorEmail, "password": fixture.DemoOperatorPassword}})
	if res.Status != 200 {
		s.t.Fatalf("operator login: %d %s", res.Status, res.Raw)
	}
	return map[string]string{"Authorization": "Bearer " + res.JSON["access_token"].(string)}
}

// OperatorAs creates an operator with role and scope (providerID "" for every provider),
// named by the role and scope so that each test's is its own, and returns a bearer header
// for it.
func (s *Service) OperatorAs(role subprov.Role, providerID string) map[string]string {
	s.t.Helper()
	email, password := s.PutOperator(role, providerID)
	res := s.Do(Request{Method: "POST", Path: "/api/v1/auth/login", Body: map[string]string{"email": email, "password": password}})
	if res.Status != 200 {
		s.t.Fatalf("operator login %s: %d %s", email, res.Status, res.Raw)
	}
	return map[string]string{"Authorization": "Bearer " + res.JSON["access_token"].(string)}
}

// OperatorPassword is the password of the operators PutOperator writes.
const OperatorPassword = "operator-test-password"

// PutOperator writes an operator with role and scope (providerID "" for every provider),
// named by the role and scope, and returns its e-mail and password.
func (s *Service) PutOperator(role subprov.Role, providerID string) (email, password string) {
	s.t.Helper()
	email = fmt.Sprintf("%s.%s@ops.test", role, or(providerID, "platform"))
	hash, err := identity.TestPasswordCost.Hash(OperatorPassword)
	if err != nil {
		s.t.Fatal(err)
	}
	ctx := context.Background()
	op := &subprov.Operator{ID: store.NewID(), Email: email, Role: role, ProviderID: providerID}
	if err := s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.UpsertOperator(ctx, op, hash, s.Clock.Now()) }); err != nil {
		s.t.Fatalf("operator %s: %v", email, err)
	}
	return email, OperatorPassword
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Key returns an X-API-Key header.
func Key(k string) map[string]string { return map[string]string{"X-API-Key": k} }

// AwaitStartupBillRun waits until the bill run the service's first sweep enqueues for the demo
// provider has run. A test whose answers depend on the period's invoice (a plan-change quote's
// proration, an account page's invoice links) waits for it first, or the run may issue the
// invoice between two of its calls.
func (s *Service) AwaitStartupBillRun(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	Eventually(t, 15*time.Second, "the start-up bill run", func() bool {
		var marked, pending int
		err := s.Store.R().QueryRow(ctx, `SELECT
				(SELECT COUNT(*) FROM settings WHERE key LIKE ?),
				(SELECT COUNT(*) FROM river_job WHERE kind = ? AND state IN ('available', 'running', 'scheduled', 'retryable'))`,
			"billrun:"+fixture.DemoProviderID+":%", jobs.BillRun{}.Kind()).Scan(&marked, &pending)
		return err == nil && marked > 0 && pending == 0
	})
}

// Settle runs the service's clock-driven sweeps at its clock's current time and waits until
// the work they find is done: no job waiting, running or retrying, and no webhook due. It
// sweeps again until a sweep finds nothing new, so work that falls due from work done (a bill
// run's charges) is done too. A test then asserts what time-driven work did, or did not do, by
// now, instead of sleeping for a sweep to pass. It fails the test naming what is still pending
// when the work is not done within 30 s.
func (s *Service) Settle(t testing.TB) {
	t.Helper()
	const timeout = 30 * time.Second
	ctx := context.Background()
	deadline := time.Now().Add(timeout)
	for round := 0; ; round++ {
		scheduler.RunOnce(ctx, s.Log, s.Sweeps()...)
		idle := true
		for {
			pending, err := s.unfinished(ctx)
			if err != nil {
				t.Fatalf("settle: %v", err)
			}
			if len(pending) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the service did not settle within %v; still pending: %s", timeout, strings.Join(pending, "; "))
			}
			idle = false
			time.Sleep(20 * time.Millisecond)
		}
		// A sweep enqueues before it returns, so a sweep after which nothing is pending found
		// nothing new. The first sweep does not count: work pending when Settle was called may
		// have finished during it and made more work due.
		if idle && round > 0 {
			return
		}
	}
}

// unfinished lists the service's unfinished jobs and its production webhooks due now.
func (s *Service) unfinished(ctx context.Context) ([]string, error) {
	pending, err := s.Jobs.Unfinished(ctx, 20)
	if err != nil {
		return nil, err
	}
	var due int
	if err := s.Store.R().QueryRow(ctx, `SELECT COUNT(*) FROM events
		WHERE delivery_state = 'pending' AND sandbox = FALSE AND next_attempt_at <= ?`, s.Clock.Now().UTC()).Scan(&due); err != nil {
		return nil, fmt.Errorf("count due webhooks: %w", err)
	}
	if due > 0 {
		pending = append(pending, fmt.Sprintf("%d webhook events due", due))
	}
	return pending, nil
}

// minWait is the least Eventually waits: the tests run in parallel, several services to a
// core, so a job that takes milliseconds on a quiet machine can take seconds on a busy one. A
// longer wait only delays a failure; it never lets a wrong answer pass.
const minWait = 30 * time.Second

// ProviderAndLine reads a provider and a line from the store, as the capabilities take them,
// or fails the test.
func (s *Service) ProviderAndLine(t testing.TB, providerID, subscriptionID string) (*subprov.Provider, *subprov.Subscription) {
	t.Helper()
	ctx := context.Background()
	p, err := s.Store.Provider(ctx, providerID)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.Store.SubscriptionByID(ctx, subscriptionID)
	if err != nil {
		t.Fatal(err)
	}
	return p, sub
}

// RecordEvent records one subscription.updated event of a line as an event of providerID (the
// line taken to be that provider's), as the provider is configured now (its receiver, or
// none), and returns the event's id.
func (s *Service) RecordEvent(t testing.TB, providerID, subscriptionID string) string {
	t.Helper()
	p, sub := s.ProviderAndLine(t, providerID, subscriptionID)
	sub.ProviderID = providerID
	ctx := context.Background()
	var id string
	if err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		ev, err := s.Events.Record(ctx, tx, p, "subscription.updated", sub, nil)
		if ev != nil {
			id = ev.ID
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return id
}

// Eventually polls cond until it holds or timeout (at least minWait) passes.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	timeout = max(timeout, minWait)
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("timed out after %v waiting for %s", timeout, what)
}
