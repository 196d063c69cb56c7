package install_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/clock"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/install"
	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/store"
)

const (
	northwind     = "8d0c7f2e-1a3b-4c5d-9e6f-000000000001"
	buildingThird = "b1000000-0000-4000-8000-000000000003" // earliest service 2027-03-01
	unitMais2B    = "u3000000-0000-4000-8000-00000000002b"
	unitMais3A    = "u3000000-0000-4000-8000-00000000003a"
	planFibre150  = "pv100000-0000-4000-8000-000000000150"
	mondayMorning = "iw100000-0000-4000-8000-000000000001"
	firstMonday   = "2027-03-01"
)

// mailbox captures queued mail.
type mailbox struct {
	mu   sync.Mutex
	sent []sentMail
}

type sentMail struct{ to, subject, link string }

// QueueLocalized captures the mail as written in English.
func (m *mailbox) QueueLocalized(ctx context.Context, tx *store.Tx, _, to string, ml locale.Mail) error {
	return m.QueueText(ctx, tx, to, ml.Subject.In(locale.EN), ml.Body.In(locale.EN), ml.Links)
}

func (m *mailbox) QueueText(_ context.Context, _ *store.Tx, to, subject, _ string, links []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	link := ""
	if len(links) > 0 {
		link = links[0]
	}
	m.sent = append(m.sent, sentMail{to, subject, link})
	return nil
}

// tokenFor is the token of the newest booking link mailed to addr.
func (m *mailbox) tokenFor(t *testing.T, addr string) string {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := len(m.sent) - 1; i >= 0; i-- {
		if m.sent[i].to == addr && m.sent[i].link != "" {
			_, tok, _ := strings.Cut(m.sent[i].link, "?token=")
			return tok
		}
	}
	t.Fatalf("no booking link mailed to %s", addr)
	return ""
}

func (m *mailbox) count(subject string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, s := range m.sent {
		if s.subject == subject {
			n++
		}
	}
	return n
}

type env struct {
	svc  *install.Service
	st   *store.Store
	mail *mailbox
	p    *subprov.Provider
	b    *subprov.Building
}

// setup loads the demo fixture with Monday morning down to one technician, at a time when
// the third-line building's booking window is already open.
func setup(t *testing.T, st *store.Store) *env {
	ctx := context.Background()
	now := time.Date(2027, 2, 20, 15, 0, 0, 0, time.UTC)
	f, err := fixture.Parse(fixture.DemoJSON)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fixture.LoadAtCost(ctx, st, f, now, identity.TestPasswordCost); err != nil {
		t.Fatal(err)
	}
	err = st.InTx(ctx, func(tx *store.Tx) error {
		return tx.UpsertInstallWindow(ctx, &subprov.InstallWindow{ID: mondayMorning, ProviderID: northwind, Weekday: 1, Starts: "08:00", Ends: "12:00", Technicians: 1}, now)
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.Provider(ctx, northwind)
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.Building(ctx, buildingThird)
	if err != nil {
		t.Fatal(err)
	}
	m := &mailbox{}
	return &env{svc: &install.Service{Store: st, Clock: clock.NewManual(now), Mail: m, PublicURL: "http://subprov.test"}, st: st, mail: m, p: p, b: b}
}

// order creates a PENDING_INSTALL line at unit for email and opens its install job.
func (e *env) order(t *testing.T, unit, email string) *subprov.Subscription {
	t.Helper()
	ctx := context.Background()
	now := e.svc.Clock.Now()
	var sub *subprov.Subscription
	err := e.st.InTx(ctx, func(tx *store.Tx) error {
		who, _, err := tx.EnsureSubscriber(ctx, northwind, subprov.Contact{FirstName: "A", LastName: "B", Email: email, PhoneNumber: "1"}, now)
		if err != nil {
			return err
		}
		sub = &subprov.Subscription{ID: store.NewID(), ProviderID: northwind, SubscriberID: who.ID, PlanVersionID: planFibre150,
			BuildingID: buildingThird, UnitID: unit, Status: subprov.StatusPendingInstall, WorkflowState: "awaiting_install",
			DeliveryMode: subprov.DeliveryHomeDrop, BillingOwner: subprov.BillingPartner, BillingDay: 1, Source: "test"}
		if _, err := tx.InsertSubscription(ctx, sub, now); err != nil {
			return err
		}
		_, err = e.svc.Open(ctx, tx, e.p, sub, e.b, install.KindInstall, now)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

func booked(t *testing.T, st *store.Store, window, date string) int {
	t.Helper()
	m, err := st.SlotsBooked(context.Background(), northwind, date, date)
	if err != nil {
		t.Fatal(err)
	}
	return m[subprov.InstallSlot{WindowID: window, Date: date}]
}

// TestTwoCustomersNeverBookTheLastPlace races two customers for the one place of a slot on
// each engine: exactly one gets it, the other is told the slot is full.
func TestTwoCustomersNeverBookTheLastPlace(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		e := setup(t, st)
		e.order(t, unitMais2B, "first@example.ca")
		e.order(t, unitMais3A, "second@example.ca")
		tokens := []string{e.mail.tokenFor(t, "first@example.ca"), e.mail.tokenFor(t, "second@example.ca")}
		slot := install.SlotID(mondayMorning, firstMonday)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range tokens {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				_, errs[i] = e.svc.Book(context.Background(), tokens[i], slot)
			}(i)
		}
		close(start)
		wg.Wait()
		var won, full int
		for _, err := range errs {
			if err == nil {
				won++
			} else if ee, ok := subprov.AsError(err); ok && ee.Reason == "slot_full" {
				full++
			} else {
				t.Fatalf("unexpected error: %v", err)
			}
		}
		if won != 1 || full != 1 {
			t.Fatalf("won %d, full %d: %v", won, full, errs)
		}
		if n := booked(t, st, mondayMorning, firstMonday); n != 1 {
			t.Fatalf("%d places taken in a one-technician slot", n)
		}
	})
}

// TestHoldAndRestore: hold cancels the booked visit and frees its place, the old link shows
// the booking is paused; restore sends a fresh link and the old one says it was replaced.
func TestHoldAndRestore(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := setup(t, st)
		sub := e.order(t, unitMais2B, "held@example.ca")
		old := e.mail.tokenFor(t, "held@example.ca")
		if _, err := e.svc.Book(ctx, old, install.SlotID(mondayMorning, firstMonday)); err != nil {
			t.Fatal(err)
		}
		if e.mail.count("Your installation appointment is booked") != 1 {
			t.Fatal("no confirmation mail")
		}
		act := func(fn func(context.Context, *store.Tx, *subprov.Provider, *subprov.Subscription) error) error {
			return st.InTx(ctx, func(tx *store.Tx) error {
				locked, err := tx.LockSubscription(ctx, northwind, sub.ID)
				if err != nil {
					return err
				}
				return fn(ctx, tx, e.p, locked)
			})
		}
		if err := act(e.svc.Restore); err == nil {
			t.Fatal("restore of a line that is not on hold must be refused")
		} else if ee, _ := subprov.AsError(err); ee == nil || ee.Code != subprov.ECONFLICT {
			t.Fatalf("restore not on hold: %v", err)
		}
		for i := 0; i < 2; i++ { // holding twice is the same as once
			if err := act(e.svc.Hold); err != nil {
				t.Fatal(err)
			}
		}
		got, _ := st.Subscription(ctx, northwind, sub.ID)
		if !got.OnHold || got.AppointmentAt != nil || got.BookingLinkSent {
			t.Fatalf("held line: on_hold %v appointment %v link sent %v", got.OnHold, got.AppointmentAt, got.BookingLinkSent)
		}
		if n := booked(t, st, mondayMorning, firstMonday); n != 0 {
			t.Fatalf("hold left %d places taken", n)
		}
		if pg, err := e.svc.BookingPage(ctx, old); err != nil || pg.State != install.PagePaused {
			t.Fatalf("old link while held: %v %v", pg, err)
		}
		if err := act(e.svc.Restore); err != nil {
			t.Fatal(err)
		}
		fresh := e.mail.tokenFor(t, "held@example.ca")
		if fresh == old {
			t.Fatal("restore sent no fresh link")
		}
		got, _ = st.Subscription(ctx, northwind, sub.ID)
		if got.OnHold || !got.BookingLinkSent {
			t.Fatalf("restored line: on_hold %v link sent %v", got.OnHold, got.BookingLinkSent)
		}
		if pg, _ := e.svc.BookingPage(ctx, old); pg.State != install.PageReplaced {
			t.Fatalf("old link after restore: %s", pg.State)
		}
		pg, err := e.svc.BookingPage(ctx, fresh)
		if err != nil || pg.State != install.PageOpen || len(pg.Days) == 0 || pg.Days[0].Date != firstMonday {
			t.Fatalf("fresh link: %+v %v", pg, err)
		}
		if pg.Days[0].Slots[0].PlacesLeft() != 1 {
			t.Fatal("the released place is not bookable again")
		}
	})
}

// TestInvitationWaitsForTheBookingWindow: a line whose building opens later gets its
// invitation when the start date is inside the provider's booking window, from the sweep.
func TestInvitationWaitsForTheBookingWindow(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := setup(t, st)
		e.svc.Clock = clock.NewManual(time.Date(2027, 1, 10, 15, 0, 0, 0, time.UTC))
		sub := e.order(t, unitMais2B, "later@example.ca")
		jobs, _ := st.InstallJobsOf(ctx, sub.ID)
		if len(jobs) != 1 || jobs[0].Booking != install.BookingCustomer {
			t.Fatalf("jobs %+v", jobs)
		}
		sweep := func(at time.Time) int {
			e.svc.Clock = clock.NewManual(at)
			if err := e.svc.SweepInvitations(ctx); err != nil {
				t.Fatal(err)
			}
			return e.mail.count("Book your installation appointment")
		}
		// 21 days before 2027-03-01 is 2027-02-08 in Toronto.
		if n := sweep(time.Date(2027, 2, 8, 4, 0, 0, 0, time.UTC)); n != 0 {
			t.Fatal("invitation sent before the window opened (still 7 February in Toronto)")
		}
		if n := sweep(time.Date(2027, 2, 8, 15, 0, 0, 0, time.UTC)); n != 1 {
			t.Fatalf("%d invitations once the window opened", n)
		}
		if n := sweep(time.Date(2027, 2, 9, 15, 0, 0, 0, time.UTC)); n != 1 {
			t.Fatal("the invitation went out twice")
		}
	})
}

func TestBookingFor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		line subprov.LineType
		kind string
		want string
	}{
		{subprov.LineThird, install.KindInstall, install.BookingCustomer},
		{subprov.LineSecond, install.KindInstall, install.BookingOperator},
		{subprov.LineFirst, install.KindInstall, install.BookingOperator},
		{subprov.LineThird, install.KindReinstall, install.BookingCustomer},
		{subprov.LineFirst, install.KindReinstall, install.BookingCustomer},
		{subprov.LineSecond, install.KindReinstall, install.BookingOperator},
		{"", install.KindInstall, ""},
	}
	for _, tt := range tests {
		if got := install.BookingFor(tt.line, tt.kind); got != tt.want {
			t.Errorf("%s %s: %q, want %q", tt.line, tt.kind, got, tt.want)
		}
	}
}

func TestInvitationDue(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                      string
		window                    int
		requested, earliest, want string
	}{
		{"no start date: at once", 21, "", "", ""},
		{"requested start", 21, "2027-03-22", "", "2027-03-01"},
		{"earliest service date wins when later", 21, "2027-01-01", "2027-03-01", "2027-02-08"},
		{"requested start wins when later", 14, "2027-04-15", "2027-03-01", "2027-04-01"},
	}
	for _, tt := range tests {
		if got := install.InvitationDue(tt.window, tt.requested, tt.earliest); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCalendar(t *testing.T) {
	t.Parallel()
	loc, _ := time.LoadLocation("America/Toronto")
	windows := []subprov.InstallWindow{{ID: "am", Weekday: 1, Starts: "08:00", Ends: "12:00", Technicians: 2},
		{ID: "pm", Weekday: 1, Starts: "13:00", Ends: "17:00", Technicians: 1}}
	now := time.Date(2027, 3, 1, 15, 0, 0, 0, time.UTC) // 10:00 Monday in Toronto: the morning has started
	days := install.Calendar(windows, map[subprov.InstallSlot]int{{WindowID: "pm", Date: "2027-03-01"}: 1}, loc, now, "2027-03-01", 8)
	if len(days) != 2 || days[0].Date != "2027-03-01" || days[1].Date != "2027-03-08" {
		t.Fatalf("days %+v", days)
	}
	if len(days[0].Slots) != 1 || days[0].Slots[0].WindowID != "pm" || !days[0].Slots[0].Full() {
		t.Fatalf("a started slot is offered or a full one is not full: %+v", days[0].Slots)
	}
	if s := days[1].Slots[0]; s.PlacesLeft() != 2 || s.Start != time.Date(2027, 3, 8, 13, 0, 0, 0, time.UTC) {
		t.Fatalf("slot %+v", s)
	}
}

// TestNoContactEmailFlagsTheJob: a customer-booked line nobody can be mailed about (no
// contact e-mail, no subscriber) is flagged for the operator and mails nothing.
func TestNoContactEmailFlagsTheJob(t *testing.T) {
	t.Parallel()
	testdb.EachStore(t, func(t *testing.T, st *store.Store) {
		ctx := context.Background()
		e := setup(t, st)
		now := e.svc.Clock.Now()
		sub := &subprov.Subscription{ID: store.NewID(), ProviderID: northwind, PlanVersionID: planFibre150, BuildingID: buildingThird,
			UnitID: unitMais3A, Status: subprov.StatusPendingInstall, DeliveryMode: subprov.DeliveryHomeDrop, Anonymous: true,
			BillingOwner: subprov.BillingPartner, BillingDay: 1, Source: "checkout"}
		err := st.InTx(ctx, func(tx *store.Tx) error {
			if _, err := tx.InsertSubscription(ctx, sub, now); err != nil {
				return err
			}
			_, err := e.svc.Open(ctx, tx, e.p, sub, e.b, install.KindInstall, now)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := e.svc.Queue(ctx, subprov.Everything, install.QueueFilter{Flag: install.FlagNoContactEmail})
		if err != nil || len(rows) != 1 || rows[0].SubscriptionID != sub.ID || rows[0].Booking != install.BookingCustomer {
			t.Fatalf("flagged queue %v %v", rows, err)
		}
		if len(e.mail.sent) != 0 {
			t.Fatal("mailed nobody")
		}
	})
}
