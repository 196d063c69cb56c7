package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/sqltext"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
)

// TestSubscriberListPages: paging through the operations surface's list lists each filter's
// subscribers once, in id order, whichever way the store reads them (a provider's own index, a
// status's lines, a search's matches a slice of ids at a time, the primary key): the same ids
// as a plain read of the filter without pages. 320 subscribers a provider and pages of 7 cross
// the slices (50 ids or more) a search's matches, a status's lines and the lines being
// provisioned or failing it are read in; five subscribers have two suspended lines, and are
// listed once; some of provider 2's suspended and active subscribers have ids among provider
// 1's, as providers' ids interleave where they are not generated provider by provider.
func TestSubscriberListPages(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		one, two := twoProviders(t, s, 320)
		interleave(t, s, one, two, "SUSPENDED", 6)
		interleave(t, s, one, two, "ACTIVE", 20)
		secondLines(t, s, two, "SUSPENDED", 5)
		markWorkflow(t, s, store.ProvisioningFailed, 0, 230, one, two)
		markWorkflow(t, s, store.Provisioning, 1, 30, one)
		markWorkflow(t, s, store.Provisioning, 1, 30, two)
		// A search's matches: provider 1's even subscribers, twice, with provider 2's first ten
		// (another provider's ids, which the provider's filter leaves out).
		var matches []string
		for n := 318; n >= 0; n -= 2 {
			matches = append(matches, gen.SubscriberID(1, n), gen.SubscriberID(1, n))
		}
		for n := range 10 {
			matches = append(matches, gen.SubscriberID(2, n))
		}
		for _, c := range []struct {
			name string
			f    store.SubscriberFilter
		}{
			{"a provider's", store.SubscriberFilter{ProviderID: two}},
			{"a provider's suspended", store.SubscriberFilter{ProviderID: two, Status: "SUSPENDED"}},
			{"a provider's active", store.SubscriberFilter{ProviderID: one, Status: "ACTIVE"}},
			{"a provider's suspended in a workflow state", store.SubscriberFilter{ProviderID: two, Status: "SUSPENDED", WorkflowState: "provisioned"}},
			{"a provider's in a workflow state", store.SubscriberFilter{ProviderID: two, WorkflowState: "awaiting_install"}},
			{"a provider's failing provisioning", store.SubscriberFilter{ProviderID: two, WorkflowState: store.ProvisioningFailed}},
			{"every provider's failing provisioning", store.SubscriberFilter{WorkflowState: store.ProvisioningFailed}},
			{"a provider's active failing provisioning", store.SubscriberFilter{ProviderID: one, Status: "ACTIVE", WorkflowState: store.ProvisioningFailed}},
			{"a provider's being provisioned", store.SubscriberFilter{ProviderID: two, WorkflowState: store.Provisioning}},
			{"every provider's being provisioned", store.SubscriberFilter{WorkflowState: store.Provisioning}},
			{"every provider's cancelled", store.SubscriberFilter{Status: "CANCELLED"}},
			{"every provider's suspended", store.SubscriberFilter{Status: "SUSPENDED"}},
			{"every provider's pending installation", store.SubscriberFilter{Status: "PENDING_INSTALL"}},
			{"every provider's suspended being provisioned", store.SubscriberFilter{Status: "SUSPENDED", WorkflowState: store.Provisioning}},
			{"every provider's suspended in a workflow state", store.SubscriberFilter{Status: "SUSPENDED", WorkflowState: "provisioned"}},
			{"every provider's active", store.SubscriberFilter{Status: "ACTIVE"}},
			{"every provider's", store.SubscriberFilter{}},
			{"a search's matches", store.SubscriberFilter{ProviderID: one, IDs: matches}},
			{"a search's active matches", store.SubscriberFilter{ProviderID: one, Status: "ACTIVE", IDs: matches}},
			{"a search's matches over every provider", store.SubscriberFilter{IDs: matches}},
			{"no match", store.SubscriberFilter{ProviderID: one, IDs: []string{}}},
		} {
			t.Run(c.name, func(t *testing.T) {
				want := plainList(t, s, c.f)
				if len(want) == 0 && c.f.IDs == nil {
					t.Fatalf("the generated data has no subscriber for %+v: the case checks nothing", c.f)
				}
				var got []string
				page := subprov.Page{Limit: 7}
				for pages := 0; ; pages++ {
					if pages > len(want) {
						t.Fatalf("more pages than subscribers: %v", got)
					}
					rows, err := s.Subscribers(ctx, c.f, page)
					if err != nil {
						t.Fatal(err)
					}
					rows, next := subprov.Cut(page, rows, store.SubscriberKey)
					for _, r := range rows {
						got = append(got, r.ID)
						if r.Holder.LastName == "" {
							t.Errorf("%s listed without its holder", r.ID)
						}
					}
					if next == "" {
						break
					}
					if page, err = subprov.ParsePage(7, true, next); err != nil {
						t.Fatal(err)
					}
				}
				if !slices.Equal(got, want) {
					t.Errorf("paged through %d subscribers, want %d:\n got %v\nwant %v", len(got), len(want), got, want)
				}
			})
		}
	})
}

// twoProviders generates two providers of n subscribers each and returns their ids.
func twoProviders(t *testing.T, s *store.Store, n int) (string, string) {
	t.Helper()
	if _, err := gen.Run(context.Background(), s, gen.Options{Subscribers: n, Providers: 2, Seed: 5, Now: time.Date(2026, 5, 10, 0, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	return gen.ProviderID(1), gen.ProviderID(2)
}

// plainList is the filter's subscribers by id, read the plain way: every subscriber checked.
func plainList(t *testing.T, s *store.Store, f store.SubscriberFilter) []string {
	t.Helper()
	where := []string{"1 = 1"}
	var args []any
	add := func(cond string, arg any) { where, args = append(where, cond), append(args, arg) }
	if f.ProviderID != "" {
		add("provider_id = ?", f.ProviderID)
	}
	if f.Status != "" {
		add("id IN (SELECT subscriber_id FROM subscriptions WHERE status = ?)", f.Status)
	}
	if f.WorkflowState != "" {
		add("id IN (SELECT subscriber_id FROM subscriptions WHERE workflow_state = ?)", f.WorkflowState)
	}
	ids, err := sqltext.Strings(context.Background(), s.R(), "plain list", `SELECT id FROM subscribers WHERE `+strings.Join(where, " AND ")+` ORDER BY id`, args...)
	if err != nil {
		t.Fatal(err)
	}
	if f.IDs != nil {
		ids = slices.DeleteFunc(ids, func(id string) bool { return !slices.Contains(f.IDs, id) })
	}
	return ids
}

// TestSubscriberListReadsItsIndexes: a page of a provider's subscribers is a range of its own
// index by id, its subscribers with a line in a status a range of the lines' index by provider
// and status, and the lines being provisioned (listed), whose provisioning failed (listed or
// counted), every provider's lines pending installation or suspended (listed) and the overdue
// invoices (counted, the provider's and every provider's) ranges of their partial indexes, on
// both engines; a page of subscribers by a status or a workflow state joins those ranges with
// the subscribers and their holders through their keys.
// Through the primary key, a provider's page read the subscribers of every provider before it:
// at 100,000 subscribers over ten providers, the last provider's first page read 90,000 of them.
func TestSubscriberListReadsItsIndexes(t *testing.T) {
	t.Parallel()
	want := map[string]string{"a provider's page": "subscribers_provider", "subscribers with a line in status": "subscriptions_provider_status",
		"a page of subscribers with a line in status": "subscriptions_provider_status"}
	testdb.EachStoreWithNewStatistics(t, func(t *testing.T, s *store.Store) {
		testdb.CheckIndexedPlans(t, s, store.SubscriberListStatements(s.Dialect, "p-list"), func(name string) string {
			if w, ok := want[name]; ok {
				return w
			}
			switch {
			case strings.Contains(name, "overdue"):
				return "invoices_open"
			case strings.HasSuffix(name, "SUSPENDED"):
				return "subscriptions_suspended"
			case strings.HasSuffix(name, "PENDING_INSTALL"):
				return "subscriptions_pending_install"
			case strings.Contains(name, "being provisioned"): // the index's name whole, not the failed lines' index
				if s.Dialect == store.Postgres {
					return "using subscriptions_provisioning on"
				}
				return "INDEX subscriptions_provisioning ("
			}
			return "subscriptions_provisioning_failed"
		})
		// A page of the subscribers of lines in a status or workflow state is one statement: its
		// subscribers and their holders are read through their keys in a nested loop, not read
		// in order and merged or hashed with the page's ids.
		byKey := map[store.Dialect][]string{
			store.SQLite:   {"SEARCH b USING INDEX sqlite_autoindex_subscribers_1 (id=?)", "SEARCH h USING INDEX sqlite_autoindex_contacts_2 (subscriber_id=? AND role=?)"},
			store.Postgres: {"Index Scan using subscribers_pkey on subscribers b", "Index Scan using contacts_subscriber_id_role_key on contacts h"},
		}[s.Dialect]
		for name, st := range store.SubscriberListStatements(s.Dialect, "p-list") {
			if !strings.HasPrefix(name, "a page of ") {
				continue
			}
			plan := testdb.IndexedQueryPlan(t, s, st.Query, st.Args...)
			if strings.Contains(plan, "Merge Join") || strings.Contains(plan, "Hash Join") {
				t.Errorf("%s: plan merges or hashes:\n%s", name, plan)
			}
			for _, w := range byKey {
				if !strings.Contains(plan, w) {
					t.Errorf("%s: plan does not read %q:\n%s", name, w, plan)
				}
			}
		}
	})
}

// markWorkflow puts n of the providers' lines that are not cancelled in a workflow state: every
// second one in id order, from the first (first = 0) or the second (1) on.
func markWorkflow(t *testing.T, s *store.Store, state string, first, n int, providers ...string) {
	t.Helper()
	ctx := context.Background()
	ids, err := sqltext.Strings(ctx, s.R(), "lines to mark", `SELECT id FROM subscriptions WHERE provider_id IN (`+sqltext.Placeholders(len(providers))+`)
		AND status <> 'CANCELLED' ORDER BY id`, sqltext.Args(providers[0], providers[1:])...)
	if err != nil || len(ids) < first+2*n {
		t.Fatalf("lines to mark %s: %v (%d, want %d)", state, err, len(ids), first+2*n)
	}
	for i := first; i < first+2*n; i += 2 {
		if _, err := rawdb.Writer(s).ExecContext(ctx, s.Dialect.Rebind(`UPDATE subscriptions SET workflow_state = ? WHERE id = ?`),
			state, ids[i]); err != nil {
			t.Fatal(err)
		}
	}
}

// secondLines gives n of the provider's subscribers with a line in status a second line in
// it: a copy of that line, at a place of its own.
func secondLines(t *testing.T, s *store.Store, providerID, status string, n int) {
	t.Helper()
	ids, err := sqltext.Strings(context.Background(), s.R(), "lines to copy", `SELECT id FROM subscriptions WHERE provider_id = ? AND status = ? ORDER BY id LIMIT ?`, providerID, status, n)
	if err != nil || len(ids) < n {
		t.Fatalf("lines to copy: %v (%d of %d)", err, len(ids), n)
	}
	for _, id := range ids {
		copyRow(t, s, "subscriptions", id, lineCopy("id || '-second'", "subscriber_id", "-second"))
	}
}

// interleave gives provider to n subscribers more, each with a line in status, whose ids sort
// among provider from's (gen numbers the subscribers provider by provider, so each provider's
// come apart in id order): copies of n of to's subscribers with a line in status, their holder
// and that line, under the id of every seventh of from's subscribers with the status appended.
func interleave(t *testing.T, s *store.Store, from, to, status string, n int) {
	t.Helper()
	ctx := context.Background()
	type line struct{ id, subscriber string }
	lines, err := sqltext.QueryAll(ctx, s.R(), "lines to interleave", func(r interface{ Scan(...any) error }) (line, error) {
		var l line
		return l, r.Scan(&l.id, &l.subscriber)
	}, `SELECT id, subscriber_id FROM subscriptions WHERE provider_id = ? AND status = ? AND subscriber_id IS NOT NULL
		ORDER BY id LIMIT ?`, to, status, n)
	if err != nil || len(lines) < n {
		t.Fatalf("lines to interleave: %v (%d of %d)", err, len(lines), n)
	}
	among, err := sqltext.Strings(ctx, s.R(), "subscribers to interleave with", `SELECT id FROM subscribers WHERE provider_id = ? ORDER BY id`, from)
	if err != nil || len(among) < 7*n {
		t.Fatalf("subscribers to interleave with: %v (%d, want %d)", err, len(among), 7*n)
	}
	for i, l := range lines {
		suffix := "-" + strings.ToLower(status)
		id := "'" + strings.ReplaceAll(among[7*i], "'", "''") + suffix + "'"
		copyRow(t, s, "subscribers", l.subscriber, map[string]string{"id": id, "email": "email || '" + suffix + "'", "customer_number": "NULL",
			"legacy_customer_number": "NULL", "search_terms": "NULL", "search_card": "NULL", "search_row": "NULL"})
		var holder string
		if err := s.R().QueryRow(ctx, `SELECT id FROM contacts WHERE subscriber_id = ? AND role = 'holder'`, l.subscriber).Scan(&holder); err != nil {
			t.Fatal(err)
		}
		copyRow(t, s, "contacts", holder, map[string]string{"id": "id || '" + suffix + "'", "subscriber_id": id})
		copyRow(t, s, "subscriptions", l.id, lineCopy("id || '"+suffix+"'", id, suffix))
	}
}

// lineCopy is copyRow's changes for a copy of a line: its id and subscriber (expressions), its
// place with suffix appended, and no port nor external ids, which are the original's.
func lineCopy(id, subscriber, suffix string) map[string]string {
	return map[string]string{"id": id, "subscriber_id": subscriber, "location_key": "location_key || '" + suffix + "'",
		"external_subscription_id": "NULL", "checkout_session_id": "NULL", "port_id": "NULL"}
}

// copyRow inserts a copy of table's row of id, each column named in set given its expression
// (of the row's columns) instead.
func copyRow(t *testing.T, s *store.Store, table, id string, set map[string]string) {
	t.Helper()
	ctx := context.Background()
	rows, err := s.R().Query(ctx, `SELECT * FROM `+table+` LIMIT 0`)
	if err != nil {
		t.Fatal(err)
	}
	cols, err := rows.Columns()
	rows.Close()
	if err != nil {
		t.Fatal(err)
	}
	exprs := slices.Clone(cols)
	for i, c := range cols {
		if e, ok := set[c]; ok {
			exprs[i] = e
		}
	}
	if _, err := rawdb.Writer(s).ExecContext(ctx, s.Dialect.Rebind(`INSERT INTO `+table+` (`+strings.Join(cols, ", ")+`)
		SELECT `+strings.Join(exprs, ", ")+` FROM `+table+` WHERE id = ?`), id); err != nil {
		t.Fatalf("copy %s %s: %v", table, id, err)
	}
}

// The partial indexes of the lines whose provisioning failed and of the open invoices hold
// packages provisioning's and billing's values.
func TestPartialIndexesHoldTheRulesValues(t *testing.T) {
	if store.ProvisioningFailed != provisioning.WorkflowProvisioningFailed {
		t.Errorf("store.ProvisioningFailed = %q, provisioning's state is %q", store.ProvisioningFailed, provisioning.WorkflowProvisioningFailed)
	}
	if store.Provisioning != provisioning.WorkflowProvisioning {
		t.Errorf("store.Provisioning = %q, provisioning's state is %q", store.Provisioning, provisioning.WorkflowProvisioning)
	}
	if store.InvoiceOpen != billing.InvoiceOpen {
		t.Errorf("store.InvoiceOpen = %q, billing's status is %q", store.InvoiceOpen, billing.InvoiceOpen)
	}
}

// TestLineCountsFollowTheLines: the lines' counts by status (line_counts, which the overview
// reads) follow every write to the lines, through the triggers on both engines: a line added,
// its status changed forth and back, another column changed, its provider changed, a line
// removed, many lines changed at once; and subprov gen's load leaves them right.
func TestLineCountsFollowTheLines(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		one, two := twoProviders(t, s, 60)
		lines, err := sqltext.Strings(ctx, s.R(), "lines", `SELECT id FROM subscriptions WHERE provider_id = ? AND status = 'ACTIVE' ORDER BY id LIMIT 4`, one)
		if err != nil || len(lines) < 4 {
			t.Fatalf("lines: %v %v", lines, err)
		}
		line := func(_, n int) string { return lines[n] }
		exec := func(q string, args ...any) {
			t.Helper()
			if _, err := rawdb.Writer(s).ExecContext(ctx, s.Dialect.Rebind(q), args...); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		check := func(step string) {
			t.Helper()
			ov, err := s.Overview(ctx, store.OverviewQuery{ProviderID: one, InstallStates: []string{"open"}})
			if err != nil {
				t.Fatal(err)
			}
			all, err := s.Overview(ctx, store.OverviewQuery{InstallStates: []string{"open"}})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				got      map[string]int
				provider string
			}{{ov.Lines, one}, {all.Lines, ""}} {
				want := map[string]int{}
				q := `SELECT status, COUNT(*) FROM subscriptions WHERE provider_id = ? OR ? = '' GROUP BY status`
				rows, err := s.R().Query(ctx, q, c.provider, c.provider)
				if err != nil {
					t.Fatal(err)
				}
				for rows.Next() {
					var st string
					var n int
					if err := rows.Scan(&st, &n); err != nil {
						t.Fatal(err)
					}
					want[st] = n
				}
				rows.Close()
				if fmt.Sprint(c.got) != fmt.Sprint(want) {
					t.Errorf("after %s, %q's lines by status %v, counting them %v", step, c.provider, c.got, want)
				}
			}
		}
		check("gen's load")
		secondLines(t, s, one, "ACTIVE", 3)
		check("lines added")
		exec(`UPDATE subscriptions SET status = 'SUSPENDED' WHERE id = ?`, line(1, 0))
		exec(`UPDATE subscriptions SET status = 'CANCELLED' WHERE id = ?`, line(1, 0))
		check("a line's status changed twice")
		exec(`UPDATE subscriptions SET status = 'ACTIVE' WHERE id = ?`, line(1, 0))
		check("its status changed back")
		exec(`UPDATE subscriptions SET workflow_state = 'installed', status = status WHERE id = ?`, line(1, 1))
		check("another column changed")
		exec(`UPDATE subscriptions SET provider_id = ? WHERE id = ?`, two, line(1, 2))
		check("a line's provider changed")
		exec(`DELETE FROM subscriptions WHERE id = ?`, line(1, 2)+"-second")
		exec(`DELETE FROM invoices WHERE subscription_id = ?`, line(1, 3))
		exec(`DELETE FROM subscriptions WHERE id = ?`, line(1, 3))
		check("lines removed")
		exec(`UPDATE subscriptions SET status = 'SUSPENDED' WHERE provider_id = ? AND status = 'ACTIVE'`, one)
		check("many lines changed at once")
	})
}
