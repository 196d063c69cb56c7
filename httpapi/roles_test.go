package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi"
	"github.com/subprov/subprov/internal/apptest"
)

// The roles matrix of the operations surface: every operator route names the permission its
// role must hold (operatorPerms, kept complete by TestOperatorPermsCoverEveryRoute), and
// TestRoleMatrix calls every operator route as an operator of each role: a role without the
// permission gets 403 whatever the id, and nothing is written (the audit log, which records
// every write of the surface, does not grow); a role with it is let through.
var operatorPerms = map[string]string{
	"POST /partner/location/details":                            "read_network",
	"POST /api/v1/subscription/{subscription_id}/cancel":        "line_actions",
	"GET /api/v1/subscription/{subscription_id}/cancel":         "read",
	"GET /api/v1/subscription/{subscription_id}/cancel/preview": "read",
	"GET /api/v1/sandbox/provider-info":                         "administer",
	"POST /api/v1/sandbox/webhook-config":                       "administer",
	"GET /api/v1/sandbox/webhook-events":                        "read",
	"POST /api/v1/sandbox/webhook-events/{event_id}/replay":     "support",
	"POST /api/v1/invoices/{invoice_id}/retry-charge":           "invoices",
	"GET /api/v1/install-jobs":                                  "read_network",
	"GET /api/v1/install-jobs/{job_id}":                         "read_network",
	"GET /api/v1/install-jobs/{job_id}/slots":                   "read_network",
	"POST /api/v1/install-jobs/{job_id}/assign":                 "install",
	"POST /api/v1/install-jobs/{job_id}/book":                   "install",
	"POST /api/v1/install-jobs/{job_id}/complete":               "install",
	"GET /api/v1/dev/clock":                                     "read",
	"POST /api/v1/dev/clock":                                    "administer",
	"GET /api/v1/dev/faults":                                    "read",
	"POST /api/v1/dev/faults":                                   "administer",
	"GET /api/v1/dev/outbox":                                    "read",
	"GET /api/v1/audit":                                         "read",
	"GET /api/v1/overview":                                      "read",

	// Providers, API keys and webhook secrets.
	"GET /api/v1/providers":                                      "read",
	"POST /api/v1/providers":                                     "administer",
	"GET /api/v1/providers/{provider_id}":                        "read",
	"PATCH /api/v1/providers/{provider_id}":                      "administer",
	"GET /api/v1/providers/{provider_id}/api-keys":               "read",
	"POST /api/v1/providers/{provider_id}/api-keys":              "administer",
	"DELETE /api/v1/providers/{provider_id}/api-keys/{key_id}":   "administer",
	"POST /api/v1/providers/{provider_id}/webhook-secret/rotate": "administer",

	// Webhook events.
	"GET /api/v1/webhook-events":                    "read",
	"GET /api/v1/webhook-events/{event_id}":         "read",
	"POST /api/v1/webhook-events/{event_id}/replay": "support",
	// Billing, tickets and privacy requests.
	"GET /api/v1/invoices":                               "read",
	"GET /api/v1/invoices/{invoice_id}/document":         "read",
	"GET /api/v1/credit-notes/{credit_note_id}/document": "read",
	"POST /api/v1/invoices/{invoice_id}/credit-notes":    "invoices",
	"GET /api/v1/bill-runs":                              "read",
	"GET /api/v1/tickets":                                "read",
	"PATCH /api/v1/tickets/{ticket_id}":                  "support",
	"GET /api/v1/privacy-requests":                       "read",
	"POST /api/v1/privacy-requests/{request_id}/approve": "line_actions",
	"POST /api/v1/privacy-requests/{request_id}/reject":  "line_actions",

	// Operators and the second factor.
	"GET /api/v1/operators":                           "administer",
	"POST /api/v1/operators":                          "administer",
	"GET /api/v1/operators/{operator_id}":             "administer",
	"PATCH /api/v1/operators/{operator_id}":           "administer",
	"POST /api/v1/operators/{operator_id}/totp/reset": "administer",
	"PATCH /api/v1/operators/me/password":             "none",
	"POST /api/v1/operators/me/totp":                  "none",
	"POST /api/v1/operators/me/totp/confirm":          "none",

	// Inventory, plans and install windows.
	"GET /api/v1/buildings":                         "read_network",
	"POST /api/v1/buildings":                        "administer",
	"POST /api/v1/buildings/import":                 "administer",
	"GET /api/v1/buildings/{building_id}":           "read_network",
	"PATCH /api/v1/buildings/{building_id}":         "administer",
	"POST /api/v1/buildings/{building_id}/units":    "administer",
	"POST /api/v1/ports":                            "administer",
	"GET /api/v1/switches":                          "read_network",
	"POST /api/v1/switches":                         "administer",
	"GET /api/v1/switches/{switch_id}":              "read_network",
	"PATCH /api/v1/switches/{switch_id}":            "administer",
	"GET /api/v1/plans":                             "read",
	"POST /api/v1/plans":                            "administer",
	"POST /api/v1/plans/{plan_id}/versions":         "administer",
	"PATCH /api/v1/plan-versions/{plan_version_id}": "administer",
	"GET /api/v1/install-windows":                   "read_network",
	"POST /api/v1/install-windows":                  "install",
	"DELETE /api/v1/install-windows/{window_id}":    "install",
	// Subscribers and lines.
	"GET /api/v1/subscribers":                                          "read",
	"GET /api/v1/subscribers/{subscriber_id}":                          "read",
	"POST /api/v1/subscriptions/{subscription_id}/suspend":             "line_actions",
	"POST /api/v1/subscriptions/{subscription_id}/restore":             "line_actions",
	"POST /api/v1/subscriptions/{subscription_id}/plan-change/preview": "read",
	"POST /api/v1/subscriptions/{subscription_id}/plan-change":         "line_actions",
	"POST /api/v1/subscriptions/{subscription_id}/reprovision":         "line_actions",
	"POST /api/v1/subscriptions/{subscription_id}/notes":               "line_actions",
}

// operatorRoutes are the served operator routes, each once (a /partner route's /api/v1
// mirror is the same route).
func operatorRoutes() []httpapi.RouteInfo {
	var out []httpapi.RouteInfo
	for _, rt := range httpapi.Routes() {
		if rt.Auth != "operator" || (strings.HasPrefix(rt.Path, "/api/v1/") && isMirror(rt)) {
			continue
		}
		out = append(out, rt)
	}
	return out
}

func isMirror(rt httpapi.RouteInfo) bool {
	for _, o := range httpapi.Routes() {
		if o.Method == rt.Method && strings.HasPrefix(o.Path, "/partner/") && "/api/v1/"+strings.TrimPrefix(o.Path, "/partner/") == rt.Path {
			return true
		}
	}
	return false
}

func TestOperatorPermsCoverEveryRoute(t *testing.T) {
	t.Parallel()
	served := map[string]bool{}
	for _, rt := range operatorRoutes() {
		k := rt.Method + " " + rt.Path
		served[k] = true
		want, ok := operatorPerms[k]
		switch {
		case !ok:
			t.Errorf("%s has no row in operatorPerms: add one naming the permission its role must hold", k)
		case want != rt.Perm:
			t.Errorf("%s requires %s, its row says %s", k, rt.Perm, want)
		}
	}
	for k := range operatorPerms {
		if !served[k] {
			t.Errorf("row %s names no served operator route", k)
		}
	}
}

func permissionNamed(t *testing.T, name string) subprov.Permission {
	for _, p := range append([]subprov.Permission{subprov.PermNone}, subprov.Permissions...) {
		if p.String() == name {
			return p
		}
	}
	t.Fatalf("no permission %q", name)
	return 0
}

func TestRoleMatrix(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		w := newAuthzWorld(t, s)
		routes := operatorRoutes()
		// The entries operators' calls write: the service's own work (the start-up bill run)
		// writes entries of the system meanwhile.
		auditRows := func() int {
			var n int
			if err := s.Store.R().QueryRow(context.Background(), `SELECT COUNT(*) FROM audit_log WHERE actor_type = 'operator'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		// Signed in before counting: each login is an audit entry of its own.
		headers := map[subprov.Role]map[string]string{}
		for _, role := range subprov.Roles {
			headers[role] = s.OperatorAs(role, "")
		}
		// Refusals first, and nothing written by any of them; then the roles let through.
		for _, granted := range []bool{false, true} {
			before := auditRows()
			for i, role := range subprov.Roles {
				h := headers[role]
				ip := fmt.Sprintf("127.0.1.%d", 10+i)
				for _, rt := range routes {
					perm := permissionNamed(t, operatorPerms[rt.Method+" "+rt.Path])
					if role.Can(perm) != granted {
						continue
					}
					path := w.path(t, rt.Path)
					res := doFrom(t, s, ip, apptest.Request{Method: rt.Method, Path: path, Headers: h, Body: authzBody(rt.Method)})
					switch {
					case !granted && res.Status != 403:
						t.Errorf("%s %s as %s (without %s): %d, want 403: %.300s", rt.Method, path, role, perm, res.Status, res.Raw)
					case !granted && res.JSON["detail"] != "Forbidden":
						t.Errorf("%s %s as %s: body %s, want {\"detail\": \"Forbidden\"}", rt.Method, path, role, res.Raw)
					case granted && (res.Status == 401 || res.Status == 403 || res.Status >= 500):
						t.Errorf("%s %s as %s (with %s): %d, want it let through: %.300s", rt.Method, path, role, perm, res.Status, res.Raw)
					}
				}
			}
			if after := auditRows(); !granted && after != before {
				t.Errorf("the refused calls wrote %d audit entries", after-before)
			}
		}
	})
}
