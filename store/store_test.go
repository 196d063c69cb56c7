package store_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

var now = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// eachGeneratedStore runs fn on a store of each engine that subprov gen filled with o.
func eachGeneratedStore(t *testing.T, o gen.Options, fn func(t *testing.T, s *store.Store)) {
	t.Helper()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		if _, err := gen.Run(context.Background(), s, o); err != nil {
			t.Fatal(err)
		}
		fn(t, s)
	})
}

func TestRebind(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d    store.Dialect
		in   string
		want string
	}{
		{store.SQLite, "SELECT ? , ?", "SELECT ? , ?"},
		{store.Postgres, "SELECT ? , ?", "SELECT $1 , $2"},
		{store.Postgres, "SELECT 1", "SELECT 1"},
		{store.Postgres, "UPDATE t SET a = ?, b = ? WHERE id IN (?, ?, ?)", "UPDATE t SET a = $1, b = $2 WHERE id IN ($3, $4, $5)"},
	}
	for _, tt := range tests {
		for range 2 { // converted, then from the memo
			if got := tt.d.Rebind(tt.in); got != tt.want {
				t.Errorf("%v.Rebind(%q) = %q, want %q", tt.d, tt.in, got, tt.want)
			}
		}
	}
}

func seedProvider(t *testing.T, s *store.Store, id string) { testdb.SeedProvider(t, s, id, now) }

// loadDemo loads the demo fixture into s as of at.
func loadDemo(t *testing.T, s *store.Store, at time.Time) {
	t.Helper()
	var f fixture.File
	if err := json.Unmarshal(fixture.DemoJSON, &f); err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.LoadAtCost(context.Background(), s, &f, at, identity.TestPasswordCost); err != nil {
		t.Fatal(err)
	}
}

func TestUniqueViolationIsRecognisedOnEachEngine(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seedProvider(t, s, "p1")
		err := s.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO providers (id, name, time_zone, currency, webhook_secret, webhook_secret_hash, created_at)
				VALUES ('p1', 'x', 'UTC', 'CAD', 's', 'h2', ?)`, now)
			return err
		})
		if !errors.Is(err, subprov.ErrDuplicate) || errors.Is(err, subprov.ErrNotFound) {
			t.Fatalf("duplicate id: err = %v, want subprov.ErrDuplicate", err)
		}
		if _, coded := subprov.AsError(err); coded {
			t.Errorf("a unique violation is a coded error (%v): only a capability decides what it means to a caller", err)
		}
		// Another constraint is no duplicate.
		err = s.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO providers (id, name, time_zone, currency, webhook_secret, webhook_secret_hash, created_at)
				VALUES ('p2', NULL, 'UTC', 'CAD', 's', 'h3', ?)`, now)
			return err
		})
		if err == nil || errors.Is(err, subprov.ErrDuplicate) {
			t.Fatalf("a NULL name: err = %v, want an error that is no duplicate", err)
		}
		if errors.Is(errors.New("other"), subprov.ErrDuplicate) {
			t.Fatal("a plain error is not a unique violation")
		}
	})
}

func TestNoRowsIsNotFoundOnEachEngine(t *testing.T) {
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		var id string
		err := s.R().QueryRow(ctx, `SELECT id FROM providers WHERE id = ?`, "absent").Scan(&id)
		if !errors.Is(err, subprov.ErrNotFound) || errors.Is(err, subprov.ErrDuplicate) {
			t.Errorf("read pool: err = %v, want subprov.ErrNotFound", err)
		}
		if _, coded := subprov.AsError(err); coded {
			t.Errorf("an absent row is a coded error (%v): it must stay internal unless a capability says otherwise", err)
		}
		err = s.InTx(ctx, func(tx *store.Tx) error {
			return tx.QueryRow(ctx, `SELECT id FROM providers WHERE id = ?`, "absent").Scan(&id)
		})
		if !errors.Is(err, subprov.ErrNotFound) {
			t.Errorf("in a transaction: err = %v, want subprov.ErrNotFound", err)
		}
		if _, err := s.Provider(ctx, "absent"); !errors.Is(err, subprov.ErrNotFound) {
			t.Errorf("Provider: err = %v, want subprov.ErrNotFound", err)
		}
	})
}

func TestCustomerNumbersAreSequentialPerProviderAndSkipTakenOnes(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seedProvider(t, s, "p1")
		seedProvider(t, s, "p2")
		var got []string
		err := s.InTx(ctx, func(tx *store.Tx) error {
			// 0000-002 is taken by hand (a fixture), so allocation skips it.
			if err := tx.UpsertSubscriber(ctx, &subprov.Subscriber{ID: "s-taken", ProviderID: "p1", CustomerNumber: "0000-002",
				Holder: subprov.Contact{FirstName: "A", LastName: "B", Email: "a@b.ca"}}, now); err != nil {
				return err
			}
			for _, p := range []string{"p1", "p1", "p2"} {
				n, err := tx.NextCustomerNumber(ctx, p)
				if err != nil {
					return err
				}
				got = append(got, n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"0000-001", "0000-003", "0000-001"}
		for i := range want {
			if got[i] != want[i] || !subprov.ValidCustomerNumber(got[i]) {
				t.Fatalf("allocated %v, want %v", got, want)
			}
		}
	})
}

func TestEnsureSubscriberSkipsNumbersTakenAndReusesTheEmail(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		seedProvider(t, s, "p1")
		err := s.InTx(ctx, func(tx *store.Tx) error {
			// 0000-002 is taken by hand (a fixture): the insert that meets it tries the next.
			return tx.UpsertSubscriber(ctx, &subprov.Subscriber{ID: "s-taken", ProviderID: "p1", CustomerNumber: "0000-002",
				Holder: subprov.Contact{FirstName: "A", LastName: "B", Email: "a@b.ca"}}, now)
		})
		if err != nil {
			t.Fatal(err)
		}
		steps := []struct {
			email   string
			created bool
			number  string
		}{
			{"one@example.ca", true, "0000-001"},
			{"two@example.ca", true, "0000-003"},
			{" One@Example.ca ", false, "0000-001"}, // the same person, however the e-mail is typed
			{"a@b.ca", false, "0000-002"},
			{"three@example.ca", true, "0000-004"},
		}
		ids := map[string]string{}
		for _, st := range steps {
			var sub *subprov.Subscriber
			var created bool
			if err := s.InTx(ctx, func(tx *store.Tx) error {
				var err error
				sub, created, err = tx.EnsureSubscriber(ctx, "p1", subprov.Contact{FirstName: "F", LastName: "L", Email: st.email}, now)
				return err
			}); err != nil {
				t.Fatalf("EnsureSubscriber(%q): %v", st.email, err)
			}
			if created != st.created || sub.CustomerNumber != st.number {
				t.Fatalf("EnsureSubscriber(%q) = number %q, created %v; want %q, %v", st.email, sub.CustomerNumber, created, st.number, st.created)
			}
			if id, seen := ids[sub.CustomerNumber]; seen && id != sub.ID {
				t.Fatalf("number %s names two subscribers: %s and %s", sub.CustomerNumber, id, sub.ID)
			}
			ids[sub.CustomerNumber] = sub.ID
		}
		var n int
		if err := s.R().QueryRow(ctx, `SELECT COUNT(*) FROM subscribers WHERE provider_id = 'p1'`).Scan(&n); err != nil || n != 4 {
			t.Fatalf("subscribers of p1 = %d (%v), want 4", n, err)
		}
	})
}

func TestTokensAreSingleUseUnderConcurrency(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if err := s.InTx(ctx, func(tx *store.Tx) error {
			return tx.InsertToken(ctx, "h1", subprov.MailedToken{Kind: "password_reset", SubjectID: "acc", ExpiresAt: now.Add(time.Minute)}, now)
		}); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins := 0
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				err := s.InTx(ctx, func(tx *store.Tx) error {
					_, err := tx.ConsumeToken(ctx, "h1", []string{"password_reset"}, now)
					return err
				})
				if err == nil {
					mu.Lock()
					wins++
					mu.Unlock()
				} else if !errors.Is(err, subprov.ErrNotFound) {
					t.Errorf("consume: %v", err)
				}
			}()
		}
		wg.Wait()
		if wins != 1 {
			t.Fatalf("token consumed %d times", wins)
		}
		// Expired and wrong-kind tokens are refused.
		err := s.InTx(ctx, func(tx *store.Tx) error {
			if err := tx.InsertToken(ctx, "h2", subprov.MailedToken{Kind: "setup", SubjectID: "acc", ExpiresAt: now}, now); err != nil {
				return err
			}
			_, err := tx.ConsumeToken(ctx, "h2", []string{"setup"}, now)
			return err
		})
		if !errors.Is(err, subprov.ErrNotFound) {
			t.Fatalf("expired token: %v", err)
		}
	})
}

func TestSettingOrInitKeepsTheFirstValue(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		a, err := s.SettingOrInit(ctx, "secret", "first")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := s.SettingOrInit(ctx, "secret", "second")
		if a != "first" || b != "first" {
			t.Fatalf("got %q then %q", a, b)
		}
	})
}

// TestPostgresPoolSize: a PostgreSQL store's main pool has PostgresConns sessions, or as many
// as DATABASE_URL's pool_max_conns says, and its pool of reads, apart from it,
// PostgresReadConns, or as many as read_pool_max_conns says; the parameters never reach the
// server, which would refuse them as unknown (the store would not open).
func TestPostgresPoolSize(t *testing.T) {
	t.Parallel()
	if os.Getenv(testdb.PostgresEnv) == "" {
		t.Skip(testdb.PostgresEnv + " is not set")
	}
	ctx := context.Background()
	u := testdb.URL(t, "postgres")
	testdb.Open(t, u)                 // migrated, so the lines below read a table of the schema
	u = testdb.WithoutTestPools(t, u) // the suite's size taken out, the defaults apply
	tests := []struct {
		name        string
		param       string
		main, reads int
	}{
		{"default", "", store.PostgresConns, store.PostgresReadConns},
		{"set", "&pool_max_conns=3", 3, store.PostgresReadConns},
		{"both set", "&read_pool_max_conns=2&pool_max_conns=5", 5, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := store.Open(ctx, u+tc.param)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			w, r := rawdb.Writer(s), rawdb.Reader(s)
			if w == r {
				t.Error("the reads share the main pool")
			}
			if got := w.Stats().MaxOpenConnections; got != tc.main {
				t.Errorf("main pool of %d sessions, want %d", got, tc.main)
			}
			if got := r.Stats().MaxOpenConnections; got != tc.reads {
				t.Errorf("pool of reads of %d sessions, want %d", got, tc.reads)
			}
			for name, db := range map[string]*sql.DB{"main": w, "reads": r} {
				var n int
				if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM providers`).Scan(&n); err != nil {
					t.Errorf("query through the %s pool: %v", name, err)
				}
			}
		})
	}
}
