package jobs

import (
	"context"

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

// wake asks this process's workers of the queue an inserted job is in (its insert's result)
// to fetch now (no-op when it runs none); River's fetch cooldown coalesces a burst of wake-ups
// into few fetches.
func (c *Client) wake(inserted *rivertype.JobInsertResult) {
	if c.pilot != nil && c.pilot.notify != nil {
		c.pilot.notify(context.Background(), []*rivertype.JobInsertResult{inserted})
	}
}
