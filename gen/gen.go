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
// 7: the e-mail addresses of providers after the first carry the provider's number; 8: the
// engines' own search index, migration 0050).
const Version = 8

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
}

// Phase is the time gen's writer spent in one step: "rows" (generating and writing every table,
// on SQLite the search index's FTS5 table too), "indexes" (building the secondary indexes
// dropped for the load, on PostgreSQL the search index's GIN index among them), "search index"
// (SQLite: merging the FTS5 table's segments into one), "analyze" (planner statistics; on
// PostgreSQL with a VACUUM).
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
	"invoices", "invoice_lines", "accounts", "processor_customers", "processor_payment_methods", "sim_ports"}

// searchTable is SQLite's search index, an FTS5 table (the store's search_index.go).
const searchTable = "customer_search"

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
	if err := drop(ctx, st, "INDEX", indexes); err != nil {
		return sum, err
	}
	triggers, err := loadTriggers(ctx, st, bulkTables)
	if err != nil {
		return sum, err
	}
	if err := drop(ctx, st, "TRIGGER", triggers); err != nil {
		return sum, err
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
	for p := 1; p <= o.Providers; p++ {
		clock.enter("rows")
		g := &generator{st: st, o: o, p: p, hash: hash, rnd: rand.New(rand.NewPCG(o.Seed, uint64(p))), sum: &sum, bar: bar, clock: clock, pg: pg}
		if err := g.run(ctx); err != nil {
			return sum, err
		}
	}
	bar.phase("building indexes")
	clock.enter("indexes")
	if err := inThreads(ctx, st, func() error { return create(exec, "INDEX", indexes) }); err != nil {
		return sum, err
	}
	if pg == nil {
		// The FTS5 table's segments, one or more per transaction of the load, merged into one.
		bar.phase("search index")
		clock.enter("search index")
		if err := exec(`INSERT INTO ` + searchTable + ` (` + searchTable + `) VALUES ('optimize')`); err != nil {
			return sum, fmt.Errorf("search index: %w", err)
		}
	}
	// The lines' counts by status, which the load did not keep: on SQLite their triggers were
	// dropped for it (loadTriggers), on PostgreSQL its session skipped them
	// (session_replication_role; where the role may not, they kept the counts, recounted anyway).
	if err := create(exec, "TRIGGER", triggers); err != nil {
		return sum, err
	}
	if err := st.RecountLines(ctx); err != nil {
		return sum, err
	}
	// What the remembered reads' triggers logged where the load's session could not skip them:
	// no process read the database during the load.
	if err := st.EmptyChangeLog(ctx); err != nil {
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
		err = analyzeSQLite(ctx, st)
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

	providerID string
	plans      []planVersion
	building   *subprov.Building
	ported     bool
	invoiceSeq int

	buildings, coverage, units, ports, subscribers, contacts, lines, invoices, invLines, accounts,
	procCustomers, procMethods, simPorts, search *batch
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
	subCols := []string{"id", "provider_id", "email", "customer_number", "processor_customer_id", "payment_method_id",
		"search_terms", "search_card", "created_at", "updated_at"}
	if d == store.SQLite {
		subCols = append(subCols, "search_row")
	}
	g.subscribers = newBatch(w, d, "subscribers", subCols...)
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
	// Parents before children: a full batch first writes what its parents still buffer.
	all := []*batch{g.buildings, g.coverage, g.units, g.ports, g.procCustomers, g.procMethods, g.subscribers, g.contacts, g.accounts,
		g.lines, g.invoices, g.invLines, g.simPorts}
	if d == store.SQLite {
		// SQLite's search index: a row per subscriber, whose rowid the subscriber's row names.
		g.search = newBatch(w, d, searchTable, "rowid", "subscriber_id", "provider_id", "terms")
		all = append(all, g.search)
	}
	for i, b := range all {
		b.parents = all[:i]
	}

	n := g.o.Subscribers
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
	return nil
}

// analyzeSQLite gathers the planner's statistics table by table, each index sampled (with
// analysis_limit, though SQLite still counts each index's entries). Neither the search index's
// virtual table nor the tables FTS5 keeps it in (shadow tables), which FTS5 reads by key only,
// are analyzed: counting their entries reads the whole index, gigabytes at ten million
// subscribers.
func analyzeSQLite(ctx context.Context, st *store.Store) error {
	if _, err := rawdb.Writer(st).ExecContext(ctx, "PRAGMA analysis_limit = 1000"); err != nil {
		return err
	}
	defer rawdb.Writer(st).ExecContext(context.WithoutCancel(ctx), "PRAGMA analysis_limit = 0") //nolint:errcheck // the connection's default again
	tables, err := store.QueryStrings(ctx, st.R(), "tables", `SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table'
		AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return err
	}
	for _, t := range tables {
		if _, err := rawdb.Writer(st).ExecContext(ctx, `ANALYZE "`+t+`"`); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
	}
	// This connection loads the statistics too (the others on their next schema read).
	_, err = rawdb.Writer(st).ExecContext(ctx, "ANALYZE sqlite_schema")
	return err
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
	g.sum.SearchTerms += int64(len(terms))
	row := []any{sub.ID, g.providerID, subprov.NormalizeEmail(email), sub.CustomerNumber, custID, methodID,
		strings.Join(terms, " "), src.Card(), created, created}
	if g.search != nil {
		// The search index's row: rowids number the subscribers of every provider in turn.
		searchRow := int64((g.p-1)*g.o.Subscribers + n + 1)
		row = append(row, searchRow)
		g.search.add(ctx, searchRow, sub.ID, g.providerID, store.SearchLexemes(g.providerID, terms))
	}
	g.subscribers.add(ctx, row...)
	g.contacts.add(ctx, id(kindContact, g.p, n), sub.ID, "holder", first, last, email, phone, company, created)
	if HasLogin(n) {
		g.accounts.add(ctx, id(kindAccount, g.p, n), subprov.NormalizeEmail(email), g.providerID, sub.ID, g.hash, created, created)
	}
	g.line(ctx, sub, n, loc, platform, created)
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
