package jobs

import (
	"context"
	"database/sql"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivershared/baseservice"
	"github.com/riverqueue/river/rivershared/riverpilot"
	"github.com/riverqueue/river/rivertype"
)

// Neither driver in use (riversqlite; riverdatabasesql on PostgreSQL) can LISTEN, so River
// runs them in poll-only mode: a job inserted inside a transaction waits for the next fetch
// poll before a worker of this process sees it, and every hop of a chain of jobs adds that
// wait. River has the remedy built in for its own non-transactional inserts: the pilot's
// NotifyNonTxJobInsert tells the local producers "a job became available, fetch now". The
// wakeDriver wraps the real driver only to be handed that function (River's driver-plugin
// hook, which supplies the pilot), so Enqueue can call it once the enqueuing transaction has
// committed (store.Tx.AfterCommit). Polling stays as it was for jobs other processes insert.

// wakeDriver is the real driver plus the plugin methods River asks a driver for.
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

// wakeResult names the queue every job kind uses; the trigger only reads the queue.
var wakeResult = []*rivertype.JobInsertResult{{Job: &rivertype.JobRow{Queue: river.QueueDefault}}}

// wake asks this process's workers to fetch now (no-op when it runs none); River's fetch
// cooldown coalesces a burst of wake-ups into few fetches.
func (c *Client) wake() {
	if c.pilot != nil && c.pilot.notify != nil {
		c.pilot.notify(context.Background(), wakeResult)
	}
}
