package providers_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/servicetest"
	"github.com/subprov/subprov/providers"
	"github.com/subprov/subprov/store"
)

var (
	platformAdmin  = &subprov.Operator{ID: "op-platform", Role: subprov.RoleAdmin}
	northwindAdmin = &subprov.Operator{ID: "op-nw", Role: subprov.RoleAdmin, ProviderID: servicetest.Northwind}
	mapleAdmin     = &subprov.Operator{ID: "op-maple", Role: subprov.RoleAdmin, ProviderID: servicetest.Maple}
	platformViewer = &subprov.Operator{ID: "op-viewer", Role: subprov.RoleViewer}
	northwindView  = &subprov.Operator{ID: "op-nw-viewer", Role: subprov.RoleViewer, ProviderID: servicetest.Northwind}
)

const marieLine = "c1000000-0000-4000-8000-000000000001" // Northwind, Marie's ACTIVE line

func ptr[T any](v T) *T { return &v }

func validFields(name string) providers.Fields {
	return providers.Fields{Name: name, TimeZone: "America/Toronto", Currency: "CAD", TaxRateBP: 1300,
		CheckoutURL: ptr("https://shop.example/checkout")}
}

// audits lists the audit entries of an object with one action.
func audits(t *testing.T, e *servicetest.Env, objectID, action string) []subprov.AuditEntry {
	t.Helper()
	es, err := e.Store.AuditEntries(context.Background(), store.AuditFilter{ObjectID: objectID, Action: action}, subprov.Page{Limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	return es
}

func TestProviders(t *testing.T) {
	t.Parallel()
	servicetest.EachRules(t,
		servicetest.Rule{Name: "only a platform-wide admin creates a provider", Test: func(t *testing.T, e *servicetest.Env) {
			ctx := context.Background()
			for _, tt := range []struct {
				name string
				op   *subprov.Operator
				want string
			}{
				{"provider admin", northwindAdmin, "forbidden/forbidden"},
				{"platform viewer", platformViewer, "forbidden/forbidden"},
				{"platform admin", platformAdmin, ""},
			} {
				c, err := e.Providers.Create(ctx, tt.op, validFields("Created by "+tt.name))
				if got := servicetest.Code(err); got != tt.want {
					t.Fatalf("%s: %q, want %q", tt.name, got, tt.want)
				}
				if err != nil {
					continue
				}
				p := c.Provider
				if c.WebhookSecret == "" || p.Version != 1 || p.SupportGroup != "Created by platform admin Support" || p.BookingWindowDays != 21 || p.PaymentProcessor != "builtin" {
					t.Fatalf("created %+v with secret %q", p, c.WebhookSecret)
				}
				got, err := e.Auth.WebhookSecret(ctx, c.WebhookSecret)
				if err != nil || got.ID != p.ID {
					t.Fatalf("the generated secret does not authenticate: %v", err)
				}
				read, err := e.Providers.Get(ctx, platformViewer, p.ID)
				if err != nil || read.Name != p.Name || read.Version != 1 {
					t.Fatalf("read back: %+v %v", read, err)
				}
				as := audits(t, e, p.ID, "provider.created")
				if len(as) != 1 || as[0].Changes["webhook_secret"] != [2]any{"changed", "changed"} || as[0].Changes["name"][1] != p.Name {
					t.Fatalf("audit: %+v", as)
				}
			}
		}},
		servicetest.Rule{Name: "a create lists every problem and writes nothing", Test: func(t *testing.T, e *servicetest.Env) {
			ctx := context.Background()
			before, _ := e.Store.Providers(ctx)
			f := providers.Fields{TimeZone: "Mars/Olympus", Currency: "cad", TaxRateBP: 10001, PaymentProcessor: "paypal",
				WebhookURL: ptr("https://10.0.0.7/hook"), CheckoutURL: ptr("shop"), BookingWindowDays: ptr(400)}
			_, err := e.Providers.Create(ctx, platformAdmin, f)
			se, _ := subprov.AsError(err)
			want := []string{"name", "time_zone", "currency", "tax_rate_bp", "payment_processor", "webhook_url", "checkout_url", "booking_window_days"}
			if se == nil || se.Code != subprov.EINVALID || len(se.Fields) != len(want) {
				t.Fatalf("got %v, want problems with %v", err, want)
			}
			for _, k := range want {
				if se.Fields[k] == "" {
					t.Errorf("no problem named for %s: %v", k, se.Fields)
				}
			}
			if after, _ := e.Store.Providers(ctx); len(after) != len(before) {
				t.Fatal("a refused create wrote a provider")
			}
		}},
		servicetest.Rule{Name: "a webhook URL follows the receivers' address rule", Test: func(t *testing.T, e *servicetest.Env) {
			ctx := context.Background()
			for _, tt := range []struct {
				url  string
				dev  bool
				okay bool
			}{
				{"https://hooks.example.com/subprov", false, true},
				{"http://127.0.0.1:8080/hook", true, true},
				{"http://localhost:8080/hook", true, true},
				{"http://127.0.0.1:8080/hook", false, false},
				{"http://hooks.example.com/subprov", true, false},
				{"https://10.1.2.3/hook", true, false},
				{"https://192.168.1.10/hook", true, false},
				{"https://169.254.169.254/latest", true, false},
				{"https://[fe80::1]/hook", true, false},
				{"ftp://hooks.example.com/", true, false},
			} {
				svc := *e.Providers
				svc.Dev = tt.dev
				_, err := svc.Update(ctx, platformAdmin, servicetest.Maple, 0, providers.Patch{WebhookURL: ptr(tt.url)})
				se, _ := subprov.AsError(err)
				switch {
				case tt.okay && err != nil:
					t.Errorf("%s (dev %v): %v, want it accepted", tt.url, tt.dev, err)
				case !tt.okay && (se == nil || se.Fields["webhook_url"] == ""):
					t.Errorf("%s (dev %v): %v, want 422 on webhook_url", tt.url, tt.dev, err)
				}
			}
		}},
		servicetest.Rule{Name: "an edit changes the fields sent under If-Match, audited by field", Test: func(t *testing.T, e *servicetest.Env) {
			ctx := context.Background()
			p := e.Provider(t, servicetest.Maple)
			for _, tt := range []struct {
				name string
				op   *subprov.Operator
				want string
			}{
				{"a viewer", platformViewer, "forbidden/forbidden"},
				{"another provider's admin", northwindAdmin, "not_found/not_found"},
			} {
				if _, err := e.Providers.Update(ctx, tt.op, p.ID, 0, providers.Patch{Name: ptr("x")}); servicetest.Code(err) != tt.want {
					t.Fatalf("%s: %v, want %s", tt.name, err, tt.want)
				}
			}
			got, err := e.Providers.Update(ctx, mapleAdmin, p.ID, p.Version, providers.Patch{Name: ptr("Maple Fibre"), BookingWindowDays: ptr(30), CheckoutURL: ptr("")})
			if err != nil || got.Name != "Maple Fibre" || got.BookingWindowDays != 30 || got.CheckoutURL != "" || got.Version != p.Version+1 {
				t.Fatalf("edit: %+v %v", got, err)
			}
			if _, err := e.Providers.Update(ctx, mapleAdmin, p.ID, p.Version, providers.Patch{Name: ptr("Stale")}); servicetest.Code(err) != "conflict/stale" {
				t.Fatalf("stale edit: %v", err)
			}
			same, err := e.Providers.Update(ctx, mapleAdmin, p.ID, 0, providers.Patch{Name: ptr("Maple Fibre")})
			if err != nil || same.Version != got.Version {
				t.Fatalf("an edit changing nothing moved the version: %+v %v", same, err)
			}
			as := audits(t, e, p.ID, "provider.updated") // newest first
			if len(as) == 0 || len(as[0].Changes) != 2 || as[0].Changes["name"] != [2]any{"Maple Ethernet", "Maple Fibre"} || as[0].Changes["booking_window_days"] != [2]any{float64(14), float64(30)} {
				t.Fatalf("audit: %+v", as)
			}
		}},
		servicetest.Rule{Name: "time zone and currency are frozen once the provider has an invoice", Test: func(t *testing.T, e *servicetest.Env) {
			ctx := context.Background()
			c, err := e.Providers.Create(ctx, platformAdmin, validFields("Fresh Fibre"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.Providers.Update(ctx, platformAdmin, c.Provider.ID, 0, providers.Patch{TimeZone: ptr("America/Halifax"), Currency: ptr("USD")}); err != nil {
				t.Fatalf("no invoice yet: %v", err)
			}
			if err := e.Store.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.Exec(ctx, `INSERT INTO invoices (id, provider_id, subscription_id, number, invoice_date, period, kind, status,
					net_minor, tax_minor, total_minor, currency, created_at) VALUES (?, ?, ?, 'T-1', '2026-11-01', '2026-11', 'recurring', 'open', 100, 13, 113, 'CAD', ?)`,
					store.NewID(), servicetest.Northwind, marieLine, time.Now().UTC())
				return err
			}); err != nil {
				t.Fatal(err)
			}
			_, err = e.Providers.Update(ctx, platformAdmin, servicetest.Northwind, 0, providers.Patch{TimeZone: ptr("America/Halifax"), Currency: ptr("USD"), Name: ptr("Renamed")})
			se, _ := subprov.AsError(err)
			if se == nil || se.Fields["time_zone"] == "" || se.Fields["currency"] == "" {
				t.Fatalf("invoiced provider: %v, want 422 on time_zone and currency", err)
			}
			if p := e.Provider(t, servicetest.Northwind); p.Name != "Northwind Fibre" || p.TimeZone != "America/Toronto" {
				t.Fatalf("a refused edit wrote: %+v", p)
			}
		}},
		servicetest.Rule{Name: "a provider's operator sees its own provider only", Test: func(t *testing.T, e *servicetest.Env) {
			ctx := context.Background()
			ps, next, err := e.Providers.List(ctx, northwindView, subprov.Page{Limit: 50})
			if err != nil || len(ps) != 1 || ps[0].ID != servicetest.Northwind || next != "" {
				t.Fatalf("list: %v %q %v", ps, next, err)
			}
			if _, err := e.Providers.Get(ctx, northwindView, servicetest.Maple); servicetest.Code(err) != "not_found/not_found" {
				t.Fatalf("another provider: %v", err)
			}
			all, _, err := e.Providers.List(ctx, platformViewer, subprov.Page{Limit: 50})
			if err != nil || len(all) < 3 {
				t.Fatalf("platform list: %d %v", len(all), err)
			}
			// Pages follow each other without gaps or repeats.
			var paged []string
			page := subprov.Page{Limit: 1}
			for {
				ps, next, err := e.Providers.List(ctx, platformViewer, page)
				if err != nil {
					t.Fatal(err)
				}
				for _, p := range ps {
					paged = append(paged, p.ID)
				}
				if next == "" {
					break
				}
				page, err = subprov.ParsePage(1, true, next)
				if err != nil {
					t.Fatal(err)
				}
			}
			var ids []string
			for _, p := range all {
				ids = append(ids, p.ID)
			}
			if !slices.Equal(paged, ids) {
				t.Fatalf("paged %v, all %v", paged, ids)
			}
		}},
	)
}
