package testdb

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverdatabasesql"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/store"
)

// Schema is how far a database from MigratedURL is migrated.
type Schema int

const (
	// StoreSchema is the store's migrations (Open's).
	StoreSchema Schema = iota
	// AppSchema is the store's migrations and the job queue's (River's), as a service's start
	// or `subprov migrate` leaves a database.
	AppSchema
)

// On PostgreSQL, migrating a database takes seconds of the server's time (some two hundred
// DDL statements, each migration committed on its own under one advisory lock, which every
// test's migration on the server then waited for). MigratedURL instead copies a template
// database, migrated once per machine and set of migrations: CREATE DATABASE ... TEMPLATE
// copies its files in a fraction of that. The templates are named after a digest of the
// migrations, so a changed migration (another branch, an edited file) gets a template of its
// own; one is built under a session advisory lock, as <name>_building renamed once complete,
// so that the test processes of a `go test ./...` building it at once build it once and never
// copy a half-migrated one.
const (
	templatePrefix = "subprov_tmpl_"
	clonePrefix    = "subprov_t_"
	templateLock   = 7243101 // the advisory lock held while a template is looked up or built
	// staleClone is the age beyond which a copy is a leftover of a killed run (no test runs
	// this long: go test's default timeout is ten minutes).
	staleClone = 2 * time.Hour
	// staleTemplate is how long a template no test process has used is kept.
	staleTemplate = 24 * time.Hour
)

var (
	adminOnce sync.Once
	adminDB   *sql.DB
	adminErr  error

	templatesMu sync.Mutex
	templates   = map[templateKey]*templateResult{}
)

// templateKey names a template a test process builds or finds once.
type templateKey struct {
	engine string
	schema Schema
}

type templateResult struct {
	once sync.Once
	name string
	err  error
}

// MigratedURL returns the URL of a fresh database on engine for a test that migrates it to
// schema before anything else (Open, a service's start). It is a copy of a template already
// migrated to schema, so that this migration finds nothing to do: on PostgreSQL a database
// dropped when the test ends, on SQLite a file in the test's temporary directory. Where no
// template can be built (the role may not create databases, say) it is URL's empty database.
func MigratedURL(t testing.TB, engine string, schema Schema) string {
	t.Helper()
	if engine == "sqlite" {
		return sqliteCopy(t, schema)
	}
	base := os.Getenv(PostgresEnv)
	if base == "" {
		return URL(t, engine)
	}
	tmpl, err := template(base, schema)
	if err == nil {
		var u string
		if u, err = newDatabase(t, base, tmpl); err == nil {
			return u
		}
	}
	t.Logf("no copy of a template database (%v): migrating a fresh one", err)
	return URL(t, engine)
}

// admin is the pool on the configured database that creates and drops the test databases.
func admin(base string) (*sql.DB, error) {
	adminOnce.Do(func() {
		adminDB, adminErr = sql.Open("pgx", base)
		if adminErr == nil {
			adminDB.SetMaxOpenConns(2)
			adminDB.SetMaxIdleConns(1)
			adminDB.SetConnMaxIdleTime(time.Second)
		}
	})
	return adminDB, adminErr
}

// withDatabase is base with its database name replaced by name.
func withDatabase(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("parse %s: %w", PostgresEnv, err)
	}
	u.Path = "/" + name
	q := u.Query()
	if len(q) == 0 {
		q.Set("application_name", "subprov-test") // tests add parameters to the URL with "&"
	}
	withTestPools(q)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// withTestPools sizes the pool of reads of a store opened on a test database at one session: the
// suite runs many stores and services at once on one server (two packages at a time, several
// tests of each), within the server's default of 100 sessions, which four sessions more a store
// exceeded. The main pool keeps its size, so the job queue's workers run as they do in
// production; and one read session at a time would hang a read that waited for another, as a
// test would show. The store takes the parameter out before connecting.
func withTestPools(q url.Values) {
	q.Set("read_pool_max_conns", "1")
}

// WithoutTestPools is a test database's URL without what withTestPools added: for a test of the
// pools' defaults, or a release before the pool of reads, which does not know the parameter
// and would send it to the server (which refuses it).
func WithoutTestPools(t testing.TB, databaseURL string) string {
	t.Helper()
	u, err := url.Parse(databaseURL)
	if err != nil {
		t.Fatalf("parse %s: %v", databaseURL, err)
	}
	q := u.Query()
	q.Del("read_pool_max_conns")
	u.RawQuery = q.Encode()
	return u.String()
}

// newDatabase creates a database for t, a copy of the template tmpl (of the server's default
// template when empty), dropped when t ends, and returns its URL.
func newDatabase(t testing.TB, base, tmpl string) (string, error) {
	t.Helper()
	db, err := admin(base)
	if err != nil {
		return "", err
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := clonePrefix + strconv.FormatInt(time.Now().Unix(), 10) + "_" + hex.EncodeToString(b)
	create := "CREATE DATABASE " + name
	if tmpl != "" {
		create += " TEMPLATE " + tmpl
	}
	if _, err := db.Exec(create); err != nil {
		return "", fmt.Errorf("create test database: %w", err)
	}
	t.Cleanup(func() { drop(t, base, name) })
	return withDatabase(base, name)
}

// drops bounds the drops in flight, each on a session of its own (the server's sessions are
// shared by every test process, and a test's service opens several).
var drops = make(chan struct{}, 2)

// drop drops the test database name once the statement is sent, without waiting for the
// server to finish it: DROP DATABASE waits for a checkpoint, seconds on a busy server, and the
// server finishes a statement it received even if this process has exited by then. A drop
// that fails leaves a database that a later run drops (dropStale).
func drop(t testing.TB, base, name string) {
	drops <- struct{}{}
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, base)
	if err != nil {
		<-drops
		t.Errorf("drop test database %s: %v", name, err)
		return
	}
	sent := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
	go func() {
		defer func() { <-drops }()
		_, _ = sent.ReadAll()
		_ = conn.Close(ctx)
	}()
}

// template returns the name of the template database migrated to schema, building it the
// first time a process asks (when no earlier process built it).
func template(base string, schema Schema) (string, error) {
	return once(templateKey{"postgres", schema}, func() (string, error) { return ensureTemplate(base, schema) })
}

// once returns what build returns the first time the process asks for key.
func once(key templateKey, build func() (string, error)) (string, error) {
	templatesMu.Lock()
	r := templates[key]
	if r == nil {
		r = &templateResult{}
		templates[key] = r
	}
	templatesMu.Unlock()
	r.once.Do(func() { r.name, r.err = build() })
	return r.name, r.err
}

// templateName is the template's name: the schema it is migrated to and a digest of its
// migrations.
func templateName(engine string, schema Schema) (string, error) {
	h := sha256.New()
	h.Write([]byte(store.MigrationsDigest()))
	kind := "store"
	if schema == AppSchema {
		kind = "app"
		m, err := rivermigrate.New(riverDriver(engine, nil), nil)
		if err != nil {
			return "", fmt.Errorf("river migrator: %w", err)
		}
		for _, v := range m.AllVersions() {
			fmt.Fprintf(h, "%d %s\n%s\n", v.Version, v.Name, v.SQLUp)
		}
	}
	return templatePrefix + kind + "_" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// ensureTemplate builds the template for schema unless it exists, and drops what killed runs
// and old migrations left behind.
func ensureTemplate(base string, schema Schema) (name string, err error) {
	name, err = templateName("postgres", schema)
	if err != nil {
		return "", err
	}
	db, err := admin(base)
	if err != nil {
		return "", err
	}
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return "", fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `SELECT pg_advisory_lock($1)`, templateLock); err != nil {
		return "", fmt.Errorf("lock: %w", err)
	}
	defer func() {
		if _, uerr := conn.ExecContext(ctx, `SELECT pg_advisory_unlock($1)`, templateLock); uerr != nil {
			err = errors.Join(err, fmt.Errorf("unlock: %w", uerr))
		}
	}()
	if err := dropStale(ctx, conn, name); err != nil {
		return "", err
	}
	var exists bool
	if err := conn.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", fmt.Errorf("look up template: %w", err)
	}
	if !exists {
		if err := buildTemplate(ctx, conn, base, name, schema); err != nil {
			return "", err
		}
	}
	// The comment is when a test process last used the template (dropStale's clock).
	if _, err := conn.ExecContext(ctx, "COMMENT ON DATABASE "+name+" IS '"+strconv.FormatInt(time.Now().Unix(), 10)+"'"); err != nil {
		return "", fmt.Errorf("mark template used: %w", err)
	}
	return name, nil
}

// buildTemplate migrates a new database to schema and renames it to name once complete.
func buildTemplate(ctx context.Context, conn *sql.Conn, base, name string, schema Schema) error {
	building := name + "_building"
	if _, err := conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop unfinished template: %w", err)
	}
	if _, err := conn.ExecContext(ctx, "CREATE DATABASE "+building); err != nil {
		return fmt.Errorf("create template: %w", err)
	}
	u, err := withDatabase(base, building)
	if err != nil {
		return err
	}
	if err := migrate(ctx, u, schema); err != nil {
		_, _ = conn.ExecContext(ctx, "DROP DATABASE IF EXISTS "+building+" WITH (FORCE)")
		return fmt.Errorf("migrate template: %w", err)
	}
	// Nobody connects to a template (a copy needs it without connections), nor autovacuum.
	for _, q := range []string{
		"ALTER DATABASE " + building + " WITH ALLOW_CONNECTIONS false IS_TEMPLATE true",
		"ALTER DATABASE " + building + " RENAME TO " + name,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("finish template: %w", err)
		}
	}
	return nil
}

// migrate applies the migrations of schema to the database at u, as Open and a service's
// start would.
func migrate(ctx context.Context, u string, schema Schema) error {
	s, err := store.Open(ctx, u)
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		return err
	}
	if schema == AppSchema {
		engine := "postgres"
		if s.Dialect == store.SQLite {
			engine = "sqlite"
		}
		m, err := rivermigrate.New(riverDriver(engine, rawdb.Writer(s)), nil)
		if err != nil {
			return fmt.Errorf("river migrator: %w", err)
		}
		if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
			return fmt.Errorf("river migrate: %w", err)
		}
	}
	return nil
}

// riverDriver is River's driver for engine on db (nil for a driver that only lists its
// migrations), as the job queue uses it.
func riverDriver(engine string, db *sql.DB) riverdriver.Driver[*sql.Tx] {
	if engine == "sqlite" {
		return riversqlite.New(db)
	}
	return riverdatabasesql.New(db)
}

// dropStale drops the test databases killed runs left (older than staleClone) and the
// templates of other migrations no test process used for staleTemplate, keeping current.
func dropStale(ctx context.Context, conn *sql.Conn, current string) error {
	rows, err := conn.QueryContext(ctx, `SELECT datname, COALESCE(shobj_description(oid, 'pg_database'), '')
		FROM pg_database WHERE datname LIKE 'subprov\_t%'`)
	if err != nil {
		return fmt.Errorf("list test databases: %w", err)
	}
	var stale []string
	now := time.Now()
	for rows.Next() {
		var name, comment string
		if err := rows.Scan(&name, &comment); err != nil {
			rows.Close()
			return fmt.Errorf("list test databases: %w", err)
		}
		if isStale(name, comment, current, now) {
			stale = append(stale, name)
		}
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return fmt.Errorf("list test databases: %w", err)
	}
	for _, name := range stale {
		// A template is dropped only once it is no longer marked as one.
		for _, q := range []string{"ALTER DATABASE " + name + " IS_TEMPLATE false", "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("drop stale test database: %w", err)
			}
		}
	}
	return nil
}

// isStale reports whether the database name (with comment) is a leftover: a copy older than
// staleClone by the time in its name, an unfinished template, or a template other than current
// last used (by its comment) longer than staleTemplate ago.
func isStale(name, comment, current string, now time.Time) bool {
	unix := func(s string) (time.Time, bool) {
		n, err := strconv.ParseInt(s, 10, 64)
		return time.Unix(n, 0), err == nil
	}
	if rest, ok := strings.CutPrefix(name, clonePrefix); ok {
		stamp, _, _ := strings.Cut(rest, "_")
		at, ok := unix(stamp)
		return ok && now.Sub(at) > staleClone
	}
	if !strings.HasPrefix(name, templatePrefix) || name == current {
		return false
	}
	if strings.HasSuffix(name, "_building") {
		// Templates are built holding the lock dropStale runs under: this one's builder died.
		return true
	}
	at, ok := unix(comment)
	return !ok || now.Sub(at) > staleTemplate
}
