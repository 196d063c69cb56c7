package privacy_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/servicetest"
)

// TestExportTyped: the export writes each column by its type, the same on both engines:
// booleans as true/false (never SQLite's 0/1), timestamps as RFC 3339 in UTC, numbers as
// numbers; and its link mail is in the person's language (Marie chose French).
func TestExportTyped(t *testing.T) {
	servicetest.Each(t, func(t *testing.T, e *servicetest.Env) {
		ctx := context.Background()
		e.Clock.Set(time.Date(2027, 3, 1, 15, 0, 0, 0, time.UTC))
		seedPersonalData(t, e) // her preferences: fr, billing mails on, service mails off; a second factor on
		mails := e.Mails(t, servicetest.EmailMarie)
		if len(mails) == 0 || len(mails[0].Links) != 1 {
			t.Fatalf("export mail: %+v", mails)
		}
		if mails[0].Subject != "Vos données personnelles" {
			t.Errorf("export mail subject %q, want French", mails[0].Subject)
		}
		link, err := url.Parse(mails[0].Links[0])
		if err != nil {
			t.Fatal(err)
		}
		raw, err := e.Privacy.Export(ctx, link.Query().Get("token"))
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Login, Preferences, Invoices, Mail []map[string]any
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		sections := map[string]*[]map[string]any{"login": &doc.Login, "preferences": &doc.Preferences, "invoices": &doc.Invoices, "mail": &doc.Mail}
		for _, tt := range []struct {
			section, column string
			want            any
		}{
			{"login", "second_factor_on", true},
			{"preferences", "notify_billing", true},
			{"preferences", "notify_service", false},
			{"preferences", "language", "fr"},
		} {
			rows := sections[tt.section]
			if len(*rows) != 1 {
				t.Fatalf("%s: %d rows", tt.section, len(*rows))
			}
			if got := (*rows)[0][tt.column]; got != tt.want {
				t.Errorf("%s.%s = %#v (%T), want %#v", tt.section, tt.column, got, got, tt.want)
			}
		}
		for _, at := range []struct{ section, column string }{{"login", "created_at"}, {"preferences", "updated_at"}, {"mail", "created_at"}} {
			for _, r := range *sections[at.section] {
				s, ok := r[at.column].(string)
				if _, err := time.Parse(time.RFC3339, s); !ok || err != nil || s[len(s)-1] != 'Z' {
					t.Errorf("%s.%s = %#v, want RFC 3339 in UTC", at.section, at.column, r[at.column])
				}
			}
		}
		for _, inv := range *sections["invoices"] {
			if _, ok := inv["total_minor"].(float64); !ok {
				t.Errorf("invoice total_minor = %#v, want a number", inv["total_minor"])
			}
		}
	})
}
