package privacy_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/servicetest"
	"github.com/subprov/subprov/search"
	"github.com/subprov/subprov/store"
)

const marieLine = "c1000000-0000-4000-8000-000000000001" // Marie's one line, ACTIVE

var (
	support = &subprov.Operator{ID: "op-support", Email: "support@ops.test", Role: subprov.RoleSupport, ProviderID: servicetest.Northwind}
	billing = &subprov.Operator{ID: "op-billing", Email: "billing@ops.test", Role: subprov.RoleBilling}
	maple   = &subprov.Operator{ID: "op-maple", Email: "maple@ops.test", Role: subprov.RoleAdmin, ProviderID: servicetest.Maple}
)

// Marie's personal data, which an approval must leave nowhere but in placeholders.
var marieData = []string{"marie", "tremblay", "514-555-0142", "5145550142"}

// TestPrivacyRequests: a request is opened pending with a ticket; it is refused while a line of
// the account is live and nothing changes; approved once every line has ended, it erases the
// personal data in one go and keeps the invoices; a decided request is not decided again.
func TestPrivacyRequests(t *testing.T) {
	servicetest.Each(t, func(t *testing.T, e *servicetest.Env) {
		ctx := context.Background()
		now := time.Date(2027, 3, 1, 15, 0, 0, 0, time.UTC)
		e.Clock.Set(now)
		seedPersonalData(t, e)
		req, err := e.Privacy.Request(ctx, servicetest.Northwind, servicetest.SubscriberMarie)
		if err != nil {
			t.Fatal(err)
		}
		if req.Status != subprov.PrivacyPending || req.TicketID == "" {
			t.Fatalf("request %+v", req)
		}
		if again, err := e.Privacy.Request(ctx, servicetest.Northwind, servicetest.SubscriberMarie); err != nil || again.ID != req.ID {
			t.Fatalf("a second request: %v %+v, want the pending one", err, again)
		}
		if _, err := e.Privacy.Request(ctx, servicetest.Maple, servicetest.SubscriberMarie); subprov.ErrorCode(err) != subprov.ENOTFOUND {
			t.Fatalf("another provider's subscriber: %v", err)
		}
		var subject, group string
		if err := e.Store.R().QueryRow(ctx, `SELECT subject, group_name FROM tickets WHERE id = ?`, req.TicketID).Scan(&subject, &group); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(subject, "0042-117") || group == "" {
			t.Errorf("ticket %q in %q", subject, group)
		}

		refusals := []struct {
			name   string
			op     *subprov.Operator
			status string // Marie's line, "" as it is
			ended  time.Time
			code   subprov.Code
			detail string
		}{
			{"a billing operator may not", billing, "", time.Time{}, subprov.EFORBIDDEN, "Forbidden"},
			{"another provider's request", maple, "", time.Time{}, subprov.ENOTFOUND, "Privacy request not found"},
			{"an active line", support, "", time.Time{}, subprov.ECONFLICT, "lines_live"},
			{"a suspended line", support, "SUSPENDED", time.Time{}, subprov.ECONFLICT, "lines_live"},
			{"a line waiting for its install", support, "PENDING_INSTALL", time.Time{}, subprov.ECONFLICT, "lines_live"},
			{"a cancelled line still running", support, "CANCELLED", now.Add(24 * time.Hour), subprov.ECONFLICT, "lines_live"},
		}
		for _, tt := range refusals {
			t.Run(tt.name, func(t *testing.T) {
				if tt.status != "" {
					setLine(t, e, tt.status, tt.ended)
				}
				audits := count(t, e, `SELECT COUNT(*) FROM audit_log`)
				_, err := e.Privacy.Approve(ctx, tt.op, req.ID)
				var se *subprov.Error
				if !errors.As(err, &se) || se.Code != tt.code || se.Message != tt.detail {
					t.Fatalf("err %v, want %s %q", err, tt.code, tt.detail)
				}
				if n := count(t, e, `SELECT COUNT(*) FROM audit_log`); n != audits {
					t.Errorf("a refusal wrote %d audit entries", n-audits)
				}
				if n := count(t, e, `SELECT COUNT(*) FROM accounts WHERE subscriber_id = ?`, servicetest.SubscriberMarie); n != 1 {
					t.Errorf("a refusal removed the login")
				}
				if n := count(t, e, `SELECT COUNT(*) FROM privacy_requests WHERE id = ? AND status = 'pending'`, req.ID); n != 1 {
					t.Errorf("a refusal decided the request")
				}
				if n := count(t, e, `SELECT COUNT(*) FROM account_preferences`) + count(t, e, `SELECT COUNT(*) FROM tokens WHERE kind = 'privacy_export'`) +
					count(t, e, `SELECT COUNT(*) FROM account_recovery_codes`); n != 4 {
					t.Errorf("a refusal erased the person's settings (%d rows left of 4)", n)
				}
			})
		}

		setLine(t, e, "CANCELLED", now.Add(-time.Hour))
		invoices := count(t, e, `SELECT COUNT(*) FROM invoices WHERE subscriber_id = ?`, servicetest.SubscriberMarie)
		// As the HTTP layer does: the request carries its operator, whom the audit entry names.
		for _, q := range marieSearches {
			if found := searchFinds(t, e, q, servicetest.SubscriberMarie); !found {
				t.Fatalf("search %q does not find her before the erasure", q)
			}
		}
		approved, err := e.Privacy.Approve(subprov.WithRequest(ctx, subprov.Request{ID: "req-1", Actor: subprov.OperatorActor(support)}), support, req.ID)
		if err != nil {
			t.Fatal(err)
		}
		if approved.Status != subprov.PrivacyApproved || approved.DecidedAt == nil {
			t.Fatalf("approved %+v", approved)
		}
		erased := []struct{ what, query string }{
			{"logins", `SELECT COUNT(*) FROM accounts WHERE subscriber_id = ?`},
			{"search terms", `SELECT COUNT(*) FROM subscribers WHERE id = ? AND search_terms IS NOT NULL`},
			{"search terms of a release before 0050", `SELECT COUNT(*) FROM customer_search_terms WHERE subscriber_id = ?`},
			{"contacts with personal data", `SELECT COUNT(*) FROM contacts WHERE subscriber_id = ? AND (email <> '' OR phonenumber <> '' OR lastname <> '' OR street <> '' OR firstname <> 'Deleted')`},
			{"the subscriber's e-mail", `SELECT COUNT(*) FROM subscribers WHERE id = ? AND (email NOT LIKE 'deleted-%' OR search_text <> '' OR phone_digits <> '' OR search_card IS NOT NULL)`},
			{"notes", `SELECT COUNT(*) FROM notes WHERE subscriber_id = ? AND body <> '[deleted]'`},
			{"ticket texts", `SELECT COUNT(*) FROM tickets WHERE subscriber_id = ? AND (subject <> '[deleted]' OR article <> '' OR internal_note <> '')`},
		}
		for _, c := range []struct{ what, query string }{
			{"preferences", `SELECT COUNT(*) FROM account_preferences`},
			{"second-factor keys", `SELECT COUNT(*) FROM accounts WHERE totp_secret IS NOT NULL`},
			{"recovery codes", `SELECT COUNT(*) FROM account_recovery_codes`},
			{"export links", `SELECT COUNT(*) FROM tokens WHERE kind = 'privacy_export'`},
		} {
			if n := count(t, e, c.query); n != 0 {
				t.Errorf("%s: %d rows left", c.what, n)
			}
		}
		for _, c := range erased {
			if n := count(t, e, c.query, servicetest.SubscriberMarie); n != 0 {
				t.Errorf("%s: %d rows left", c.what, n)
			}
		}
		// The engine's search index no longer finds her by what she was called or wrote from.
		for _, q := range marieSearches {
			if found := searchFinds(t, e, q, servicetest.SubscriberMarie); found {
				t.Errorf("search %q still finds her after the erasure", q)
			}
		}
		for _, word := range marieData {
			like := "%" + word + "%"
			if n := count(t, e, `SELECT COUNT(*) FROM outbox WHERE LOWER(to_addr || subject || body) LIKE ?`, like); n != 0 {
				t.Errorf("mail still holds %q", word)
			}
			if n := count(t, e, `SELECT COUNT(*) FROM audit_log WHERE action LIKE 'privacy_request.%' AND LOWER(changes || details || COALESCE(reason, '')) LIKE ?`, like); n != 0 {
				t.Errorf("the privacy audit entries hold %q", word)
			}
		}
		if n := count(t, e, `SELECT COUNT(*) FROM outbox WHERE status = 'queued'`); n != 0 {
			t.Errorf("%d erased mails still queued", n)
		}
		if n := count(t, e, `SELECT COUNT(*) FROM invoices WHERE subscriber_id = ?`, servicetest.SubscriberMarie); n != invoices {
			t.Errorf("invoices %d, want %d kept", n, invoices)
		}
		if n := count(t, e, `SELECT COUNT(*) FROM audit_log WHERE action = 'privacy_request.approved' AND subject_id = ? AND actor_id = ?`, req.ID, support.ID); n != 1 {
			t.Errorf("approval audited %d times", n)
		}
		if _, err := e.Privacy.Approve(ctx, support, req.ID); subprov.ErrorCode(err) != subprov.ECONFLICT {
			t.Errorf("approving again: %v, want a conflict", err)
		}
		if _, err := e.Privacy.Reject(ctx, support, req.ID, "changed my mind"); subprov.ErrorCode(err) != subprov.ECONFLICT {
			t.Errorf("rejecting an approved request: %v, want a conflict", err)
		}
	})
}

// TestPrivacyRejection: a rejection needs a reason, keeps every datum and is audited with it.
func TestPrivacyRejection(t *testing.T) {
	servicetest.Each(t, func(t *testing.T, e *servicetest.Env) {
		ctx := context.Background()
		req, err := e.Privacy.Request(ctx, servicetest.Northwind, servicetest.SubscriberPriya)
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name, reason string
			op           *subprov.Operator
			code         subprov.Code
		}{
			{"no reason", " ", support, subprov.EINVALID},
			{"another provider's", "no", maple, subprov.ENOTFOUND},
			{"rejected", "The account has an open dispute", support, ""},
			{"twice", "again", support, subprov.ECONFLICT},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := e.Privacy.Reject(ctx, tt.op, req.ID, tt.reason)
				if subprov.ErrorCode(err) != tt.code && !(tt.code == "" && err == nil) {
					t.Fatalf("err %v, want %s", err, tt.code)
				}
				if tt.code == "" && (got.Status != subprov.PrivacyRejected || got.Reason != tt.reason) {
					t.Fatalf("rejected %+v", got)
				}
			})
		}
		if n := count(t, e, `SELECT COUNT(*) FROM accounts WHERE subscriber_id = ?`, servicetest.SubscriberPriya); n != 1 {
			t.Errorf("a rejection removed the login")
		}
		if n := count(t, e, `SELECT COUNT(*) FROM audit_log WHERE action = 'privacy_request.rejected' AND reason = ?`, "The account has an open dispute"); n != 1 {
			t.Errorf("rejection audited %d times", n)
		}
		for _, tt := range []struct {
			status string
			want   int
		}{{"", 1}, {"rejected", 1}, {"pending", 0}} {
			rs, _, err := e.Privacy.List(ctx, support, tt.status, subprov.Page{Limit: 50})
			if err != nil || len(rs) != tt.want {
				t.Errorf("list %q: %v %d, want %d", tt.status, err, len(rs), tt.want)
			}
		}
		if rs, _, err := e.Privacy.List(ctx, maple, "", subprov.Page{Limit: 50}); err != nil || len(rs) != 0 {
			t.Errorf("Maple's list: %v %d", err, len(rs))
		}
		if _, _, err := e.Privacy.List(ctx, support, "done", subprov.Page{Limit: 50}); subprov.ErrorCode(err) != subprov.EINVALID {
			t.Errorf("an unknown status: %v", err)
		}
	})
}

// marieSearches are queries that find Marie until she is erased.
var marieSearches = []string{"Marie Tremblay", servicetest.EmailMarie}

// searchFinds reports whether agent search's matcher finds subscriber by q among Northwind's
// customers.
func searchFinds(t *testing.T, e *servicetest.Env, q, subscriber string) bool {
	t.Helper()
	ids, err := search.Match(context.Background(), e.Store.SearchR(), []string{servicetest.Northwind}, q, 10)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	return slices.Contains(ids, subscriber)
}

// seedPersonalData gives Marie a note, a support ticket and a queued mail.
func seedPersonalData(t *testing.T, e *servicetest.Env) {
	t.Helper()
	ctx := context.Background()
	acc, err := e.Store.AccountByEmail(ctx, servicetest.EmailMarie)
	if err != nil {
		t.Fatal(err)
	}
	err = e.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertNote(ctx, &subprov.CustomerNote{ID: store.NewID(), ProviderID: servicetest.Northwind, SubscriberID: servicetest.SubscriberMarie,
			Author: "agent", Body: "Marie Tremblay called from 514-555-0142", CreatedAt: e.Clock.Now()}); err != nil {
			return err
		}
		if err := e.Desk.Open(ctx, tx, &subprov.Ticket{ProviderID: servicetest.Northwind, ContactEmail: servicetest.EmailMarie, Kind: "support",
			Subject: "Marie Tremblay: no internet", Article: "Marie's router", InternalNote: "transcript with Marie"}); err != nil {
			return err
		}
		if err := e.Outbox.QueueText(ctx, tx, servicetest.EmailMarie, "Your invoice, Marie", "Hello Marie Tremblay", nil); err != nil {
			return err
		}
		// Her own settings: preferences, a second factor with recovery codes.
		if err := tx.PutPreferences(ctx, acc.ID, store.Preferences{Language: "fr", Billing: true}, e.Clock.Now()); err != nil {
			return err
		}
		if err := tx.SetSecondFactor(ctx, store.AccountFactor(acc.ID), store.SecondFactor{Sealed: "v1.sealed", Enabled: true}); err != nil {
			return err
		}
		return tx.ReplaceRecoveryCodes(ctx, store.AccountFactor(acc.ID), []string{"hash-1", "hash-2"})
	})
	if err != nil {
		t.Fatal(err)
	}
	// And an export link she has not used yet.
	if err := e.Privacy.RequestExport(ctx, acc); err != nil {
		t.Fatal(err)
	}
}

// setLine sets Marie's line's status and end.
func setLine(t *testing.T, e *servicetest.Env, status string, ended time.Time) {
	t.Helper()
	var end any
	if !ended.IsZero() {
		end = ended.UTC()
	}
	if err := e.Store.InTx(context.Background(), func(tx *store.Tx) error {
		_, err := tx.Exec(context.Background(), `UPDATE subscriptions SET status = ?, ended_at = ? WHERE id = ?`, status, end, marieLine)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

func count(t *testing.T, e *servicetest.Env, q string, args ...any) int {
	t.Helper()
	var n int
	if err := e.Store.R().QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
