package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/fixture"
	"github.com/subprov/subprov/httpapi"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/store"
)

// The authorization matrix: every served route (httpapi.Routes) is called with each kind of
// caller and must answer the status its credential kind dictates. authzRoutes holds one row
// per route of routes.go, naming the credential the route must require; a route served
// without its row, a row whose route is gone, or a route whose credential changed fails
// TestAuthorizationMatrix. /api/v1 mirrors of /partner routes share their row.

// authzRow is one route's row: the credential kind it must require.
type authzRow struct{ auth string }

var authzRoutes = map[string]authzRow{
	"GET /healthz":                        {"none"},
	"GET /readyz":                         {"none"},
	"GET /metrics":                        {"none"},
	"GET /openapi.json":                   {"none"},
	"GET /docs":                           {"none"},
	"POST /partner/subscriber/auth/login": {"none"},
	"POST /partner/subscriber/auth/password-reset":                             {"none"},
	"POST /partner/subscriber/auth/password-reset/confirm":                     {"none"},
	"POST /partner/subscriber/auth/activate":                                   {"none"},
	"POST /api/v1/auth/login":                                                  {"none"},
	"GET /partner/serviceability/autocomplete":                                 {"api_key"},
	"POST /partner/serviceability/check":                                       {"api_key"},
	"GET /partner/serviceability/units":                                        {"api_key"},
	"POST /partner/location/":                                                  {"none"},
	"POST /partner/location/details":                                           {"operator"},
	"POST /partner/provisioning/provider-initiated":                            {"api_key"},
	"POST /partner/provisioning/bulk":                                          {"api_key"},
	"POST /partner/provisioning/confirm-install":                               {"api_key"},
	"GET /partner/subscriptions/{subscription_id}/change-plan/preview":         {"api_key"},
	"POST /partner/subscriptions/{subscription_id}/change-plan":                {"api_key"},
	"POST /partner/cpe/config":                                                 {"device_secret"},
	"POST /api/v1/subscription/{subscription_id}/cancel":                       {"operator"},
	"GET /api/v1/subscription/{subscription_id}/cancel":                        {"operator"},
	"GET /api/v1/subscription/{subscription_id}/cancel/preview":                {"operator"},
	"POST /partner/external-checkout/sessions":                                 {"optional_subscriber"},
	"GET /partner/external-checkout/sessions/{session_id}":                     {"webhook_secret"},
	"PATCH /partner/external-checkout/sessions/{session_id}":                   {"webhook_secret"},
	"POST /partner/external-checkout/sessions/{session_id}/cancel":             {"webhook_secret"},
	"POST /partner/external-checkout/complete":                                 {"webhook_secret"},
	"POST /partner/external-checkout/anonymous-complete":                       {"webhook_secret"},
	"GET /partner/external-checkout/subscriptions/{external_subscription_id}":  {"webhook_secret"},
	"POST /partner/external-checkout/subscription-status":                      {"webhook_secret"},
	"GET /partner/marketplace/plans/{plan_version_id}":                         {"none"},
	"GET /api/v1/sandbox/provider-info":                                        {"operator"},
	"POST /api/v1/sandbox/webhook-config":                                      {"operator"},
	"GET /api/v1/sandbox/webhook-events":                                       {"operator"},
	"POST /api/v1/sandbox/webhook-events/{event_id}/replay":                    {"operator"},
	"GET /sandbox/checkout":                                                    {"none"},
	"POST /sandbox/checkout":                                                   {"none"},
	"POST /sandbox/checkout/cancel":                                            {"none"},
	"GET /partner/subscriber/me":                                               {"subscriber"},
	"GET /partner/subscriber/me/details":                                       {"subscriber"},
	"PATCH /partner/subscriber/me/contact":                                     {"subscriber"},
	"PATCH /partner/subscriber/me/password":                                    {"subscriber"},
	"GET /partner/subscriber/me/payment-method":                                {"holder"},
	"POST /partner/subscriber/me/payment-method/setup":                         {"holder"},
	"POST /partner/subscriber/me/payment-method/confirm":                       {"holder"},
	"GET /partner/subscriber/me/usage":                                         {"subscriber"},
	"GET /partner/subscriber/status-history":                                   {"subscriber"},
	"GET /partner/subscriber/me/authorized-users":                              {"subscriber"},
	"POST /partner/subscriber/me/authorized-users":                             {"holder"},
	"POST /partner/subscriber/me/authorized-users/{id}/resend-invite":          {"holder"},
	"DELETE /partner/subscriber/me/authorized-users/{id}":                      {"holder"},
	"GET /partner/subscriber/me/orders/options":                                {"holder"},
	"GET /partner/subscriber/me/orders/preview":                                {"holder"},
	"POST /partner/subscriber/me/orders":                                       {"holder"},
	"GET /partner/subscriber/me/reactivation":                                  {"subscriber"},
	"POST /partner/subscriber/me/subscriptions/{subscription_id}/reactivation": {"holder"},
	"POST /api/v1/invoices/{invoice_id}/retry-charge":                          {"operator"},
	"GET /partner/subscriber/me/invoices":                                      {"subscriber"},
	"GET /partner/subscriber/me/credit-notes":                                  {"subscriber"},
	"GET /api/v1/credit-notes/{credit_note_id}/pdf":                            {"subscriber"},
	"GET /api/v1/invoices/{invoice_id}/pdf":                                    {"subscriber"},
	"PATCH /partner/subscriber/me/billing-day":                                 {"holder"},
	"PATCH /partner/subscriber/me/invoice-contact":                             {"holder"},
	"POST /partner/subscriber/me/invoice-contact/use-holder":                   {"holder"},
	"GET /api/v1/audit":                                                        {"operator"},
	"GET /api/v1/overview":                                                     {"operator"},
	"GET /api/v1/buildings":                                                    {"operator"},
	"POST /api/v1/buildings":                                                   {"operator"},
	"POST /api/v1/buildings/import":                                            {"operator"},
	"GET /api/v1/buildings/{building_id}":                                      {"operator"},
	"PATCH /api/v1/buildings/{building_id}":                                    {"operator"},
	"POST /api/v1/buildings/{building_id}/units":                               {"operator"},
	"POST /api/v1/ports":                                                       {"operator"},
	"GET /api/v1/switches":                                                     {"operator"},
	"POST /api/v1/switches":                                                    {"operator"},
	"GET /api/v1/switches/{switch_id}":                                         {"operator"},
	"PATCH /api/v1/switches/{switch_id}":                                       {"operator"},
	"GET /api/v1/plans":                                                        {"operator"},
	"POST /api/v1/plans":                                                       {"operator"},
	"POST /api/v1/plans/{plan_id}/versions":                                    {"operator"},
	"PATCH /api/v1/plan-versions/{plan_version_id}":                            {"operator"},
	"GET /api/v1/install-windows":                                              {"operator"},
	"POST /api/v1/install-windows":                                             {"operator"},
	"DELETE /api/v1/install-windows/{window_id}":                               {"operator"},
	"GET /api/v1/install-jobs":                                                 {"operator"},
	"GET /api/v1/install-jobs/{job_id}":                                        {"operator"},
	"GET /api/v1/install-jobs/{job_id}/slots":                                  {"operator"},
	"POST /api/v1/install-jobs/{job_id}/assign":                                {"operator"},
	"POST /api/v1/install-jobs/{job_id}/book":                                  {"operator"},
	"POST /api/v1/install-jobs/{job_id}/complete":                              {"operator"},
	"GET /book":                                                              {"none"},
	"POST /book":                                                             {"none"},
	"GET /portal/reset-password":                                             {"none"},
	"POST /portal/reset-password":                                            {"none"},
	"GET /portal/activate":                                                   {"none"},
	"POST /portal/activate":                                                  {"none"},
	"GET /partner/agent/customers/search":                                    {"agent_key"},
	"POST /partner/agent/verify/issue":                                       {"agent_key"},
	"POST /partner/agent/verify/check":                                       {"agent_key"},
	"GET /partner/agent/customers/{customerId}":                              {"agent_key"},
	"GET /partner/agent/customers/{customerId}/billing-summary":              {"agent_key"},
	"GET /partner/agent/customers/{customerId}/payments":                     {"agent_key"},
	"GET /partner/agent/customers/{customerId}/network-health":               {"agent_key"},
	"GET /partner/agent/customers/{customerId}/tickets":                      {"agent_key"},
	"POST /partner/agent/customers/{customerId}/notes":                       {"agent_key"},
	"PATCH /partner/agent/customers/{customerId}/contact":                    {"agent_key"},
	"POST /partner/agent/customers/{customerId}/password-reset":              {"agent_key"},
	"POST /partner/agent/customers/{customerId}/invoices/{invoiceId}/resend": {"agent_key"},
	"POST /partner/agent/customers/{customerId}/plan-change/preview":         {"agent_key"},
	"POST /partner/agent/customers/{customerId}/plan-change":                 {"agent_key"},
	"POST /partner/agent/tickets":                                            {"agent_key"},
	"GET /api/v1/dev/clock":                                                  {"operator"},
	"POST /api/v1/dev/clock":                                                 {"operator"},
	"GET /api/v1/dev/faults":                                                 {"operator"},
	"POST /api/v1/dev/faults":                                                {"operator"},
	"GET /api/v1/dev/outbox":                                                 {"operator"},

	// Providers, API keys and webhook secrets.
	"GET /api/v1/providers":                                      {"operator"},
	"POST /api/v1/providers":                                     {"operator"},
	"GET /api/v1/providers/{provider_id}":                        {"operator"},
	"PATCH /api/v1/providers/{provider_id}":                      {"operator"},
	"GET /api/v1/providers/{provider_id}/api-keys":               {"operator"},
	"POST /api/v1/providers/{provider_id}/api-keys":              {"operator"},
	"DELETE /api/v1/providers/{provider_id}/api-keys/{key_id}":   {"operator"},
	"POST /api/v1/providers/{provider_id}/webhook-secret/rotate": {"operator"},

	// Webhook events.
	"GET /api/v1/webhook-events":                    {"operator"},
	"GET /api/v1/webhook-events/{event_id}":         {"operator"},
	"POST /api/v1/webhook-events/{event_id}/replay": {"operator"},
	// Billing, tickets and privacy requests (and the subscriber's deletion request).
	"POST /partner/subscriber/me/privacy/deletion-request": {"holder"},
	// The signed-in person's own settings (and the export link's page).
	"GET /partner/subscriber/me/preferences":             {"subscriber"},
	"PATCH /partner/subscriber/me/preferences":           {"subscriber"},
	"POST /partner/subscriber/me/privacy/export":         {"subscriber"},
	"POST /partner/subscriber/me/totp":                   {"subscriber"},
	"POST /partner/subscriber/me/totp/confirm":           {"subscriber"},
	"DELETE /partner/subscriber/me/totp":                 {"subscriber"},
	"GET /portal/privacy/export":                         {"none"},
	"GET /api/v1/invoices":                               {"operator"},
	"GET /api/v1/invoices/{invoice_id}/document":         {"operator"},
	"GET /api/v1/credit-notes/{credit_note_id}/document": {"operator"},
	"POST /api/v1/invoices/{invoice_id}/credit-notes":    {"operator"},
	"GET /api/v1/bill-runs":                              {"operator"},
	"GET /api/v1/tickets":                                {"operator"},
	"PATCH /api/v1/tickets/{ticket_id}":                  {"operator"},
	"GET /api/v1/privacy-requests":                       {"operator"},
	"POST /api/v1/privacy-requests/{request_id}/approve": {"operator"},
	"POST /api/v1/privacy-requests/{request_id}/reject":  {"operator"},
	// The holder's payments (pay now, AutoPay, paper billing) and the pay link's page.
	"POST /partner/subscriber/me/invoices/{invoice_id}/pay": {"holder"},
	"GET /partner/subscriber/me/autopay":                    {"holder"},
	"PATCH /partner/subscriber/me/autopay":                  {"holder"},
	"POST /partner/subscriber/me/paper-billing":             {"holder"},
	"GET /portal/pay":                                       {"none"},
	"POST /portal/pay":                                      {"none"},

	// Operators and the second factor.
	"GET /api/v1/operators":                           {"operator"},
	"POST /api/v1/operators":                          {"operator"},
	"GET /api/v1/operators/{operator_id}":             {"operator"},
	"PATCH /api/v1/operators/{operator_id}":           {"operator"},
	"POST /api/v1/operators/{operator_id}/totp/reset": {"operator"},
	"PATCH /api/v1/operators/me/password":             {"operator"},
	"POST /api/v1/operators/me/totp":                  {"operator"},
	"POST /api/v1/operators/me/totp/confirm":          {"operator"},
	// Subscribers and lines.
	"GET /api/v1/subscribers":                                          {"operator"},
	"GET /api/v1/subscribers/{subscriber_id}":                          {"operator"},
	"POST /api/v1/subscriptions/{subscription_id}/suspend":             {"operator"},
	"POST /api/v1/subscriptions/{subscription_id}/restore":             {"operator"},
	"POST /api/v1/subscriptions/{subscription_id}/plan-change/preview": {"operator"},
	"POST /api/v1/subscriptions/{subscription_id}/plan-change":         {"operator"},
	"POST /api/v1/subscriptions/{subscription_id}/reprovision":         {"operator"},
	"POST /api/v1/subscriptions/{subscription_id}/notes":               {"operator"},
}

// authzRowOf finds the row of a served route: its own, or its /partner original's for an
// /api/v1 mirror.
func authzRowOf(rt httpapi.RouteInfo) (authzRow, bool) {
	if row, ok := authzRoutes[rt.Method+" "+rt.Path]; ok {
		return row, true
	}
	if rest, ok := strings.CutPrefix(rt.Path, "/api/v1/"); ok {
		row, ok := authzRoutes[rt.Method+" /partner/"+rest]
		return row, ok
	}
	return authzRow{}, false
}

func TestAuthorizationMatrixCoversEveryRoute(t *testing.T) {
	t.Parallel()
	served := map[string]bool{}
	for _, rt := range httpapi.Routes() {
		row, ok := authzRowOf(rt)
		switch {
		case !ok:
			t.Errorf("%s %s has no row in authzRoutes: add one naming the credential it requires", rt.Method, rt.Path)
		case row.auth != rt.Auth:
			t.Errorf("%s %s requires %s, its row says %s", rt.Method, rt.Path, rt.Auth, row.auth)
		}
		served[rt.Method+" "+rt.Path] = true
	}
	for k := range authzRoutes {
		if !served[k] {
			t.Errorf("row %s names no served route", k)
		}
	}
}

// caller kinds, the columns of the matrix.
const (
	colNone      = "no credential"
	colWrong     = "wrong credential"
	colOther     = "another provider's credential"
	colWrongKind = "wrong kind of credential"
	colLesser    = "authorized user / key without the feature"
	colRight     = "right credential"
	colExpired   = "expired token"
)

// authzWorld is the demo world the matrix calls into: credentials and the ids of objects
// that belong to Northwind (the right caller's provider).
type authzWorld struct {
	marie, liam, authorized, operator map[string]string
	marieSession                      string
	ids                               map[string]string // path parameter → a Northwind object
}

func newAuthzWorld(t *testing.T, s *apptest.Service) *authzWorld {
	w := &authzWorld{
		marie:      s.Login(fixture.DemoSubscriberEmail, fixture.DemoSubscriberPass),
		liam:       s.Login("liam.chen@example.ca", "demo-password-4"),
		authorized: addAuthorizedUser(t, s, "luc.tremblay@example.ca"),
		operator:   s.Operator(),
	}
	w.marieSession = verify(t, s, fixture.DemoAgentKey, marieID, fixture.DemoSubscriberEmail)
	w.ids = map[string]string{
		"subscription_id":          marieLine,
		"session_id":               session(t, s, nil),
		"external_subscription_id": "shop-sub-88a-101",
		"plan_version_id":          planFibre500,
		"event_id":                 store.NewID(),
		"id":                       "au-1",
		"invoice_id":               firstOr(t, s, `SELECT id FROM invoices WHERE provider_id = ?`, northwind),
		"credit_note_id":           firstOr(t, s, `SELECT id FROM credit_notes WHERE provider_id = ?`, northwind),
		"invoiceId":                firstOr(t, s, `SELECT id FROM invoices WHERE provider_id = ?`, northwind),
		"job_id":                   firstOr(t, s, `SELECT id FROM install_jobs WHERE provider_id = ?`, northwind),
		"customerId":               marieID,

		// Providers: a key id that names no key, so that no operator route revokes a key the
		// other checks use.
		"provider_id": northwind,
		"key_id":      store.NewID(),

		// Tickets and privacy requests.
		"ticket_id":  firstOr(t, s, `SELECT id FROM tickets WHERE provider_id = ?`, northwind),
		"request_id": firstOr(t, s, `SELECT id FROM privacy_requests WHERE provider_id = ?`, northwind),
		// An operator no caller of the matrix signs in as: resetting its second factor ends
		// nobody's token the matrix still uses.
		"operator_id": targetOperator(t, s, northwind),

		// Inventory: a building only Northwind covers, a plan and an install window of Northwind's.
		"building_id": "b1000000-0000-4000-8000-000000000001",
		"plan_id":     "p1000000-0000-4000-8000-000000000500",
		"window_id":   "iw100000-0000-4000-8000-000000000001",
		"switch_id":   fixture.DemoSwitchKing,

		// Subscribers and lines.
		"subscriber_id": marieID,
	}
	return w
}

// firstOr returns the first id q selects, or a fresh id when there is none.
func firstOr(t *testing.T, s *apptest.Service, q string, args ...any) string {
	t.Helper()
	var id string
	err := s.Store.R().QueryRow(context.Background(), q, args...).Scan(&id)
	if err != nil && !errors.Is(err, subprov.ErrNotFound) {
		t.Fatalf("%s: %v", q, err)
	}
	if id == "" {
		return store.NewID()
	}
	return id
}

var pathParam = regexp.MustCompile(`\{([^}]+)\}`)

func (w *authzWorld) path(t *testing.T, p string) string {
	return pathParam.ReplaceAllStringFunc(p, func(m string) string {
		id, ok := w.ids[m[1:len(m)-1]]
		if !ok {
			t.Fatalf("%s: no demo object for %s", p, m)
		}
		return id
	})
}

// headers returns the headers a caller of the column sends to a route requiring auth, and
// false when the column does not apply to that credential kind.
func (w *authzWorld) headers(auth, col string) (map[string]string, bool) {
	bearer := func(h map[string]string) map[string]string { return h }
	garbage := map[string]string{"Authorization": "Bearer eyJhbGciOiJIUzI1NiJ9.e30.bm90LWEtc2lnbmF0dXJl"}
	switch auth {
	case "api_key", "agent_key":
		agentKey := fixture.DemoStoreKey
		if auth == "agent_key" {
			agentKey = fixture.DemoAgentKey
		}
		return map[string]map[string]string{
			colNone:      {},
			colWrong:     apptest.Key("nwf_live_not_a_real_key_00000000000"),
			colOther:     agentHeaders(fixture.DemoOtherProviderKey, w.marieSession),
			colWrongKind: secret(fixture.DemoWebhookSecret),
			colLesser:    map[string]string{"X-API-Key": fixture.DemoStoreKey, "X-Verified-Session": w.marieSession},
			colRight:     agentHeaders(agentKey, w.marieSession),
		}[col], col != colExpired && (col != colLesser || auth == "agent_key")
	case "webhook_secret":
		return map[string]map[string]string{
			colNone:      {},
			colWrong:     secret("whsec_wrong_secret_000000000000"),
			colOther:     secret(mapleSecret),
			colWrongKind: apptest.Key(fixture.DemoStoreKey),
			colRight:     secret(fixture.DemoWebhookSecret),
		}[col], col != colExpired && col != colLesser
	case "device_secret":
		return map[string]map[string]string{
			colNone:      {},
			colWrong:     {"X-Device-Secret": "not-the-device-secret-000"},
			colWrongKind: apptest.Key(fixture.DemoStoreKey),
			colRight:     {"X-Device-Secret": deviceSecret},
		}[col], col == colNone || col == colWrong || col == colWrongKind || col == colRight
	case "subscriber", "holder", "optional_subscriber":
		h := map[string]map[string]string{
			colNone:      {},
			colWrong:     garbage,
			colOther:     w.liam,
			colWrongKind: w.operator,
			colLesser:    w.authorized,
			colRight:     w.marie,
			colExpired:   bearer(w.marie),
		}[col]
		return h, col != colLesser || auth == "holder"
	case "operator":
		return map[string]map[string]string{
			colNone:      {},
			colWrong:     garbage,
			colWrongKind: w.marie,
			colRight:     w.operator,
			colExpired:   w.operator,
		}[col], col != colOther && col != colLesser
	case "none":
		return map[string]string{}, col == colNone
	}
	return nil, false
}

// expect reports whether status is what col must give on a route requiring auth whose
// path takes ids (hasID).
func expect(auth, col string, hasID bool, status int) (bool, string) {
	granted := status != 401 && status != 403 && status < 500
	switch {
	case auth == "none" || col == colRight:
		return granted, "granted (not 401/403/5xx)"
	case auth == "optional_subscriber" && col == colNone:
		return granted, "granted (not 401/403/5xx)"
	case col == colLesser:
		return status == 403, "403"
	case col == colOther && hasID:
		// 422 when the body is checked before the id is looked up: the same answer as for
		// an id that does not exist (TestProviderIsolation compares the bodies).
		return status == 404 || status == 422, "404 (or 422 before the lookup)"
	case col == colOther && auth == "webhook_secret":
		// The body names the object (session, external subscription): another provider's
		// secret is refused or finds nothing.
		return status == 401 || status == 404 || status == 422, "401, 404 or 422"
	case col == colOther:
		return granted, "granted to its own provider (not 401/403/5xx)"
	}
	return status == 401, "401"
}

func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		w := newAuthzWorld(t, s)
		routes := httpapi.Routes()
		run := func(cols ...string) {
			for i, col := range cols {
				// Each column calls from its own loopback address, so per-IP rate limits
				// (10 a minute on password routes) never stand in for a refusal.
				ip := fmt.Sprintf("127.0.0.%d", 10+i+len(cols)*3)
				for _, rt := range routes {
					row, ok := authzRowOf(rt)
					if !ok {
						t.Fatalf("%s %s has no row (see TestAuthorizationMatrixCoversEveryRoute)", rt.Method, rt.Path)
					}
					h, applies := w.headers(row.auth, col)
					if !applies {
						continue
					}
					path := w.path(t, rt.Path)
					res := doFrom(t, s, ip, apptest.Request{Method: rt.Method, Path: path, Headers: h, Body: authzBody(rt.Method)})
					if ok, want := expect(row.auth, col, strings.Contains(rt.Path, "{"), res.Status); !ok {
						t.Errorf("%s %s (%s) with %s: %d, want %s: %.300s", rt.Method, path, row.auth, col, res.Status, want, res.Raw)
					}
				}
			}
		}
		// Refusals first, then the right caller (whose calls may change state), then every
		// token past its lifetime.
		run(colNone, colWrong, colOther, colWrongKind, colLesser, colRight)
		s.DevClock.Advance(subprov.OperatorTokenLifetime + time.Minute)
		run(colExpired)
	})
}

// authzBody is an empty JSON object for methods that carry a body: enough to reach
// authorization, never enough to change anything.
func authzBody(method string) any {
	if method == "GET" || method == "DELETE" {
		return nil
	}
	return map[string]any{}
}

// doFrom sends r from a given loopback source address (any 127.0.0.0/8 address reaches the
// service on 127.0.0.1) and decodes the answer as apptest.Service.Do does.
func doFrom(t *testing.T, s *apptest.Service, ip string, r apptest.Request) *apptest.Response {
	t.Helper()
	var body io.Reader
	if r.Body != nil {
		raw, err := json.Marshal(r.Body)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(r.Method, s.URL+r.Path, body)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.Headers {
		req.Header.Set(k, v)
	}
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
	defer client.CloseIdleConnections()
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.Method, r.Path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := &apptest.Response{Status: res.StatusCode, Header: res.Header, Raw: raw}
	_ = json.Unmarshal(raw, &out.JSON)
	return out
}
