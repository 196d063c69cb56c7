package httpapi_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/config"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/jobs"
)

// awaitPasswordResets waits until the password-reset jobs enqueued so far have run, so their
// mail is in the outbox: a reset request only enqueues the job.
func awaitPasswordResets(t *testing.T, s *apptest.Service) {
	t.Helper()
	apptest.Eventually(t, 15*time.Second, "the password-reset jobs", func() bool {
		return count(t, s, `SELECT COUNT(*) FROM river_job WHERE kind = ? AND state NOT IN ('completed', 'discarded', 'cancelled')`,
			jobs.SendPasswordReset{}.Kind()) == 0
	})
}

// writes is what the service has written that a request could add: jobs by kind, mailed
// tokens and outbox rows.
func writes(t *testing.T, s *apptest.Service) map[string]int {
	t.Helper()
	out := map[string]int{
		"tokens": count(t, s, `SELECT COUNT(*) FROM tokens`),
		"mail":   count(t, s, `SELECT COUNT(*) FROM outbox`),
	}
	rows, err := s.Store.R().Query(context.Background(), `SELECT kind, COUNT(*) FROM river_job GROUP BY kind`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind string
		var n int
		if err := rows.Scan(&kind, &n); err != nil {
			t.Fatal(err)
		}
		out["job "+kind] = n
	}
	return out
}

func delta(before, after map[string]int) string {
	var d []string
	for k, v := range after {
		if v != before[k] {
			d = append(d, fmt.Sprintf("%s %+d", k, v-before[k]))
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			d = append(d, k+" gone")
		}
	}
	return strings.Join(d, ", ")
}

// TestPasswordResetRequestsDoTheSameWork: a reset request answers 202 either way and does the
// same work either way — it enqueues one auth.password_reset job and writes nothing else —
// so neither its answer nor its time tells whether the address has a login. The job mails
// the link (or nothing), and a run repeated after a crash mails no second link.
func TestPasswordResetRequestsDoTheSameWork(t *testing.T) {
	t.Parallel()
	noWorkers := func(c *config.Config) { c.Workers = false }
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		want := "job " + jobs.SendPasswordReset{}.Kind() + " +1"
		for _, tt := range []struct{ name, email string }{
			{"an address with a login", fixture.DemoSubscriberEmail},
			{"the same address spelled otherwise", " " + strings.ToUpper(fixture.DemoSubscriberEmail)},
			{"an address without a login", "nobody@example.ca"},
			{"a malformed address", "not-an-address"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				before := writes(t, s)
				res := s.Do(apptest.Request{Method: "POST", Path: "/partner/subscriber/auth/password-reset", Body: map[string]string{"email": tt.email}})
				if res.Status != 202 {
					t.Fatalf("reset: %d %s", res.Status, res.Raw)
				}
				if got := delta(before, writes(t, s)); got != want {
					t.Fatalf("the request wrote %q, want only %q", got, want)
				}
			})
		}
		// The job: a link for a login, nothing for another address, once per request.
		ctx := context.Background()
		at := s.Clock.Now()
		for _, tt := range []struct {
			email string
			mails int
		}{{fixture.DemoSubscriberEmail, 1}, {"nobody@example.ca", 0}} {
			before := writes(t, s)
			for range 2 { // the second run is a retry after a crash
				if err := s.Auth.SendPasswordReset(ctx, jobs.SendPasswordReset{Email: tt.email, RequestedAt: at}); err != nil {
					t.Fatal(err)
				}
			}
			after := writes(t, s)
			if after["tokens"]-before["tokens"] != tt.mails || after["mail"]-before["mail"] != tt.mails {
				t.Errorf("%s: the job wrote %q, want %d link(s)", tt.email, delta(before, after), tt.mails)
			}
		}
	}, noWorkers)
}

// TestAnonymousCompleteExternalIDNamesOneLine: anonymous-complete judges a known
// external_subscription_id as every order route does: the same plan at the same place is the
// idempotent replay; another plan, another place, or a line with a subscriber record is 409
// external_id_in_use, and nothing is written.
func TestAnonymousCompleteExternalIDNamesOneLine(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		anon := func(ext, plan, hash string) map[string]any {
			return map[string]any{"external_subscription_id": ext, "service_provider_document_id": "nwf-spd-2026",
				"plan_version_id": plan, "location_hash": hash, "delivery_mode": "direct"}
		}
		first := anonymous(s, anon("anon-one", planFibre500, hashKing1206))
		if first.Status != 200 || first.JSON["idempotent_replay"] != false {
			t.Fatalf("first order: %d %s", first.Status, first.Raw)
		}
		if res := complete(s, completeBody(map[string]any{"plan_version_id": planFibre150, "unit_id": unitMais2B, "delivery_mode": "home_drop",
			"external_subscription_id": "mkt-with-subscriber"})); res.Status != 200 {
			t.Fatalf("complete: %d %s", res.Status, res.Raw)
		}
		for _, tt := range []struct {
			name   string
			body   map[string]any
			status int
			detail string
		}{
			{"the same plan and place", anon("anon-one", planFibre500, hashKing1206), 200, ""},
			{"another plan at the same place", anon("anon-one", planFibre150, hashKing1206), 409, "external_id_in_use"},
			{"the same plan at another place", anon("anon-one", planFibre500, hashKing1205), 409, "external_id_in_use"},
			{"another plan at another place", anon("anon-one", planFibre150, hashKing1205), 409, "external_id_in_use"},
			{"the id of a line with a subscriber", anon("mkt-with-subscriber", planFibre500, hashKing1205), 409, "external_id_in_use"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				lines := count(t, s, `SELECT COUNT(*) FROM subscriptions`)
				res := anonymous(s, tt.body)
				if res.Status != tt.status {
					t.Fatalf("%d %s, want %d", res.Status, res.Raw, tt.status)
				}
				if tt.status == 200 && (res.JSON["idempotent_replay"] != true || res.JSON["subscription_id"] != first.JSON["subscription_id"]) {
					t.Fatalf("not the replay of the first order: %s", res.Raw)
				}
				if tt.detail != "" && !strings.HasPrefix(fmt.Sprint(res.JSON["detail"]), tt.detail) {
					t.Fatalf("detail %s, want %s", res.Raw, tt.detail)
				}
				if n := count(t, s, `SELECT COUNT(*) FROM subscriptions`); n != lines {
					t.Fatalf("%d lines written", n-lines)
				}
			})
		}
	})
}

// TestUnknownAndForeignIDsAnswerAlike: without a provider's secret, a live checkout session id
// and an unknown one answer the same 401 (only an expired session answers 410 first, to
// anyone); with it, an unknown id is 404. An order naming a suite or a port outside the
// provider's coverage answers the unknown id's 422, word for word.
func TestUnknownAndForeignIDsAnswerAlike(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		live := session(t, s, map[string]any{"location_hash": hashKing1206, "delivery_mode": "direct"})
		const unknown = "cs_unknown_session_id"
		routes := []struct {
			name, method, path string
			body               func(id string) any
		}{
			{"read", "GET", "/partner/external-checkout/sessions/{id}", nil},
			{"patch", "PATCH", "/partner/external-checkout/sessions/{id}", func(string) any { return map[string]any{"partner_reference_id": "r"} }},
			{"patch, a body that does not decode", "PATCH", "/partner/external-checkout/sessions/{id}", func(string) any { return map[string]any{"foo": 1} }},
			{"cancel", "POST", "/partner/external-checkout/sessions/{id}/cancel", nil},
			{"complete", "POST", "/partner/external-checkout/complete", func(id string) any { return completeBody(map[string]any{"session_id": id}) }},
			{"anonymous-complete", "POST", "/partner/external-checkout/anonymous-complete", func(id string) any {
				return map[string]any{"session_id": id, "external_subscription_id": "x", "service_provider_document_id": "nwf-spd-2026"}
			}},
		}
		call := func(method, path, id string, body func(string) any, h map[string]string) *apptest.Response {
			r := apptest.Request{Method: method, Path: strings.ReplaceAll(path, "{id}", id), Headers: h}
			if body != nil {
				r.Body = body(id)
			}
			return s.Do(r)
		}
		for _, rt := range routes {
			for _, cred := range []struct {
				name string
				h    map[string]string
			}{{"no secret", nil}, {"an unknown secret", secret("whsec_not_a_real_secret_0000000")}} {
				t.Run(rt.name+", "+cred.name, func(t *testing.T) {
					a := call(rt.method, rt.path, live, rt.body, cred.h)
					b := call(rt.method, rt.path, unknown, rt.body, cred.h)
					if a.Status != 401 || b.Status != 401 || string(a.Raw) != string(b.Raw) {
						t.Fatalf("live id %d %s, unknown id %d %s: want both 401 alike", a.Status, a.Raw, b.Status, b.Raw)
					}
				})
			}
			t.Run(rt.name+", the right secret", func(t *testing.T) {
				if res := call(rt.method, rt.path, unknown, rt.body, secret(northwindSecret)); res.Status != 404 {
					t.Fatalf("unknown id with the secret: %d %s", res.Status, res.Raw)
				}
			})
		}
		// 422 for a suite or port the provider does not cover, word for word the unknown id's.
		const (
			georgiaUnit = "u5000000-0000-4000-8000-000000003001" // a building Northwind does not cover
			georgiaPort = "lh_v6e3002"
		)
		for _, tt := range []struct {
			name             string
			post             func(extra map[string]any) *apptest.Response
			foreign, unknown map[string]any
		}{
			{"order, suite", func(e map[string]any) *apptest.Response { return (&hook{}).post(s, order(e)) },
				map[string]any{"delivery_mode": "home_drop", "unit_id": georgiaUnit}, map[string]any{"delivery_mode": "home_drop", "unit_id": "u-nope"}},
			{"order, port", func(e map[string]any) *apptest.Response { return (&hook{}).post(s, order(e)) },
				map[string]any{"location_hash": georgiaPort}, map[string]any{"location_hash": "lh_nope"}},
			{"complete, suite", func(e map[string]any) *apptest.Response {
				return complete(s, completeBody(map[string]any{"plan_version_id": planFibre150, "delivery_mode": "home_drop", "unit_id": e["unit_id"]}))
			}, map[string]any{"unit_id": georgiaUnit}, map[string]any{"unit_id": "u-nope"}},
			{"anonymous-complete, port", func(e map[string]any) *apptest.Response {
				return anonymous(s, map[string]any{"external_subscription_id": "anon-probe", "service_provider_document_id": "nwf-spd-2026",
					"plan_version_id": planFibre150, "delivery_mode": "direct", "location_hash": e["location_hash"]})
			}, map[string]any{"location_hash": georgiaPort}, map[string]any{"location_hash": "lh_nope"}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				a, b := tt.post(tt.foreign), tt.post(tt.unknown)
				if a.Status != 422 || b.Status != 422 || string(a.Raw) != string(b.Raw) {
					t.Fatalf("foreign id %d %s, unknown id %d %s: want both 422 alike", a.Status, a.Raw, b.Status, b.Raw)
				}
			})
		}
	})
}

// TestCodeIssueLimitSaysTheRealWait: the one-time-code issue limit's 429 says, in Retry-After
// and retry_after, how long until the oldest counting code leaves the 10-minute window — not
// a fixed minute — and once that has passed a code is issued again.
func TestCodeIssueLimitSaysTheRealWait(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		issue := func() *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/partner/agent/verify/issue", Headers: apptest.Key(fixture.DemoAgentKey),
				Body: map[string]string{"customer_id": marieID}})
		}
		start := s.Clock.Now()
		for i := range 5 {
			if i == 1 {
				s.DevClock.Advance(2 * time.Minute) // the oldest code is 2 minutes older than the rest
			}
			if res := issue(); res.Status != 202 {
				t.Fatalf("code %d: %d %s", i+1, res.Status, res.Raw)
			}
		}
		for _, tt := range []struct {
			name     string
			advance  time.Duration
			min, max int // seconds of the wait, the clock running on meanwhile
		}{
			{"at once", 0, 470, 480},
			{"three minutes later", 3 * time.Minute, 290, 300},
		} {
			t.Run(tt.name, func(t *testing.T) {
				s.DevClock.Advance(tt.advance)
				res := issue()
				if res.Status != 429 || string(res.Raw) != "{\"detail\":\"Rate limit exceeded\"}\n" {
					t.Fatalf("%d %s, want the documented 429", res.Status, res.Raw)
				}
				secs, err := strconv.Atoi(res.Header.Get("Retry-After"))
				wait := start.Add(10 * time.Minute).Sub(s.Clock.Now())
				if err != nil || secs < tt.min || secs > tt.max || float64(secs) < wait.Seconds()-5 {
					t.Fatalf("Retry-After %q, want the %v until the oldest code leaves the window", res.Header.Get("Retry-After"), wait)
				}
			})
		}
		s.DevClock.Advance(5 * time.Minute)
		if res := issue(); res.Status != 202 {
			t.Fatalf("after the wait: %d %s", res.Status, res.Raw)
		}
	})
}

// TestDevClockStaysInRange: the dev clock moves at most 100 years from the real time; a larger
// advance (one that overflowed and moved the clock back), advances that add up past it, or a
// far set instant are 422 in the dashboard envelope and leave the clock where it was.
func TestDevClockStaysInRange(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		clock := func(body any) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/api/v1/dev/clock", Headers: op, Body: body})
		}
		const bound = 100 * 365 * 24 * 3600
		for _, tt := range []struct {
			name   string
			body   string
			status int
			field  string
		}{
			{"an advance that overflowed", `{"advance_seconds": 9223372036854775807}`, 422, "advance_seconds"},
			{"an advance past the bound", `{"advance_seconds": 100000000000}`, 422, "advance_seconds"},
			{"a set instant far ahead", `{"set": "9999-01-01T00:00:00Z"}`, 422, "set"},
			{"a set instant far back", `{"set": "0001-01-01T00:00:00Z"}`, 422, "set"},
			{"an advance near the bound", `{"advance_seconds": ` + strconv.Itoa(bound-3600) + `}`, 200, ""},
			{"an advance that adds up past the bound", `{"advance_seconds": 7200}`, 422, "advance_seconds"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				before := s.Clock.Now()
				res := clock(tt.body)
				if res.Status != tt.status {
					t.Fatalf("%d %s, want %d", res.Status, res.Raw, tt.status)
				}
				if tt.status != 422 {
					op = s.Operator() // the clock moved past the old token's lifetime
					return
				}
				if !strings.Contains(string(res.Raw), `"loc":["body","`+tt.field+`"]`) || !strings.Contains(string(res.Raw), "100 years") {
					t.Fatalf("422 %s, want it to name %s and the bound", res.Raw, tt.field)
				}
				if now := s.Clock.Now(); now.Before(before) || now.Sub(before) > time.Minute {
					t.Fatalf("a refused move changed the clock from %v to %v", before, now)
				}
			})
		}
	}, func(c *config.Config) { c.Workers = false }) // a clock 100 years on would start a century of bill runs
}

// TestDuplicateFieldsAreRefused: a body that names a key twice in one object is ambiguous
// (the last would win), so every surface refuses it with 422 naming the field, and writes
// nothing.
func TestDuplicateFieldsAreRefused(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		op := s.Operator()
		for _, tt := range []struct {
			name, path, body, field string
			h                       map[string]string
		}{
			{"login", "/partner/subscriber/auth/login",
				`{"email": "` + fixture.DemoSubscriberEmail + `", "password": "x", "password": "` + fixture.DemoSubscriberPass + `"}`, "password", nil},
			{"order, nested", "/partner/provisioning/provider-initiated", `{"plan_version_id": "` + planFibre500 + `", "location_hash": "` + hashKing1205 +
				`", "subscriber": {"firstname": "A", "lastname": "B", "email": "dup@example.ca", "email": "other@example.ca"}}`, "subscriber.email", apptest.Key(storeKey)},
			{"order, top level", "/partner/provisioning/provider-initiated", `{"plan_version_id": "` + planFibre500 + `", "location_hash": "` + hashKing1205 +
				`", "location_hash": "` + hashKing1206 + `", "subscriber": {"firstname": "A", "lastname": "B", "email": "dup@example.ca"}}`, "location_hash", apptest.Key(storeKey)},
			{"agent", "/partner/agent/verify/issue", `{"customer_id": "` + marieID + `", "channel": "sms", "channel": "email"}`, "channel", apptest.Key(fixture.DemoAgentKey)},
			{"dashboard", "/api/v1/dev/clock", `{"advance_seconds": 1, "advance_seconds": 2}`, "advance_seconds", op},
			{"dashboard, a map", "/api/v1/dev/faults", `{"smtp": "down", "smtp": "up"}`, "smtp", op},
		} {
			t.Run(tt.name, func(t *testing.T) {
				const written = `SELECT (SELECT COUNT(*) FROM subscriptions) + (SELECT COUNT(*) FROM verification_codes)`
				before, clock, faults := count(t, s, written), s.Clock.Now(), s.Faults.All()
				res := s.Do(apptest.Request{Method: "POST", Path: tt.path, Headers: tt.h, Body: tt.body})
				raw := string(res.Raw)
				named := strings.Contains(raw, `"loc":["body","`+strings.ReplaceAll(tt.field, ".", `","`)+`"]`) || strings.Contains(raw, `"`+tt.field+`"`)
				if res.Status != 422 || !strings.Contains(raw, "duplicate field") || !named {
					t.Fatalf("%d %s, want 422 naming %s as a duplicate field", res.Status, res.Raw, tt.field)
				}
				if count(t, s, written) != before || s.Clock.Now().Sub(clock) > time.Minute || fmt.Sprint(s.Faults.All()) != fmt.Sprint(faults) {
					t.Fatal("a refused body changed something")
				}
			})
		}
	})
}
