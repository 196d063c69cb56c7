package subscribers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/servicetest"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/privacy"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/subscribers"
)

const (
	lineMarie  = "c1000000-0000-4000-8000-000000000001" // ACTIVE at King 1204 (a port), platform-billed, Fibre 500
	lineJean   = "c1000000-0000-4000-8000-000000000003" // PENDING_INSTALL, no port
	lineLiam   = "c2000000-0000-4000-8000-000000000001" // Maple, ACTIVE (a port)
	planFibre1 = "pv100000-0000-4000-8000-000000001000"
)

func service(e *servicetest.Env) *subscribers.Service {
	return &subscribers.Service{Store: e.Store, Clock: e.Clock, Provisioning: e.Provisioning}
}

func operator(role subprov.Role, providerID string) *subprov.Operator {
	return &subprov.Operator{ID: "op-" + string(role), Email: string(role) + "@ops.test", Role: role, ProviderID: providerID}
}

func TestSubscribers(t *testing.T) {
	servicetest.EachRules(t,
		servicetest.Rule{Name: "role first, then scope", Test: testRoleThenScope},
		servicetest.Rule{Name: "suspend and restore keep the partner's rules", Test: testSuspendRestore},
		servicetest.Rule{Name: "plan change counts the provider's day", Test: testPlanChangeDay},
		servicetest.Rule{Name: "reprovision and notes", Test: testReprovisionAndNotes},
		servicetest.Rule{Name: "a privacy deletion erases the reasons people gave", Test: testErasedReasons},
		servicetest.Rule{Name: "the list by workflow state; a line's port state", Test: testWorkflowAndPort},
	)
}

// count counts rows.
func count(t *testing.T, e *servicetest.Env, q string, args ...any) int {
	t.Helper()
	var n int
	if err := e.Store.R().QueryRow(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// testRoleThenScope: a role without the permission is refused whatever the id; another
// provider's line or subscriber is not found exactly as an unknown one; nothing is written.
func testRoleThenScope(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	s := service(e)
	maple := operator(subprov.RoleAdmin, servicetest.Maple)
	viewer := operator(subprov.RoleViewer, servicetest.Northwind)
	installer := operator(subprov.RoleInstaller, "")
	calls := map[string]func(op *subprov.Operator, id string) error{
		"get": func(op *subprov.Operator, _ string) error {
			_, err := s.Get(ctx, op, servicetest.SubscriberMarie)
			return err
		},
		"suspend": func(op *subprov.Operator, id string) error { _, err := s.Suspend(ctx, op, id, "why"); return err },
		"restore": func(op *subprov.Operator, id string) error { _, err := s.Restore(ctx, op, id, "why"); return err },
		"preview": func(op *subprov.Operator, id string) error {
			_, err := s.PreviewPlanChange(ctx, op, id, planFibre1)
			return err
		},
		"change": func(op *subprov.Operator, id string) error {
			_, err := s.ChangePlan(ctx, op, id, planFibre1)
			return err
		},
		"reprovide": func(op *subprov.Operator, id string) error { _, err := s.Reprovision(ctx, op, id); return err },
		"note":      func(op *subprov.Operator, id string) error { _, err := s.AddNote(ctx, op, id, "a note"); return err },
	}
	before := count(t, e, `SELECT COUNT(*) FROM audit_log`)
	for name, call := range calls {
		for _, c := range []struct {
			who  string
			op   *subprov.Operator
			id   string
			want string
		}{
			{"another provider's", maple, lineMarie, "not_found/not_found"},
			{"unknown", maple, "c9999999-0000-4000-8000-000000000001", "not_found/not_found"},
			{"installer", installer, lineMarie, "forbidden/forbidden"},
		} {
			if got := servicetest.Code(call(c.op, c.id)); got != c.want {
				t.Errorf("%s, %s: %q, want %q", name, c.who, got, c.want)
			}
		}
		if name != "get" && name != "preview" {
			if got := servicetest.Code(call(viewer, lineMarie)); got != "forbidden/forbidden" {
				t.Errorf("%s by a viewer: %q", name, got)
			}
		}
	}
	if after := count(t, e, `SELECT COUNT(*) FROM audit_log`); after != before {
		t.Errorf("audit log grew from %d to %d", before, after)
	}
	if n := count(t, e, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND status = 'ACTIVE' AND plan_version_id = 'pv100000-0000-4000-8000-000000000500'`, lineMarie); n != 1 {
		t.Error("the line changed")
	}
	// The list: another provider named is empty; no filter is the operator's provider.
	for _, c := range []struct {
		op     *subprov.Operator
		f      subscribers.Filter
		want   int
		wantID string
	}{
		{maple, subscribers.Filter{ProviderID: servicetest.Northwind}, 0, ""},
		{maple, subscribers.Filter{Q: "tremblay"}, 0, ""},
		{maple, subscribers.Filter{}, 1, servicetest.SubscriberLiam},
		{operator(subprov.RoleViewer, ""), subscribers.Filter{Q: "marie.tremblay@example.ca"}, 1, servicetest.SubscriberMarie},
	} {
		rows, _, err := s.List(ctx, c.op, c.f, subprov.Page{Limit: 50})
		if err != nil || len(rows) != c.want || (c.want == 1 && rows[0].ID != c.wantID) {
			t.Errorf("list %+v by %s: %d rows, %v", c.f, c.op.ProviderID, len(rows), err)
		}
	}
}

// testSuspendRestore: the status moves as the partner's suspend and restore move it, the
// reason reaches the audit entry (once) and the history, and a payment never lifts an
// operator's suspension.
func testSuspendRestore(t *testing.T, e *servicetest.Env) {
	s := service(e)
	support := operator(subprov.RoleSupport, servicetest.Northwind)
	ctx := subprov.WithRequest(context.Background(), subprov.Request{ID: "req-1", Actor: subprov.OperatorActor(support)})
	steps := []struct {
		name, action, line, reason string
		want                       string
		status                     subprov.Status
	}{
		{"no reason", "suspend", lineMarie, " ", "invalid/validation_error", ""},
		{"suspend", "suspend", lineMarie, "Away", "", subprov.StatusSuspended},
		{"suspend a suspended line", "suspend", lineMarie, "Again", "conflict/invalid_transition", ""},
		{"restore", "restore", lineMarie, "Back", "", subprov.StatusActive},
		{"restore an active line", "restore", lineMarie, "Back", "conflict/invalid_transition", ""},
		{"hold before install", "suspend", lineJean, "Later", "", subprov.StatusPendingInstall},
		{"lift the hold", "restore", lineJean, "Now", "", subprov.StatusPendingInstall},
		{"lift it again", "restore", lineJean, "Now", "conflict/not_on_hold", ""},
	}
	for _, st := range steps {
		act := s.Suspend
		if st.action == "restore" {
			act = s.Restore
		}
		l, err := act(ctx, support, st.line, st.reason)
		if got := servicetest.Code(err); got != st.want {
			t.Fatalf("%s: %q, want %q", st.name, got, st.want)
		}
		if err == nil && l.Subscription.Status != st.status {
			t.Errorf("%s: status %s, want %s", st.name, l.Subscription.Status, st.status)
		}
	}
	for _, c := range []struct{ action, line, reason string }{
		{"subscription.suspended", lineMarie, "Away"},
		{"subscription.restored", lineMarie, "Back"},
		{"subscription.suspended", lineJean, "Later"},
		{"subscription.restored", lineJean, "Now"},
	} {
		if n := count(t, e, `SELECT COUNT(*) FROM audit_log WHERE subject_id = ? AND action = ? AND reason = ? AND actor_type = 'operator'`,
			c.line, c.action, c.reason); n != 1 {
			t.Errorf("%s %s: %d entries with the reason, want 1", c.action, c.line, n)
		}
		if n := count(t, e, `SELECT COUNT(*) FROM audit_log WHERE subject_id = ? AND action = ?`, c.line, c.action); n != 1 {
			t.Errorf("%s %s: %d entries, want 1", c.action, c.line, n)
		}
	}
	acct, err := s.Get(ctx, support, servicetest.SubscriberMarie)
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, h := range acct.Lines[0].History {
		reasons = append(reasons, string(h.Status)+":"+h.Reason)
	}
	if want := []string{"ACTIVE:", "SUSPENDED:Away", "ACTIVE:Back"}; len(reasons) != 3 || reasons[1] != want[1] || reasons[2] != want[2] {
		t.Errorf("history %v, want %v", reasons, want)
	}
	// A payment's restore lifts dunning's cut-off only, never an operator's suspension.
	if _, err := s.Suspend(ctx, support, lineMarie, "Fraud check"); err != nil {
		t.Fatal(err)
	}
	if err := e.Billing.SetLineService(ctx, jobs.SetLineService{SubscriptionID: lineMarie, On: true, Reason: "dunning"}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, e, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND status = 'SUSPENDED'`, lineMarie); n != 1 {
		t.Error("a payment lifted the operator's suspension")
	}
	if _, err := s.Restore(ctx, support, lineMarie, "Cleared"); err != nil {
		t.Fatal(err)
	}
}

// testPlanChangeDay: the once-a-day limit counts the provider's calendar day (Toronto), not
// the UTC day the partner endpoint counts.
func testPlanChangeDay(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	s := service(e)
	support := operator(subprov.RoleSupport, servicetest.Northwind)
	e.Clock.Set(time.Date(2027, 3, 20, 3, 0, 0, 0, time.UTC)) // 19 March, 23:00 in Toronto
	q, err := s.PreviewPlanChange(ctx, support, lineMarie, planFibre1)
	if err != nil || !q.Eligible || q.EffectiveDate != "2027-03-19" {
		t.Fatalf("preview: %+v, %v", q, err)
	}
	if _, err := s.ChangePlan(ctx, support, lineMarie, planFibre1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ChangePlan(ctx, support, lineMarie, servicetest.PlanFibre150); servicetest.Code(err) != "conflict/plan_change_limit" {
		t.Errorf("second change the same day: %v", err)
	}
	e.Clock.Set(time.Date(2027, 3, 20, 4, 30, 0, 0, time.UTC)) // 20 March, 00:30 in Toronto; the same UTC day
	p := e.Provider(t, servicetest.Northwind)
	if _, err := e.Provisioning.PreviewPlanChange(ctx, p, lineMarie, servicetest.PlanFibre150, provisioning.UTCDay); err != nil {
		t.Fatal(err)
	}
	l, err := s.ChangePlan(ctx, support, lineMarie, servicetest.PlanFibre150)
	if err != nil || l.Subscription.PlanVersionID != servicetest.PlanFibre150 || l.PlanName != "Fibre 150" {
		t.Fatalf("the provider's next day: %+v, %v", l, err)
	}
	if n := count(t, e, `SELECT COUNT(*) FROM audit_log WHERE subject_id = ? AND action = 'subscription.plan_changed' AND changes LIKE ?`,
		lineMarie, `%plan_version_id%`); n != 2 {
		t.Errorf("%d plan_changed entries with the change, want 2", n)
	}
}

// testReprovisionAndNotes: a reprovision queues a convergence of the line's port and is
// audited; a line without a port is 409; a note is stored on the subscriber and audited
// without its text.
func testReprovisionAndNotes(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	s := service(e)
	support := operator(subprov.RoleSupport, servicetest.Northwind)
	jobID, err := s.Reprovision(ctx, support, lineMarie)
	if err != nil || jobID == "" {
		t.Fatalf("reprovision: %q, %v", jobID, err)
	}
	if n := count(t, e, `SELECT COUNT(*) FROM audit_log WHERE subject_id = ? AND action = 'subscription.reprovisioned' AND details LIKE ?`,
		lineMarie, "%"+jobID+"%"); n != 1 {
		t.Errorf("%d reprovisioned entries", n)
	}
	if _, err := s.Reprovision(ctx, support, lineJean); servicetest.Code(err) != "conflict/no_port" {
		t.Errorf("without a port: %v", err)
	}
	for _, c := range []struct {
		note, want string
	}{
		{"", "invalid/validation_error"},
		{string(make([]byte, 10_001)), "invalid/validation_error"},
		{"Prefers e-mail", ""},
	} {
		if _, err := s.AddNote(ctx, support, lineMarie, c.note); servicetest.Code(err) != c.want {
			t.Errorf("note %.10q: %v, want %q", c.note, err, c.want)
		}
	}
	acct, err := s.Get(ctx, support, servicetest.SubscriberMarie)
	if err != nil || len(acct.Notes) != 1 || acct.Notes[0].Body != "Prefers e-mail" || acct.Notes[0].Author != "operator:support@ops.test" {
		t.Fatalf("notes %+v, %v", acct, err)
	}
	if n := count(t, e, `SELECT COUNT(*) FROM audit_log WHERE subject_id = ? AND action = 'note.created' AND details NOT LIKE '%Prefers%'`,
		acct.Notes[0].ID); n != 1 {
		t.Errorf("%d note.created entries", n)
	}
}

// testErasedReasons: a privacy deletion erases the reasons operators wrote in a line's status
// history and keeps the service's own.
func testErasedReasons(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	s := service(e)
	support := operator(subprov.RoleSupport, servicetest.Northwind)
	if _, err := s.Suspend(ctx, support, lineMarie, "Told us she is in hospital"); err != nil {
		t.Fatal(err)
	}
	if err := e.Store.InTx(ctx, func(tx *store.Tx) error {
		return tx.EraseSubscriber(ctx, servicetest.SubscriberMarie, privacy.ServiceReasons, e.Clock.Now())
	}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, e, `SELECT COUNT(*) FROM subscription_status_history WHERE reason LIKE '%hospital%'`); n != 0 {
		t.Errorf("%d reasons kept", n)
	}
	if n := count(t, e, `SELECT COUNT(*) FROM subscription_status_history WHERE subscription_id = ? AND reason = ''`, lineMarie); n == 0 {
		t.Error("the service's own entries were erased too")
	}
}

// testWorkflowAndPort: the list's workflow filter finds the subscribers with a line in that
// state (the overview's failed provisioning) and refuses an unknown state; the account shows
// a line's port state once one is decided for it, and none before.
func testWorkflowAndPort(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	s := service(e)
	viewer := operator(subprov.RoleViewer, "")
	setWorkflow := func(state string) {
		err := e.Store.InTx(ctx, func(tx *store.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE subscriptions SET workflow_state = ? WHERE id = ?`, state, lineLiam)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	setWorkflow(provisioning.WorkflowProvisioningFailed)
	for _, c := range []struct {
		f    subscribers.Filter
		want []string
		code string
	}{
		{subscribers.Filter{WorkflowState: "provisioning_failed"}, []string{servicetest.SubscriberLiam}, ""},
		{subscribers.Filter{WorkflowState: "provisioning_failed", ProviderID: servicetest.Northwind}, nil, ""},
		{subscribers.Filter{WorkflowState: "provisioning_failed", Status: "SUSPENDED"}, nil, ""},
		{subscribers.Filter{WorkflowState: "lost"}, nil, "invalid/validation_error"},
	} {
		rows, _, err := s.List(ctx, viewer, c.f, subprov.Page{Limit: 50})
		if got := servicetest.Code(err); got != c.code {
			t.Errorf("%+v: %q, want %q", c.f, got, c.code)
		}
		var ids []string
		for _, r := range rows {
			ids = append(ids, r.ID)
		}
		if strings.Join(ids, ",") != strings.Join(c.want, ",") {
			t.Errorf("%+v: %v, want %v", c.f, ids, c.want)
		}
	}

	setWorkflow(provisioning.WorkflowProvisioned) // a failed line's port goes to the captive portal
	portOf := func() *subprov.PortConvergence {
		a, err := s.Get(ctx, viewer, servicetest.SubscriberLiam)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range a.Lines {
			if l.Subscription.ID == lineLiam {
				return l.Port
			}
		}
		t.Fatal("no line")
		return nil
	}
	if p := portOf(); p != nil {
		t.Errorf("a port state before any was decided: %+v", p)
	}
	support := operator(subprov.RoleSupport, servicetest.Maple)
	l, err := s.Suspend(ctx, support, lineLiam, "Away")
	if err != nil {
		t.Fatal(err)
	}
	if l.Port == nil || l.Port.Want.Mode != "suspended" || l.Port.Version < 1 {
		t.Errorf("the suspended line's port: %+v", l.Port)
	}
	if p := portOf(); p == nil || p.Want.Mode != "suspended" {
		t.Errorf("the account's port state: %+v", p)
	}
}
