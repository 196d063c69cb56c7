package subprov

import "testing"

func TestCheckHolder(t *testing.T) {
	tests := []struct {
		name   string
		acc    Account
		reason string // "" when allowed
	}{
		{"the account holder may", Account{ID: "a1", SubscriberID: "s1"}, ""},
		{"a login without a subscriber record yet is its own holder", Account{ID: "a2"}, ""},
		{"an authorized user may not", Account{ID: "a3", SubscriberID: "s1", AuthorizedUserID: "u1"}, "holder_only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.acc.CheckHolder()
			if tt.reason == "" {
				if err != nil {
					t.Fatalf("CheckHolder = %v, want nil", err)
				}
				return
			}
			if ErrorCode(err) != EFORBIDDEN || ErrorReason(err) != tt.reason {
				t.Fatalf("CheckHolder = %v, want forbidden (%s)", err, tt.reason)
			}
		})
	}
}
