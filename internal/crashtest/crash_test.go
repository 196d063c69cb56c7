// Package crashtest kills the real subprov binary with SIGKILL in the middle of a batch of
// orders and of a bill run, restarts it, and checks that nothing was lost, duplicated or
// charged twice and that every job finished.
package crashtest

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/invariants"
	"github.com/subprov/subprov/internal/proctest"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/store"
)

var seedFlag = flag.Uint64("crash.seed", 0, "seed of the random kill moments (0: a fresh one, logged)")

const (
	suites     = 60 // orders in the batch, one per suite
	clients    = 4  // concurrent ordering clients
	killRounds = 4  // SIGKILLs while the orders come in
)

// TestCrashSafety: orders from concurrent clients while the process is SIGKILLed at random
// moments; every order that got no answer is retried after the restart. Then the same for a
// bill run. A failure prints the seed: go test ./internal/crashtest -crash.seed=N replays the
// kill moments.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("kills and restarts the binary: skipped with -short")
	}
	bin := proctest.Build(t)
	for _, engine := range testdb.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel() // each engine has its own database and process
			seed := *seedFlag
			if seed == 0 {
				seed = rand.Uint64()
			}
			t.Logf("kill moments seed %d (replay: -crash.seed=%d)", seed, seed)
			rng := rand.New(rand.NewPCG(seed, 0))
			// The first start finds the database migrated; the kills come later.
			url := testdb.MigratedURL(t, engine, testdb.AppSchema)
			w := proctest.NewWorld(suites, clients)
			p := proctest.NewProcess(t, bin, url, w.Write(t))
			p.Start()
			st := openStore(t, url)

			started := time.Now()
			answered := orderUnderKills(t, p, w, rng)
			t.Logf("orders: %d answered through %d kills in %v", len(answered), killRounds, time.Since(started).Round(time.Millisecond))
			crashAndRecover(t, p, st, rng, 400*time.Millisecond, nil)
			proctest.WaitUntilIdle(t, st, 75*time.Second, proctest.UnfinishedJobs)
			checkOrders(t, st, w, answered)
			checkCharges(t, st, "first")
			invariants.Assert(t, st)
			if t.Failed() {
				return
			}

			started = time.Now()
			period := billRunUnderKill(t, p, st, w, rng)
			checkRecurring(t, st, period)
			checkCharges(t, st, "recurring")
			invariants.Assert(t, st)
			t.Logf("bill run %s with a kill: %v", period, time.Since(started).Round(time.Millisecond))
		})
	}
}

func openStore(t *testing.T, url string) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// orderUnderKills places one order per suite from concurrent clients while the process is
// killed and restarted killRounds times; a client retries every order that got no answer
// until one comes. It returns the subscription id each order was answered with.
func orderUnderKills(t *testing.T, p *proctest.Process, w *proctest.World, rng *rand.Rand) map[int]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	queue := make(chan int, suites)
	for i := range suites {
		queue <- i
	}
	close(queue)
	var (
		mu       sync.Mutex
		answered = map[int]string{}
		retries  atomic.Int64
		wg       sync.WaitGroup
		c        = &proctest.Client{HTTP: &http.Client{Timeout: 20 * time.Second}}
	)
	// Each client's think time is drawn up front so the run is reproducible from the seed
	// (apart from the scheduler's interleaving).
	thinks := make([][]time.Duration, clients)
	for k := range thinks {
		for range suites {
			thinks[k] = append(thinks[k], time.Duration(100+rng.IntN(300))*time.Millisecond)
		}
	}
	for k := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				i, ok := <-queue
				if !ok {
					return
				}
				time.Sleep(thinks[k][n%suites])
				id, err := orderUntilAnswered(ctx, c, p.URL, w, i, &retries)
				mu.Lock()
				if err != nil {
					t.Errorf("order %d: %v", i, err)
				} else {
					answered[i] = id
				}
				mu.Unlock()
			}
		}()
	}
	for round := range killRounds {
		time.Sleep(time.Duration(150+rng.IntN(750)) * time.Millisecond)
		mu.Lock()
		n := len(answered)
		mu.Unlock()
		t.Logf("kill %d: SIGKILL pid %d with %d/%d orders answered", round+1, p.PID(), n, suites)
		p.Kill()
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		p.Start()
	}
	wg.Wait()
	t.Logf("%d requests got no answer and were retried", retries.Load())
	return answered
}

// orderUntilAnswered sends order i until the service answers; no answer (process down or
// connection cut) and 429 are retried, any other answer but 200 is an error.
func orderUntilAnswered(ctx context.Context, c *proctest.Client, base string, w *proctest.World, i int, retries *atomic.Int64) (string, error) {
	for {
		res, err := c.Do(ctx, "POST", base+"/partner/provisioning/provider-initiated", w.Key(i), w.Order(i))
		switch {
		case ctx.Err() != nil:
			return "", ctx.Err()
		case err != nil:
			retries.Add(1)
			time.Sleep(100 * time.Millisecond)
			continue
		case res.Status == http.StatusTooManyRequests:
			time.Sleep(time.Second)
			continue
		case res.Status != http.StatusOK:
			return "", fmt.Errorf("answered %s", res)
		}
		id, _ := res.JSON["subscription_id"].(string)
		if id == "" || res.JSON["route"] != "provision" {
			return "", fmt.Errorf("200 without subscription_id or route provision: %s", res)
		}
		return id, nil
	}
}

// crashAndRecover SIGKILLs the process at a random moment within window, lets the time a dead
// process's leftovers need pass, calls dead (when given) while it is down, and restarts it.
//
// A job that was running when its process died is handed out again once it has been stuck
// for the job queue's rescue window (jobs.go: 3 minutes), and the dead process's leadership
// lapses after its TTL. The test does not wait those minutes: while the process is down it
// dates the dead process's running jobs back and drops its leadership (jobs.AfterKill), as if
// the minutes had passed.
func crashAndRecover(t *testing.T, p *proctest.Process, st *store.Store, rng *rand.Rand, window time.Duration, dead func()) {
	t.Helper()
	time.Sleep(time.Duration(rng.Int64N(int64(window))))
	p.Kill()
	stuck, err := jobs.AfterKill(context.Background(), st, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if dead != nil {
		dead()
	}
	t.Logf("SIGKILL left %d jobs running", stuck)
	p.Start()
}

// checkOrders: every answered order exists once, with the id it was answered with, live and
// provisioned on its own port; no suite has two live lines; nothing else was created.
func checkOrders(t *testing.T, st *store.Store, w *proctest.World, answered map[int]string) {
	t.Helper()
	for i := range suites {
		id, ok := answered[i]
		if !ok {
			t.Errorf("order %d never answered", i)
			continue
		}
		got := strings(t, st, `SELECT s.id || ' ' || s.status || ' ' || s.workflow_state FROM subscriptions s
			JOIN subscribers b ON b.id = s.subscriber_id WHERE b.email = ?`, w.Email(i))
		if want := id + " ACTIVE provisioned"; len(got) != 1 || got[0] != want {
			t.Errorf("order %d: lines %v, want [%s]", i, got, want)
		}
		lines := strings(t, st, `SELECT s.id FROM subscriptions s JOIN ports p ON p.id = s.port_id
			WHERE p.location_hash = ? AND s.status <> 'CANCELLED'`, w.Hashes[i])
		if len(lines) != 1 {
			t.Errorf("suite %d has %d live lines", i, len(lines))
		}
	}
	if n := strings(t, st, `SELECT id FROM subscriptions WHERE provider_id = ?`, w.ProviderID); len(n) != suites {
		t.Errorf("%d subscriptions for %d orders", len(n), suites)
	}
}

// checkCharges: every invoice of kind is charged at most once at the processor, and every paid
// one has exactly that charge, recorded once.
func checkCharges(t *testing.T, st *store.Store, kind string) {
	t.Helper()
	bad := strings(t, st, `SELECT i.id || ' ' || i.status || ' processor:' ||
			(SELECT COUNT(*) FROM processor_charges c WHERE c.status = 'succeeded' AND c.idempotency_key LIKE '%:invoice:' || i.id || ':%') ||
			' recorded:' || (SELECT COUNT(*) FROM charges c WHERE c.invoice_id = i.id AND c.status = 'succeeded')
		FROM invoices i WHERE i.kind = ?`, kind)
	if len(bad) == 0 {
		t.Errorf("no %s invoices", kind)
	}
	for _, row := range bad {
		var id, status string
		var processor, recorded int
		if _, err := fmt.Sscanf(row, "%s %s processor:%d recorded:%d", &id, &status, &processor, &recorded); err != nil {
			t.Fatalf("%q: %v", row, err)
		}
		if processor > 1 || recorded > 1 || (status == "paid" && (processor != 1 || recorded != 1)) {
			t.Errorf("%s invoice %s: %s, charged %d times at the processor, %d recorded", kind, id, status, processor, recorded)
		}
		if status != "paid" {
			t.Errorf("%s invoice %s is %s, want paid", kind, id, status)
		}
	}
}

// billRunUnderKill moves the dev clock to next month's billing day, SIGKILLs the process while
// the bill run works, restarts it and waits for every job. It returns the billed period.
func billRunUnderKill(t *testing.T, p *proctest.Process, st *store.Store, w *proctest.World, rng *rand.Rand) string {
	t.Helper()
	ctx := context.Background()
	c := &proctest.Client{}
	op, err := c.Login(ctx, p.URL, "/api/v1/auth/login", w.Operator[0], w.Operator[1])
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Do(ctx, "GET", p.URL+"/api/v1/dev/clock", op, nil)
	if err != nil || res.Status != http.StatusOK {
		t.Fatalf("dev clock: %v %v", res, err)
	}
	now, err := time.Parse(time.RFC3339, fmt.Sprint(res.JSON["now"]))
	if err != nil {
		t.Fatal(err)
	}
	y, m, _ := now.Date()
	billingDay := time.Date(y, m+1, 5, 15, 0, 0, 0, time.UTC) // 10:00 in Toronto
	res, err = c.Do(ctx, "POST", p.URL+"/api/v1/dev/clock", op, map[string]string{"set": billingDay.Format(time.RFC3339)})
	if err != nil || res.Status != http.StatusOK {
		t.Fatalf("set dev clock: %v %v", res, err)
	}
	period := billingDay.Format("2006-01")
	crashAndRecover(t, p, st, rng, 2*time.Second, func() {
		t.Logf("bill run killed with %d/%d recurring invoices written, %d paid", len(strings(t, st, `SELECT id FROM invoices WHERE kind = 'recurring'`)),
			suites, len(strings(t, st, `SELECT id FROM invoices WHERE kind = 'recurring' AND status = 'paid'`)))
	})
	proctest.WaitUntilIdle(t, st, 75*time.Second, proctest.UnfinishedJobs)
	return period
}

// checkRecurring: every platform line has exactly one recurring invoice for period, and the
// records of the bill runs count every recurring invoice, those of an attempt killed after its
// batches committed included.
func checkRecurring(t *testing.T, st *store.Store, period string) {
	t.Helper()
	bad := strings(t, st, `SELECT s.id || ':' || (SELECT COUNT(*) FROM invoices i WHERE i.subscription_id = s.id AND i.kind = 'recurring' AND i.period = ?)
		FROM subscriptions s WHERE s.billing_owner = 'platform'`, period)
	if len(bad) != suites {
		t.Errorf("%d platform lines, want %d", len(bad), suites)
	}
	for _, row := range bad {
		if row[len(row)-2:] != ":1" {
			t.Errorf("line %s recurring invoices for %s", row, period)
		}
	}
	recorded := strings(t, st, `SELECT CAST(COALESCE(SUM(invoices), 0) AS TEXT) FROM bill_runs`)
	issued := strings(t, st, `SELECT CAST(COUNT(*) AS TEXT) FROM invoices WHERE kind = 'recurring'`)
	if len(recorded) != 1 || len(issued) != 1 || recorded[0] != issued[0] {
		t.Errorf("the bill runs record %v invoices, %v recurring invoices were issued", recorded, issued)
	}
}

// strings runs a query selecting one text column on the read pool.
func strings(t *testing.T, st *store.Store, q string, args ...any) []string {
	t.Helper()
	return testdb.Strings(t, st.R().Query, q, args...)
}
