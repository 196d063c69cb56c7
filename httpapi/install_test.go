package httpapi_test

import (
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/browsertest"
	"github.com/subprov/subprov/internal/rawdb"
)

const demoBookingToken = "demo_booking_token_northwind_0001"

// outboxTo lists the mail sent to addr, newest first.
func outboxTo(s *apptest.Service, op map[string]string, addr string) []map[string]any {
	res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/dev/outbox?to=" + url.QueryEscape(addr), Headers: op})
	var out []map[string]any
	for _, m := range res.JSON["messages"].([]any) {
		out = append(out, m.(map[string]any))
	}
	return out
}

// mailWithSubject is the newest mail to addr with subject, or nil.
func mailWithSubject(s *apptest.Service, op map[string]string, addr, subject string) map[string]any {
	for _, m := range outboxTo(s, op, addr) {
		if m["subject"] == subject {
			return m
		}
	}
	return nil
}

// installJobOf is the install job of a line, from the operator's queue.
func installJobOf(t *testing.T, s *apptest.Service, op map[string]string, subID string) map[string]any {
	t.Helper()
	res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/install-jobs?provider_id=" + northwind, Headers: op})
	if res.Status != 200 {
		t.Fatalf("queue: %d %s", res.Status, res.Raw)
	}
	for _, j := range res.JSON["install_jobs"].([]any) {
		if job := j.(map[string]any); job["subscription_id"] == subID {
			return job
		}
	}
	t.Fatalf("no install job for %s", subID)
	return nil
}

// setClock moves the dev clock and returns a fresh operator login (the old token may have
// expired at the new time).
func setClock(t *testing.T, s *apptest.Service, op map[string]string, at string) map[string]string {
	t.Helper()
	if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: op, Body: map[string]string{"set": at}}); res.Status != 200 {
		t.Fatalf("set clock: %d %s", res.Status, res.Raw)
	}
	return s.Operator()
}

// getPage fetches a page as a browser would and returns status and body.
func getPage(t *testing.T, u string) (int, string) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// TestThirdLineInstallFromOrderToFirstInvoice walks a third-line order from
// provider-initiated through the booking invitation (held until the booking window opens),
// the booking page in Chromium and the technician's completion in the operator queue, to an
// ACTIVE line with its first invoice.
func TestThirdLineInstallFromOrderToFirstInvoice(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		const email = "noah.lavoie@example.ca"
		// The building opens on 2027-03-01; Northwind's booking window is 21 days.
		op = setClock(t, s, op, "2027-01-04T15:00:00Z")
		res := (&hook{}).post(s, order(map[string]any{"plan_version_id": planFibre1000, "delivery_mode": "home_drop", "unit_id": unitMais2B,
			"subscriber": person(email), "billing": map[string]any{"owner": "platform", "processor_customer_id": "cus_demo_visa", "billing_day": 5}}))
		if res.Status != 200 || res.JSON["route"] != "install" || res.JSON["status"] != "PENDING_INSTALL" {
			t.Fatalf("order: %d %s", res.Status, res.Raw)
		}
		id := res.JSON["subscription_id"].(string)
		job := installJobOf(t, s, op, id)
		if job["kind"] != "install" || job["booking"] != "customer" || job["state"] != "open" || job["invitation_due_on"] != "2027-02-08" || job["booking_link_sent"] != false {
			t.Fatalf("install job %v", job)
		}
		s.Settle(t) // the sweeps have run; nothing is due yet
		if m := mailWithSubject(s, op, email, "Book your installation appointment"); m != nil {
			t.Fatal("invitation sent before the booking window opened")
		}

		// The clock reaches the booking window: the sweep mails the invitation.
		op = setClock(t, s, op, "2027-02-08T15:00:00Z")
		var link string
		apptest.Eventually(t, 15*time.Second, "the booking invitation", func() bool {
			m := mailWithSubject(s, op, email, "Book your installation appointment")
			if m == nil {
				return false
			}
			link = m["links"].([]any)[0].(string)
			return true
		})
		if !strings.HasPrefix(link, "http://subprov.test/book?token=") {
			t.Fatalf("booking link %q", link)
		}
		if job := installJobOf(t, s, op, id); job["booking_link_sent"] != true || job["invitation_due_on"] != nil {
			t.Fatalf("after the invitation: %v", job)
		}
		page := s.URL + strings.TrimPrefix(link, "http://subprov.test")

		// The customer books in a real browser, with the first free slot (Monday 1 March, 08:00).
		ctx := browsertest.New(t, time.Minute)
		if err := chromedp.Do(ctx, chromedp.Navigate(page)); err != nil {
			t.Fatal(err)
		}
		h1, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
		if err != nil || h1 != "Book your installation" {
			t.Fatalf("page heading %q %v", h1, err)
		}
		addr, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("dl")))
		if !strings.Contains(addr, "4500 Boulevard De Maisonneuve O") || !strings.Contains(addr, "Fibre 1000") {
			t.Fatalf("page does not show address and plan: %q", addr)
		}
		first, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("fieldset.day legend")))
		if err != nil || first != "Monday, March 1, 2027" {
			t.Fatalf("first bookable day %q (nothing before the building's earliest service date) %v", first, err)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`input[name="slot"]:not([disabled])`))); err != nil {
			t.Fatal(err)
		}
		resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(`button[type="submit"]`)))
		if err != nil || resp.Status != 200 {
			t.Fatalf("confirming: %v %v", resp, err)
		}
		done, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1")))
		if err != nil || done != "Your installation is booked" {
			t.Fatalf("after confirming: %q %v", done, err)
		}
		when, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#appointment")))
		if when != "Monday, March 1, 2027, 08:00–12:00" {
			t.Fatalf("appointment shown as %q", when)
		}
		job = installJobOf(t, s, op, id)
		if job["state"] != "booked" || job["appointment_at"] != "2027-03-01T13:00:00Z" {
			t.Fatalf("booked job %v", job)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM subscriptions WHERE id = ? AND appointment_at IS NOT NULL`, id); n != 1 {
			t.Fatal("appointment_at not set on the subscription")
		}
		apptest.Eventually(t, 10*time.Second, "the confirmation mail", func() bool {
			return mailWithSubject(s, op, email, "Your installation appointment is booked") != nil
		})
		// The link is single use: it now shows the booking.
		if status, body := getPage(t, page); status != 200 || !strings.Contains(body, "Your installation is booked") {
			t.Fatalf("reused link: %d", status)
		}

		// The technician's team takes the job and completes it from the queue.
		jobPath := "/api/v1/install-jobs/" + job["id"].(string)
		if res := s.Do(apptest.Request{Method: "POST", Path: jobPath + "/assign", Headers: op, Body: map[string]string{"assigned_to": "Team Westmount"}}); res.Status != 200 || res.JSON["assigned_to"] != "Team Westmount" {
			t.Fatalf("assign: %d %s", res.Status, res.Raw)
		}
		op = setClock(t, s, op, "2027-03-01T16:00:00Z")
		res = s.Do(apptest.Request{Method: "POST", Path: jobPath + "/complete", Headers: op, Body: map[string]string{"mac_address": "3c:84:6a:00:2b:01"}})
		if res.Status != 200 || res.JSON["status"] != "ACTIVE" {
			t.Fatalf("complete: %d %s", res.Status, res.Raw)
		}
		if job := installJobOf(t, s, op, id); job["state"] != "done" || job["subscription_status"] != "ACTIVE" {
			t.Fatalf("completed job %v", job)
		}
		apptest.Eventually(t, 15*time.Second, "the first invoice to be paid", func() bool {
			inv := invoicesOf(t, s, id)
			return len(inv) == 1 && inv[0].kind == "first" && inv[0].status == "paid"
		})
		if status, _ := getPage(t, page); status != http.StatusGone {
			t.Fatalf("link after the install: %d, want 410", status)
		}
	})
}

// TestInstallQueue: the queue filters (the `No contact e-mail` flag among them), refuses bad
// filters and other credentials, and the operator books a second-line visit.
func TestInstallQueue(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		second := (&hook{}).post(s, order(map[string]any{"delivery_mode": "home_drop", "unit_id": unitQueen102, "subscriber": person("q@example.ca")}))
		secondID := second.JSON["subscription_id"].(string)
		// A third-line line without any contact e-mail: seeded directly, as anonymous checkout would.
		if _, err := rawdb.Writer(s.Store).Exec(s.Store.Dialect.Rebind(`UPDATE install_jobs SET flags = 'No contact e-mail' WHERE subscription_id = ?`), secondID); err != nil {
			t.Fatal(err)
		}
		list := func(query string) *apptest.Response {
			return s.Do(apptest.Request{Method: "GET", Path: "/api/v1/install-jobs" + query, Headers: op})
		}
		tests := []struct {
			name, query string
			status      int
			want        int // jobs of secondID in the answer
		}{
			{"by provider and state", "?provider_id=" + northwind + "&state=open", 200, 1},
			{"by booking", "?booking=operator", 200, 1},
			{"by flag", "?flag=" + url.QueryEscape("No contact e-mail"), 200, 1},
			{"another flag", "?flag=urgent", 200, 0},
			{"bad state", "?state=lost", 422, 0},
			{"bad limit", "?limit=0", 422, 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res := list(tt.query)
				if res.Status != tt.status {
					t.Fatalf("status %d, want %d: %s", res.Status, tt.status, res.Raw)
				}
				if tt.status != 200 {
					return
				}
				n := 0
				for _, j := range res.JSON["install_jobs"].([]any) {
					if j.(map[string]any)["subscription_id"] == secondID {
						n++
					}
				}
				if n != tt.want {
					t.Fatalf("%d jobs of the line, want %d", n, tt.want)
				}
			})
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/install-jobs", Headers: apptest.Key(storeKey)}); res.Status != 401 {
			t.Fatalf("API key on the queue: %d", res.Status)
		}
		job := installJobOf(t, s, op, secondID)
		if job["booking"] != "operator" {
			t.Fatalf("second-line job %v", job)
		}
		jobPath := "/api/v1/install-jobs/" + job["id"].(string)
		slots := s.Do(apptest.Request{Method: "GET", Path: jobPath + "/slots", Headers: op})
		list0 := slots.JSON["slots"].([]any)
		if slots.Status != 200 || len(list0) == 0 {
			t.Fatalf("slots: %d %s", slots.Status, slots.Raw)
		}
		slot := list0[0].(map[string]any)["slot_id"].(string)
		book := func(body any) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: jobPath + "/book", Headers: op, Body: body})
		}
		if res := book(map[string]string{"slot_id": "2020-01-01_nope"}); res.Status != 422 {
			t.Fatalf("unbookable slot: %d %s", res.Status, res.Raw)
		}
		if res := book(map[string]any{"slot_id": slot, "extra": 1}); res.Status != 422 {
			t.Fatalf("unknown field: %d", res.Status)
		}
		res := book(map[string]string{"slot_id": slot})
		if res.Status != 200 || res.JSON["state"] != "booked" || res.JSON["booking"] != "operator" || res.JSON["appointment_at"] == nil {
			t.Fatalf("operator booking: %d %s", res.Status, res.Raw)
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/install-jobs/nope", Headers: op}); res.Status != 404 {
			t.Fatalf("unknown job: %d", res.Status)
		}
	})
}

// TestBookingPageLinks: the demo's pending line has a live link; unknown links and bad forms
// answer HTML pages with the right status, and nothing is booked by them.
func TestBookingPageLinks(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		if status, body := getPage(t, s.URL+"/book?token="+demoBookingToken); status != 200 || !strings.Contains(body, `<legend>Choose an appointment</legend>`) ||
			!strings.Contains(body, `<label for="slot-`) {
			t.Fatalf("demo link: %d", status)
		}
		if status, body := getPage(t, s.URL+"/book?token=nope"); status != 404 || !strings.Contains(body, "<h1>Link not found</h1>") {
			t.Fatalf("unknown link: %d %s", status, body)
		}
		post := func(form url.Values) (int, string) {
			res, err := http.PostForm(s.URL+"/book", form)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			b, _ := io.ReadAll(res.Body)
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Fatalf("content type %q", ct)
			}
			return res.StatusCode, string(b)
		}
		if status, body := post(url.Values{"token": {demoBookingToken}}); status != 422 || !strings.Contains(body, "Choose an appointment.") {
			t.Fatalf("no slot chosen: %d", status)
		}
		if status, _ := post(url.Values{"token": {demoBookingToken}, "slot": {"2020-01-06_iw100000-0000-4000-8000-000000000001"}}); status != 422 {
			t.Fatalf("slot in the past: %d", status)
		}
		if status, _ := post(url.Values{"token": {"nope"}, "slot": {"x"}}); status != 404 {
			t.Fatalf("unknown token: %d", status)
		}
		if n := count(t, s, `SELECT COUNT(*) FROM install_jobs WHERE state = 'booked'`); n != 0 {
			t.Fatal("a refused form booked something")
		}
	})
}
