// Package gen fills a database with deterministic, realistic data at scale for benchmarks and
// load tests (subprov gen): providers, buildings, suites, ports, plans, subscribers, lines in
// every status, invoice history, portal logins and the agent search index. Rows are written
// in batches in large transactions (SQLite: INSERT … SELECT from a virtual table over gen's
// memory; PostgreSQL: COPY); secondary indexes are dropped during the load and built once at
// the end.
package gen

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/providers"
	"github.com/subprov/subprov/search"
	"github.com/subprov/subprov/serviceability"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// Options says how much to generate.
type Options struct {
	Subscribers int       // per provider
	Providers   int       // at least 1
	Seed        uint64    // same seed, same date: same data
	Now         time.Time // reference date of the history; zero: today
	Progress    io.Writer // progress bar, nil for none
}

// Version changes whenever the generated data changes, so a harness that keeps generated
// databases knows to regenerate (2: store keys, the current month's invoices; 3: names indexed
// surname first; 4: each subscriber lists its search terms, migrations 0013 and 0014; 5: and
// carries its search card, migration 0015; 6: no term that starts another of the subscriber's;
// 7: the e-mail addresses of providers after the first carry the provider's number).
const Version = 7

// Password is every generated portal login's password.
const Password = "gen-password-1"

// Provider i's (1-based) credentials, for the harness and the benchmarks.
func ProviderID(i int) string       { return fmt.Sprintf("9e000000-0000-4000-8000-%012d", i) }
func AgentKey(i int) string         { return fmt.Sprintf("gen%03d_live_agent_bench_key_0000000001", i) }
func WebhookSecret(i int) string    { return fmt.Sprintf("whsec_gen%03d_bench_secret_00001", i) }
func PlanVersionID(i, k int) string { return fmt.Sprintf("9e%06x-0000-4000-8000-%012d", i, k+1) }

// StoreKey is provider i's k-th (0-based, k < StoreKeys) API key without features, as a
// store front placing orders has; the harness spreads its orders across them.
func StoreKey(i, k int) string { return fmt.Sprintf("gen%03d_live_store_bench_key_%010d", i, k+1) }

// StoreKeys is how many store keys each generated provider has.
const StoreKeys = 4

// Subscriber n's (0-based) id and login of provider i; every tenth subscriber has a login.
func SubscriberID(i, n int) string { return id(kindSubscriber, i, n) }

// AccountID is the portal login id of subscriber n of provider i (when HasLogin(n)).
func AccountID(i, n int) string { return id(kindAccount, i, n) }

// VacantPorts returns the location_hash of every vacant first-line suite of provider i among
// its first subscribers suites: free ports a direct-route order can take.
func VacantPorts(i, subscribers int) []string {
	var out []string
	for s := 0; s < subscribers; s++ { // suites below the subscriber count surely exist
		if s%vacantEvery == vacantEvery-1 && (s/suitesPerBuilding)%portedEvery == 0 {
			out = append(out, locationHash(i, s))
		}
	}
	return out
}

func locationHash(i, s int) string { return fmt.Sprintf("lh_gen%d_%d", i, s) }

// HasLogin reports whether subscriber n has a portal login.
func HasLogin(n int) bool { return n%10 == 0 }

// Summary counts what was written.
type Summary struct {
	Providers, Buildings, Units, Ports, Subscribers, Subscriptions, Invoices, Logins, SearchTerms int64
	Elapsed                                                                                       time.Duration
	Phases                                                                                        []Phase // in order, summed over providers

	termKeys int64 // distinct (provider, term) pairs of the search index
}

// Phase is the time gen's writer spent in one step: "rows" (generating and writing every table
// but the search index), "search index" (sorting and writing it), "indexes" (building the
// secondary indexes dropped for the load; for the last provider while its search index sorts,
// so the sort shows under "search index" only for as long as it outlasts the builds),
// "analyze" (planner statistics; on PostgreSQL with a VACUUM).
type Phase struct {
	Name    string
	Elapsed time.Duration
}

func (s Summary) String() string {
	var phases []string
	for _, p := range s.Phases {
		phases = append(phases, p.Name+" "+p.Elapsed.Round(100*time.Millisecond).String())
	}
	return fmt.Sprintf("%d providers, %d buildings, %d suites, %d ports, %d subscribers, %d subscriptions, %d invoices, %d logins, %d search terms in %s (%s)",
		s.Providers, s.Buildings, s.Units, s.Ports, s.Subscribers, s.Subscriptions, s.Invoices, s.Logins, s.SearchTerms, s.Elapsed.Round(time.Millisecond),
		strings.Join(phases, ", "))
}

// phaseClock adds up the time spent in each phase; enter may be called from the writer.
type phaseClock struct {
	mu    sync.Mutex
	cur   string
	since time.Time
	sum   *Summary
}

func (c *phaseClock) enter(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := time.Now()
	if c.cur != "" {
		i := slices.IndexFunc(c.sum.Phases, func(p Phase) bool { return p.Name == c.cur })
		if i < 0 {
			c.sum.Phases, i = append(c.sum.Phases, Phase{Name: c.cur}), len(c.sum.Phases)
		}
		c.sum.Phases[i].Elapsed += now.Sub(c.since)
	}
	c.cur, c.since = name, now
}

const (
	suitesPerBuilding = 120 // 12 floors of 10
	vacantEvery       = 11  // every eleventh suite is free for new orders
	portedEvery       = 5   // every fifth building is first-line: a sim switch port per suite
	platformEvery     = 8   // every eighth line is billed by the platform
	historyMonths     = 3   // invoices of the last three periods (the current one included) for platform-billed lines
	perTx             = 50_000
)

// id kinds: the first hex digit of a generated id, then the provider, then a sequence, so ids
// are valid UUID text and sort in insertion order (index appends, not random inserts).
const (
	kindBuilding   = 0xb
	kindUnit       = 0xa
	kindPort       = 0xf
	kindSubscriber = 0x5
	kindContact    = 0xc
	kindLine       = 0xe
	kindInvoice    = 0xd
	kindInvLine    = 0x1
	kindAccount    = 0x2
)

func id(kind, provider, n int) string {
	// fmt.Sprintf("%x%07x-0000-4000-8000-%012x", kind, provider, n), without fmt: gen formats
	// tens of millions of ids.
	b := []byte("00000000-0000-4000-8000-000000000000")
	hex := func(at, width, v int) {
		for i := at + width - 1; i >= at; i-- {
			b[i] = "0123456789abcdef"[v&0xf]
			v >>= 4
		}
	}
	hex(0, 1, kind)
	hex(1, 7, provider)
	hex(24, 12, n)
	return string(b)
}

// bulkTables are the tables gen fills row by row; their secondary indexes are rebuilt at the end.
var bulkTables = []string{"buildings", "building_providers", "units", "ports", "subscribers", "contacts", "subscriptions",
	"invoices", "invoice_lines", "accounts", "processor_customers", "processor_payment_methods", "sim_ports", termsTable}

// termsTable is the search index, written last, in key order.
const termsTable = "customer_search_terms"

// Run generates the data into st, which must be migrated.
func Run(ctx context.Context, st *store.Store, o Options) (Summary, error) {
	start := time.Now()
	if o.Providers < 1 {
		o.Providers = 1
	}
	if o.Now.IsZero() {
		o.Now = time.Now()
	}
	o.Now = time.Date(o.Now.Year(), o.Now.Month(), o.Now.Day(), 12, 0, 0, 0, time.UTC)
	var sum Summary
	hash, err := identity.HashPassword(Password)
	if err != nil {
		return sum, err
	}
	restore, err := tuneSQLite(ctx, st)
	if err != nil {
		return sum, err
	}
	defer restore() //nolint:errcheck // restored explicitly below; this covers the error paths
	indexes, err := secondaryIndexes(ctx, st, bulkTables)
	if err != nil {
		return sum, err
	}
	for _, ix := range indexes {
		if _, err := rawdb.Writer(st).ExecContext(ctx, "DROP INDEX "+ix.name); err != nil {
			return sum, fmt.Errorf("drop index %s: %w", ix.name, err)
		}
	}
	pg, err := bulkPostgres(ctx, st)
	if err != nil {
		return sum, err
	}
	if pg != nil {
		defer pg.Close(context.WithoutCancel(ctx))
	}
	// exec runs the index builds and ANALYZE: on PostgreSQL on gen's connection, whose
	// maintenance_work_mem is raised for them.
	exec := func(q string) error {
		if pg != nil {
			_, err := pg.Exec(ctx, q)
			return err
		}
		_, err := rawdb.Writer(st).ExecContext(ctx, q)
		return err
	}
	bar := newProgress(o.Progress, o.Subscribers*o.Providers)
	clock := &phaseClock{sum: &sum}
	// build creates the secondary indexes dropped for the load, on the tables in scope.
	build := func(scope func(table string) bool) error {
		var todo []index
		for _, ix := range indexes {
			if scope(ix.table) {
				todo = append(todo, ix)
			}
		}
		if len(todo) == 0 {
			return nil
		}
		return inThreads(ctx, st, func() error {
			for _, ix := range todo {
				if err := exec(ix.create); err != nil {
					return fmt.Errorf("create index %s: %w", ix.name, err)
				}
			}
			return nil
		})
	}
	notTerms := func(table string) bool { return table != termsTable }
	for p := 1; p <= o.Providers; p++ {
		clock.enter("rows")
		g := &generator{st: st, o: o, p: p, hash: hash, rnd: rand.New(rand.NewPCG(o.Seed, uint64(p))), sum: &sum, bar: bar, clock: clock, pg: pg}
		if p == o.Providers {
			// The last provider's rows are all the other tables will get: the writer builds
			// their indexes while the generator sorts the search index, instead of waiting
			// for the sort (6-8 s at 1M, 20-25 s before byteOrder) and building them after.
			g.whileSorting = func() error {
				clock.enter("indexes")
				err := build(notTerms)
				clock.enter("search index")
				return err
			}
		}
		if err := g.run(ctx); err != nil {
			return sum, err
		}
	}
	bar.phase("building indexes")
	clock.enter("indexes")
	if err := build(func(t string) bool { return !notTerms(t) }); err != nil {
		return sum, err
	}
	bar.phase("analyzing")
	clock.enter("analyze")
	if err := restore(); err != nil {
		return sum, err
	}
	// On PostgreSQL a VACUUM too, as after any bulk load: it sets the rows' hint bits and the
	// visibility map, so the first reads do not write and index-only scans (the agent search)
	// read no table pages (docs/performance.md).
	if pg != nil {
		err = exec("VACUUM (ANALYZE)")
	} else {
		err = analyzeSQLite(ctx, st, sum)
	}
	if err != nil {
		return sum, fmt.Errorf("analyze: %w", err)
	}
	clock.enter("")
	sum.Elapsed = time.Since(start)
	bar.done()
	return sum, nil
}

// generator writes one provider's data.
type generator struct {
	st    *store.Store
	o     Options
	p     int
	hash  string
	rnd   *rand.Rand
	sum   *Summary
	bar   *progress
	clock *phaseClock
	pg    *pgx.Conn // PostgreSQL: gen's own connection, rows go through COPY

	// whileSorting, when set, is a writer job run after the rows, while the generator sorts
	// the search index.
	whileSorting func() error

	providerID string
	plans      []planVersion
	building   *subprov.Building
	ported     bool
	invoiceSeq int

	buildings, coverage, units, ports, subscribers, contacts, lines, invoices, invLines, accounts,
	procCustomers, procMethods, simPorts, terms *batch

	index   termIndex
	indexer *indexer
}

// indexer adds subscribers' search terms to the term dictionary on a goroutine of its own, in
// order (so term ids, hence the data, stay deterministic): the dictionary is much of the
// generator's work, and the rows are ready for the writer sooner.
type indexer struct {
	index *termIndex
	batch []indexItem
	jobs  chan []indexItem
	done  chan struct{}
}

type indexItem struct {
	terms []string
	sub   int
}

func newIndexer(index *termIndex) *indexer {
	x := &indexer{index: index, jobs: make(chan []indexItem, 16), done: make(chan struct{})}
	go func() {
		defer close(x.done)
		for batch := range x.jobs {
			for _, it := range batch {
				for _, t := range it.terms {
					x.index.add(t, it.sub)
				}
			}
		}
	}()
	return x
}

func (x *indexer) add(terms []string, sub int) {
	x.batch = append(x.batch, indexItem{terms, sub})
	if len(x.batch) == 1000 {
		x.jobs <- x.batch
		x.batch = make([]indexItem, 0, 1000)
	}
}

// wait returns once every subscriber added is in the index.
func (x *indexer) wait() {
	if len(x.batch) > 0 {
		x.jobs <- x.batch
	}
	close(x.jobs)
	<-x.done
}

// termIndex holds a provider's search-index rows in memory until they are written in key
// order: each distinct term once (text and boxed for the insert), each row as one integer,
// term id in the high half and subscriber number in the low half. The rows hold no pointers,
// so the garbage collector never scans them, and they sort as plain integers.
type termIndex struct {
	ids  map[string]uint32
	text []string
	rows []uint64
}

// sized makes room for the index of n subscribers: about 19 rows and 8 distinct terms each,
// with room to spare (growing a map of millions of strings rehashes all of it each time it
// doubles).
func (x *termIndex) sized(n int) {
	x.ids = make(map[string]uint32, 9*n)
	x.text = make([]string, 0, 9*n)
	x.rows = make([]uint64, 0, 20*n)
}

func (x *termIndex) add(t string, sub int) {
	id, ok := x.ids[t]
	if !ok {
		if x.ids == nil {
			x.ids = map[string]uint32{}
		}
		id = uint32(len(x.text))
		x.ids[t] = id
		x.text = append(x.text, t)
	}
	x.rows = append(x.rows, uint64(id)<<32|uint64(uint32(sub)))
}

// sorted returns the rows in (term, subscriber) order, each as the term's rank in byte order
// (high half) and the subscriber number, and the terms by rank. It consumes the index.
func (x *termIndex) sorted() (rows []uint64, terms []string) {
	order := byteOrder(x.text)
	rank := make([]uint32, len(order))
	terms = make([]string, len(order))
	for r, id := range order {
		rank[id] = uint32(r)
		terms[r] = x.text[id]
	}
	rows = x.rows
	for i, v := range rows {
		rows[i] = uint64(rank[v>>32])<<32 | v&0xffffffff
	}
	radixSort(rows, nil)
	*x = termIndex{}
	return rows, terms
}

// byteOrder returns the indexes of text in the byte order of its strings. It radix-sorts the
// strings' first eight bytes, then sorts by comparison only each run of strings that share
// them. At 1M subscribers (eight million distinct terms) termIndex.sorted took 6-8 s this
// way, and 20-25 s with one comparison sort of all the terms, which reads two strings
// scattered over the heap at every step.
func byteOrder(text []string) []uint32 {
	heads := make([]uint64, len(text))
	order := make([]uint32, len(text))
	for i, t := range text {
		var b [8]byte
		copy(b[:], t)
		heads[i], order[i] = binary.BigEndian.Uint64(b[:]), uint32(i)
	}
	radixSort(heads, order)
	for lo := 0; lo < len(heads); {
		hi := lo + 1
		for hi < len(heads) && heads[hi] == heads[lo] {
			hi++
		}
		slices.SortFunc(order[lo:hi], func(a, b uint32) int { return strings.Compare(text[a], text[b]) })
		lo = hi
	}
	return order
}

// radixSort sorts keys in place, least significant byte first (8 passes of a counting sort),
// and moves ids (nil: none) with them: linear time, where a comparison sort of tens of
// millions of keys takes seconds.
func radixSort(keys []uint64, ids []uint32) {
	if len(keys) < 2 {
		return
	}
	buf := make([]uint64, len(keys))
	var idBuf []uint32
	if ids != nil {
		idBuf = make([]uint32, len(ids))
	}
	src, dst, srcIDs, dstIDs := keys, buf, ids, idBuf
	for shift := uint(0); shift < 64; shift += 8 {
		var count [257]int
		for _, x := range src {
			count[(x>>shift)&0xff+1]++
		}
		if count[(src[0]>>shift)&0xff+1] == len(src) { // every key has the same byte here: nothing to move
			continue
		}
		for i := 1; i < 257; i++ {
			count[i] += count[i-1]
		}
		for i, x := range src {
			b := (x >> shift) & 0xff
			dst[count[b]] = x
			if ids != nil {
				dstIDs[count[b]] = srcIDs[i]
			}
			count[b]++
		}
		src, dst, srcIDs, dstIDs = dst, src, dstIDs, srcIDs
	}
	if &src[0] != &keys[0] {
		copy(keys, src)
		copy(ids, srcIDs)
	}
}

type planVersion struct {
	id       string
	name     string
	price    subprov.Money
	down, up int
}

func (g *generator) run(ctx context.Context) error {
	if err := g.shell(ctx); err != nil {
		return err
	}
	w, d := newWriter(), g.st.Dialect
	g.buildings = newBatch(w, d, "buildings", "id", "street", "city", "postal_code", "province", "country", "line_type", "orderable", "presale", "search_key", "created_at")
	g.coverage = newBatch(w, d, "building_providers", "building_id", "provider_id")
	g.units = newBatch(w, d, "units", "id", "building_id", "unit_number", "created_at")
	g.ports = newBatch(w, d, "ports", "id", "building_id", "unit_id", "switch_name", "port_name", "location_hash", "location_identifier", "created_at")
	g.subscribers = newBatch(w, d, "subscribers", "id", "provider_id", "email", "customer_number", "processor_customer_id", "payment_method_id",
		"search_text", "search_terms", "search_card", "phone_digits", "created_at", "updated_at")
	g.contacts = newBatch(w, d, "contacts", "id", "subscriber_id", "role", "firstname", "lastname", "email", "phonenumber", "company", "updated_at")
	g.lines = newBatch(w, d, "subscriptions", "id", "provider_id", "subscriber_id", "plan_version_id", "building_id", "unit_id", "port_id",
		"location_key", "status", "workflow_state", "delivery_mode", "mac_address", "billing_owner", "billing_day", "processor_customer_id",
		"payment_method_id", "source", "started_at", "activated_at", "canceled_at", "ended_at", "cancel_reason", "status_before_cancel",
		"deprovisioned_at", "suspended_for", "vlan", "created_at", "updated_at")
	g.invoices = newBatch(w, d, "invoices", "id", "provider_id", "subscriber_id", "subscription_id", "number", "customer_number", "invoice_date",
		"period", "kind", "status", "net_minor", "tax_minor", "total_minor", "currency", "due_date", "paid_at", "created_at")
	g.invLines = newBatch(w, d, "invoice_lines", "id", "invoice_id", "position", "kind", "description", "unit_price_minor", "amount_minor")
	g.accounts = newBatch(w, d, "accounts", "id", "email", "provider_id", "subscriber_id", "password_hash", "password_set_at", "created_at")
	g.procCustomers = newBatch(w, d, "processor_customers", "id", "provider_id", "default_payment_method_id", "created_at")
	g.procMethods = newBatch(w, d, "processor_payment_methods", "id", "customer_id", "behaviour", "brand", "last4", "position", "created_at")
	g.simPorts = newBatch(w, d, "sim_ports", "switch_name", "port_name", "state", "vlan", "download_mbps", "upload_mbps", "mac_address", "updated_at")
	g.terms = newBatch(w, d, "customer_search_terms", "provider_id", "term", "subscriber_id")
	// Parents before children: a full batch first writes what its parents still buffer.
	all := []*batch{g.buildings, g.coverage, g.units, g.ports, g.procCustomers, g.procMethods, g.subscribers, g.contacts, g.accounts,
		g.lines, g.invoices, g.invLines, g.simPorts, g.terms}
	for i, b := range all {
		b.parents = all[:i]
	}

	n := g.o.Subscribers
	g.index.sized(n)
	g.indexer = newIndexer(&g.index)
	suites := n + n/(vacantEvery-1) + 1
	sub := 0
	pg := g.pg
	var tx *sql.Tx
	var ptx pgx.Tx
	inTx := func(fill func()) {
		w.do(func() error {
			var err error
			if pg != nil {
				ptx, err = pg.Begin(ctx)
			} else {
				tx, err = rawdb.Writer(g.st).BeginTx(ctx, nil)
			}
			if err != nil {
				return fmt.Errorf("begin: %w", err)
			}
			for _, b := range all {
				b.begin(tx, ptx)
			}
			return nil
		})
		fill()
		for _, b := range all {
			b.flush(ctx)
		}
		w.do(func() error {
			if pg != nil {
				return ptx.Commit(ctx)
			}
			return tx.Commit()
		})
	}
	for s := 0; s < suites && sub < n && !w.failed(); {
		inTx(func() {
			for end := sub + perTx; s < suites && sub < n && sub < end; s++ {
				if g.suite(ctx, s, sub) {
					sub++
				}
			}
		})
		g.bar.set(int64((g.p-1)*n + sub))
	}
	// The search index in key order: appends to its primary key instead of random inserts.
	g.bar.phase("search index")
	w.do(func() error { g.clock.enter("search index"); return nil }) // once the writer has written the rows
	if g.whileSorting != nil {
		w.do(g.whileSorting)
	}
	g.indexer.wait()
	rows, terms := g.index.sorted()
	g.sum.termKeys += int64(len(terms))
	// Boxed once: the rows' arguments share them instead of allocating one per row.
	src := &termSource{rows: rows, terms: make([]any, len(terms)), subs: make([]any, n)}
	for i, t := range terms {
		src.terms[i] = t
	}
	for i := range src.subs {
		src.subs[i] = SubscriberID(g.p, i)
	}
	if g.st.Dialect == store.SQLite {
		w.do(func() error { return g.insertTerms(ctx, src) })
		g.terms.rows += int64(len(rows))
	} else {
		for start := 0; start < len(rows) && !w.failed(); start += 20 * perTx {
			inTx(func() {
				for _, r := range rows[start:min(start+20*perTx, len(rows))] {
					g.terms.add(ctx, g.providerID, src.terms[r>>32], src.subs[r&0xffffffff])
				}
			})
		}
	}
	if err := w.wait(); err != nil {
		if tx != nil {
			tx.Rollback() //nolint:errcheck // the error that stopped the load is the one to report
			// The failed transaction's virtual tables, which the writer did not get to drop.
			for _, b := range all {
				err = errors.Join(err, b.closeSource(context.WithoutCancel(ctx), rawdb.Writer(g.st)))
			}
		}
		if ptx != nil {
			ptx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // likewise
		}
		return err
	}
	// New numbers continue after the generated ones.
	if _, err := rawdb.Writer(g.st).ExecContext(ctx, g.st.Dialect.Rebind(`UPDATE providers SET customer_seq = ?, document_seq = ? WHERE id = ?`),
		n, g.invoiceSeq, g.providerID); err != nil {
		return fmt.Errorf("set sequences: %w", err)
	}
	g.sum.Providers++
	g.sum.Buildings += g.buildings.rows
	g.sum.Units += g.units.rows
	g.sum.Ports += g.ports.rows
	g.sum.Subscribers += g.subscribers.rows
	g.sum.Subscriptions += g.lines.rows
	g.sum.Invoices += g.invoices.rows
	g.sum.Logins += g.accounts.rows
	g.sum.SearchTerms += g.terms.rows
	return nil
}

// analyzeSQLite gathers the planner's statistics table by table (each index sampled, with
// analysis_limit), but for the search index writes the ones gen knows exactly: even under
// analysis_limit, ANALYZE counts every entry of every index, which on the search index's 26
// million entries at 1M (19 million now) took 2 of its 4 s. gen runs on an empty database, so
// no older statistics of the search index are left behind.
func analyzeSQLite(ctx context.Context, st *store.Store, sum Summary) error {
	if _, err := rawdb.Writer(st).ExecContext(ctx, "PRAGMA analysis_limit = 1000"); err != nil {
		return err
	}
	defer rawdb.Writer(st).ExecContext(context.WithoutCancel(ctx), "PRAGMA analysis_limit = 0") //nolint:errcheck // the connection's default again
	tables, err := store.QueryStrings(ctx, st.R(), "tables", `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> ?`, termsTable)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if _, err := rawdb.Writer(st).ExecContext(ctx, `ANALYZE "`+t+`"`); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
	}
	if sum.SearchTerms > 0 { // ANALYZE writes no row for an empty index
		if err := writeTermStats(ctx, st, sum); err != nil {
			return fmt.Errorf("search index statistics: %w", err)
		}
	}
	// This connection loads the row written by hand too (the others on their next schema read).
	_, err = rawdb.Writer(st).ExecContext(ctx, "ANALYZE sqlite_schema")
	return err
}

// writeTermStats replaces the search index's sqlite_stat1 row with the one a full ANALYZE
// writes: its entries, then the average entries per provider, per (provider, term) and per
// whole key.
func writeTermStats(ctx context.Context, st *store.Store, sum Summary) error {
	// perKey is ANALYZE's average entries per distinct key: rounded up, but 1 where the keys
	// are almost all distinct (statGet in SQLite's analyze.c).
	perKey := func(keys int64) int64 {
		v := (sum.SearchTerms + keys - 1) / keys
		if v == 2 && sum.SearchTerms*10 <= keys*11 {
			v = 1
		}
		return v
	}
	stat := fmt.Sprintf("%d %d %d 1", sum.SearchTerms, perKey(sum.Providers), perKey(sum.termKeys))
	tx, err := rawdb.Writer(st).BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit, a no-op
	if _, err := tx.ExecContext(ctx, `DELETE FROM sqlite_stat1 WHERE tbl = ?`, termsTable); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)`, termsTable, termsTable, stat); err != nil {
		return err
	}
	return tx.Commit()
}

// insertTerms writes the sorted search-index rows on SQLite in one statement reading them
// from a virtual table (vtab.go); a writer job.
func (g *generator) insertTerms(ctx context.Context, src *termSource) error {
	v, err := createVtable(ctx, rawdb.Writer(g.st), "gen_terms", src)
	if err != nil {
		return fmt.Errorf("search index: %w", err)
	}
	_, err = rawdb.Writer(g.st).ExecContext(ctx, `INSERT INTO customer_search_terms (provider_id, term, subscriber_id)
		SELECT ?, term, subscriber_id FROM temp.gen_terms`, g.providerID)
	if err != nil {
		err = fmt.Errorf("insert into customer_search_terms: %w", err)
	}
	return errors.Join(err, v.drop(ctx, rawdb.Writer(g.st)))
}

// shell writes the provider, its API keys and plans through the fixture loader, as a
// provider's initial setup would be.
func (g *generator) shell(ctx context.Context) error {
	g.providerID = ProviderID(g.p)
	name := fmt.Sprintf("Generated Fibre %d", g.p)
	keys := []fixture.APIKey{{Key: AgentKey(g.p), Features: []string{"agent_api_access"}}}
	for k := 0; k < StoreKeys; k++ {
		keys = append(keys, fixture.APIKey{Key: StoreKey(g.p, k), Features: []string{}})
	}
	f := &fixture.File{Providers: []fixture.Provider{{ID: g.providerID, APIKeys: keys, WebhookSecret: WebhookSecret(g.p),
		Fields: providers.Fields{Name: name, TimeZone: "America/Toronto", Currency: "CAD", TaxRateBP: 1300,
			ServiceProviderDocumentID: fmt.Sprintf("gen%03d-spd", g.p), SupportGroup: name + " Tier 1"}}}}
	for k, speed := range []int{150, 500, 1000} {
		price := subprov.Money(4500 + 2000*k)
		pv := planVersion{id: PlanVersionID(g.p, k), name: fmt.Sprintf("Fibre %d", speed), price: price, down: speed, up: speed}
		g.plans = append(g.plans, pv)
		f.Plans = append(f.Plans, fixture.Plan{ID: fmt.Sprintf("9e%06x-0000-4000-8001-%012d", g.p, k+1), ProviderID: g.providerID, Name: pv.name,
			Versions: []fixture.PlanVersion{{ID: pv.id, MonthlyPrice: price.String(), SetupFee: "0.00", DownloadMbps: speed, UploadMbps: speed,
				StoreProductID: fmt.Sprintf("gen-sku-%d", speed)}}})
	}
	if _, err := fixture.Load(ctx, g.st, f, g.o.Now); err != nil {
		return fmt.Errorf("provider %d: %w", g.p, err)
	}
	return nil
}

// suite writes suite s (and its building when it is the first suite of one) and, unless the
// suite is kept vacant, subscriber n living there. It reports whether the suite is occupied.
func (g *generator) suite(ctx context.Context, s, n int) bool {
	now := g.o.Now
	if s%suitesPerBuilding == 0 {
		g.newBuilding(ctx, s/suitesPerBuilding)
	}
	b := g.building
	unitNumber := fmt.Sprintf("%d%02d", 1+(s%suitesPerBuilding)/10, 1+s%10)
	unitID := id(kindUnit, g.p, s)
	g.units.add(ctx, unitID, b.ID, unitNumber, now)
	portID, swName, portName := "", "", ""
	if g.ported {
		portID, swName = id(kindPort, g.p, s), fmt.Sprintf("gen%d-sw%d", g.p, s/suitesPerBuilding)
		portName = fmt.Sprintf("ge-0/0/%d", s%suitesPerBuilding)
		g.ports.add(ctx, portID, b.ID, unitID, swName, portName, locationHash(g.p, s),
			fmt.Sprintf("GEN%d-%d", g.p, s), now)
	}
	if s%vacantEvery == vacantEvery-1 {
		return false
	}
	g.subscriber(ctx, n, location{unitID: unitID, unitNumber: unitNumber, portID: portID, sw: swName, port: portName})
	return true
}

type location struct {
	unitID, unitNumber, portID, sw, port string
}

func (g *generator) newBuilding(ctx context.Context, k int) {
	c := cities[g.rnd.IntN(len(cities))]
	street := fmt.Sprintf("%d %s", 10+g.rnd.IntN(4990), c.streets[g.rnd.IntN(len(c.streets))])
	postal := fmt.Sprintf("%s%d%c %d%c%d", c.postalLetter, g.rnd.IntN(10), 'A'+rune(g.rnd.IntN(26)), g.rnd.IntN(10), 'A'+rune(g.rnd.IntN(26)), g.rnd.IntN(10))
	g.ported = k%portedEvery == 0
	lineType := subprov.LineSecond
	switch {
	case g.ported:
		lineType = subprov.LineFirst
	case k%portedEvery == 3:
		lineType = subprov.LineThird
	}
	g.building = &subprov.Building{ID: id(kindBuilding, g.p, k), Street: street, City: c.name, PostalCode: postal, Province: c.province,
		Country: "CA", LineType: lineType, Orderable: true}
	b := g.building
	g.buildings.add(ctx, b.ID, b.Street, b.City, b.PostalCode, b.Province, b.Country, string(b.LineType), true, false,
		serviceability.BuildingKey(b), g.o.Now)
	g.coverage.add(ctx, b.ID, g.providerID)
}

// status spreads lines over every status: mostly active, some pending, suspended, cancelled.
func (g *generator) status() subprov.Status {
	switch r := g.rnd.IntN(100); {
	case r < 84:
		return subprov.StatusActive
	case r < 89:
		return subprov.StatusPendingInstall
	case r < 92:
		return subprov.StatusSuspended
	default:
		return subprov.StatusCancelled
	}
}

// generatedEmail is provider p's n-th subscriber's address. A login's address is unique across
// the platform, and the names and domains repeat, so the address carries p and n: provider 1's
// as name+n (the data of one provider is unchanged), every other's as name+p.n.
func generatedEmail(local string, p, n int, domain string) string {
	if p == 1 {
		return fmt.Sprintf("%s%d@%s", local, n, domain)
	}
	return fmt.Sprintf("%s%d.%d@%s", local, p, n, domain)
}

func (g *generator) subscriber(ctx context.Context, n int, loc location) {
	now := g.o.Now
	b := g.building
	first, last := firstNames[g.rnd.IntN(len(firstNames))], lastNames[g.rnd.IntN(len(lastNames))]
	local := strings.Join(strings.Fields(strings.ToLower(fold(first)+"."+fold(last))), "")
	email := generatedEmail(local, g.p, n, mailDomains[g.rnd.IntN(len(mailDomains))])
	area := cityOf(b.City).areaCodes
	phone := fmt.Sprintf("+1 %s-%03d-%04d", area[g.rnd.IntN(len(area))], 200+g.rnd.IntN(800), g.rnd.IntN(10000))
	company := ""
	if g.rnd.IntN(20) == 0 {
		company = companies[g.rnd.IntN(len(companies))]
	}
	sub := &subprov.Subscriber{ID: SubscriberID(g.p, n), ProviderID: g.providerID, CustomerNumber: subprov.FormatCustomerNumber(int64(n + 1)),
		Holder: subprov.Contact{FirstName: first, LastName: last, Email: email, PhoneNumber: phone, Company: company}}
	platform := n%platformEvery == 0
	var custID, methodID any
	if platform {
		sub.ProcessorCustomerID, sub.PaymentMethodID = fmt.Sprintf("cus_gen%d_%d", g.p, n), fmt.Sprintf("pm_gen%d_%d", g.p, n)
		custID, methodID = sub.ProcessorCustomerID, sub.PaymentMethodID
		g.procCustomers.add(ctx, sub.ProcessorCustomerID, g.providerID, sub.PaymentMethodID, now)
		g.procMethods.add(ctx, sub.PaymentMethodID, sub.ProcessorCustomerID, "succeeds", "visa", fmt.Sprintf("%04d", n%10000), 0, now)
	}
	created := now.AddDate(0, 0, -30-g.rnd.IntN(1500))
	src := search.Source{CustomerNumber: sub.CustomerNumber, CustomerNumbers: []string{sub.CustomerNumber},
		Contacts: []search.Contact{{Role: "holder", FirstName: first, LastName: last, Email: email, Phone: phone, Company: company}},
		Locations: []search.Location{{Street: b.Street, City: b.City, PostalCode: b.PostalCode, Unit: loc.unitNumber,
			SubscriptionID: id(kindLine, g.p, n), BuildingID: b.ID, Province: b.Province, Country: b.Country}}}
	terms := src.Terms()
	g.subscribers.add(ctx, sub.ID, g.providerID, subprov.NormalizeEmail(email), sub.CustomerNumber, custID, methodID,
		store.SubscriberSearchText(sub), strings.Join(terms, " "), src.Card(), search.DigitsOnly(phone), created, created)
	g.contacts.add(ctx, id(kindContact, g.p, n), sub.ID, "holder", first, last, email, phone, company, created)
	if HasLogin(n) {
		g.accounts.add(ctx, id(kindAccount, g.p, n), subprov.NormalizeEmail(email), g.providerID, sub.ID, g.hash, created, created)
	}
	g.line(ctx, sub, n, loc, platform, created)
	g.indexer.add(terms, n)
	g.bar.tick()
}

// line writes subscriber n's subscription at loc, its sim port state and invoice history.
func (g *generator) line(ctx context.Context, sub *subprov.Subscriber, n int, loc location, platform bool, created time.Time) {
	plan := g.plans[g.rnd.IntN(len(g.plans))]
	status := g.status()
	owner, custID, methodID := subprov.BillingPartner, any(nil), any(nil)
	if platform {
		owner, custID, methodID = subprov.BillingPlatform, sub.ProcessorCustomerID, sub.PaymentMethodID
	}
	mode, portID, locationKey := subprov.DeliveryHomeDrop, any(nil), subprov.LocationKey(loc.unitID, loc.portID)
	if loc.portID != "" {
		mode, portID = subprov.DeliveryDirect, loc.portID
	}
	mac := fmt.Sprintf("02:%02x:%02x:%02x:%02x:%02x", g.p&0xff, (n>>24)&0xff, (n>>16)&0xff, (n>>8)&0xff, n&0xff)
	started := created.AddDate(0, 0, 7)
	var startedAt, activatedAt, canceledAt, endedAt, deprovisionedAt any
	workflow, cancelReason, before, suspendedFor, vlan := "installed", "", "", "", 0
	switch status {
	case subprov.StatusPendingInstall:
		workflow = "awaiting_install"
	case subprov.StatusCancelled:
		workflow, cancelReason, before = "cancelled", "moving", string(subprov.StatusActive)
		ended := started.Add(time.Duration(1+g.rnd.IntN(int(g.o.Now.Sub(started).Hours())/24+1)) * 24 * time.Hour / 2)
		startedAt, activatedAt, canceledAt, endedAt, deprovisionedAt = started.Format(time.DateOnly), started, ended.AddDate(0, 0, -30), ended, ended
	default:
		startedAt, activatedAt = started.Format(time.DateOnly), started
		if status == subprov.StatusSuspended {
			suspendedFor = "nonpayment"
		}
		if loc.portID != "" {
			workflow = "provisioned"
			vlan = switches.ServiceVLAN(switches.Port{Switch: loc.sw, Name: loc.port})
			mode := switches.ModeService
			if status == subprov.StatusSuspended {
				mode = switches.ModeSuspended
			}
			g.simPorts.add(ctx, loc.sw, loc.port, string(mode), vlan, plan.down, plan.up, mac, g.o.Now)
		}
	}
	lineID := id(kindLine, g.p, n)
	g.lines.add(ctx, lineID, g.providerID, sub.ID, plan.id, g.building.ID, loc.unitID, portID, locationKey, string(status),
		workflow, string(mode), mac, string(owner), 1, custID, methodID, "partner_api", startedAt, activatedAt, canceledAt, endedAt,
		cancelReason, before, deprovisionedAt, suspendedFor, vlan, created, created)
	if platform && (status == subprov.StatusActive || status == subprov.StatusSuspended) {
		g.history(ctx, sub, lineID, plan, status)
	}
}

// history writes the line's recurring invoices of the last months, the current one included
// (every line bills on day 1, so the current month's bill run has happened: serve over fresh
// data does not start with a bill run over every platform-billed line, which would load the
// measured scenarios): paid, except a suspended line's latest one.
func (g *generator) history(ctx context.Context, sub *subprov.Subscriber, lineID string, plan planVersion, status subprov.Status) {
	for m := historyMonths - 1; m >= 0; m-- {
		first := time.Date(g.o.Now.Year(), g.o.Now.Month()-time.Month(m), 1, 9, 0, 0, 0, time.UTC)
		g.invoiceSeq++
		invID := id(kindInvoice, g.p, g.invoiceSeq)
		tax := subprov.Money((int64(plan.price)*1300 + 5000) / 10000)
		state, paidAt := "paid", any(first.Add(time.Hour))
		if m == 0 && status == subprov.StatusSuspended {
			state, paidAt = "open", nil
		}
		date := first.Format(time.DateOnly)
		g.invoices.add(ctx, invID, g.providerID, sub.ID, lineID, billing.DocumentNumber(billing.InvoicePrefix, int64(g.invoiceSeq)), sub.CustomerNumber, date,
			first.Format("2006-01"), "recurring", state, int64(plan.price), int64(tax), int64(plan.price+tax), "CAD", date, paidAt, first)
		g.invLines.add(ctx, id(kindInvLine, g.p, g.invoiceSeq), invID, 0, "plan", plan.name+", "+first.Format("January 2006"),
			int64(plan.price), int64(plan.price))
	}
}

func cityOf(name string) city {
	for _, c := range cities {
		if c.name == name {
			return c
		}
	}
	return cities[0]
}

// fold makes a name e-mail safe: accents dropped, apostrophes and spaces removed.
func fold(s string) string { return folder.Replace(s) }

var folder = strings.NewReplacer("é", "e", "è", "e", "ê", "e", "ë", "e", "É", "E", "à", "a", "â", "a", "ç", "c", "ô", "o", "î", "i", "ï", "i",
	"ù", "u", "û", "u", "í", "i", "á", "a", "ó", "o", "'", "", " ", "")
