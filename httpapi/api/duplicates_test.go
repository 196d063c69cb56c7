package api

import (
	"fmt"
	"strings"
	"testing"
)

// TestDecodeRefusesDuplicateFields: a key named twice in one object is ambiguous (encoding/json
// would keep the last), so it is 422 naming it by its path, at any depth and however it is
// spelled; the same key in different objects is not a duplicate.
func TestDecodeRefusesDuplicateFields(t *testing.T) {
	t.Parallel()
	type line struct {
		Name string `json:"name"`
	}
	type request struct {
		Email string            `json:"email"`
		Lines []line            `json:"lines"`
		Meta  map[string]string `json:"meta"`
		Raw   any               `json:"raw"`
	}
	many := make([]string, 40)
	for i := range many {
		many[i] = fmt.Sprintf(`"k%d": "v"`, i)
	}
	tests := []struct {
		name, body string
		want       map[string]string
	}{
		{"top level", `{"email": "a@example.ca", "email": "b@example.ca"}`, map[string]string{"email": "duplicate field"}},
		{"escaped spelling", `{"email": "a@example.ca", "\u0065mail": "b@example.ca"}`, map[string]string{"email": "duplicate field"}},
		{"in an array item", `{"lines": [{"name": "a"}, {"name": "b", "name": "c"}]}`, map[string]string{"lines.1.name": "duplicate field"}},
		{"in a map", `{"meta": {"a": "1", "a": "2"}}`, map[string]string{"meta.a": "duplicate field"}},
		{"in free JSON", `{"raw": {"x": [{"y": 1, "y": 2}]}}`, map[string]string{"raw.x.0.y": "duplicate field"}},
		{"in a large object", `{"meta": {` + strings.Join(many, ", ") + `, "k3": "again"}}`, map[string]string{"meta.k3": "duplicate field"}},
		{"with another problem", `{"email": "a", "email": "b", "extra": 1}`, map[string]string{"email": "duplicate field", "extra": "unknown field"}},
		{"same key in two objects", `{"lines": [{"name": "a"}, {"name": "b"}], "meta": {"name": "c"}}`, nil},
		{"keys that only look alike", `{"meta": {"a": "1", "a\"": "2", "A": "3", "a\\": "4"}}`, nil},
		{"strings holding keys", `{"email": "\"email\": 1", "raw": ["{\"a\":1,\"a\":2}"]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantProblems[request](t, tt.body, tt.want) })
	}
}

// BenchmarkDecodeOrder is the decoder on an order-sized body, the hot path of every write.
func BenchmarkDecodeOrder(b *testing.B) {
	type subscriber struct {
		FirstName string `json:"firstname"`
		LastName  string `json:"lastname"`
		Email     string `json:"email"`
		Phone     string `json:"phonenumber"`
	}
	type order struct {
		PlanVersionID string     `json:"plan_version_id"`
		LocationHash  string     `json:"location_hash"`
		DeliveryMode  string     `json:"delivery_mode"`
		External      string     `json:"external_subscription_id"`
		Subscriber    subscriber `json:"subscriber"`
	}
	body := []byte(`{"plan_version_id": "pv_fibre_150", "location_hash": "3f9a0c", "delivery_mode": "direct",
		"external_subscription_id": "ext-1", "subscriber": {"firstname": "Lou", "lastname": "Gauthier",
		"email": "lou@example.ca", "phonenumber": "514-555-0199"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DecodeBytes[order](body); err != nil {
			b.Fatal(err)
		}
	}
}
