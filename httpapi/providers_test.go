package httpapi_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/testdb"
)

func newProviderBody(name string) map[string]any {
	return map[string]any{"name": name, "time_zone": "America/Halifax", "currency": "CAD", "tax_rate_bp": 1500,
		"webhook_url": nil, "checkout_url": "https://shop.example/checkout", "service_provider_document_id": "atl-spd",
		"sms_configured": false, "booking_window_days": 10, "support_group": "Atlantic Care", "brand_color": "#003366",
		"device_secret": "atl_device_secret_0001", "payment_processor": "none"}
}

// TestProvidersOverHTTP: create (platform-wide admins only, the secret shown once), read, list
// in scope, and edit under If-Match with the fixture's rules and the receivers' address rule.
func TestProvidersOverHTTP(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		admin := s.Operator()
		nwAdmin := s.OperatorAs(subprov.RoleAdmin, northwind)
		mapleAdmin := s.OperatorAs(subprov.RoleAdmin, mapleProvider)
		nwViewer := s.OperatorAs(subprov.RoleViewer, northwind)

		for _, tt := range []struct {
			name string
			h    map[string]string
			body any
			want int
		}{
			{"a provider's admin", nwAdmin, newProviderBody("Refused"), 403},
			{"a viewer", nwViewer, newProviderBody("Refused"), 403},
			{"no token", nil, newProviderBody("Refused"), 401},
			{"an id", admin, map[string]any{"id": "x", "name": "A", "time_zone": "UTC", "currency": "CAD"}, 422},
			{"a webhook secret", admin, map[string]any{"webhook_secret": "x", "name": "A", "time_zone": "UTC", "currency": "CAD"}, 422},
			{"api keys", admin, map[string]any{"api_keys": []any{}, "name": "A", "time_zone": "UTC", "currency": "CAD"}, 422},
			{"bad fields", admin, map[string]any{"name": "", "time_zone": "Nowhere", "currency": "dollars"}, 422},
			{"a private receiver", admin, map[string]any{"name": "A", "time_zone": "UTC", "currency": "CAD", "webhook_url": "https://192.168.0.4/hook"}, 422},
		} {
			if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/providers", Headers: tt.h, Body: tt.body}); res.Status != tt.want {
				t.Errorf("create with %s: %d %s, want %d", tt.name, res.Status, res.Raw, tt.want)
			}
		}
		res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/providers", Headers: admin, Body: newProviderBody("Atlantic Fibre")})
		secret, _ := res.JSON["webhook_secret"].(string)
		id, _ := res.JSON["id"].(string)
		if res.Status != 201 || secret == "" || id == "" || res.JSON["version"] != 1.0 || res.JSON["payment_processor"] != "none" || res.JSON["webhook_url"] != nil {
			t.Fatalf("create: %d %s", res.Status, res.Raw)
		}
		if _, ok := res.JSON["device_secret"]; ok {
			t.Fatal("the create answer shows the device secret")
		}
		got := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/providers/" + id, Headers: admin})
		if got.Status != 200 || got.JSON["name"] != "Atlantic Fibre" || got.JSON["support_group"] != "Atlantic Care" {
			t.Fatalf("read: %d %s", got.Status, got.Raw)
		}
		if _, ok := got.JSON["webhook_secret"]; ok {
			t.Fatal("a read shows the webhook secret")
		}
		// The generated secret authenticates the provider's checkout calls.
		if res := s.Do(apptest.Request{Method: "GET", Path: "/partner/external-checkout/subscriptions/none", Headers: map[string]string{"X-Webhook-Secret": secret}}); res.Status == 401 {
			t.Fatalf("the generated secret is refused: %s", res.Raw)
		}

		list := func(h map[string]string, query string) []string {
			t.Helper()
			res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/providers" + query, Headers: h})
			if res.Status != 200 {
				t.Fatalf("list: %d %s", res.Status, res.Raw)
			}
			var ids []string
			for _, p := range res.JSON["providers"].([]any) {
				ids = append(ids, p.(map[string]any)["id"].(string))
			}
			return ids
		}
		if ids := list(nwViewer, ""); !slices.Equal(ids, []string{northwind}) {
			t.Errorf("a Northwind operator lists %v, want Northwind only", ids)
		}
		if ids := list(admin, ""); len(ids) != 4 || !slices.Contains(ids, id) {
			t.Errorf("a platform operator lists %v", ids)
		}
		if res := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/providers?limit=0", Headers: admin}); res.Status != 422 {
			t.Errorf("limit 0: %d", res.Status)
		}
		for _, path := range []string{"/api/v1/providers/" + northwind, "/api/v1/providers/" + northwind + "/api-keys"} {
			if res := s.Do(apptest.Request{Method: "GET", Path: path, Headers: mapleAdmin}); res.Status != 404 {
				t.Errorf("GET %s as Maple: %d, want 404", path, res.Status)
			}
		}

		patch := func(h map[string]string, version int, body any) *apptest.Response {
			hs := map[string]string{}
			for k, v := range h {
				hs[k] = v
			}
			if version > 0 {
				hs["If-Match"] = strconv.Itoa(version)
			}
			return s.Do(apptest.Request{Method: "PATCH", Path: "/api/v1/providers/" + id, Headers: hs, Body: body})
		}
		rcv := "http://127.0.0.1:9/hook" // loopback over plain http: dev mode only
		res = patch(admin, 1, map[string]any{"webhook_url": rcv, "booking_window_days": 14, "time_zone": "America/St_Johns"})
		if res.Status != 200 || res.JSON["webhook_url"] != rcv || res.JSON["booking_window_days"] != 14.0 || res.JSON["version"] != 2.0 {
			t.Fatalf("edit: %d %s", res.Status, res.Raw)
		}
		for _, tt := range []struct {
			name    string
			version int
			body    any
			want    int
		}{
			{"a stale version", 1, map[string]any{"name": "Stale"}, 409},
			{"the sandbox flag", 0, map[string]any{"sandbox": true}, 422},
			{"the id", 0, map[string]any{"id": "x"}, 422},
			{"the webhook secret", 0, map[string]any{"webhook_secret": "x"}, 422},
			{"a link-local receiver", 0, map[string]any{"webhook_url": "https://169.254.169.254/latest"}, 422},
			{"a bad tax rate", 0, map[string]any{"tax_rate_bp": -1}, 422},
		} {
			if res := patch(admin, tt.version, tt.body); res.Status != tt.want {
				t.Errorf("edit with %s: %d %s, want %d", tt.name, res.Status, res.Raw, tt.want)
			}
		}
		res = patch(admin, 2, map[string]any{"webhook_url": nil})
		if res.Status != 200 || res.JSON["webhook_url"] != nil || res.JSON["version"] != 3.0 {
			t.Fatalf("removing the webhook URL: %d %s", res.Status, res.Raw)
		}
		if res := patch(nwAdmin, 0, map[string]any{"name": "Mine now"}); res.Status != 404 {
			t.Errorf("another provider's admin edits: %d, want 404", res.Status)
		}
		audit := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?object_id=" + id, Headers: admin})
		entries, _ := audit.JSON["entries"].([]any)
		if audit.Status != 200 || len(entries) != 3 {
			t.Fatalf("audit: %d %s", audit.Status, audit.Raw)
		}
		first := entries[2].(map[string]any)
		changes := first["changes"].(map[string]any)
		if first["action"] != "provider.created" || first["actor"].(map[string]any)["type"] != "operator" ||
			!slices.Equal(changes["webhook_secret"].([]any), []any{"changed", "changed"}) || !slices.Equal(changes["device_secret"].([]any), []any{"changed", "changed"}) {
			t.Errorf("provider.created: %v", first)
		}
		edit := entries[1].(map[string]any)["changes"].(map[string]any)
		if !slices.Equal(edit["webhook_url"].([]any), []any{"", rcv}) || !slices.Equal(edit["time_zone"].([]any), []any{"America/Halifax", "America/St_Johns"}) {
			t.Errorf("provider.updated: %v", edit)
		}
	})
}

// TestTimeZoneAndCurrencyFrozenByInvoices: once a provider has an invoice its time zone and
// currency are a 422; its other fields still change.
func TestTimeZoneAndCurrencyFrozenByInvoices(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		northwindBillingDocuments(t, s)
		admin := s.Operator()
		for _, body := range []map[string]any{{"time_zone": "America/Halifax"}, {"currency": "USD"}} {
			if res := s.Do(apptest.Request{Method: "PATCH", Path: "/api/v1/providers/" + northwind, Headers: admin, Body: body}); res.Status != 422 {
				t.Errorf("%v on an invoiced provider: %d %s, want 422", body, res.Status, res.Raw)
			}
		}
		if res := s.Do(apptest.Request{Method: "PATCH", Path: "/api/v1/providers/" + northwind, Headers: admin, Body: map[string]any{"sms_configured": true}}); res.Status != 200 || res.JSON["sms_configured"] != true {
			t.Errorf("another field: %d %s", res.Status, res.Raw)
		}
	})
}

// TestAPIKeyRevocationOnTwoProcesses: a key created on one process works on both; revoked, it
// is refused at once on that process and within a second on the other. Its last use is kept
// without a write per request and shows once flushed.
func TestAPIKeyRevocationOnTwoProcesses(t *testing.T) {
	t.Parallel()
	testdb.EachMigrated(t, testdb.AppSchema, func(t *testing.T, u string) {
		s := apptest.Start(t, u)
		other := apptest.Start(t, u)
		admin := s.OperatorAs(subprov.RoleAdmin, northwind)
		keys := "/api/v1/providers/" + northwind + "/api-keys"
		for _, tt := range []struct {
			body any
			want int
		}{
			{map[string]any{"features": []string{}}, 422},
			{map[string]any{"name": "x", "features": []string{"everything"}}, 422},
			{map[string]any{"name": "x", "key": "chosen"}, 422},
		} {
			if res := s.Do(apptest.Request{Method: "POST", Path: keys, Headers: admin, Body: tt.body}); res.Status != tt.want {
				t.Errorf("create %v: %d %s, want %d", tt.body, res.Status, res.Raw, tt.want)
			}
		}
		res := s.Do(apptest.Request{Method: "POST", Path: keys, Headers: admin, Body: map[string]any{"name": "Shop", "features": []string{"agent_api_access"}}})
		key, _ := res.JSON["key"].(string)
		keyID, _ := res.JSON["id"].(string)
		if res.Status != 201 || key == "" || res.JSON["prefix"] != key[:8] {
			t.Fatalf("create: %d %s", res.Status, res.Raw)
		}
		works := func(svc *apptest.Service) bool {
			st := svc.Do(apptest.Request{Method: "GET", Path: "/partner/serviceability/autocomplete?q=king", Headers: apptest.Key(key)}).Status
			if st != 200 && st != 401 {
				t.Fatalf("autocomplete: %d", st)
			}
			return st == 200
		}
		if !works(s) || !works(other) {
			t.Fatal("a new key does not work on both processes")
		}
		listed := func() map[string]any {
			res := s.Do(apptest.Request{Method: "GET", Path: keys, Headers: admin})
			if res.Status != 200 {
				t.Fatalf("list: %d %s", res.Status, res.Raw)
			}
			for _, k := range res.JSON["api_keys"].([]any) {
				if k := k.(map[string]any); k["id"] == keyID {
					if _, ok := k["key"]; ok {
						t.Fatal("the list shows the key")
					}
					return k
				}
			}
			t.Fatal("the new key is not listed")
			return nil
		}
		if k := listed(); k["last_used_at"] != nil || k["name"] != "Shop" {
			t.Fatalf("before any flush: %v", k)
		}
		ctx := context.Background()
		if err := other.KeyUsage.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		if k := listed(); k["last_used_at"] == nil {
			t.Fatalf("after the flush: %v", k)
		}

		if res := s.Do(apptest.Request{Method: "DELETE", Path: keys + "/" + keyID, Headers: s.OperatorAs(subprov.RoleAdmin, mapleProvider)}); res.Status != 404 {
			t.Fatalf("revoke by another provider's admin: %d", res.Status)
		}
		if res := s.Do(apptest.Request{Method: "DELETE", Path: keys + "/" + keyID, Headers: admin}); res.Status != 204 {
			t.Fatalf("revoke: %d %s", res.Status, res.Raw)
		}
		start := time.Now()
		if works(s) {
			t.Fatal("a revoked key still works on the process that revoked it")
		}
		apptest.Eventually(t, time.Second, "the revoked key refused on the other process", func() bool { return !works(other) })
		if d := time.Since(start); d > time.Second {
			t.Fatalf("the other process refused the revoked key after %v, want within 1 s", d)
		}
		if k := listed(); k["revoked_at"] == nil {
			t.Fatalf("revoked key listed as %v", k)
		}
		if res := s.Do(apptest.Request{Method: "DELETE", Path: keys + "/nokey", Headers: admin}); res.Status != 404 {
			t.Errorf("revoke an unknown key: %d", res.Status)
		}
	})
}

// TestWebhookSecretRotationOverHTTP: the new secret signs outgoing webhooks at once; inbound,
// the old one works on every process until previous_expires_at on the service clock, then
// it is refused there too within a second.
func TestWebhookSecretRotationOverHTTP(t *testing.T) {
	t.Parallel()
	testdb.EachMigrated(t, testdb.AppSchema, func(t *testing.T, u string) {
		s := apptest.Start(t, u)
		other := apptest.Start(t, u)
		admin := s.Operator()
		rotate := func(provider string, body any) *apptest.Response {
			return s.Do(apptest.Request{Method: "POST", Path: "/api/v1/providers/" + provider + "/webhook-secret/rotate", Headers: admin, Body: body})
		}
		for _, body := range []any{map[string]any{"overlap_hours": 73}, map[string]any{"overlap_hours": -1}, map[string]any{"overlap": 1}} {
			if res := rotate(northwind, body); res.Status != 422 {
				t.Errorf("rotate %v: %d, want 422", body, res.Status)
			}
		}
		if res := s.Do(apptest.Request{Method: "POST", Path: "/api/v1/providers/" + northwind + "/webhook-secret/rotate", Headers: s.OperatorAs(subprov.RoleAdmin, mapleProvider), Body: map[string]any{}}); res.Status != 404 {
			t.Errorf("rotate as Maple: %d, want 404", res.Status)
		}

		// Outgoing: the sandbox's ping, sent right after a rotation, is signed with the new secret.
		res := rotate(sandboxProvider, map[string]any{})
		if res.Status != 200 {
			t.Fatalf("rotate the sandbox's: %d %s", res.Status, res.Raw)
		}
		rcv := newReceiver(t, res.JSON["webhook_secret"].(string))
		if res := sandboxWebhook(t, s, admin, rcv.srv.URL+"/hook"); res.Status != 200 || len(rcv.all()) != 1 || rcv.bad != 0 {
			t.Fatalf("ping after rotation: %d %s; received %d, bad signatures %d", res.Status, res.Raw, len(rcv.all()), rcv.bad)
		}

		// Inbound: both secrets for the overlap, on both processes.
		before := s.Clock.Now()
		res = rotate(northwind, map[string]any{"overlap_hours": 1})
		newSecret, _ := res.JSON["webhook_secret"].(string)
		expires, err := time.Parse(time.RFC3339, res.JSON["previous_expires_at"].(string))
		if res.Status != 200 || newSecret == "" || err != nil || expires.Sub(before) < 59*time.Minute || expires.Sub(before) > 61*time.Minute {
			t.Fatalf("rotate: %d %s", res.Status, res.Raw)
		}
		accepted := func(svc *apptest.Service, secret string) bool {
			st := svc.Do(apptest.Request{Method: "GET", Path: "/partner/external-checkout/subscriptions/none", Headers: map[string]string{"X-Webhook-Secret": secret}}).Status
			return st != 401
		}
		for _, svc := range []*apptest.Service{s, other} {
			if !accepted(svc, newSecret) || !accepted(svc, northwindSecret) {
				t.Fatal("during the overlap both secrets must be accepted on every process")
			}
		}
		s.DevClock.Advance(61 * time.Minute)
		other.DevClock.Advance(61 * time.Minute)
		start := time.Now()
		if accepted(s, northwindSecret) {
			t.Fatal("the previous secret is accepted after previous_expires_at")
		}
		apptest.Eventually(t, time.Second, "the expired secret refused on the other process", func() bool { return !accepted(other, northwindSecret) })
		if d := time.Since(start); d > time.Second {
			t.Fatalf("the other process refused the expired secret after %v, want within 1 s", d)
		}
		if !accepted(s, newSecret) || !accepted(other, newSecret) {
			t.Fatal("the new secret is refused")
		}
		audit := s.Do(apptest.Request{Method: "GET", Path: "/api/v1/audit?action=provider.webhook_secret_rotated&object_id=" + northwind, Headers: admin})
		if es, _ := audit.JSON["entries"].([]any); len(es) != 1 {
			t.Fatalf("audit: %s", audit.Raw)
		}
	})
}
