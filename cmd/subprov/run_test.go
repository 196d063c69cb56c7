package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"

	"github.com/subprov/subprov/internal/testdb"
)

// syncBuffer is a bytes.Buffer safe to read while the program writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// exitHelpLine is how every --help starts to state the exit statuses.
const exitHelpLine = "Exit status: 0 on success, 1 when the command fails, 2 on a usage error"

func TestHelpTeachesEveryCommand(t *testing.T) {
	tests := []struct {
		args []string
		want []string
		not  []string // flags another command has and this one does not take
	}{
		{[]string{"--help"}, []string{"demo", "serve", "worker", "migrate", "seed FILE", "mcp", "operator", "backup FILE", "restore FILE", "DATABASE_URL", "SUBPROV_DEV", exitHelpLine}, nil},
		{[]string{"serve", "--help"}, []string{"-no-workers", "-addr", "scale-out", "SUBPROV_ADDR", exitHelpLine}, nil},
		{[]string{"worker", "--help"}, []string{"job workers", exitHelpLine}, []string{"-addr", "-no-workers", "Flags:"}},
		{[]string{"migrate", "--help"}, []string{"pending schema and job-queue migration", exitHelpLine}, nil},
		{[]string{"seed", "--help"}, []string{"Loading twice", "left exactly as it is", "--update", "never changes a password", "nothing is written", "starts with its name", exitHelpLine}, nil},
		{[]string{"demo", "--help"}, []string{"./data/", "curl", "NETCONF lab switch", "SUBPROV_DEMO_SWITCH=sim", exitHelpLine}, nil},
		{[]string{"mcp", "--help"}, []string{"--api-key", "SUBPROV_AGENT_API_KEY", "apply_plan_change", exitHelpLine}, nil},
		{[]string{"gen", "--help"}, []string{"--subscribers", exitHelpLine}, nil},
		{[]string{"backup", "--help"}, []string{"backup FILE", "keeps serving", "never overwrites", "pg_dump", "subprov restore", exitHelpLine}, []string{"Flags:"}},
		{[]string{"restore", "--help"}, []string{"restore FILE", "integrity check", "never overwrites a database", "-wal", "pg_restore", exitHelpLine}, []string{"Flags:"}},
		{[]string{"operator", "--help"}, []string{"first admin", "operator add EMAIL --role ROLE [--provider ID]", "operator list", exitHelpLine}, nil},
		{[]string{"operator", "add", "--help"}, []string{"standard input", "-role", "-provider", "platform-wide", "printf", "DATABASE_URL", exitHelpLine}, nil},
		{[]string{"operator", "list", "--help"}, []string{"Never a password", exitHelpLine}, []string{"Flags:"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			if err := run(context.Background(), tt.args, env(nil), &out, &errOut); err != nil {
				t.Fatalf("run: %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("help lacks %q:\n%s", w, out.String())
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("help shows %q:\n%s", n, out.String())
				}
			}
			if errOut.Len() != 0 {
				t.Errorf("help wrote to stderr: %s", errOut.String())
			}
		})
	}
	var out, errOut bytes.Buffer
	if err := run(context.Background(), []string{"frobnicate"}, env(nil), &out, &errOut); err == nil || !strings.Contains(errOut.String(), "unknown command") {
		t.Fatalf("unknown command: %v %s", err, errOut.String())
	}
}

func TestSeedAndMigrate(t *testing.T) {
	testdb.Each(t, func(t *testing.T, u string) {
		e := env(map[string]string{"DATABASE_URL": u})
		var out, errOut bytes.Buffer
		if err := run(context.Background(), []string{"migrate"}, e, &out, &errOut); err != nil {
			t.Fatalf("migrate: %v %s", err, errOut.String())
		}
		dir := t.TempDir()
		good := filepath.Join(dir, "good.json")
		os.WriteFile(good, []byte(`{"providers": [{"id": "p1", "name": "P", "time_zone": "America/Toronto", "currency": "CAD", "webhook_secret": "0123456789abcdef"}]}`), 0o644)
		for i := 0; i < 2; i++ {
			out.Reset()
			if err := run(context.Background(), []string{"seed", good}, e, &out, &errOut); err != nil {
				t.Fatalf("seed run %d: %v", i+1, err)
			}
			// Loaded again, the provider is there: kept as it is, not written again.
			want := []string{"1 providers", "0 rows updated, 0 kept"}
			if i == 1 {
				want = []string{"0 providers", "0 rows updated, 1 kept as they were"}
			}
			if !strings.HasPrefix(out.String(), good+": loaded ") || !strings.Contains(out.String(), want[0]) || !strings.Contains(out.String(), want[1]) {
				t.Fatalf("seed output %q", out.String())
			}
		}
		bad := filepath.Join(dir, "bad.json")
		os.WriteFile(bad, []byte(`{"providers": [{"id": "p1", "name": "P", "time_zone": "Mars/Base", "currency": "CAD", "webhook_secret": "0123456789abcdef", "api_keys": [{"key": "0123456789abcdef", "features": ["root"]}]}]}`), 0o644)
		err := run(context.Background(), []string{"seed", bad}, e, &out, &errOut)
		if err == nil || !strings.Contains(err.Error(), "providers[0].api_keys[0].features[0]") || !strings.Contains(err.Error(), "providers[0].time_zone") {
			t.Fatalf("bad fixture: %v", err)
		}
		// Every failure names the file first, however far the load got, and is a runtime
		// failure (exit status 1), not a usage error.
		dangling := filepath.Join(dir, "dangling.json")
		os.WriteFile(dangling, []byte(`{"units": [{"id": "u1", "building_id": "nowhere", "unit_number": "1"}]}`), 0o644)
		for _, tc := range []struct{ file, want string }{
			{bad, "fixture has 2 problem(s)"},
			{dangling, `units[0].building_id: no building with id "nowhere"`},
			{filepath.Join(dir, "missing.json"), "cannot read the fixture"},
		} {
			err := run(context.Background(), []string{"seed", tc.file}, e, &out, &errOut)
			if err == nil || !strings.HasPrefix(err.Error(), tc.file+": ") || !strings.Contains(err.Error(), tc.want) || exitCode(err) != 1 {
				t.Errorf("seed %s: %v (exit status %d), want %q after the file name", filepath.Base(tc.file), err, exitCode(err), tc.want)
			}
		}
	})
}

// TestUsageErrors: a wrong command line (no or unknown command, a flag the command does not
// take, a missing or stray argument) is refused before anything runs: the problem and the
// command's usage on stderr, nothing on stdout, and exit status 2.
func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want []string // on stderr
	}{
		{nil, []string{"subprov: no command", "Commands:"}},
		{[]string{"frobnicate"}, []string{`unknown command "frobnicate"`, "Commands:"}},
		{[]string{"migrate", "extra"}, []string{`subprov migrate: unexpected argument "extra"`, "Usage: subprov migrate"}},
		{[]string{"seed"}, []string{"subprov seed: missing FILE", "Usage: subprov seed [--update] FILE", exitHelpLine}},
		{[]string{"seed", "a.json", "b.json"}, []string{`subprov seed: unexpected argument "b.json"`, "Usage: subprov seed [--update] FILE"}},
		{[]string{"seed", "--force", "a.json"}, []string{"subprov seed: flag provided but not defined: -force"}},
		{[]string{"serve", "now"}, []string{`subprov serve: unexpected argument "now"`, "-no-workers"}},
		{[]string{"serve", "--port", "80"}, []string{"subprov serve: flag provided but not defined: -port"}},
		{[]string{"worker", "--addr", "127.0.0.1:9"}, []string{"subprov worker: flag provided but not defined: -addr", "Usage: subprov worker"}},
		{[]string{"worker", "--no-workers"}, []string{"subprov worker: flag provided but not defined: -no-workers"}},
		{[]string{"demo", "extra"}, []string{`subprov demo: unexpected argument "extra"`}},
		{[]string{"mcp", "extra"}, []string{`subprov mcp: unexpected argument "extra"`}},
		{[]string{"gen", "extra"}, []string{`subprov gen: unexpected argument "extra"`}},
		{[]string{"gen", "--subscribers", "0"}, []string{"--subscribers must be at least 1"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			err := run(context.Background(), tt.args, env(nil), &out, &errOut)
			if code := exitCode(err); code != 2 {
				t.Fatalf("exit status %d (%v), want 2", code, err)
			}
			for _, w := range tt.want {
				if !strings.Contains(errOut.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut.String())
				}
			}
			if out.Len() != 0 {
				t.Errorf("a usage error wrote to stdout:\n%s", out.String())
			}
		})
	}
}

// TestMain lets TestExitStatus run this test binary as the subprov command itself.
func TestMain(m *testing.M) {
	if os.Getenv("SUBPROV_TEST_RUN_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// TestExitStatus runs the real main: 0 for help, 2 for a usage error, 1 for a command that
// failed while running.
func TestExitStatus(t *testing.T) {
	db := "sqlite://" + filepath.Join(t.TempDir(), "subprov.db")
	missing := filepath.Join(t.TempDir(), "missing.json")
	tests := []struct {
		args   []string
		status int
		stderr string
	}{
		{[]string{"--help"}, 0, ""},
		{[]string{"worker", "--help"}, 0, ""},
		{nil, 2, "no command"},
		{[]string{"migrate", "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"seed"}, 2, "missing FILE"},
		{[]string{"seed", missing}, 1, "subprov: " + missing + ": cannot read the fixture: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], tt.args...)
			cmd.Env = append(os.Environ(), "SUBPROV_TEST_RUN_MAIN=1", "DATABASE_URL="+db, "SUBPROV_LOG_FORMAT=json")
			var errOut bytes.Buffer
			cmd.Stdout, cmd.Stderr = io.Discard, &errOut
			err := cmd.Run()
			status := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				status = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if status != tt.status || !strings.Contains(errOut.String(), tt.stderr) {
				t.Fatalf("exit status %d, want %d; stderr:\n%s", status, tt.status, errOut.String())
			}
		})
	}
}

// TestServeShutsDownGracefully starts `subprov serve`, waits for /readyz, and cancels it as
// SIGTERM does: run returns nil (exit 0).
func TestServeShutsDownGracefully(t *testing.T) {
	keepGCPercent(t)
	testdb.EachMigrated(t, testdb.AppSchema, func(t *testing.T, u string) {
		e := env(map[string]string{"DATABASE_URL": u, "SUBPROV_ADDR": "127.0.0.1:0", "SUBPROV_LOG_FORMAT": "json"})
		if log := serveUntilReady(t, e); !strings.Contains(log, "shutting down") {
			t.Fatalf("no shutdown log line:\n%s", log)
		}
	})
}

func TestDemoBannerHasACurlLineForEveryCredential(t *testing.T) {
	b := demoBanner("http://127.0.0.1:8080", "sqlite://./data/demo.db")
	for _, w := range []string{"/partner/agent/customers/search", "/partner/agent/verify/issue", "/partner/agent/verify/check", "/partner/serviceability/autocomplete", "/partner/serviceability/check", "/partner/serviceability/units",
		"/partner/location/", "/api/v1/location/", "/partner/location/details", "/partner/subscriber/auth/login", "/api/v1/auth/login",
		"/api/v1/dev/clock", "/api/v1/dev/faults", "/api/v1/dev/outbox", "/docs", "/partner/provisioning/provider-initiated",
		"/partner/provisioning/bulk", "/partner/provisioning/confirm-install", "/change-plan/preview", "/change-plan\"",
		"/partner/cpe/config", "/cancel/preview", "/cancel\" -H \"Authorization",
		// Installations (issue 8).
		"/book?token=demo_booking_token_northwind_0001", "/api/v1/install-jobs?state=open", "/api/v1/install-jobs?flag=", "/slots\"", "/assign\"", "/book\"", "/complete\"",
		// Portal orders and reactivation.
		"/partner/subscriber/me/orders/options", "/partner/subscriber/me/orders/preview", "/partner/subscriber/me/orders\"",
		"/partner/subscriber/me/reactivation\"", "/reactivation\" -H",
		// Marketplace checkout and the sandbox.
		"/partner/external-checkout/sessions\" -H", "/partner/external-checkout/sessions/$SESSION", "-X PATCH \"$B/partner/external-checkout/sessions",
		"/partner/external-checkout/complete", "/partner/external-checkout/anonymous-complete", "/partner/external-checkout/subscriptions/",
		"/partner/external-checkout/subscription-status", "/partner/marketplace/plans/", "/api/v1/sandbox/provider-info",
		"/api/v1/sandbox/webhook-config", "/api/v1/sandbox/webhook-events",
		// The operator console and its logins; the operations surface's overview.
		"http://127.0.0.1:8080/console/", "support@northwind.test / demo-support-pass", "/api/v1/overview",
		// Outage credits: the demo provider's policy.
		`"outage_credit":{"min_hours":1}`} {
		if !strings.Contains(b, w) {
			t.Errorf("banner lacks %s", w)
		}
	}
}

// TestDemoBannerNamesItsDatabase: the banner names the database the demo keeps its data in,
// the one DATABASE_URL names when it is set, without its user, password or query.
func TestDemoBannerNamesItsDatabase(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		databaseURL string
		want        string
		secrets     []string
	}{
		{"default", "", "(dev mode; data in SQLite file ./data/demo.db; Ctrl-C to stop)", nil},
		{"SQLite", "sqlite:///var/lib/subprov/demo.db", "data in SQLite file /var/lib/subprov/demo.db;", nil},
		{"PostgreSQL", "postgres://subprov:s3cret-pw@db.example.ca:5432/subprov_demo?sslmode=require&password=q-s3cret",
			"data in PostgreSQL database subprov_demo on db.example.ca:5432;", []string{"s3cret", "sslmode", "subprov:"}},
		{"PostgreSQL without a port", "postgresql://dbowner:hunter2@localhost/demo", "data in PostgreSQL database demo on localhost;", []string{"hunter2", "dbowner"}},
		{"PostgreSQL that does not parse", "postgres://u:pa ss/w0rd@host/db", "data in PostgreSQL;", []string{"pa ss", "w0rd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			url := demoEnv(env(map[string]string{"DATABASE_URL": tt.databaseURL}), "")("DATABASE_URL")
			b := demoBanner("http://127.0.0.1:8080", url)
			if !strings.Contains(b, tt.want) {
				t.Errorf("banner lacks %q:\n%.300s", tt.want, b)
			}
			if tt.databaseURL != "" && strings.Contains(b, "./data/demo.db") {
				t.Error("banner names ./data/demo.db though DATABASE_URL names another database")
			}
			for _, s := range tt.secrets {
				if strings.Contains(b, s) {
					t.Errorf("banner shows %q of DATABASE_URL", s)
				}
			}
		})
	}
}

// keepGCPercent restores the test binary's collector target when t ends: serve and demo
// change it for the whole process.
func keepGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(prev) })
}

func TestServeGCPercent(t *testing.T) {
	keepGCPercent(t)
	for _, tc := range []struct {
		name, gogc string
		before     int    // the runtime's target as GOGC left it
		want       string // the setting logged
		percent    int    // the target afterwards
	}{
		{name: "GOGC unset or empty (a blank ${GOGC} in a compose file): serve's default", before: 100, want: "200", percent: serverGCPercent},
		{name: "GOGC set: the runtime's, untouched", gogc: "50", before: 50, want: "50", percent: 50},
		{name: "GOGC=off: untouched", gogc: "off", before: -1, want: "off", percent: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(tc.before)
			got := setGCPercent(env(map[string]string{"GOGC": tc.gogc}))
			if got != tc.want {
				t.Errorf("logged gogc %q, want %q", got, tc.want)
			}
			if p := debug.SetGCPercent(100); p != tc.percent {
				t.Errorf("GC percent %d, want %d", p, tc.percent)
			}
		})
	}
}
