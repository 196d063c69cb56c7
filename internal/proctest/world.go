package proctest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// WebhookSecret is the world's provider's webhook secret (X-Webhook-Secret on the checkout
// routes).
const WebhookSecret = "whsec_crash_test_secret_000001"

// HolderID is the world's subscriber with a portal login and no line.
const HolderID = "9e000000-0000-4000-8000-0000000000a1"

// World is a generated fixture: one provider with API keys (all with the agent feature), one
// first-line building whose every suite has a switch port, a plan with two versions, a
// processor customer with a card that succeeds for each suite, an operator, and a subscriber
// (HolderID) whose holder has a portal login and no line.
type World struct {
	ProviderID    string
	BuildingID    string
	PlanVersionID string
	FastVersionID string   // a second, faster version of the plan: a plan change's target
	WebhookURL    string   // the provider's webhook_url; "" for none
	Keys          []string // API keys of the provider, each its own rate-limit bucket (distinct prefixes)
	Hashes        []string // location_hash of suite i's port
	Customers     []string // processor customer i (card succeeds), one per suite
	Operator      [2]string
	Subscriber    [2]string // the e-mail and password of subscriber HolderID's holder: a portal login, no line
	Street        string
}

// NewWorld describes a world with n suites and keys API keys.
func NewWorld(n, keys int) *World {
	w := &World{ProviderID: "9e000000-0000-4000-8000-000000000001", BuildingID: "9e000000-0000-4000-8000-0000000000b1",
		PlanVersionID: "9e000000-0000-4000-8000-0000000000f1", FastVersionID: "9e000000-0000-4000-8000-0000000000f2", Street: "500 Rue Crash",
		Operator: [2]string{"ops@crash.test", "crash-operator-pass"}, Subscriber: [2]string{"holder@crash.test", "crash-holder-pass"}}
	for i := range keys {
		w.Keys = append(w.Keys, fmt.Sprintf("c%04d_live_crash_key_%016d", i, i)) // distinct 8-character prefixes: one rate-limit bucket each
	}
	for i := range n {
		w.Hashes = append(w.Hashes, fmt.Sprintf("lh_crash_%04d", i))
		w.Customers = append(w.Customers, fmt.Sprintf("cus_crash_%04d", i))
	}
	return w
}

// Write writes the fixture file (docs/fixtures.md) into a temporary directory and returns its path.
func (w *World) Write(t testing.TB) string {
	t.Helper()
	var keys []map[string]any
	for _, k := range w.Keys {
		keys = append(keys, map[string]any{"key": k, "features": []string{"agent_api_access"}})
	}
	var units, ports, customers []map[string]any
	for i, h := range w.Hashes {
		unit := fmt.Sprintf("9e000000-0000-4000-8001-%012d", i)
		units = append(units, map[string]any{"id": unit, "building_id": w.BuildingID, "unit_number": fmt.Sprint(100 + i), "postal_unit": nil})
		ports = append(ports, map[string]any{"building_id": w.BuildingID, "unit_id": unit, "switch": "crash-sw1",
			"port": fmt.Sprintf("ge-0/0/%d", i), "location_hash": h, "location_identifier": fmt.Sprintf("CRASH-%04d", i)})
		customers = append(customers, map[string]any{"id": w.Customers[i], "provider_id": w.ProviderID,
			"payment_methods": []map[string]any{{"id": "pm_" + w.Customers[i], "behaviour": "succeeds"}}})
	}
	f := map[string]any{
		"operators": []map[string]any{{"email": w.Operator[0], "password": w.Operator[1]}},
		"providers": []map[string]any{{"id": w.ProviderID, "name": "Crash Fibre", "time_zone": "America/Toronto", "currency": "CAD",
			"tax_rate_bp": 1300, "sandbox": false, "api_keys": keys, "webhook_secret": WebhookSecret,
			"webhook_url": cmp.Or[any](w.WebhookURL, nil), "checkout_url": "https://shop.crash.example/checkout", "service_provider_document_id": "crash-spd",
			"sms_configured": false, "booking_window_days": 21}},
		"buildings": []map[string]any{{"id": w.BuildingID, "provider_ids": []string{w.ProviderID}, "street": w.Street,
			"city": "Montréal", "postal_code": "H3C 2B5", "province": "QC", "country": "CA", "line_type": "first",
			"orderable": true, "earliest_service_date": nil, "presale": false}},
		"units": units,
		"ports": ports,
		"plans": []map[string]any{{"id": "9e000000-0000-4000-8000-0000000000f0", "provider_id": w.ProviderID, "name": "Fibre 500",
			"versions": []map[string]any{{"id": w.PlanVersionID, "monthly_price": "60.00", "setup_fee": "50.00",
				"download_mbps": 500, "upload_mbps": 500, "store_product_id": "crash-500", "sellable": true},
				{"id": w.FastVersionID, "monthly_price": "80.00", "setup_fee": "50.00",
					"download_mbps": 1000, "upload_mbps": 1000, "store_product_id": "crash-1000", "sellable": true}}}},
		"processor_customers": customers,
		"subscribers": []map[string]any{{"id": HolderID, "provider_id": w.ProviderID,
			"holder": map[string]any{"firstname": "Hope", "lastname": "Holder", "email": w.Subscriber[0], "phonenumber": "+1 514 555 0100",
				"company": "", "password": w.Subscriber[1]},
			"invoice_contact": nil, "subscriptions": []any{}}},
	}
	b, err := json.MarshalIndent(f, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "world.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Order is the provider-initiated order for suite i: direct route by its port's location
// hash, billed by the platform to processor customer i on billing day 5.
func (w *World) Order(i int) map[string]any {
	return map[string]any{"plan_version_id": w.PlanVersionID, "delivery_mode": "direct", "location_hash": w.Hashes[i],
		"subscriber": map[string]any{"firstname": "Ada", "lastname": fmt.Sprintf("Crash%d", i), "email": w.Email(i),
			"phonenumber": "+1 514 555 0199"},
		"billing": map[string]any{"owner": "platform", "processor_customer_id": w.Customers[i], "billing_day": 5}}
}

// Email is the subscriber e-mail of suite i's order.
func (w *World) Email(i int) string { return fmt.Sprintf("ada.crash%04d@example.ca", i) }

// Key returns the X-API-Key header for the i-th request (keys taken in turn).
func (w *World) Key(i int) map[string]string {
	return map[string]string{"X-API-Key": w.Keys[i%len(w.Keys)]}
}
