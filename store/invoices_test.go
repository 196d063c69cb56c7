package store_test

import (
	"context"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/gen"
	"github.com/subprov/subprov/internal/rawdb"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestInvoiceOncePerPeriodKindAndOccasion: migration 0019 on a database written before it
// keeps every invoice and everything that refers to one (lines, charges, credit notes; on
// SQLite, whose table is rebuilt, with foreign keys still enforced afterwards), and from then
// on a line has one invoice per period, kind and occasion: a recurring invoice issued twice is
// written once, while each reactivation of the month gets its own, itself written once.
func TestInvoiceOncePerPeriodKindAndOccasion(t *testing.T) {
	t.Parallel()
	for _, engine := range testdb.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			s, err := store.Open(ctx, testdb.URL(t, engine))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			if _, err := s.MigrateTo(ctx, 18); err != nil {
				t.Fatal(err)
			}
			dropStandIn, err := s.StandInLaterTables(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := gen.Run(ctx, s, gen.Options{Subscribers: 40, Providers: 1, Seed: 7, Now: now}); err != nil {
				t.Fatal(err)
			}
			if err := dropStandIn(); err != nil {
				t.Fatal(err)
			}
			strings := func(q string, args ...any) []string {
				return testdb.Strings(t, rawdb.Writer(s).QueryContext, s.Dialect.Rebind(q), args...)
			}
			exec := func(q string, args ...any) error {
				_, err := rawdb.Writer(s).ExecContext(ctx, s.Dialect.Rebind(q), args...)
				return err
			}
			invoices := strings(`SELECT id FROM invoices ORDER BY id`)
			if len(invoices) == 0 {
				t.Fatal("the generated data has no invoices")
			}
			first := invoices[0]
			var inv subprov.Invoice
			if err := rawdb.Writer(s).QueryRowContext(ctx, s.Dialect.Rebind(`SELECT provider_id, subscriber_id, subscription_id, period FROM invoices WHERE id = ?`), first).
				Scan(&inv.ProviderID, &inv.SubscriberID, &inv.SubscriptionID, &inv.Period); err != nil {
				t.Fatal(err)
			}
			if err := exec(`INSERT INTO charges (id, provider_id, invoice_id, idempotency_key, amount_minor, status, created_at) VALUES ('ch-0019', ?, ?, 'k-0019', 100, 'succeeded', ?)`,
				inv.ProviderID, first, now); err != nil {
				t.Fatal(err)
			}
			if err := exec(`INSERT INTO credit_notes (id, provider_id, subscriber_id, subscription_id, invoice_id, number, state, reason, amount_minor,
				remaining_minor, currency, created_at, state_changed_at) VALUES ('cn-0019', ?, ?, ?, ?, 'CN-0019', 'open', 'cancellation', 100, 100, 'CAD', ?, ?)`,
				inv.ProviderID, inv.SubscriberID, inv.SubscriptionID, first, now, now); err != nil {
				t.Fatal(err)
			}
			referring := func() []string {
				return strings(`SELECT i.id || ':' || (SELECT COUNT(*) FROM invoice_lines l WHERE l.invoice_id = i.id)
					|| ':' || (SELECT COUNT(*) FROM charges c WHERE c.invoice_id = i.id)
					|| ':' || (SELECT COUNT(*) FROM credit_notes n WHERE n.invoice_id = i.id) FROM invoices i ORDER BY i.id`)
			}
			before := referring()

			if applied, err := s.MigrateTo(ctx, 19); err != nil || len(applied) != 1 {
				t.Fatalf("migrate applied %v (%v), want 0019 alone", applied, err)
			}
			if got := referring(); len(got) != len(before) || got[0] != before[0] || got[len(got)-1] != before[len(before)-1] {
				t.Fatalf("invoices with their lines, charges and credit notes: %v, were %v", got, before)
			}
			if s.Dialect == store.SQLite {
				if bad := strings(`SELECT "table" || ':' || rowid FROM pragma_foreign_key_check`); len(bad) != 0 {
					t.Fatalf("foreign keys broken by the rebuild: %v", bad)
				}
			}
			if err := exec(`INSERT INTO invoice_lines (id, invoice_id, position, kind, description, unit_price_minor, amount_minor)
				VALUES ('orphan', 'no-such-invoice', 0, 'plan', 'x', 1, 1)`); err == nil {
				t.Fatal("a line for a missing invoice was accepted: foreign keys are not enforced after the migration")
			}

			insert := func(kind, occasion string) bool {
				t.Helper()
				n := inv
				n.ID, n.Number, n.Kind, n.Occasion, n.Status, n.Currency, n.InvoiceDate = store.NewID(), "INV-"+store.NewID(), kind, occasion, "open", "CAD", "2026-11-21"
				var inserted bool
				if err := s.InTx(ctx, func(tx *store.Tx) error {
					var err error
					inserted, err = tx.InsertInvoice(ctx, &n, []subprov.InvoiceLine{{Kind: "plan", Description: "x", UnitPrice: 100, Amount: 100}}, nil, now)
					return err
				}); err != nil {
					t.Fatal(err)
				}
				return inserted
			}
			kind := strings(`SELECT kind FROM invoices WHERE id = ?`, first)[0]
			tests := []struct {
				name, kind, occasion string
				want                 bool
			}{
				{"the period's invoice again (a bill run that runs twice)", kind, "", false},
				{"a reactivation", "reactivation", "cancellation:2026-11-21T15:00:00Z", true},
				{"the same reactivation again", "reactivation", "cancellation:2026-11-21T15:00:00Z", false},
				{"another reactivation of the month", "reactivation", "cancellation:2026-11-22T09:30:00.123456Z", true},
				{"a reactivation completed by a technician", "reactivation", "reinstall:job-1", true},
				{"a final invoice per cancellation", "final", "cancellation:2026-11-21T15:00:00Z", true},
				{"another cancellation's final invoice", "final", "cancellation:2026-11-22T09:30:00.123456Z", true},
			}
			for _, tt := range tests {
				if got := insert(tt.kind, tt.occasion); got != tt.want {
					t.Errorf("%s: inserted %v, want %v", tt.name, got, tt.want)
				}
			}
		})
	}
}

// TestAnAdjustmentIsUsedOnce: a plan-change line waiting for the next document is used by one
// document only. A second transaction that read it open (a bill run and a cancellation of the
// same line at once) fails when it comes to use it, instead of billing it a second time.
func TestAnAdjustmentIsUsedOnce(t *testing.T) {
	t.Parallel()
	eachGeneratedStore(t, gen.Options{Subscribers: 20, Providers: 1, Seed: 7, Now: now}, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		var line, provider string
		if err := rawdb.Writer(s).QueryRowContext(ctx, `SELECT id, provider_id FROM subscriptions ORDER BY id LIMIT 1`).Scan(&line, &provider); err != nil {
			t.Fatal(err)
		}
		err := s.InTx(ctx, func(tx *store.Tx) error {
			return tx.InsertAdjustment(ctx, provider, line, subprov.Adjustment{Kind: "next_invoice_line", Description: "upgrade", Amount: 300}, now)
		})
		if err != nil {
			t.Fatal(err)
		}
		open, err := s.OpenAdjustments(ctx, s.R(), line)
		if err != nil || len(open) != 1 {
			t.Fatalf("open adjustments %v, %v; want one", open, err)
		}
		ids := []string{open[0].ID}
		for _, tc := range []struct {
			name    string
			consume func(tx *store.Tx) error
			ok      bool
		}{
			{"by an invoice", func(tx *store.Tx) error { return tx.ConsumeAdjustments(ctx, ids, "inv-1", now) }, true},
			{"again, by a credit note", func(tx *store.Tx) error { return tx.ConsumeAdjustmentsByCredit(ctx, ids, "cn-1", now) }, false},
			{"again, by an invoice", func(tx *store.Tx) error { return tx.ConsumeAdjustments(ctx, ids, "inv-2", now) }, false},
		} {
			if err := s.InTx(ctx, func(tx *store.Tx) error { return tc.consume(tx) }); (err == nil) != tc.ok {
				t.Fatalf("%s: %v, want success %v", tc.name, err, tc.ok)
			}
		}
		used := testdb.Strings(t, rawdb.Writer(s).QueryContext, s.Dialect.Rebind(`SELECT COALESCE(invoice_id, '') || '|' || COALESCE(credit_note_id, '') FROM billing_adjustments WHERE id = ?`), ids[0])
		if len(used) != 1 || used[0] != "inv-1|" {
			t.Fatalf("the adjustment is used by %v, want the first invoice alone", used)
		}
	})
}

// TestInvoicesNameExistingLinesAndSubscribers: an invoice names a line and (but for an
// anonymous line's) a subscriber that exist, whether written alone or in a bill run's batch,
// and keeps naming existing ones when updated; a line or subscriber that invoices name is not
// deleted. Each refused write changes nothing. (On PostgreSQL these are checks of each
// statement's rows rather than foreign keys; on SQLite, foreign keys.)
func TestInvoicesNameExistingLinesAndSubscribers(t *testing.T) {
	t.Parallel()
	eachGeneratedStore(t, gen.Options{Subscribers: 20, Providers: 1, Seed: 7, Now: now}, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		var inv subprov.Invoice
		if err := rawdb.Writer(s).QueryRowContext(ctx, `SELECT id, provider_id, subscriber_id, subscription_id FROM invoices ORDER BY id LIMIT 1`).
			Scan(&inv.ID, &inv.ProviderID, &inv.SubscriberID, &inv.SubscriptionID); err != nil {
			t.Fatal(err)
		}
		count := func(q string, args ...any) int {
			t.Helper()
			var n int
			if err := rawdb.Writer(s).QueryRowContext(ctx, s.Dialect.Rebind(q), args...).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		// issued returns a new invoice of the period 2030-01 naming line and subscriber.
		issued := func(line, subscriber string) subprov.IssuedInvoice {
			return subprov.IssuedInvoice{Invoice: &subprov.Invoice{ID: store.NewID(), ProviderID: inv.ProviderID, SubscriberID: subscriber,
				SubscriptionID: line, Number: "T-" + store.NewID(), InvoiceDate: "2030-01-01", Period: "2030-01", Kind: "recurring",
				Status: "open", Currency: "CAD", Net: 100, Total: 100},
				Lines: []subprov.InvoiceLine{{Kind: "plan", Description: "x", UnitPrice: 100, Amount: 100}}}
		}
		insertOne := func(n subprov.IssuedInvoice) func(tx *store.Tx) error {
			return func(tx *store.Tx) error {
				_, err := tx.InsertInvoice(ctx, n.Invoice, n.Lines, nil, now)
				return err
			}
		}
		insertBatch := func(batch ...subprov.IssuedInvoice) func(tx *store.Tx) error {
			return func(tx *store.Tx) error {
				_, err := tx.InsertInvoices(ctx, batch, now)
				return err
			}
		}
		exec := func(q string, args ...any) func(tx *store.Tx) error {
			return func(tx *store.Tx) error {
				_, err := tx.Exec(ctx, q, args...)
				return err
			}
		}
		var other string // another line, for a batch's second invoice
		if err := rawdb.Writer(s).QueryRowContext(ctx, s.Dialect.Rebind(`SELECT id FROM subscriptions WHERE id <> ? ORDER BY id LIMIT 1`), inv.SubscriptionID).Scan(&other); err != nil {
			t.Fatal(err)
		}
		good := issued(inv.SubscriptionID, inv.SubscriberID)
		// A subscriber of its own, with nothing but an invoice naming it: deleting it is refused
		// by the invoice alone (a generated subscriber has contacts and lines that refuse too).
		lone := "lone-subscriber"
		if _, err := rawdb.Writer(s).ExecContext(ctx, s.Dialect.Rebind(`INSERT INTO subscribers (id, provider_id, email, created_at, updated_at)
			VALUES (?, ?, 'lone@example.com', ?, ?)`), lone, inv.ProviderID, now, now); err != nil {
			t.Fatal(err)
		}
		loneInvoice := issued(other, lone)
		loneInvoice.Invoice.Period = "2029-12"
		if err := s.InTx(ctx, insertOne(loneInvoice)); err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name  string
			write func(tx *store.Tx) error
		}{
			{"an invoice of a missing line", insertOne(issued("no-such-line", inv.SubscriberID))},
			{"an invoice of a missing subscriber", insertOne(issued(inv.SubscriptionID, "no-such-subscriber"))},
			{"a batch with one invoice of a missing line", insertBatch(good, issued("no-such-line", inv.SubscriberID))},
			{"a batch with one invoice of a missing subscriber", insertBatch(good, issued(other, "no-such-subscriber"))},
			{"an invoice moved to a missing line", exec(`UPDATE invoices SET subscription_id = 'no-such-line' WHERE id = ?`, inv.ID)},
			{"an invoice moved to a missing subscriber", exec(`UPDATE invoices SET subscriber_id = 'no-such-subscriber' WHERE id = ?`, inv.ID)},
			{"an invoiced line deleted", exec(`DELETE FROM subscriptions WHERE id = ?`, inv.SubscriptionID)},
			{"an invoiced subscriber deleted", exec(`DELETE FROM subscribers WHERE id = ?`, lone)},
			{"an invoiced line's id changed", exec(`UPDATE subscriptions SET id = 'moved-line' WHERE id = ?`, inv.SubscriptionID)},
		}
		invoices := count(`SELECT COUNT(*) FROM invoices`)
		for _, tt := range tests {
			if err := s.InTx(ctx, tt.write); err == nil {
				t.Errorf("%s: accepted", tt.name)
			}
			if got := count(`SELECT COUNT(*) FROM invoices WHERE subscription_id = ? AND subscriber_id = ?`, inv.SubscriptionID, inv.SubscriberID); got == 0 {
				t.Fatalf("%s: the invoice %s no longer names its line and subscriber", tt.name, inv.ID)
			}
			if got := count(`SELECT COUNT(*) FROM invoices`); got != invoices {
				t.Fatalf("%s: %d invoices, were %d", tt.name, got, invoices)
			}
			if got := count(`SELECT COUNT(*) FROM subscriptions WHERE id = ?`, inv.SubscriptionID) + count(`SELECT COUNT(*) FROM subscribers WHERE id = ?`, lone); got != 2 {
				t.Fatalf("%s: the invoiced line or subscriber is gone", tt.name)
			}
		}
		// What the checks let through: invoices of existing lines and subscribers, an anonymous
		// line's invoice without a subscriber, an invoice moved to another existing line.
		var third string
		if err := rawdb.Writer(s).QueryRowContext(ctx, s.Dialect.Rebind(`SELECT id FROM subscriptions WHERE id NOT IN (?, ?) ORDER BY id LIMIT 1`),
			inv.SubscriptionID, other).Scan(&third); err != nil {
			t.Fatal(err)
		}
		allowed := []struct {
			name  string
			write func(tx *store.Tx) error
		}{
			{"an invoice", insertOne(good)},
			{"a batch with an invoice without a subscriber", insertBatch(issued(third, inv.SubscriberID), issued(other, ""))},
			{"an invoice moved to an existing line", exec(`UPDATE invoices SET subscription_id = ? WHERE id = ?`, other, inv.ID)},
		}
		for _, tt := range allowed {
			if err := s.InTx(ctx, tt.write); err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
		}
		if got := count(`SELECT COUNT(*) FROM invoices WHERE subscriber_id IS NULL AND subscription_id = ? AND period = '2030-01'`, other); got != 1 {
			t.Errorf("the invoice without a subscriber: %d written", got)
		}
	})
}
