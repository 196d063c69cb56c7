package jobs

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivershared/baseservice"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivertype"

	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/store"
)

// What the service relies on of River beyond its public client API, in one place: the driver
// plugin hooks the commit wake-up rides on (wake.go), the driver's executor that counts jobs
// and checks the schema, the names of River's tables and columns that tests and the
// benchmarks read, and the way its database/sql driver passes array parameters, which the
// store's PostgreSQL sessions encode directly (store/pgarrays.go). TestRiverInternals fails
// when a River upgrade changes any of them.

// riverVerified is the River release these internals were checked against. The
// database/sql driver's array parameters are lib/pq arrays (pq.Array of []string, []int64,
// []int32, []bool, [][]byte, []time.Time and []int16) in this release; a River upgrade must
// check that again, then move this version.
const riverVerified = "v0.31.0"

// River's own tables and the columns of its job table read outside River (tests, benchmarks).
const (
	jobTable    = "river_job"
	leaderTable = "river_leader"
)

var jobColumns = []string{"id", "kind", "state", "args", "queue", "attempt", "created_at", "attempted_at", "scheduled_at"}

// driverOn is River's driver for the engine of s, on db.
func driverOn(s *store.Store, db *sql.DB) riverdriver.Driver[*sql.Tx] {
	if s.Dialect == store.Postgres {
		return riverdatabasesql.New(db)
	}
	return riversqlite.New(db)
}

// driverFor is River's driver on the store's write pool, which River takes turns on with the
// store's own writes (on SQLite, the group committer's).
func driverFor(s *store.Store) riverdriver.Driver[*sql.Tx] { return driverOn(s, rawdb.Writer(s)) }

// reads is River's executor on the read pool: its own statements, for reads that change
// nothing.
func reads(s *store.Store) riverdriver.Executor { return driverOn(s, rawdb.Reader(s)).GetExecutor() }

// jobTableExists reports whether River's job table is migrated.
func jobTableExists(ctx context.Context, s *store.Store) (bool, error) {
	return reads(s).TableExists(ctx, &riverdriver.TableExistsParams{Table: jobTable})
}

// countJobs counts the jobs in each state River knows (a state without jobs counts 0).
func countJobs(ctx context.Context, s *store.Store) (map[string]int, error) {
	byState, err := reads(s).JobCountByAllStates(ctx, &riverdriver.JobCountByAllStatesParams{})
	if err != nil {
		return nil, fmt.Errorf("count jobs: %w", err)
	}
	out := make(map[string]int, len(byState))
	for st, n := range byState {
		out[string(st)] = n
	}
	return out, nil
}

// wakeDriver is the real driver plus the plugin methods River asks a driver for: the hook
// that hands it the pilot, whose NotifyNonTxJobInsert wake uses.
type wakeDriver struct {
	riverdriver.Driver[*sql.Tx]
	pilot *wakePilot
}

// SupportsListenNotify is false: no client of these drivers can LISTEN, so River's NOTIFY on
// every insert burst (riverdatabasesql) reaches nobody, and PostgreSQL serialises the commits
// that carry one on its notification queue lock.
func (d *wakeDriver) SupportsListenNotify() bool { return false }

func (d *wakeDriver) PluginInit(*baseservice.Archetype) {}

func (d *wakeDriver) PluginPilot() riverpilot.Pilot { return d.pilot }

// wakePilot is River's standard pilot, keeping the fetch trigger River initialises it with.
type wakePilot struct {
	riverpilot.StandardPilot
	notify func(ctx context.Context, res []*rivertype.JobInsertResult)
}

func (p *wakePilot) PilotInit(a *baseservice.Archetype, params *riverpilot.PilotInitParams) {
	p.StandardPilot.PilotInit(a, params)
	p.notify = params.NotifyNonTxJobInsert
}

// AfterKill lets the job queue carry on at once after every process working it was killed: each
// running job is dated back past the rescue window, so that the next process's rescuer hands it
// out again at its first pass, and the dead leader's lease is dropped. It returns how many jobs
// were running. Only for a database whose workers are all known dead (crash tests, the load
// harness): a live worker's running job would be worked twice.
//
// On PostgreSQL a statement the killed process sent just before it died, at killedAt, still
// runs to its end on the server (a fetch that marks jobs running for it, a commit): AfterKill
// first waits, up to ten seconds, until no statement of the database that began before
// killedAt is still running.
func AfterKill(ctx context.Context, s *store.Store, killedAt time.Time) (running int64, err error) {
	if s.Dialect == store.Postgres {
		const others = `SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()
			AND backend_type = 'client backend' AND state = 'active' AND pid <> pg_backend_pid() AND query_start < $1`
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			var n int
			if err := rawdb.Writer(s).QueryRowContext(ctx, others, killedAt).Scan(&n); err != nil {
				return 0, fmt.Errorf("wait for the killed process's statements: %w", err)
			}
			if n == 0 {
				break
			}
		}
	}
	res, err := rawdb.Writer(s).ExecContext(ctx, `UPDATE `+jobTable+` SET attempted_at = '2000-01-01 00:00:00' WHERE state = 'running'`)
	if err != nil {
		return 0, fmt.Errorf("date the killed jobs back: %w", err)
	}
	if _, err := rawdb.Writer(s).ExecContext(ctx, `DELETE FROM `+leaderTable); err != nil {
		return 0, fmt.Errorf("drop the dead leader's lease: %w", err)
	}
	return res.RowsAffected()
}
