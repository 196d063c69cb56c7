// Command bench is the load harness of subprov (issue 9): it generates data with subprov gen
// (or reuses a generated database), starts subprov serve on SQLite and on PostgreSQL over it
// on loopback, drives real HTTP with a Go client recording latency in an HDR-style histogram,
// measures a bare net/http JSON handler in the same run as the ceiling (and runs wrk when it
// is installed), and writes the results, the commands and the machine to BENCHMARKS.md.
//
//	go run ./bench --subscribers 1000000
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/store"
)

type options struct {
	subscribers int // in all
	providers   int // the subscribers are spread evenly over them
	engines     []string
	pgURL       string
	dir         string
	duration    time.Duration
	out         string
	reuse       bool
	orders      int
	warmup      int
	orderRate   float64
	mixRate     float64         // mix: writes offered per second, orders and portal changes
	scenarios   map[string]bool // nil: all
	pgDB        string          // PostgreSQL database name; "" = subprov_bench_<subscribers>
	scratch     bool            // measure on a throw-away copy of the generated database

	fanProviders int           // fan-out: providers, each with a receiver of its own
	fanRate      float64       // fan-out: events offered per second in all
	fanDelay     time.Duration // fan-out: how long each receiver takes to answer
	fanDuration  time.Duration // fan-out: how long each phase offers events
}

// perProvider is how many subscribers each generated provider has.
func (o options) perProvider() int { return o.subscribers / o.providers }

// scale names the generated data in file and database names: its size, and its providers
// when more than one.
func (o options) scale() string {
	if o.providers == 1 {
		return strconv.Itoa(o.subscribers)
	}
	return fmt.Sprintf("%d_p%d", o.subscribers, o.providers)
}

// scenarioNames are the scenario groups --scenarios chooses from.
var scenarioNames = []string{"search", "me", "ops", "orders", "mix", "billrun", "billcrash", "storage", "fanout"}

// atScale reports whether a scenario that runs on the generated database was chosen (fanout
// runs on a database of its own).
func (o options) atScale() bool {
	return o.serves() || o.runs("billrun") || o.runs("billcrash") || o.runs("storage")
}

// serves reports whether a scenario that measures a running serve on the generated database
// was chosen.
func (o options) serves() bool {
	return o.runs("search") || o.runs("me") || o.runs("ops") || o.runs("orders") || o.runs("mix")
}

// runs reports whether scenario group name was chosen.
func (o options) runs(name string) bool { return o.scenarios == nil || o.scenarios[name] }

func main() {
	var o options
	var engines, scenarios string
	flag.IntVar(&o.subscribers, "subscribers", 1_000_000, "subscribers to generate, in all")
	flag.IntVar(&o.providers, "providers", 1, "providers to spread the subscribers over, evenly: search, /me and orders use provider 1's, the bill run bills every provider's")
	flag.StringVar(&engines, "engines", "sqlite,postgres", "engines to measure (postgres is skipped when unreachable)")
	flag.StringVar(&o.pgURL, "pg-url", os.Getenv("SUBPROV_BENCH_POSTGRES_URL"),
		"PostgreSQL server URL, or $SUBPROV_BENCH_POSTGRES_URL; the harness creates its own database on it (default: this machine's server through its Unix socket when it answers there, else over TCP on 127.0.0.1:5432)")
	flag.StringVar(&o.dir, "dir", filepath.Join(os.TempDir(), "subprov-bench"), "work directory (binary, SQLite files, logs)")
	flag.DurationVar(&o.duration, "duration", 5*time.Second, "duration of each scenario")
	flag.StringVar(&o.out, "out", "BENCHMARKS.md", "report file (rewritten)")
	flag.BoolVar(&o.reuse, "reuse", true, "reuse a database generated earlier at the same scale")
	flag.IntVar(&o.orders, "orders", 4000, "provider-initiated orders to measure per engine, half at --order-rate and half at capacity (capped by the free ports left after the warm-up's)")
	flag.IntVar(&o.warmup, "warmup-orders", 1000, "orders placed at --order-rate before the measured phases, the first the process takes: its cold start, reported as a phase of its own (at most a quarter of the free ports)")
	flag.Float64Var(&o.mixRate, "mix-rate", 100, "mix: writes per second offered open-loop while /me and agent search are measured, half provider-initiated orders and half portal contact changes")
	flag.Float64Var(&o.orderRate, "order-rate", 300, "orders per second offered open-loop in the orders scenario's warm-up and paced phases")
	flag.StringVar(&scenarios, "scenarios", strings.Join(scenarioNames, ","),
		"comma list of scenarios to run: search (agent search, each kind with 1 and 8 clients), me (GET /partner/subscriber/me and the bare ceiling), ops (the operations surface's subscriber search and list, as a platform-wide operator), orders (provider-initiated orders and their provisioning.completed events), mix (/me over many logins and agent search while --mix-rate writes flow), billrun (the monthly bill run over the platform-billed lines, serve stopped), billcrash (the same bill run as serve's job workers run it, serve SIGKILLed once the invoices reach 40% of the platform-billed lines and started again: every line invoiced once, nothing half-written, nothing left), "+
			"storage (the generated database's bytes by table and per subscriber), "+
			"fanout (webhook delivery to --fanout-providers slow receivers, on a database of its own)")
	flag.StringVar(&o.pgDB, "pg-db", "", "PostgreSQL database the harness generates into and measures (default subprov_bench_<subscribers>); "+
		"give your own name when others share the server")
	flag.BoolVar(&o.scratch, "scratch", false, "measure on a throw-away copy of the generated database, so every run's orders find the same "+
		"free ports and no earlier run's webhook backlog (repeatable runs; costs one copy of the database per engine; SQLite's is removed once measured)")
	flag.IntVar(&o.fanProviders, "fanout-providers", 200, "fanout: providers, each with a webhook receiver of its own on loopback")
	flag.Float64Var(&o.fanRate, "fanout-rate", 1000, "fanout: webhook events offered per second in all, round-robin over the providers")
	flag.DurationVar(&o.fanDelay, "fanout-delay", 200*time.Millisecond, "fanout: how long each receiver takes to answer")
	flag.DurationVar(&o.fanDuration, "fanout-duration", 20*time.Second, "fanout: how long each of its two phases offers events")
	flag.Parse()
	o.engines = strings.Split(engines, ",")
	if o.warmup < 0 || o.orders < 0 {
		fmt.Fprintln(os.Stderr, "bench: --orders and --warmup-orders: zero or more")
		os.Exit(2)
	}
	if o.mixRate <= 0 {
		fmt.Fprintln(os.Stderr, "bench: --mix-rate above zero")
		os.Exit(2)
	}
	if o.providers < 1 || o.providers > 999 || o.subscribers < o.providers || o.subscribers%o.providers != 0 {
		fmt.Fprintln(os.Stderr, "bench: --providers between 1 and 999, dividing --subscribers evenly")
		os.Exit(2)
	}
	if o.fanProviders < 1 || o.fanProviders > 999 || o.fanRate <= 0 || o.fanDelay < 0 || o.fanDuration <= 0 {
		fmt.Fprintln(os.Stderr, "bench: --fanout-providers between 1 and 999, --fanout-rate and --fanout-duration above zero, --fanout-delay zero or more")
		os.Exit(2)
	}
	if strings.Trim(o.pgDB, "abcdefghijklmnopqrstuvwxyz0123456789_") != "" {
		fmt.Fprintln(os.Stderr, "bench: --pg-db: lower-case letters, digits and _ only")
		os.Exit(2)
	}
	if scenarios != strings.Join(scenarioNames, ",") {
		o.scenarios = map[string]bool{}
		for _, name := range strings.Split(scenarios, ",") {
			if !slices.Contains(scenarioNames, name) {
				fmt.Fprintf(os.Stderr, "bench: unknown scenario %q (want a comma list of %s)\n", name, strings.Join(scenarioNames, ", "))
				os.Exit(2)
			}
			o.scenarios[name] = true
		}
	}
	if o.pgURL == "" && slices.Contains(o.engines, "postgres") {
		o.pgURL = localPostgresURL(context.Background(), postgresSocketDirs, ping)
	}
	if err := run(context.Background(), o); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// postgresSocketDirs are where a PostgreSQL server on this machine keeps its Unix socket
// (Debian's packages, then the server's built-in default).
var postgresSocketDirs = []string{"/var/run/postgresql", "/tmp"}

// localPostgresURL is the PostgreSQL server on this machine: through its Unix socket in the
// first of dirs where it answers (port 5432; answers asks it), else over TCP loopback. A
// service on the database's host connects through the socket: each statement's round trip
// then skips the TCP stack on both sides, which on two cores is a measurable share of a short
// query's CPU (BENCHMARKS.md). A socket the server refuses (another authentication for local
// connections, say) is passed over.
func localPostgresURL(ctx context.Context, dirs []string, answers func(ctx context.Context, rawURL string) error) string {
	for _, dir := range dirs {
		if !exists(filepath.Join(dir, ".s.PGSQL.5432")) {
			continue
		}
		u := socketURL(dir)
		if err := answers(ctx, u); err != nil {
			logf("PostgreSQL's socket in %s: %v; trying the next way", dir, err)
			continue
		}
		return u
	}
	return tcpLoopbackURL
}

// tcpLoopbackURL is the server's postgres database over TCP on this machine.
const tcpLoopbackURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// socketURL is the server's postgres database through its Unix socket in dir.
func socketURL(dir string) string {
	return "postgres://postgres@/postgres?host=" + url.QueryEscape(dir) + "&sslmode=disable"
}

// ping connects to the server at rawURL and asks it something, within two seconds.
func ping(ctx context.Context, rawURL string) error {
	db, err := openPostgres(rawURL)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// postgresReach says how a PostgreSQL URL reaches its server, for the report: a Unix socket's
// directory or a TCP host, never the credentials.
func postgresReach(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "unparsable URL"
	}
	switch h := u.Query().Get("host"); {
	case strings.HasPrefix(h, "/"):
		return "its Unix socket in " + h
	case h != "":
		return "TCP to " + h
	case u.Host != "":
		return "TCP to " + u.Host
	}
	return "the driver's default host"
}

const secret = "bench-secret-not-for-production"

func run(ctx context.Context, o options) error {
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return err
	}
	bin := filepath.Join(o.dir, "subprov")
	logf("building subprov")
	if out, err := exec.Command("go", "build", "-o", bin, "./cmd/subprov").CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out)
	}
	rep := &report{opts: o, started: time.Now()}
	ceiling, err := startBare()
	if err != nil {
		return err
	}
	defer ceiling.Close()
	for _, engine := range o.engines {
		if engine == "postgres" {
			if err := ping(ctx, o.pgURL); err != nil {
				logf("postgres skipped: %v", err)
				rep.notes = append(rep.notes, fmt.Sprintf("PostgreSQL skipped: %v", err))
				continue
			}
		}
		res := &engineResult{engine: engine}
		if o.atScale() {
			var err error
			if res, err = measureAtScale(ctx, o, bin, engine, ceiling.url); errors.Is(err, errSkipped) {
				rep.notes = append(rep.notes, fmt.Sprintf("PostgreSQL skipped: %v", err))
				continue
			} else if err != nil {
				return err
			}
		}
		if o.runs("fanout") {
			var err error
			logf("%s: fan-out", engine)
			if res.fanout, err = fanOut(ctx, o, bin, engine); err != nil {
				return fmt.Errorf("%s: fan-out: %w", engine, err)
			}
		}
		rep.engines = append(rep.engines, res)
	}
	if err := rep.write(o.out); err != nil {
		return err
	}
	logf("wrote %s", o.out)
	// No timing assertion, but a scenario whose requests failed is a broken service.
	for _, e := range rep.engines {
		for _, s := range e.scenarios {
			if s.errors > 0 || s.requests == 0 {
				return fmt.Errorf("%s: %s: %d of %d requests failed", e.engine, s.name, s.errors, s.requests)
			}
		}
	}
	return nil
}

// errSkipped: the engine could not be reached and is left out of the report.
var errSkipped = errors.New("skipped")

// measureAtScale runs the scenarios on the generated database: search, /me and orders with
// serve running, then the bill run.
func measureAtScale(ctx context.Context, o options, bin, engine, ceilingURL string) (*engineResult, error) {
	dbURL, genTime, err := prepare(ctx, o, bin, engine)
	if err != nil {
		if engine == "postgres" {
			logf("postgres skipped: %v", err)
			return nil, fmt.Errorf("%w: %v", errSkipped, err)
		}
		return nil, err
	}
	var use *storageUse
	if o.runs("storage") {
		logf("%s: storage", engine)
		if use, err = measureStorage(ctx, dbURL); err != nil {
			return nil, fmt.Errorf("%s: storage: %w", engine, err)
		}
	}
	if o.scratch {
		if dbURL, err = scratchCopy(ctx, o, engine, dbURL); err != nil {
			return nil, fmt.Errorf("%s: scratch copy: %w", engine, err)
		}
	}
	res := &engineResult{engine: engine}
	if o.serves() {
		if res, err = measure(ctx, o, bin, engine, dbURL, ceilingURL); err != nil {
			return nil, fmt.Errorf("%s: %w", engine, err)
		}
	}
	res.genTime, res.storage = genTime, use
	if o.runs("billrun") {
		logf("%s: bill run", engine)
		if res.bill, err = billRun(ctx, dbURL, o.providers); err != nil {
			return nil, fmt.Errorf("%s: bill run: %w", engine, err)
		}
		logf("%s: bill run: %d lines in %s", engine, res.bill.lines, res.bill.elapsed)
	}
	if o.runs("billcrash") {
		logf("%s: bill run with a crash", engine)
		crash, err := billCrash(ctx, o, bin, engine, dbURL)
		if err != nil {
			return nil, fmt.Errorf("%s: bill run with a crash: %w", engine, err)
		}
		if res.bill.lines > 0 && crash.lines != res.bill.lines {
			return nil, fmt.Errorf("%s: the bill run with a crash issued %d invoices, the run without one %d", engine, crash.lines, res.bill.lines)
		}
		res.crash = &crash
		logf("%s: bill run with a crash: %d lines, %d at the kill after %s, the rest %s after the restart", engine,
			res.crash.lines, res.crash.atKill, res.crash.toKill.Round(time.Millisecond), res.crash.recovery.Round(time.Millisecond))
	}
	if o.scratch && engine == "sqlite" {
		// The copy is spent. Its pages would otherwise stay in the page cache, and on a
		// machine without room for both engines' databases and their copies they crowd
		// out PostgreSQL's, whose measured run then reads from the disk.
		removeSQLite(strings.TrimPrefix(dbURL, "sqlite://"))
	}
	return res, nil
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

// prepare returns the URL of a database holding the generated data, generating it unless a
// run at the same scale left one (genTime is then zero).
func prepare(ctx context.Context, o options, bin, engine string) (dbURL string, genTime time.Duration, err error) {
	// The marker names gen's data version: data from an older generator is generated again.
	marker := filepath.Join(o.dir, fmt.Sprintf("%s-%s-gen%d.ok", engine, o.scale(), gen.Version))
	switch engine {
	case "sqlite":
		path := filepath.Join(o.dir, fmt.Sprintf("gen-%s.db", o.scale()))
		dbURL = "sqlite://" + path
		if o.reuse && exists(marker) {
			return dbURL, generatedIn(marker), migrate(ctx, bin, engine, dbURL)
		}
		removeSQLite(path)
	case "postgres":
		name := "subprov_bench_" + o.scale()
		if o.pgDB != "" {
			name = o.pgDB
			marker = filepath.Join(o.dir, fmt.Sprintf("%s-%s-%s-gen%d.ok", engine, name, o.scale(), gen.Version))
		}
		if dbURL, err = withDatabase(o.pgURL, name); err != nil {
			return "", 0, err
		}
		if o.reuse && exists(marker) {
			return dbURL, generatedIn(marker), migrate(ctx, bin, engine, dbURL)
		}
		if _, err := createPostgres(ctx, o.pgURL, name); err != nil {
			return "", 0, err
		}
	default:
		return "", 0, fmt.Errorf("unknown engine %q", engine)
	}
	os.Remove(marker)
	logf("%s: generating %d subscribers over %d providers", engine, o.subscribers, o.providers)
	cmd := subprovCmd(ctx, bin, dbURL, "gen", "--providers", strconv.Itoa(o.providers), "--subscribers", strconv.Itoa(o.perProvider()))
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return "", 0, fmt.Errorf("gen: %w", err)
	}
	genTime = time.Since(start)
	return dbURL, genTime, os.WriteFile(marker, []byte(genTime.String()), 0o644)
}

// createPostgres creates the database name, empty, on the server at serverURL (dropping one of
// that name first) and returns its URL.
func createPostgres(ctx context.Context, serverURL, name string) (string, error) {
	if err := dropPostgres(ctx, serverURL, name); err != nil {
		return "", err
	}
	admin, err := openPostgres(serverURL)
	if err != nil {
		return "", err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return "", err
	}
	return withDatabase(serverURL, name)
}

// dropPostgres drops the database name on the server at serverURL, if there is one, ending
// its sessions.
func dropPostgres(ctx context.Context, serverURL, name string) error {
	admin, err := openPostgres(serverURL)
	if err != nil {
		return err
	}
	defer admin.Close()
	_, err = admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	return err
}

// migrate brings a reused database to this build's schema before it is copied and measured,
// so that serve's start (the ready target) measures a database that is up to date, as a
// deployment's is after its upgrade, and not the one-time migration.
func migrate(ctx context.Context, bin, engine, dbURL string) error {
	if out, err := subprovCmd(ctx, bin, dbURL, "migrate").CombinedOutput(); err != nil {
		return fmt.Errorf("%s: migrate the reused database: %w\n%s", engine, err, out)
	}
	return nil
}

// subprovCmd is a subprov command (gen, migrate) on the database at dbURL, logging JSON.
func subprovCmd(ctx context.Context, bin, dbURL string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL, "SUBPROV_LOG_FORMAT=json")
	return cmd
}

// openPostgres opens a database/sql handle on a PostgreSQL URL, which may carry pool_max_conns
// and read_pool_max_conns for serve (store.DriverURL takes them out for the driver).
func openPostgres(rawURL string) (*sql.DB, error) {
	u, err := store.DriverURL(rawURL)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("pgx", u)
	if err != nil {
		return nil, fmt.Errorf("open postgres: %w", err)
	}
	return db, nil
}

// scratchCopy copies the generated database (SQLite: its files; PostgreSQL: CREATE DATABASE
// … TEMPLATE) to <name>_scratch and returns the copy's URL.
func scratchCopy(ctx context.Context, o options, engine, dbURL string) (string, error) {
	logf("%s: copying the generated database", engine)
	if engine == "sqlite" {
		src := strings.TrimPrefix(dbURL, "sqlite://")
		dst := strings.TrimSuffix(src, ".db") + "-scratch.db"
		removeSQLite(dst)
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if !exists(src + suffix) {
				continue
			}
			if err := copyFile(src+suffix, dst+suffix); err != nil {
				return "", err
			}
		}
		flushDisk()
		return "sqlite://" + dst, nil
	}
	u, err := url.Parse(dbURL)
	if err != nil {
		return "", err
	}
	name := strings.TrimPrefix(u.Path, "/")
	admin, err := openPostgres(o.pgURL)
	if err != nil {
		return "", err
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+"_scratch WITH (FORCE)"); err != nil {
		return "", err
	}
	// FILE_COPY (PostgreSQL 15+) copies the files; the default, WAL_LOG, would write the
	// whole database through the write-ahead log the measured commits then queue behind.
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+"_scratch TEMPLATE "+name+" STRATEGY FILE_COPY"); err != nil {
		if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name+"_scratch TEMPLATE "+name); err != nil {
			return "", err
		}
	}
	if _, err := admin.ExecContext(ctx, "CHECKPOINT"); err != nil {
		logf("CHECKPOINT: %v (measuring anyway)", err)
	}
	flushDisk()
	return withDatabase(dbURL, name+"_scratch")
}

// withDatabase is a PostgreSQL URL naming database name on the same server, reached the same
// way (a socket's host parameter and the other options are kept).
func withDatabase(rawURL, name string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil { // url.Parse's error quotes the URL, password included
		return "", errors.New("postgres URL: not a valid URL")
	}
	u.Path = "/" + name
	return u.String(), nil
}

// removeSQLite removes a SQLite database's files, and the lock file its service's sweeps take
// beside it.
func removeSQLite(path string) {
	for _, suffix := range []string{"", "-wal", "-shm", "-sweeps.lock"} {
		os.Remove(path + suffix)
	}
}

// flushDisk writes the copy's dirty pages out before measuring: left to the kernel, gigabytes
// of write-back would run under the scenarios and slow every commit's sync.
func flushDisk() {
	start := time.Now()
	syscall.Sync()
	logf("flushed the copy to disk in %s", time.Since(start).Round(100*time.Millisecond))
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// generatedIn is how long the reused database took to generate, as its marker recorded.
func generatedIn(marker string) time.Duration {
	b, _ := os.ReadFile(marker)
	d, _ := time.ParseDuration(strings.TrimSpace(string(b)))
	return d
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// server is a running subprov serve.
type server struct {
	cmd  *exec.Cmd
	base string
	done chan struct{} // closed once the process has exited
}

func startServe(ctx context.Context, o options, bin, engine, dbURL string) (*server, time.Duration, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, 0, err
	}
	addr := ln.Addr().String()
	ln.Close()
	logFile, err := os.Create(filepath.Join(o.dir, engine+"-serve.log"))
	if err != nil {
		return nil, 0, err
	}
	cmd := exec.CommandContext(ctx, bin, "serve", "--addr", addr)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL, "SUBPROV_SECRET="+secret, "SUBPROV_RATE_LIMITS=0", "SUBPROV_LOG_FORMAT=json")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, err
	}
	s := &server{cmd: cmd, base: "http://" + addr, done: make(chan struct{})}
	go func() { cmd.Wait(); close(s.done) }() //nolint:errcheck
	for time.Since(start) < 60*time.Second && !s.exited() {
		res, err := http.Get(s.base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return s, time.Since(start), nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	if s.exited() {
		return nil, 0, fmt.Errorf("serve exited before it was ready (see %s)", logFile.Name())
	}
	s.stop()
	return nil, 0, fmt.Errorf("serve not ready after 60s (see %s)", logFile.Name())
}

// exited reports whether serve's process has exited.
func (s *server) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

// kill SIGKILLs serve, as a crash would, and waits for it to be gone.
func (s *server) kill() {
	s.cmd.Process.Kill() //nolint:errcheck
	<-s.done
}

func (s *server) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck
	select {
	case <-s.done:
	case <-time.After(10 * time.Second):
		s.kill()
	}
}

// sampleRSS records pid's largest RSS into max every interval until the returned function is
// called.
func sampleRSS(pid int, every time.Duration, max *atomic.Int64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			if kb := rssKB(pid); kb > max.Load() {
				max.Store(kb)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// rssKB is the resident set size of pid, from /proc.
func rssKB(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			n, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return n
		}
	}
	return 0
}

// bare is the ceiling: a net/http handler answering a small JSON document.
type bare struct {
	srv *http.Server
	url string
}

func startBare() (*bare, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	b := &bare{url: "http://" + ln.Addr().String() + "/"}
	b.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"s1000000-0000-4000-8000-000000000001","email":"marie.tremblay@example.ca","status":"ACTIVE"}`) //nolint:errcheck
	})}
	go b.srv.Serve(ln) //nolint:errcheck
	return b, nil
}

func (b *bare) Close() { b.srv.Close() }

// result is one scenario's figures.
type result struct {
	name     string
	clients  int
	requests int64
	errors   int64
	elapsed  time.Duration
	p50, p99 time.Duration
	wrkRPS   float64   // 0 when wrk is not installed
	offered  float64   // requests per second offered open-loop; 0: closed loop from clients
	started  time.Time // when the first request was sent
}

func (r result) rps() float64 { return float64(r.requests) / r.elapsed.Seconds() }

// loadClient is a load's HTTP client on loopback, with at most maxConns connections; close
// releases them.
func loadClient(maxConns int) (c *http.Client, close func()) {
	tr := &http.Transport{MaxIdleConnsPerHost: maxConns, MaxConnsPerHost: maxConns}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}, tr.CloseIdleConnections
}

// errorCount counts a load's failed requests and logs the first.
type errorCount struct{ n atomic.Int64 }

func (e *errorCount) note(err error) {
	if err != nil && e.n.Add(1) == 1 {
		logf("first error: %v", err)
	}
}

// summary is the result of the requests recorded in h, sent from start on.
func (h *hist) summary(start time.Time, errs *errorCount) result {
	return result{requests: h.n, errors: errs.n.Load(), started: start, elapsed: time.Since(start), p50: h.quantile(0.5), p99: h.quantile(0.99)}
}

// load runs do from clients goroutines for d (or until do reports it has nothing left).
func load(clients int, d time.Duration, do func(c *http.Client, i int64) (bool, error)) result {
	client, closeClient := loadClient(clients * 2)
	defer closeClient()
	var seq atomic.Int64
	var errs errorCount
	hists := make([]*hist, clients)
	deadline := time.Now().Add(d)
	start := time.Now()
	var wg sync.WaitGroup
	for c := 0; c < clients; c++ {
		hists[c] = newHist()
		wg.Add(1)
		go func(h *hist) {
			defer wg.Done()
			for time.Now().Before(deadline) {
				t0 := time.Now()
				more, err := do(client, seq.Add(1)-1)
				if !more {
					return
				}
				h.record(time.Since(t0))
				errs.note(err)
			}
		}(hists[c])
	}
	wg.Wait()
	all := newHist()
	for _, h := range hists {
		all.merge(h)
	}
	r := all.summary(start, &errs)
	r.clients = clients
	return r
}

// get is one GET expecting 200, the body read and dropped.
func get(c *http.Client, u string, header http.Header) error {
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return err
	}
	req.Header = header
	_, err = send(c, req)
	return err
}

// send sends req and returns its answer's body, with an error unless the status is 200.
func send(c *http.Client, req *http.Request) ([]byte, error) {
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		return body, fmt.Errorf("%s %s: %d %s", req.Method, req.URL, res.StatusCode, body)
	}
	return body, nil
}

// wrk runs wrk against u when it is installed and returns its requests per second.
func wrk(u string, header http.Header, d time.Duration) float64 {
	path, err := exec.LookPath("wrk")
	if err != nil {
		return 0
	}
	args := []string{"-t2", "-c16", "-d" + strconv.Itoa(max(1, int(d.Seconds()))) + "s"}
	for k, vs := range header {
		for _, v := range vs {
			args = append(args, "-H", k+": "+v)
		}
	}
	out, err := exec.Command(path, append(args, u)...).Output()
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "Requests/sec:" {
			v, _ := strconv.ParseFloat(f[1], 64)
			return v
		}
	}
	return 0
}

// subscriberToken mints a portal JWT for generated login n, as the service's login would.
func subscriberToken(n int) (string, error) {
	return identity.NewSigner(secret).Issue(identity.AudienceSubscriber, gen.AccountID(1, n), gen.ProviderID(1), gen.AccountID(1, n),
		time.Now(), time.Hour)
}
