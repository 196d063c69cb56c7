package jobs

import (
	"context"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Neither driver in use (riversqlite; riverdatabasesql on PostgreSQL) can LISTEN, so River
// runs them in poll-only mode: a job inserted inside a transaction waits for the next fetch
// poll before a worker of this process sees it, and every hop of a chain of jobs adds that
// wait. River has the remedy built in for its own non-transactional inserts: the pilot's
// NotifyNonTxJobInsert tells the local producers "a job became available, fetch now". The
// wakeDriver wraps the real driver only to be handed that function (River's driver-plugin
// hook, which supplies the pilot; riverinternals.go), so Enqueue can call it once the
// enqueuing transaction has committed (store.Tx.AfterCommit). Polling stays as it was for jobs other processes insert.

// wakeResult names the queue every job kind uses; the trigger only reads the queue.
var wakeResult = []*rivertype.JobInsertResult{{Job: &rivertype.JobRow{Queue: river.QueueDefault}}}

// wake asks this process's workers to fetch now (no-op when it runs none); River's fetch
// cooldown coalesces a burst of wake-ups into few fetches.
func (c *Client) wake() {
	if c.pilot != nil && c.pilot.notify != nil {
		c.pilot.notify(context.Background(), wakeResult)
	}
}
