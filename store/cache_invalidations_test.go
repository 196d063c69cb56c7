package store_test

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestRememberedReadsForgetOnlyWhatChanged: a change to what a remembered read shows forgets
// that read, and only it: through the same store before the commit returns, through another
// store (another process) within the change feed's bound; a change to other rows, or to
// columns neither read shows, keeps it remembered.
func TestRememberedReadsForgetOnlyWhatChanged(t *testing.T) {
	// Not parallel: it checks the change feed's wall-clock bound, which a loaded machine stretches.
	testdb.EachMigrated(t, testdb.StoreSchema, func(t *testing.T, u string) {
		ctx := context.Background()
		s := testdb.Open(t, u)
		other := testdb.Open(t, u)
		loadDemo(t, s, time.Now())
		acc, err := s.AccountByEmail(ctx, fixture.DemoSubscriberEmail)
		if err != nil {
			t.Fatal(err)
		}
		keyHash := identity.HashSecret(fixture.DemoAgentKey)
		sub, provider := acc.SubscriberID, acc.ProviderID
		var line, planVersion, building string
		err = s.R().QueryRow(ctx, `SELECT id, plan_version_id, building_id FROM subscriptions WHERE subscriber_id = ? ORDER BY id LIMIT 1`, sub).
			Scan(&line, &planVersion, &building)
		if err != nil {
			t.Fatal(err)
		}
		remember := func(t *testing.T) {
			t.Helper()
			for end := time.Now().Add(2 * time.Second); !s.RemembersView(acc.ID) || !s.RemembersKey(keyHash); time.Sleep(2 * time.Millisecond) {
				if time.Now().After(end) {
					t.Fatal("the account view and the API key are never remembered")
				}
				if _, err := s.AccountView(ctx, acc.ID); err != nil {
					t.Fatal(err)
				}
				if _, _, err := s.APIKeyByHash(ctx, keyHash); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, tt := range []struct {
			name       string
			change     string // with fresh, its first parameter is a new row's id
			fresh      bool
			args       []any
			forgetView bool
			forgetKey  bool
		}{
			{name: "the holder's first name", change: `UPDATE contacts SET firstname = firstname || 'e' WHERE subscriber_id = ? AND role = 'holder'`,
				args: []any{sub}, forgetView: true},
			{name: "another subscriber's holder", change: `UPDATE contacts SET firstname = firstname || 'e' WHERE subscriber_id <> ? AND role = 'holder'`,
				args: []any{sub}},
			{name: "the subscriber's customer number", change: `UPDATE subscribers SET customer_number = customer_number || '9' WHERE id = ?`,
				args: []any{sub}, forgetView: true},
			{name: "the subscriber's search terms", change: `UPDATE subscribers SET search_terms = search_terms || ' x' WHERE id = ?`, args: []any{sub}},
			{name: "a line's status", change: `UPDATE subscriptions SET status = CASE status WHEN 'SUSPENDED' THEN 'ACTIVE' ELSE 'SUSPENDED' END WHERE id = ?`, args: []any{line}, forgetView: true},
			{name: "a line's workflow state", change: `UPDATE subscriptions SET workflow_state = 'provisioned' WHERE id = ?`, args: []any{line}},
			{name: "a new line of the subscriber", change: `INSERT INTO subscriptions (id, provider_id, subscriber_id, plan_version_id, building_id,
				location_key, status, delivery_mode, source, created_at, updated_at)
				VALUES (?, ?, ?, ?, ?, 'cache-test', 'PENDING', 'direct', 'test', ?, ?)`, fresh: true,
				args: []any{provider, sub, planVersion, building, time.Now().UTC(), time.Now().UTC()}, forgetView: true},
			{name: "a checkout session of the login", change: `INSERT INTO checkout_sessions (id, provider_id, plan_version_id, building_id,
				delivery_mode, status, account_id, created_at) VALUES (?, ?, ?, ?, 'direct', 'pending', ?, ?)`, fresh: true,
				args: []any{provider, planVersion, building, acc.ID, time.Now().UTC()}, forgetView: true},
			{name: "the login's token generation", change: `UPDATE accounts SET token_generation = token_generation + 1 WHERE id = ?`,
				args: []any{acc.ID}, forgetView: true},
			{name: "the login's last second factor step", change: `UPDATE accounts SET totp_last_step = totp_last_step + 1 WHERE id = ?`, args: []any{acc.ID}},
			{name: "the provider's name", change: `UPDATE providers SET name = name || ' ' WHERE id = ?`, args: []any{provider}, forgetView: true, forgetKey: true},
			{name: "the provider's event counter", change: `UPDATE providers SET event_seq = event_seq + 1 WHERE id = ?`, args: []any{provider}},
			{name: "another provider's name", change: `UPDATE providers SET name = name || ' ' WHERE id <> ?`, args: []any{provider}},
			{name: "a plan's name", change: `UPDATE plans SET name = name || ' ' WHERE provider_id = ?`, args: []any{provider}, forgetView: true, forgetKey: true},
			{name: "a plan version's price", change: `UPDATE plan_versions SET monthly_price_minor = monthly_price_minor + 1 WHERE id = ?`,
				args: []any{planVersion}, forgetView: true, forgetKey: true},
			{name: "an API key's features", change: `UPDATE api_keys SET features = features || ',x' WHERE key_hash = ?`, args: []any{keyHash},
				forgetView: true, forgetKey: true},
			{name: "an API key's last use", change: `UPDATE api_keys SET last_used_at = ? WHERE key_hash = ?`, args: []any{time.Now().UTC(), keyHash}},
		} {
			for i, via := range []struct {
				name string
				s    *store.Store
			}{{"this store", s}, {"another store", other}} {
				t.Run(tt.name+" through "+via.name, func(t *testing.T) {
					for attempt := 1; ; attempt++ {
						remember(t)
						resets := s.RememberedResets()
						args := tt.args
						if tt.fresh {
							args = append([]any{fmt.Sprintf("11111111-0000-4000-8000-%02d%010d", attempt, i)}, args...)
						}
						err := via.s.InTx(ctx, func(tx *store.Tx) error {
							_, err := tx.Exec(ctx, tt.change, args...)
							return err
						})
						if err != nil {
							t.Fatal(err)
						}
						if via.s != s || !(tt.forgetView || tt.forgetKey) {
							// Another process's change is read within the bound; a change that forgets
							// nothing is given as long (several reads of the log) to show it.
							time.Sleep(60 * time.Millisecond)
						}
						viewGone, keyGone := !s.RemembersView(acc.ID), !s.RemembersKey(keyHash)
						if s.RememberedResets() != resets && attempt < 3 {
							continue // a gap in the feed's reads (a loaded machine) forgot everything: try again
						}
						if viewGone != tt.forgetView {
							t.Errorf("account view forgotten: %v, want %v", viewGone, tt.forgetView)
						}
						if keyGone != tt.forgetKey {
							t.Errorf("API key forgotten: %v, want %v", keyGone, tt.forgetKey)
						}
						return
					}
				})
			}
		}
		t.Run("a transaction in progress across the feed's reads is read when it commits", func(t *testing.T) {
			remember(t)
			later := make(chan error, 1)
			err := other.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.Exec(ctx, `UPDATE contacts SET firstname = firstname || 'e' WHERE subscriber_id = ? AND role = 'holder'`, sub)
				// A transaction begun after this one commits first (on PostgreSQL; SQLite's one
				// writer runs it after): the feed's next snapshots list this one as in progress
				// below their upper bound.
				go func() {
					later <- s.InTx(ctx, func(tx *store.Tx) error {
						_, err := tx.Exec(ctx, `UPDATE providers SET event_seq = event_seq + 1 WHERE id = ?`, provider)
						return err
					})
				}()
				time.Sleep(50 * time.Millisecond) // several of the feed's reads see it in progress
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := <-later; err != nil {
				t.Fatal(err)
			}
			for start := time.Now(); s.RemembersView(acc.ID); time.Sleep(2 * time.Millisecond) {
				if time.Since(start) > time.Second {
					t.Fatal("the account view is still remembered a second after the change committed")
				}
			}
		})
	})
}

// TestChangeLogTriggersFollowEveryColumnShown: every column the remembered reads show, of every
// table they read, fires its table's trigger when an update sets it (and, where the trigger
// compares old and new values, is compared), so a column added to a read and not to its
// trigger fails here; the tables with triggers are those whose writes make a commit read the
// change log.
func TestChangeLogTriggersFollowEveryColumnShown(t *testing.T) {
	t.Parallel()
	tables := map[string]string{"a": "accounts", "p": "providers", "b": "subscribers", "h": "contacts", "s": "subscriptions",
		"v": "plan_versions", "pl": "plans", "c": "checkout_sessions", "k": "api_keys"}
	shown := map[string]map[string]bool{}
	for _, q := range []string{store.AccountViewQuery, store.APIKeyQuery} {
		for _, m := range regexp.MustCompile(`\b(a|p|b|h|s|v|pl|c|k)\.([a-z_]+)\b`).FindAllStringSubmatch(q, -1) {
			table := tables[m[1]]
			if shown[table] == nil {
				shown[table] = map[string]bool{}
			}
			shown[table][m[2]] = true
		}
	}
	for _, c := range strings.Split(store.ProviderColumns, ",") {
		shown["providers"][strings.TrimSpace(c)] = true
	}
	if len(shown) != len(tables) {
		t.Fatalf("read the columns of %d tables, want %d: %v", len(shown), len(tables), shown)
	}
	updateOf := regexp.MustCompile(`(?i)UPDATE OF ([a-z_, ]+?) (OR |ON )`)
	var want []string
	for table := range shown {
		want = append(want, table)
	}
	slices.Sort(want)
	if got := slices.Sorted(slices.Values(store.RememberedTables)); !slices.Equal(got, want) {
		t.Errorf("tables whose writes read the change log: %v, want the tables read: %v", got, want)
	}
	testdb.EachMigrated(t, testdb.StoreSchema, func(t *testing.T, u string) {
		ctx := context.Background()
		s := testdb.Open(t, u)
		q := `SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ? AND name LIKE 'cache_invalidations_%'`
		if s.Dialect == store.Postgres {
			q = `SELECT pg_get_triggerdef(t.oid) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
				WHERE c.relname = ? AND t.tgname LIKE 'cache_invalidations_%'`
		}
		for table, cols := range shown {
			rows, err := s.R().Query(ctx, q, table)
			if err != nil {
				t.Fatal(err)
			}
			followed, anyColumn := map[string]bool{}, false
			for rows.Next() {
				var def string
				if err := rows.Scan(&def); err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(strings.ToUpper(def), "UPDATE") {
					continue
				}
				m := updateOf.FindStringSubmatch(def)
				if m == nil {
					anyColumn = true // fires on an update of any column
					continue
				}
				compares := regexp.MustCompile(`(?i)old\.[a-z_]+ IS (NOT|DISTINCT FROM) new\.`).MatchString(def)
				for _, c := range strings.Split(m[1], ",") {
					c = strings.TrimSpace(c)
					followed[c] = true
					if compares && !regexp.MustCompile(`(?i)old\.`+c+` IS (NOT|DISTINCT FROM) new\.`+c+`\b`).MatchString(def) {
						t.Errorf("%s: its trigger fires on an update of %s and does not compare its old and new values", table, c)
					}
				}
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			rows.Close()
			if anyColumn {
				continue
			}
			if len(followed) == 0 {
				t.Errorf("%s: no trigger follows its updates", table)
			}
			for c := range cols {
				if !followed[c] {
					t.Errorf("%s.%s is shown by a remembered read, and an update of it fires no trigger", table, c)
				}
			}
		}
	})
}
