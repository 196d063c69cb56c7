package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/subprov/subprov/app"
	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

// errUsage means the command line was wrong and the problem and the usage were already
// printed on stderr: the process exits with exitUsage.
var errUsage = errors.New("usage")

// Exit statuses, by the usual convention: 2 for a command line that is wrong, 1 for a command
// that failed while running.
const (
	exitFailure = 1
	exitUsage   = 2
)

// exitCode is the process's exit status for run's result.
func exitCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		return exitUsage
	}
	return exitFailure
}

const exitHelp = "Exit status: 0 on success, 1 when the command fails, 2 on a usage error (unknown command or\n" +
	"flag, missing or extra arguments; the problem and the usage are printed on stderr).\n"

const usage = `subprov provisions and bills internet subscriptions on a provider's building network
(switch port, VLAN, bandwidth, MAC binding) and serves the subscriber portal, the AI support
agent, marketplace checkout and the provider's storefront over HTTP.

Usage:
  subprov <command> [flags]

Commands:
  demo        run with demo data on ./data/demo.db, dev mode on, and print credentials and curl lines
  serve       run the HTTP server and the job workers (--no-workers: HTTP only)
  worker      run only the job workers (scale-out: N 'serve --no-workers' + M 'worker')
  migrate     apply database migrations and exit (serve also applies them at start); --dry-run lists them
  seed FILE   load a fixture file (JSON, docs/fixtures.md): creates missing rows, never changes one;
              --update overwrites and prints every change (never a password its owner set)
  mcp         serve the support-agent tools over MCP on stdio (--api-key or SUBPROV_AGENT_API_KEY)
  gen         fill the database with deterministic test data at scale (default 1,000,000 subscribers)
  operator    add EMAIL --role ROLE [--provider ID]: create or update an operator, the password read
              from standard input (a fresh database's first admin); list: print every operator
  switches    rekey: seal every switch password anew under SUBPROV_SECRET (a secret rotation)
  reconcile   [--switch NAME] [--fix]: read every port, compare it with its lines, print a table;
              --fix converges the drifted ports back
  sample      [--switch NAME]: read the counters of every port lines hold, record them, print a table
  backup FILE write a consistent copy of the SQLite database into the new file FILE while serving
  restore FILE
              install a backup as the SQLite database, only where there is none yet

Run 'subprov <command> --help' for a command's flags.

` + exitHelp

// run is the whole program: main only supplies the process's context, arguments,
// environment and output streams, so tests run it in-process.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, "subprov: no command\n\n"+usage)
		return errUsage
	}
	if args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stdout, usage)
		fmt.Fprint(stdout, "\n"+envHelp())
		return nil
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return cmdServe(ctx, rest, getenv, stdout, stderr, false)
	case "worker":
		return cmdServe(ctx, rest, getenv, stdout, stderr, true)
	case "migrate":
		return cmdMigrate(ctx, rest, getenv, stdout, stderr)
	case "seed":
		return cmdSeed(ctx, rest, getenv, stdout, stderr)
	case "demo":
		return cmdDemo(ctx, rest, getenv, stdout, stderr)
	case "mcp":
		return cmdMCP(ctx, rest, getenv, stdout, stderr)
	case "gen":
		return cmdGen(ctx, rest, getenv, stdout, stderr)
	case "operator":
		return cmdOperator(ctx, rest, getenv, stdout, stderr)
	case "reconcile":
		return cmdReconcile(ctx, rest, getenv, stdout, stderr)
	case "sample":
		return cmdSample(ctx, rest, getenv, stdout, stderr)
	case "switches":
		return cmdSwitches(ctx, rest, getenv, stdout, stderr)
	case "backup":
		return cmdBackup(ctx, rest, getenv, stdout, stderr)
	case "restore":
		return cmdRestore(ctx, rest, getenv, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "subprov: unknown command %q\n\n%s", cmd, usage)
		return errUsage
	}
}

// envHelp renders the configuration table for --help.
func envHelp() string {
	var b strings.Builder
	b.WriteString("Configuration (environment variables):\n")
	tw := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	for _, v := range config.Vars {
		def := v.Default
		if def == "" {
			def = "(unset)"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", v.Name, def, v.Meaning)
	}
	tw.Flush()
	return b.String()
}

// newFlags builds a subcommand's flag set whose usage explains the command, its exit status
// and its config. The usage goes to the flag set's output, which parse points at stdout for
// --help and at stderr for a usage error.
func newFlags(name, synopsis, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "Usage: subprov %s\n\n%s\n", synopsis, about)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(w, "\nFlags:")
			fs.PrintDefaults()
		}
		fmt.Fprint(w, "\n"+exitHelp+"\n"+envHelp())
	}
	return fs
}

// parse parses a command's flags and expects exactly the operands named (seed's FILE; none
// for the others) after them. --help prints the usage on stdout and ends the command
// successfully. A bad flag, a missing operand or an extra one prints the problem and the usage
// on stderr and is errUsage: a stray argument is refused, not ignored.
func parse(fs *flag.FlagSet, args []string, stdout, stderr io.Writer, operands ...string) (done bool, err error) {
	fs.SetOutput(io.Discard) // the flag package's own report: made below, once, on stderr
	err = fs.Parse(args)
	var problem string
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stdout)
		fs.Usage()
		return true, nil
	case err != nil:
		problem = err.Error()
	case fs.NArg() < len(operands):
		problem = "missing " + operands[fs.NArg()]
	case fs.NArg() > len(operands):
		problem = fmt.Sprintf("unexpected argument %q", fs.Arg(len(operands)))
	default:
		return false, nil
	}
	fmt.Fprintf(stderr, "subprov %s: %s\n\n", fs.Name(), problem)
	fs.SetOutput(stderr)
	fs.Usage()
	return true, errUsage
}

func loadConfig(getenv func(string) string, stderr io.Writer) (config.Config, *slog.Logger, error) {
	term := false
	if f, ok := stderr.(*os.File); ok {
		term = config.IsTerminal(f)
	}
	cfg, err := config.FromEnv(getenv, term)
	if err != nil {
		return cfg, nil, err
	}
	return cfg, newLogger(cfg.LogFormat, stderr), nil
}

func newLogger(format string, w io.Writer) *slog.Logger {
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func cmdServe(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer, workerOnly bool) error {
	name, synopsis := "serve", "serve [--no-workers] [--addr HOST:PORT]"
	about := "Runs the HTTP API and the background job workers in one process. Migrations are applied at start.\n" +
		"For scale-out run N 'serve --no-workers' replicas behind a load balancer and M 'worker' processes."
	if workerOnly {
		name, synopsis, about = "worker", "worker", "Runs only the background job workers (mail, provisioning, webhooks, billing)."
	}
	fs := newFlags(name, synopsis, about)
	// worker takes neither flag: it listens on nothing and is nothing but workers.
	noWorkers, addr := new(bool), new(string)
	if !workerOnly {
		fs.BoolVar(noWorkers, "no-workers", false, "serve HTTP only; jobs are worked by 'subprov worker' processes")
		fs.StringVar(addr, "addr", "", "listen address (overrides SUBPROV_ADDR)")
	}
	if done, err := parse(fs, args, stdout, stderr); done {
		return err
	}
	cfg, log, err := loadConfig(getenv, stderr)
	if err != nil {
		return err
	}
	if *addr != "" {
		cfg.Addr = *addr
	}
	cfg.Workers = !*noWorkers
	gogc := setGCPercent(getenv)
	a, err := app.New(ctx, cfg, log)
	if err != nil {
		return err
	}
	var ln net.Listener
	if !workerOnly {
		ln, err = net.Listen("tcp", cfg.Addr)
		if err != nil {
			a.Close()
			return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
		}
		log.Info("subprov listening", "url", "http://"+ln.Addr().String(), "database", redactedDB(a.Store), "workers", cfg.Workers, "dev", cfg.Dev, "gogc", gogc)
	} else {
		log.Info("subprov worker running", "database", redactedDB(a.Store), "worker_id", jobs.WorkerID(), "gogc", gogc)
	}
	return a.Serve(ctx, ln)
}

// serverGCPercent is the garbage collector's target for the server commands (serve, worker,
// demo) when GOGC is unset or empty: the heap may grow to three times what is live between two
// collections instead of Go's default of twice: a little more resident memory for less of the
// CPU a request spends collecting (docs/performance.md, Garbage collection).
const serverGCPercent = 200

// setGCPercent applies serverGCPercent unless GOGC is set (the runtime has applied it
// already) and returns the setting in effect, for the start-up log line.
func setGCPercent(getenv func(string) string) string {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(serverGCPercent)
	}
	return gcPercentInEffect()
}

// gcPercentInEffect is the collector's target as the runtime holds it: "off", or a percent.
func gcPercentInEffect() string {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return "unknown"
	}
	p := int64(s[0].Value.Uint64())
	if p < 0 {
		return "off"
	}
	return strconv.FormatInt(p, 10)
}

func redactedDB(s *store.Store) string { return s.Dialect.String() }

func cmdMigrate(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("migrate", "migrate [--dry-run]",
		"Applies every pending schema and job-queue migration to DATABASE_URL and exits ('serve' and\n"+
			"'worker' apply them too when they start). It prints the migrations it applies: version, name\n"+
			"and compatible-with, the oldest subprov (named by the latest migration it knows) that still\n"+
			"works on the schema after the migration.\n\n"+
			"Upgrades without downtime: every migration keeps the schema usable by the release before it\n"+
			"(columns and tables are added and backfilled; the old ones are dropped only in a later release),\n"+
			"so the processes of the old release keep serving while they are replaced one by one:\n\n"+
			"  subprov migrate --dry-run   # the new release's binary: what it would apply, applying nothing\n"+
			"  subprov migrate             # apply; then restart the serve and worker processes on the new binary\n\n"+
			"A subprov started on a schema migrated by a newer release runs when every migration it does not\n"+
			"know is compatible with it, and refuses to start (this command too) when one needs a newer\n"+
			"subprov, naming the release to upgrade to. See docs/operations.md, Upgrades.")
	dryRun := fs.Bool("dry-run", false, "list the pending migrations and apply none")
	if done, err := parse(fs, args, stdout, stderr); done {
		return err
	}
	cfg, log, err := loadConfig(getenv, stderr)
	if err != nil {
		return err
	}
	plan, err := app.PlanMigrations(ctx, cfg)
	if err != nil {
		return err
	}
	printPlan(stdout, plan, *dryRun)
	if *dryRun {
		return nil
	}
	if err := app.Migrate(ctx, cfg, log); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "database is at schema version %d\n", max(plan.State.Version, store.LatestVersion()))
	return nil
}

// printPlan lists the migrations migrate applies (or, in a dry run, would apply) and the
// schema's version as it is.
func printPlan(w io.Writer, p app.Plan, dryRun bool) {
	verb := "applying"
	if dryRun {
		verb = "would apply (dry run, nothing applied)"
	}
	fmt.Fprintf(w, "database at schema version %d", p.State.Version)
	if p.State.Version > store.LatestVersion() {
		fmt.Fprintf(w, ", newer than this subprov's %d and compatible with it (compatible-with %d)", store.LatestVersion(), p.State.CompatibleWith)
	}
	fmt.Fprintln(w)
	if len(p.Schema) == 0 && len(p.JobQueue) == 0 {
		fmt.Fprintln(w, "no pending migrations")
		return
	}
	if len(p.Schema) > 0 {
		fmt.Fprintf(w, "%s %d schema migration(s):\n", verb, len(p.Schema))
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "  VERSION\tNAME\tCOMPATIBLE-WITH")
		for _, m := range p.Schema {
			fmt.Fprintf(tw, "  %d\t%s\t%d\n", m.Version, m.Name, m.CompatibleWith)
		}
		tw.Flush()
	}
	if len(p.JobQueue) > 0 {
		fmt.Fprintf(w, "%s %d job-queue migration(s): %s\n", verb, len(p.JobQueue), strings.Join(p.JobQueue, ", "))
	}
}

// sealedStore opens DATABASE_URL after applying every migration, with the sealer of the
// service whose database it is: its secret (SUBPROV_SECRET, or the one stored at its first
// start) and SUBPROV_SECRET_PREVIOUS.
func sealedStore(ctx context.Context, getenv func(string) string, stderr io.Writer) (*store.Store, *identity.Sealer, error) {
	st, err := migratedStore(ctx, getenv, stderr)
	if err != nil {
		return nil, nil, err
	}
	cfg, _, err := loadConfig(getenv, stderr)
	if err == nil {
		var sealer *identity.Sealer
		if sealer, err = app.Sealer(ctx, cfg, st); err == nil {
			return st, sealer, nil
		}
	}
	st.Close()
	return nil, nil, err
}

// migratedStore opens DATABASE_URL after applying every migration (seed and gen write to it
// directly, without the service).
func migratedStore(ctx context.Context, getenv func(string) string, stderr io.Writer) (*store.Store, error) {
	cfg, log, err := loadConfig(getenv, stderr)
	if err != nil {
		return nil, err
	}
	if err := app.Migrate(ctx, cfg, log); err != nil {
		return nil, err
	}
	return store.Open(ctx, cfg.DatabaseURL)
}

func cmdSeed(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("seed", "seed [--update] FILE", "Loads a fixture file into DATABASE_URL (migrating first), in one transaction. Rows that are\n"+
		"not in the database yet are created; a row that is already there (by its id, or its e-mail, key,\n"+
		"switch and port) is left exactly as it is, whatever the API changed in it since. Loading twice\n"+
		"changes nothing. Unknown keys and bad values are reported by path and nothing is written.\n"+
		"Every message about the file starts with its name as given (FILE: …).\n\n"+
		"--update also overwrites the rows already there with the file's values and prints, row by\n"+
		"row, every field it changed (old -> new; secrets only as changed). It never changes a password\n"+
		"a login's owner set (by a reset or activation link or a password change): those are listed as\n"+
		"left as they were.")
	update := fs.Bool("update", false, "overwrite rows already there with the file's values and print every field changed")
	if done, err := parse(fs, args, stdout, stderr, "FILE"); done {
		return err
	}
	file := fs.Arg(0)
	st, sealer, err := sealedStore(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	sum, err := fixture.LoadFileWith(ctx, st, file, nowUTC(), fixture.Options{Update: *update, Sealer: sealer})
	if err != nil {
		return err
	}
	if *update {
		if len(sum.Changes) == 0 {
			fmt.Fprintf(stdout, "%s: nothing to change\n", file)
		} else {
			fmt.Fprintf(stdout, "%s: changed:\n", file)
			printChanges(stdout, sum.Changes)
		}
		if len(sum.Notes) > 0 {
			fmt.Fprintf(stdout, "%s: left as they were:\n", file)
			printChanges(stdout, sum.Notes)
		}
	}
	fmt.Fprintf(stdout, "%s: loaded %s\n", file, sum)
	return nil
}

// printChanges lists changes row by row: the row once, then each of its changes indented.
func printChanges(w io.Writer, changes []fixture.Change) {
	row := ""
	for _, c := range changes {
		if c.Row != row {
			row = c.Row
			fmt.Fprintf(w, "  %s\n", row)
		}
		fmt.Fprintf(w, "    %s\n", c.What())
	}
}
