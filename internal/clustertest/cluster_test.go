// Package clustertest runs the deployment the README describes for scale-out: three
// `subprov serve --no-workers` replicas and two `subprov worker` processes of the real binary
// on one PostgreSQL database and one Redis, behind a round-robin client. It drives mixed
// traffic, SIGKILLs a replica and the worker that leads the clock-driven sweeps mid-run,
// starts them again, and then checks what the deployment promises:
//
//   - every answered order exists once, and nothing is half-written (the invariants checker);
//   - every event is delivered, in order per provider, with no gap;
//   - each bill run ran once per provider and day, and no invoice was charged twice;
//   - the sweeps ran on one process at a time and were handed over within 10 s of the kill;
//   - rate limits are shared: N+1 requests across the three replicas get exactly one 429;
//   - an API key revoked through one replica is refused by the others within a second;
//   - a replica's remembered account view never serves a write older than 0.1 s;
//   - a verification code issued through one replica is checked through another.
//
// The figures (orders, kills, hand-over, staleness) are written to the test log. It needs
// PostgreSQL and Redis (SUBPROV_TEST_POSTGRES_URL, SUBPROV_TEST_REDIS_URL) and is skipped
// with -short:
//
//	go test ./internal/clustertest -v -count=1
package clustertest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"flag"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/invariants"
	"github.com/subprov/subprov/internal/proctest"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

var killAfter = flag.Int("cluster.kill-after", 0, fmt.Sprintf("kill a replica and the leading worker once this many orders are answered (1 to %d; 0: a third of the provider-initiated ones)", suites))

const (
	orders    = 24 // provider-initiated orders, one suite each
	bulk      = 4  // suites ordered in one bulk request
	checkouts = 4  // suites ordered through a checkout session and its completion
	suites    = orders + bulk + checkouts
	keys      = 5 // API keys: four share the traffic, the last is the rate-limit test's

	handOverBound  = 10 * time.Second       // the sweeps' hand-over after their leader dies
	revokeBound    = time.Second            // a revoked key refused by every replica
	staleViewBound = 100 * time.Millisecond // the remembered account view's documented staleness
)

func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs five processes of the binary for about a minute: skipped with -short")
	}
	redisURL := os.Getenv("SUBPROV_TEST_REDIS_URL")
	if redisURL == "" {
		t.Skip("SUBPROV_TEST_REDIS_URL is not set: the cluster shares its rate limits in Redis")
	}
	url := testdb.MigratedURL(t, "postgres", testdb.AppSchema) // skips without PostgreSQL
	bin := proctest.Build(t)
	hooks := newReceiver(t)
	w := proctest.NewWorld(suites, keys)
	w.WebhookURL = hooks.URL
	freshKeys(w)
	cl := start(t, bin, url, w)

	began := time.Now()
	answered := cl.traffic(t)
	t.Logf("traffic: %d orders answered in %v through %d replicas; kills: %s", len(answered), time.Since(began).Round(time.Millisecond), len(cl.replicas), cl.killed)

	cl.checkRateLimitShared(t)
	cl.checkRevocation(t)
	proctest.WaitUntilIdle(t, cl.st, 90*time.Second, proctest.UnfinishedJobs+` UNION ALL SELECT 'event:' || id FROM events WHERE delivery_state = 'pending'`)
	cl.checkOrders(t, answered)
	cl.checkEvents(t, hooks)
	cl.checkBillRuns(t)
	cl.checkSweeps(t)
	invariants.Assert(t, cl.st)
}

// cluster is the deployment under test and a round-robin client in front of its replicas.
type cluster struct {
	w        *proctest.World
	st       *store.Store
	replicas []*proctest.Process
	workers  []*proctest.Process
	c        *proctest.Client
	next     atomic.Uint64
	operator map[string]string

	mu      sync.Mutex
	killed  string    // what was killed, for the log
	killAt  time.Time // when the leading worker was killed
	handoff time.Duration
	leader  int // index of the worker killed while leading

	changed, cancelled []string // lines whose plan was changed, lines cancelled
}

// start runs the five processes on url: the replicas one after another (the first start loads
// the fixture), then the workers.
func start(t *testing.T, bin, url string, w *proctest.World) *cluster {
	t.Helper()
	seed := w.Write(t)
	env := "REDIS_URL=" + os.Getenv("SUBPROV_TEST_REDIS_URL")
	cl := &cluster{w: w, c: &proctest.Client{HTTP: &http.Client{Timeout: 90 * time.Second}}}
	for range 3 {
		p := proctest.NewCommand(t, bin, url, seed, []string{"serve", "--no-workers"}, env)
		p.Start()
		cl.replicas = append(cl.replicas, p)
	}
	for range 2 {
		p := proctest.NewCommand(t, bin, url, seed, []string{"worker"}, env)
		p.Start()
		cl.workers = append(cl.workers, p)
	}
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cl.st = st
	op, err := cl.c.Login(context.Background(), cl.replicas[0].URL, "/api/v1/auth/login", w.Operator[0], w.Operator[1])
	if err != nil {
		t.Fatal(err)
	}
	cl.operator = op
	return cl
}

// freshKeys gives the world API keys no earlier run used: the rate limits they count against
// live in the shared Redis, for a minute.
func freshKeys(w *proctest.World) {
	n, _ := rand.Int(rand.Reader, big.NewInt(9_000_000))
	for i := range w.Keys {
		w.Keys[i] = fmt.Sprintf("k%07d_live_cluster_key_%08d", n.Int64()+int64(i), i) // distinct 8-character prefixes
	}
}

// do sends a request to the next replica in turn, as a round-robin load balancer does; a
// replica that does not answer (it was killed) is passed over for the next.
func (cl *cluster) do(ctx context.Context, method, path string, h map[string]string, body any) (*proctest.Response, error) {
	var err error
	for range 2 * len(cl.replicas) {
		p := cl.replicas[cl.next.Add(1)%uint64(len(cl.replicas))]
		var res *proctest.Response
		if res, err = cl.c.Do(ctx, method, p.URL+path, h, body); err == nil {
			return res, nil
		}
		if ctx.Err() != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	return nil, err
}

// send sends a request through do until it is answered (again when no answer came: a
// replica killed mid-request; again after a second on 429) and fails unless the answer's
// status is one of ok. Only requests whose repeat is harmless are sent so: orders replay,
// and a repeat of a change that went through is refused.
func (cl *cluster) send(ctx context.Context, method, path string, h map[string]string, body any, ok ...int) (*proctest.Response, error) {
	for {
		res, err := cl.do(ctx, method, path, h, body)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			continue
		case res.Status == http.StatusTooManyRequests:
			time.Sleep(time.Second)
			continue
		case !slices.Contains(ok, res.Status):
			return nil, fmt.Errorf("%s %s answered %s", method, path, res)
		}
		return res, nil
	}
}

// traffic drives the mixed load: orders from three clients, a bulk order, checkout
// completions, plan changes and cancellations of answered lines, portal writes read back
// through the other replicas, and agent verification across replicas. Once a third of the
// orders are answered it SIGKILLs a replica and the worker leading the sweeps, and starts
// them again two seconds later. It returns the subscription each order was answered with, by
// suite.
func (cl *cluster) traffic(t *testing.T) map[int]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var (
		mu       sync.Mutex
		answered = map[int]string{}
		wg       sync.WaitGroup
		errs     = make(chan error, 64)
	)
	answer := func(i int, id string) {
		mu.Lock()
		defer mu.Unlock()
		answered[i] = id
	}
	count := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(answered)
	}
	queue := make(chan int, orders)
	for i := range orders {
		queue <- i
	}
	close(queue)
	for range 3 {
		wg.Go(func() {
			for i := range queue {
				id, err := cl.order(ctx, i)
				if err != nil {
					errs <- fmt.Errorf("order %d: %w", i, err)
					continue
				}
				answer(i, id)
			}
		})
	}
	wg.Go(func() {
		ids, err := cl.bulkOrder(ctx)
		if err != nil {
			errs <- err
		}
		for i, id := range ids {
			answer(i, id)
		}
	})
	wg.Go(func() {
		for i := orders + bulk; i < suites; i++ {
			id, err := cl.checkout(ctx, i)
			if err != nil {
				errs <- fmt.Errorf("checkout %d: %w", i, err)
				continue
			}
			answer(i, id)
		}
	})
	done := make(chan struct{})
	var views viewFigures
	wg.Go(func() {
		if err := cl.portalWrites(ctx, done, &views); err != nil {
			errs <- err
		}
	})
	var verified atomic.Int64
	wg.Go(func() {
		if err := cl.verifications(ctx, done, &verified); err != nil {
			errs <- err
		}
	})
	// The kills, once a third of the orders are answered.
	after := *killAfter
	if after <= 0 || after > suites {
		after = orders / 3
	}
	for count() < after && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	cl.kill(t)
	// Plan changes and cancellations of lines answered before the kills.
	mu.Lock()
	var early []string
	for i := range orders {
		if id, ok := answered[i]; ok && len(early) < 4 {
			early = append(early, id)
		}
	}
	mu.Unlock()
	if len(early) < 4 {
		t.Fatalf("only %d lines answered before the kills", len(early))
	}
	cl.changed, cl.cancelled = early[:2], early[2:]
	if err := cl.changePlans(ctx, cl.changed); err != nil {
		errs <- err
	}
	if err := cl.cancel(ctx, cl.cancelled); err != nil {
		errs <- err
	}
	for count() < suites && ctx.Err() == nil && len(errs) == 0 {
		time.Sleep(50 * time.Millisecond)
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("remembered account views: %d portal writes, each read back through every live replica %v after it was answered: %d reads, none stale",
		views.writes, staleViewBound, views.reads)
	t.Logf("agent verification across replicas: %d codes issued through one replica and checked through another", verified.Load())
	if t.Failed() {
		t.FailNow()
	}
	return answered
}

// order sends suite i's order until it is answered; a repeat is answered with the same line.
func (cl *cluster) order(ctx context.Context, i int) (string, error) {
	res, err := cl.send(ctx, "POST", "/partner/provisioning/provider-initiated", cl.w.Key(i%(keys-1)), cl.w.Order(i), http.StatusOK)
	if err != nil {
		return "", err
	}
	id, _ := res.JSON["subscription_id"].(string)
	if id == "" {
		return "", fmt.Errorf("200 without subscription_id: %s", res)
	}
	return id, nil
}

// bulkOrder orders the bulk suites in one request, sent again until answered; it returns the
// line each suite was answered with.
func (cl *cluster) bulkOrder(ctx context.Context) (map[int]string, error) {
	var items []map[string]any
	for i := orders; i < orders+bulk; i++ {
		items = append(items, cl.w.Order(i))
	}
	res, err := cl.send(ctx, "POST", "/partner/provisioning/bulk", cl.w.Key(0), map[string]any{"orders": items}, http.StatusOK)
	if err != nil {
		return nil, err
	}
	results, _ := res.JSON["results"].([]any)
	out := map[int]string{}
	for k, r := range results {
		id, _ := r.(map[string]any)["subscription_id"].(string)
		if id == "" {
			return nil, fmt.Errorf("bulk item %d: %v", k, r)
		}
		out[orders+k] = id
	}
	if len(out) != bulk {
		return nil, fmt.Errorf("bulk order: %d results for %d orders: %s", len(out), bulk, res)
	}
	return out, nil
}

// checkout opens a checkout session for suite i through one replica and completes it through
// the next, as the marketplace and the provider's checkout page would.
func (cl *cluster) checkout(ctx context.Context, i int) (string, error) {
	res, err := cl.send(ctx, "POST", "/partner/external-checkout/sessions", nil, map[string]any{
		"provider_id": cl.w.ProviderID, "plan_version_id": cl.w.PlanVersionID, "building_id": cl.w.BuildingID,
		"location_hash": cl.w.Hashes[i], "delivery_mode": "direct"}, http.StatusCreated)
	if err != nil {
		return "", err
	}
	session, _ := res.JSON["session_id"].(string)
	if session == "" {
		return "", fmt.Errorf("session without an id: %s", res)
	}
	secret := map[string]string{"X-Webhook-Secret": proctest.WebhookSecret}
	res, err = cl.send(ctx, "POST", "/partner/external-checkout/complete", secret, map[string]any{"session_id": session,
		"subscriber": map[string]any{"firstname": "Ada", "lastname": fmt.Sprintf("Crash%d", i), "email": cl.w.Email(i), "phonenumber": "+1 514 555 0199"}},
		http.StatusOK)
	if err != nil {
		return "", err
	}
	id, _ := res.JSON["subscription_id"].(string)
	if id == "" {
		return "", fmt.Errorf("complete without subscription_id: %s", res)
	}
	return id, nil
}

// changePlans moves each line to the faster version once it is active.
func (cl *cluster) changePlans(ctx context.Context, lines []string) error {
	for _, id := range lines {
		if err := cl.onceActive(ctx, id, "POST", "/partner/subscriptions/"+id+"/change-plan", cl.w.Key(1),
			map[string]any{"plan_version_id": cl.w.FastVersionID}); err != nil {
			return fmt.Errorf("change the plan of %s: %w", id, err)
		}
	}
	return nil
}

// cancel cancels each line through the operations surface, effective at the end of next month.
func (cl *cluster) cancel(ctx context.Context, lines []string) error {
	end := time.Now().AddDate(0, 2, 0)
	end = time.Date(end.Year(), end.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, -1)
	for _, id := range lines {
		if err := cl.onceActive(ctx, id, "POST", "/api/v1/subscription/"+id+"/cancel", cl.operator,
			map[string]any{"end_date": end.Format(time.DateOnly), "reason": "moving"}); err != nil {
			return fmt.Errorf("cancel %s: %w", id, err)
		}
	}
	return nil
}

// onceActive sends a change of line id once it is active, again when no answer came (a
// replica killed mid-request). A repeat of a change that went through is 409 (one plan change
// a day; a line cancelled already), which the final state check tells from a refusal.
func (cl *cluster) onceActive(ctx context.Context, id, method, path string, h map[string]string, body any) error {
	if err := cl.awaitStatus(ctx, id, "ACTIVE"); err != nil {
		return err
	}
	_, err := cl.send(ctx, method, path, h, body, http.StatusOK, http.StatusConflict)
	return err
}

// awaitStatus waits until the line has status.
func (cl *cluster) awaitStatus(ctx context.Context, id, status string) error {
	for {
		var got string
		if err := cl.st.R().QueryRow(ctx, `SELECT status FROM subscriptions WHERE id = ?`, id).Scan(&got); err == nil && got == status {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("line %s never %s: %w", id, status, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// viewFigures are the portal check's counts.
type viewFigures struct{ writes, reads int }

// portalWrites changes the signed-in holder's first name through one replica, then reads
// GET /partner/subscriber/me through every replica from staleViewBound after the change was
// answered: each must show the new name. It repeats until done closes.
func (cl *cluster) portalWrites(ctx context.Context, done <-chan struct{}, f *viewFigures) error {
	me, err := cl.loginHolder(ctx)
	if err != nil {
		return err
	}
	for n := 0; ; n++ {
		select {
		case <-done:
			return nil
		default:
		}
		name := fmt.Sprintf("Ada%d", n)
		res, err := cl.do(ctx, "PATCH", "/partner/subscriber/me/contact", me, map[string]any{"firstname": name})
		if err != nil || ctx.Err() != nil {
			continue
		}
		if res.Status != http.StatusOK {
			return fmt.Errorf("portal write: %s", res)
		}
		acked := time.Now()
		f.writes++
		time.Sleep(staleViewBound)
		for _, p := range cl.replicas {
			asked := time.Now()
			got, err := cl.c.Do(ctx, "GET", p.URL+"/partner/subscriber/me", me, nil)
			if err != nil {
				continue // killed
			}
			f.reads++
			if got.Status != http.StatusOK {
				return fmt.Errorf("GET /me: %s", got)
			}
			if seen := firstName(got.JSON); seen != name {
				return fmt.Errorf("GET /me through %s asked %v after the write was answered shows first name %q, want %q",
					p.URL, asked.Sub(acked).Round(time.Millisecond), seen, name)
			}
		}
	}
}

// firstName finds the holder's first name in GET /me's answer.
func firstName(v map[string]any) string {
	for _, k := range []string{"firstname", "first_name"} {
		if s, ok := v[k].(string); ok {
			return s
		}
	}
	for _, sub := range v {
		if m, ok := sub.(map[string]any); ok {
			if s := firstName(m); s != "" {
				return s
			}
		}
	}
	return ""
}

// loginHolder signs the world's portal holder in, through any replica.
func (cl *cluster) loginHolder(ctx context.Context) (map[string]string, error) {
	res, err := cl.send(ctx, "POST", "/partner/subscriber/auth/login", nil, map[string]string{"email": cl.w.Subscriber[0], "password": cl.w.Subscriber[1]}, http.StatusOK)
	if err != nil {
		return nil, err
	}
	tok, _ := res.JSON["access_token"].(string)
	if tok == "" {
		return nil, fmt.Errorf("holder login without a token: %s", res)
	}
	return map[string]string{"Authorization": "Bearer " + tok}, nil
}

var codeRE = regexp.MustCompile(`(?m)^\s*(\d{6})\s*$`)

// verifications issues a code to the world's holder through one replica, reads the mail
// through the next and checks the code through the third, until done closes.
func (cl *cluster) verifications(ctx context.Context, done <-chan struct{}, verified *atomic.Int64) error {
	customer := proctest.HolderID
	key := cl.w.Key(2)
	for n := 0; ; n++ {
		select {
		case <-done:
			return nil
		case <-time.After(500 * time.Millisecond):
		}
		issue, check := cl.replicas[n%3], cl.replicas[(n+2)%3]
		before, err := cl.codes(ctx)
		if err != nil {
			return err
		}
		res, err := cl.c.Do(ctx, "POST", issue.URL+"/partner/agent/verify/issue", key, map[string]any{"customer_id": customer, "channel": "email"})
		if err != nil {
			continue // killed
		}
		if res.Status != http.StatusAccepted {
			return fmt.Errorf("verify/issue: %s", res)
		}
		code, err := cl.awaitCode(ctx, len(before))
		if err != nil {
			return err
		}
		res, err = cl.c.Do(ctx, "POST", check.URL+"/partner/agent/verify/check", key, map[string]any{"customer_id": customer, "code": code})
		if err != nil {
			continue // killed: the next round issues a new code
		}
		if tok, _ := res.JSON["verified_session_token"].(string); res.Status != http.StatusOK || tok == "" {
			return fmt.Errorf("verify/check through another replica: %s", res)
		}
		verified.Add(1)
	}
}

// codes lists the verification codes mailed to the holder, newest first, read through any
// replica.
func (cl *cluster) codes(ctx context.Context) ([]string, error) {
	res, err := cl.do(ctx, "GET", "/api/v1/dev/outbox?to="+cl.w.Subscriber[0], cl.operator, nil)
	if err != nil {
		return nil, err
	}
	if res.Status != http.StatusOK {
		return nil, fmt.Errorf("outbox: %s", res)
	}
	var out []string
	msgs, _ := res.JSON["messages"].([]any)
	for _, m := range msgs {
		if c := codeRE.FindStringSubmatch(fmt.Sprint(m.(map[string]any)["body"])); c != nil {
			out = append(out, c[1])
		}
	}
	return out, nil
}

// awaitCode waits until more than before codes were mailed to the holder (the mail is sent by
// a worker's job) and returns the newest.
func (cl *cluster) awaitCode(ctx context.Context, before int) (string, error) {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if codes, err := cl.codes(ctx); err == nil && len(codes) > before {
			return codes[0], nil
		}
	}
	return "", fmt.Errorf("no verification code mailed within 30 s of its issue")
}

// kill SIGKILLs the last replica and the worker leading the sweeps, lets the job queue hand
// the dead worker's running jobs out again (as its rescuer would after three minutes), and
// starts both again two seconds later. It measures how long the other worker took to lead.
func (cl *cluster) kill(t *testing.T) {
	t.Helper()
	leader := -1
	for deadline := time.Now().Add(15 * time.Second); leader < 0 && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for i, p := range cl.workers {
			if ivs := leads(t, p.LogPath); len(ivs) > 0 && ivs[len(ivs)-1].end.IsZero() {
				leader = i
			}
		}
	}
	if leader < 0 {
		t.Fatal("no worker leads the sweeps")
	}
	other := cl.workers[1-leader]
	before := len(leads(t, other.LogPath))
	pid := cl.workers[leader].PID()
	host, _ := os.Hostname()
	replica := cl.replicas[2]
	replica.Kill()
	killAt := time.Now()
	cl.workers[leader].Kill()
	// handOut makes the dead worker's running jobs the rescuer's at once. It runs again before
	// the restart: a statement the worker sent just before it died (a fetch that marks jobs
	// running for it) still runs to its end on the server, and may end after the first pass.
	handOut := func() int64 {
		res, err := rawdb.Writer(cl.st).ExecContext(context.Background(), `UPDATE river_job SET attempted_at = '2000-01-01 00:00:00'
			WHERE state = 'running' AND attempted_by[cardinality(attempted_by)] = $1`, fmt.Sprintf("%s-%d", host, pid))
		if err != nil {
			t.Fatalf("hand the dead worker's jobs out: %v", err)
		}
		n, _ := res.RowsAffected()
		return n
	}
	stuck := handOut()
	var handoff time.Duration
	for deadline := time.Now().Add(2 * handOverBound); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if len(leads(t, other.LogPath)) > before {
			handoff = time.Since(killAt)
			break
		}
	}
	if handoff == 0 {
		t.Fatalf("no worker led the sweeps within %v of the leader's death", 2*handOverBound)
	}
	if handoff > handOverBound {
		t.Errorf("the sweeps were handed over %v after their leader died, want within %v", handoff.Round(time.Millisecond), handOverBound)
	}
	time.Sleep(2 * time.Second)
	stuck += handOut()
	cl.mu.Lock()
	cl.killed = fmt.Sprintf("replica 3 and worker %d (leading the sweeps, %d jobs running) SIGKILLed; the other worker led %v later", leader+1, stuck, handoff.Round(time.Millisecond))
	cl.killAt, cl.handoff, cl.leader = killAt, handoff, leader
	cl.mu.Unlock()
	replica.Start()
	cl.workers[leader].Start()
}

// interval is a time a process led the sweeps; end is zero while it still leads.
type interval struct{ start, end time.Time }

// leads reads a worker's log for the times it led the sweeps.
func leads(t *testing.T, path string) []interval {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []interval
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var line struct {
			Time time.Time `json:"time"`
			Msg  string    `json:"msg"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue
		}
		switch {
		case bytes.HasPrefix([]byte(line.Msg), []byte("leading the clock-driven sweeps")):
			out = append(out, interval{start: line.Time})
		case line.Msg == "stopped leading the clock-driven sweeps" && len(out) > 0:
			out[len(out)-1].end = line.Time
		case line.Msg == "subprov worker running" && len(out) > 0 && out[len(out)-1].end.IsZero():
			out[len(out)-1].end = line.Time // the process was killed while leading; it started again
		}
	}
	return out
}

// checkSweeps: the workers' times leading the sweeps never overlap (the killed leader's time
// ends at its death).
func (cl *cluster) checkSweeps(t *testing.T) {
	t.Helper()
	var all []interval
	for i, p := range cl.workers {
		for _, iv := range leads(t, p.LogPath) {
			if i == cl.leader && iv.start.Before(cl.killAt) && (iv.end.IsZero() || iv.end.After(cl.killAt)) {
				iv.end = cl.killAt
			}
			if iv.end.IsZero() {
				iv.end = time.Now()
			}
			all = append(all, iv)
		}
	}
	slices.SortFunc(all, func(a, b interval) int { return a.start.Compare(b.start) })
	for k := 1; k < len(all); k++ {
		if all[k].start.Before(all[k-1].end) {
			t.Errorf("two workers led the sweeps at once: from %v to %v and from %v", all[k-1].start, all[k-1].end, all[k].start)
		}
	}
	t.Logf("sweeps: %d leaderships over the run, none overlapping; hand-over after the leader's SIGKILL %v (bound %v)",
		len(all), cl.handoff.Round(time.Millisecond), handOverBound)
}

// checkRateLimitShared sends one more bulk request than the route's limit per key (30 a
// minute) with a key nothing else uses, in turn through the three replicas: the limit is
// counted in Redis, so exactly the last is refused.
func (cl *cluster) checkRateLimitShared(t *testing.T) {
	t.Helper()
	const limit = 30
	ctx := context.Background()
	var refused []int
	for n := range limit + 1 {
		p := cl.replicas[n%3]
		res, err := cl.c.Do(ctx, "POST", p.URL+"/partner/provisioning/bulk", cl.w.Key(keys-1), map[string]any{"orders": []any{}})
		if err != nil {
			t.Fatalf("request %d: %v", n+1, err)
		}
		if res.Status == http.StatusTooManyRequests {
			refused = append(refused, n+1)
		}
	}
	if len(refused) != 1 || refused[0] != limit+1 {
		t.Errorf("requests refused with 429: %v, want only the %dth", refused, limit+1)
	}
	t.Logf("rate limit shared: %d requests through 3 replicas, 429 for request %v", limit+1, refused)
}

// checkRevocation creates an API key through one replica, uses it through the others, revokes
// it through the first and measures how long the others go on accepting it.
func (cl *cluster) checkRevocation(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	path := "/api/v1/providers/" + cl.w.ProviderID + "/api-keys"
	res, err := cl.c.Do(ctx, "POST", cl.replicas[0].URL+path, cl.operator, map[string]any{"name": "cluster test", "features": []string{}})
	if err != nil || res.Status != http.StatusCreated && res.Status != http.StatusOK {
		t.Fatalf("create key: %v %v", res, err)
	}
	secret, _ := res.JSON["key"].(string)
	id, _ := res.JSON["id"].(string)
	if secret == "" || id == "" {
		t.Fatalf("created key without key or id: %s", res)
	}
	read := func(p *proctest.Process) int {
		res, err := cl.c.Do(ctx, "GET", p.URL+"/partner/serviceability/units?building_id="+cl.w.BuildingID, map[string]string{"X-API-Key": secret}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return res.Status
	}
	for _, p := range cl.replicas {
		if got := read(p); got != http.StatusOK {
			t.Fatalf("the new key through %s: %d", p.URL, got)
		}
	}
	res, err = cl.c.Do(ctx, "DELETE", cl.replicas[0].URL+path+"/"+id, cl.operator, nil)
	if err != nil || res.Status >= 300 {
		t.Fatalf("revoke: %v %v", res, err)
	}
	revoked := time.Now()
	var slowest time.Duration
	for _, p := range cl.replicas {
		for {
			asked := time.Now()
			if read(p) == http.StatusUnauthorized {
				slowest = max(slowest, asked.Sub(revoked))
				break
			}
			if time.Since(revoked) > 5*revokeBound {
				t.Fatalf("%s still accepts the key %v after its revocation", p.URL, time.Since(revoked).Round(time.Millisecond))
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if slowest > revokeBound {
		t.Errorf("a replica accepted the revoked key %v after the revocation, want within %v", slowest.Round(time.Millisecond), revokeBound)
	}
	t.Logf("revocation: the key revoked through replica 1 was refused by every replica within %v (bound %v)", slowest.Round(time.Millisecond), revokeBound)
}

// checkOrders: every answered order exists once, with the id it was answered with, and
// nothing else was created; every line is live and provisioned on its plan, the changed ones
// on the faster version, the cancelled ones cancelled.
func (cl *cluster) checkOrders(t *testing.T, answered map[int]string) {
	t.Helper()
	for i := range suites {
		id, ok := answered[i]
		if !ok {
			t.Errorf("order %d never answered", i)
			continue
		}
		got := query(t, cl.st, `SELECT s.id FROM subscriptions s JOIN subscribers b ON b.id = s.subscriber_id WHERE b.email = ?`, cl.w.Email(i))
		if len(got) != 1 || got[0] != id {
			t.Errorf("order %d: lines %v, want [%s]", i, got, id)
		}
	}
	if n := query(t, cl.st, `SELECT id FROM subscriptions WHERE provider_id = ?`, cl.w.ProviderID); len(n) != suites {
		t.Errorf("%d lines for %d orders", len(n), suites)
	}
	lines := query(t, cl.st, `SELECT id || ' ' || status || ' ' || workflow_state || ' ' || plan_version_id FROM subscriptions WHERE provider_id = ?`, cl.w.ProviderID)
	for _, l := range lines {
		var id, status, state, plan string
		if _, err := fmt.Sscanf(l, "%s %s %s %s", &id, &status, &state, &plan); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		want := "ACTIVE provisioned " + cl.w.PlanVersionID
		switch {
		case slices.Contains(cl.changed, id):
			want = "ACTIVE provisioned " + cl.w.FastVersionID
		case slices.Contains(cl.cancelled, id):
			want = "CANCELLED cancelled " + cl.w.PlanVersionID
		}
		if got := status + " " + state + " " + plan; got != want {
			t.Errorf("line %s: %s, want %s", id, got, want)
		}
	}
}

// checkEvents: every event of the provider was delivered, and the receiver first saw them in
// the provider's order (repeats of delivered events are allowed: delivery is at least once).
func (cl *cluster) checkEvents(t *testing.T, hooks *receiver) {
	t.Helper()
	seqOf := map[string]int64{}
	rows := query(t, cl.st, `SELECT id || ' ' || seq || ' ' || delivery_state FROM events WHERE provider_id = ? ORDER BY seq`, cl.w.ProviderID)
	for _, r := range rows {
		var id, state string
		var seq int64
		if _, err := fmt.Sscanf(r, "%s %d %s", &id, &seq, &state); err != nil {
			t.Fatalf("%q: %v", r, err)
		}
		if state != "delivered" {
			t.Errorf("event %s (seq %d) is %s", id, seq, state)
		}
		seqOf[id] = seq
	}
	first, repeats := hooks.firstSeen()
	if len(first) != len(seqOf) {
		t.Errorf("the receiver saw %d events, the provider has %d", len(first), len(seqOf))
	}
	var last int64
	for k, id := range first {
		seq, ok := seqOf[id]
		switch {
		case !ok:
			t.Errorf("the receiver got event %s the provider does not have", id)
		case seq <= last:
			t.Errorf("event %d received, %s, has seq %d after seq %d: out of order", k+1, id, seq, last)
		}
		last = seq
	}
	t.Logf("webhooks: %d events delivered in order with no gap (%d repeats of delivered events after the kill)", len(first), repeats)
}

// checkBillRuns: each provider's bill run ran once for each day the sweeps started one.
func (cl *cluster) checkBillRuns(t *testing.T) {
	t.Helper()
	days := query(t, cl.st, `SELECT key FROM settings WHERE key LIKE ?`, "billrun:"+cl.w.ProviderID+":%")
	runs := query(t, cl.st, `SELECT id || ' ' || CASE WHEN finished_at IS NULL THEN 'unfinished' ELSE 'finished' END FROM bill_runs WHERE provider_id = ?`, cl.w.ProviderID)
	if len(days) == 0 || len(runs) != len(days) {
		t.Errorf("bill runs %v for the days %v: want one per day", runs, days)
	}
	for _, r := range runs {
		if !bytes.HasSuffix([]byte(r), []byte(" finished")) {
			t.Errorf("bill run %s", r)
		}
	}
	t.Logf("bill runs: %d for %d days", len(runs), len(days))
}

func query(t *testing.T, st *store.Store, q string, args ...any) []string {
	t.Helper()
	return testdb.Strings(t, st.R().Query, q, args...)
}

// receiver is the provider's webhook endpoint: it answers 200 and records each event's id in
// the order the events arrive.
type receiver struct {
	URL string
	mu  sync.Mutex
	ids []string
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.ids = append(r.ids, req.Header.Get("X-Webhook-Id"))
		r.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	r.URL = srv.URL
	return r
}

// firstSeen is each event id in the order it first arrived, and how many arrivals repeated one.
func (r *receiver) firstSeen() (ids []string, repeats int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	for _, id := range r.ids {
		if seen[id] {
			repeats++
			continue
		}
		seen[id] = true
		ids = append(ids, id)
	}
	return ids, repeats
}
