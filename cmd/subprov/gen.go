package main

import (
	"context"
	"fmt"
	"io"

	"github.com/subprov/subprov/gen"
)

const genAbout = `Fills DATABASE_URL (SQLite or PostgreSQL; migrated first) with deterministic, realistic data for
benchmarks and load tests: per provider, buildings of 120 suites (every fifth one first-line with a
sim switch port per suite), plans, subscribers with Canadian names, e-mails, phones and addresses
(every eleventh suite stays vacant for new orders), one line each in every status, invoice history
for platform-billed lines, a portal login for every tenth subscriber and the agent search index.
The same seed on the same day gives the same data. Run it on an empty database.

Generated credentials (provider N = 1, 2, …):
  provider id      9e000000-0000-4000-8000-00000000000N
  agent API key    genNNN_live_agent_bench_key_0000000001
  portal logins    subscribers 0, 10, 20, …: their e-mail (see the subscribers table) / ` + gen.Password + `

SQLite is tuned (no journal, no fsync) only while gen runs; secondary indexes are built at the end.`

func cmdGen(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := newFlags("gen", "gen [--subscribers N] [--providers N] [--seed N] [--quiet]", genAbout)
	subscribers := fs.Int("subscribers", 1_000_000, "subscribers per provider")
	providers := fs.Int("providers", 1, "number of providers")
	seed := fs.Uint64("seed", 1, "random seed: the same seed gives the same data")
	quiet := fs.Bool("quiet", false, "no progress on stderr (a bar on a terminal, a line every tenth or 5 s elsewhere)")
	if done, err := parse(fs, args, stdout, stderr); done {
		return err
	}
	if *subscribers < 1 || *providers < 1 || *providers > 999 {
		fmt.Fprintln(stderr, "subprov gen: --subscribers must be at least 1 and --providers between 1 and 999")
		return errUsage
	}
	st, err := migratedStore(ctx, getenv, stderr)
	if err != nil {
		return err
	}
	defer st.Close()
	opts := gen.Options{Subscribers: *subscribers, Providers: *providers, Seed: *seed, Now: nowUTC()}
	if !*quiet {
		opts.Progress = stderr
	}
	sum, err := gen.Run(ctx, st, opts)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "generated %s\n", sum)
	return nil
}
