// Package invariants checks the database for anything half-written: after any test (a fault,
// a crash, concurrent duplicates) every rule here must hold. Each rule is one SQL query that
// selects the ids violating it, so a failure names the rows to look at.
package invariants

import (
	"context"
	"fmt"
	"strings"

	"github.com/subprov/subprov/store"
)

// Rule is one invariant: Query selects one text column identifying each violating row.
type Rule struct {
	Name  string
	Query string
}

// Rules are the invariants of a consistent subprov database.
var Rules = []Rule{
	// Subscriptions: a known status and workflow state, and a port that is really theirs.
	{"subscription status is known", `SELECT id FROM subscriptions
		WHERE status NOT IN ('PENDING_INSTALL', 'ACTIVE', 'SUSPENDED', 'CANCELLED')`},
	{"subscription workflow state is known", `SELECT id FROM subscriptions
		WHERE workflow_state NOT IN ('', 'provisioning', 'provisioned', 'provisioning_failed', 'awaiting_install', 'installed', 'cancelled', 'deprovisioned')`},
	{"a deprovisioned line is cancelled and its port reset", `SELECT id FROM subscriptions
		WHERE workflow_state = 'deprovisioned' AND (status <> 'CANCELLED' OR deprovisioned_at IS NULL)`},
	{"a provisioned line has a port", `SELECT id FROM subscriptions
		WHERE workflow_state = 'provisioned' AND status <> 'CANCELLED' AND port_id IS NULL`},
	{"a pending install is not provisioned", `SELECT id FROM subscriptions
		WHERE status = 'PENDING_INSTALL' AND workflow_state IN ('provisioned', 'installed')`},
	{"a port serves at most one live line", `SELECT port_id FROM subscriptions
		WHERE port_id IS NOT NULL AND status <> 'CANCELLED' GROUP BY port_id HAVING COUNT(*) > 1`},
	{"a suite is held by at most one line", `SELECT COALESCE(unit_id, port_id) FROM subscriptions
		WHERE status IN ('PENDING_INSTALL', 'ACTIVE', 'SUSPENDED') OR (status = 'CANCELLED' AND deprovisioned_at IS NULL)
		GROUP BY COALESCE(unit_id, port_id) HAVING COUNT(*) > 1`},
	{"a subscription's port exists", `SELECT s.id FROM subscriptions s LEFT JOIN ports p ON p.id = s.port_id
		WHERE s.port_id IS NOT NULL AND p.id IS NULL`},
	{"a subscription's port is in its building", `SELECT s.id FROM subscriptions s JOIN ports p ON p.id = s.port_id
		WHERE p.building_id <> s.building_id`},
	{"the lines' counts by status are the lines'", `SELECT COALESCE(l.provider_id, c.provider_id) || ' ' || COALESCE(l.status, c.status)
		FROM (SELECT provider_id, status, COUNT(*) AS n FROM subscriptions GROUP BY provider_id, status) l
		FULL JOIN (SELECT provider_id, status, SUM(n) AS n FROM line_counts GROUP BY provider_id, status) c
			ON c.provider_id = l.provider_id AND c.status = l.status
		WHERE COALESCE(l.n, 0) <> COALESCE(c.n, 0)`},
	{"an external subscription id names one live line", `SELECT external_subscription_id FROM subscriptions
		WHERE external_subscription_id IS NOT NULL GROUP BY provider_id, external_subscription_id HAVING COUNT(*) > 1`},

	// Money: every charge belongs to one invoice of its provider; nothing is collected twice.
	{"a charge's invoice exists in its provider", `SELECT c.id FROM charges c LEFT JOIN invoices i ON i.id = c.invoice_id AND i.provider_id = c.provider_id
		WHERE i.id IS NULL`},
	{"an invoice is collected at most once", `SELECT invoice_id FROM charges
		WHERE status = 'succeeded' GROUP BY invoice_id HAVING COUNT(*) > 1`},
	{"a succeeded charge collects its invoice's total", `SELECT c.id FROM charges c JOIN invoices i ON i.id = c.invoice_id
		WHERE c.status = 'succeeded' AND c.amount_minor > i.total_minor`},
	{"a processor charge is made once per key", `SELECT idempotency_key FROM processor_charges
		GROUP BY idempotency_key HAVING COUNT(*) > 1`},
	{"a line has one invoice per period, kind and occasion", `SELECT subscription_id FROM invoices
		GROUP BY subscription_id, period, kind, occasion HAVING COUNT(*) > 1`},
	// Credit notes spent on an invoice are lines of it after tax: part of its total, not its net.
	{"an invoice's lines add up to its net", `SELECT i.id FROM invoices i JOIN invoice_lines l ON l.invoice_id = i.id AND l.kind <> 'credit'
		GROUP BY i.id, i.net_minor HAVING SUM(l.amount_minor) <> i.net_minor`},
	{"an invoice's lines and tax add up to its total", `SELECT i.id FROM invoices i JOIN invoice_lines l ON l.invoice_id = i.id
		GROUP BY i.id, i.tax_minor, i.total_minor HAVING SUM(l.amount_minor) + i.tax_minor <> i.total_minor`},

	// No orphans.
	{"invoice lines have an invoice", `SELECT l.id FROM invoice_lines l LEFT JOIN invoices i ON i.id = l.invoice_id WHERE i.id IS NULL`},
	{"invoices have a subscription", `SELECT i.id FROM invoices i LEFT JOIN subscriptions s ON s.id = i.subscription_id WHERE s.id IS NULL`},
	{"invoices have their subscriber", `SELECT i.id FROM invoices i LEFT JOIN subscribers b ON b.id = i.subscriber_id
		WHERE i.subscriber_id IS NOT NULL AND b.id IS NULL`},
	{"credit notes have their invoice", `SELECT c.id FROM credit_notes c LEFT JOIN invoices i ON i.id = c.invoice_id
		WHERE c.invoice_id IS NOT NULL AND i.id IS NULL`},
	{"install jobs have a subscription", `SELECT j.id FROM install_jobs j LEFT JOIN subscriptions s ON s.id = j.subscription_id WHERE s.id IS NULL`},
	{"subscriptions have their subscriber", `SELECT s.id FROM subscriptions s LEFT JOIN subscribers b ON b.id = s.subscriber_id
		WHERE s.subscriber_id IS NOT NULL AND b.id IS NULL`},
	{"a line without a subscriber is anonymous", `SELECT id FROM subscriptions WHERE subscriber_id IS NULL AND NOT anonymous`},
	{"subscriptions have their plan version", `SELECT s.id FROM subscriptions s LEFT JOIN plan_versions v ON v.id = s.plan_version_id WHERE v.id IS NULL`},
	{"accounts have their subscriber", `SELECT a.id FROM accounts a LEFT JOIN subscribers b ON b.id = a.subscriber_id
		WHERE a.subscriber_id IS NOT NULL AND b.id IS NULL`},
	{"authorized users have their subscriber", `SELECT u.id FROM authorized_users u LEFT JOIN subscribers b ON b.id = u.subscriber_id WHERE b.id IS NULL`},
	{"events name an existing subscription", `SELECT e.id FROM events e LEFT JOIN subscriptions s ON s.id = e.subscription_id
		WHERE e.subscription_id IS NOT NULL AND e.subscription_id <> '' AND s.id IS NULL`},
	{"webhook attempts have their event", `SELECT w.id FROM webhook_attempts w LEFT JOIN events e ON e.id = w.event_id WHERE e.id IS NULL`},

	// Events: each is delivered, pending, failed (given up) or had nowhere to go.
	{"event delivery state is known", `SELECT id FROM events WHERE delivery_state NOT IN ('delivered', 'pending', 'failed', 'no_endpoint')`},
	{"a delivered event was attempted", `SELECT e.id FROM events e LEFT JOIN webhook_attempts w ON w.event_id = e.id
		WHERE e.delivery_state = 'delivered' AND w.id IS NULL`},
}

// Check runs every rule and returns one line per violated rule, naming up to five rows.
func Check(ctx context.Context, s *store.Store) ([]string, error) {
	var out []string
	for _, r := range Rules {
		ids, err := store.QueryStrings(ctx, s.R(), r.Name, r.Query)
		if err != nil {
			return nil, fmt.Errorf("invariant %q: %w", r.Name, err)
		}
		if len(ids) > 0 {
			out = append(out, fmt.Sprintf("%s: %d rows violate it (%s)", r.Name, len(ids), strings.Join(first(ids, 5), ", ")))
		}
	}
	return out, nil
}

func first(ids []string, n int) []string {
	if len(ids) > n {
		return ids[:n]
	}
	return ids
}

// T is the part of testing.TB that Assert uses.
type T interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// Assert fails t for every violated invariant.
func Assert(t T, s *store.Store) {
	t.Helper()
	bad, err := Check(context.Background(), s)
	if err != nil {
		t.Fatalf("invariants: %v", err)
	}
	for _, b := range bad {
		t.Errorf("invariant violated: %s", b)
	}
}
