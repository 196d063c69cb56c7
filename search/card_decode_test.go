package search

import (
	"encoding/json"
	"reflect"
	"testing"
)

// jsonCard is the card as encoding/json reads it: what readCard must always return.
func jsonCard(t testing.TB, text string) (searchCard, error) {
	t.Helper()
	var c searchCard
	err := json.Unmarshal([]byte(text), &c)
	return c, err
}

func TestReadCardAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	loc := Location{Street: "1204 Rue Sainte-Catherine O", City: "Montréal", PostalCode: "H3B 1K9", Province: "QC", Country: "CA",
		Unit: "1204", SubscriptionID: "e-1", BuildingID: "b-1"}
	cases := []struct {
		name string
		src  Source
		fast bool // Card's text takes decodeCard's path, not encoding/json's
	}{
		{"holder and one line", Source{CustomerNumber: "0042-117", Contacts: []Contact{{Role: "holder", FirstName: "Marie-Claire",
			LastName: "Tremblay", Email: "mc@example.ca", Phone: "+1 514-555-0142"}}, Locations: []Location{loc}}, true},
		{"accents, two lines", Source{Contacts: []Contact{{Role: "holder", FirstName: "Zoë", LastName: "Gauthier-Bérubé"}},
			Locations: []Location{loc, {SubscriptionID: "e-2", BuildingID: "b-2", Street: "9 Ørsted Way"}}}, true},
		{"empty", Source{}, true},
		{"no holder, anonymous line", Source{Locations: []Location{{SubscriptionID: "e-3", BuildingID: "b-3"}}}, true},
		{"quote in a name", Source{Contacts: []Contact{{Role: "holder", FirstName: `Jean "JP"`, LastName: "O'Neil"}}}, false},
		{"HTML characters escaped by Marshal", Source{Contacts: []Contact{{Role: "holder", FirstName: "A<b>&c"}}}, false},
		{"control character", Source{Locations: []Location{{SubscriptionID: "e-4", BuildingID: "b-4", Street: "1\t2"}}}, false},
		{"invalid UTF-8", Source{Contacts: []Contact{{Role: "holder", LastName: "B\xffé"}}}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			text := tc.src.Card()
			want, err := jsonCard(t, text)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readCard(text)
			if err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("readCard(%s) = %+v, %v; encoding/json: %+v", text, got, err, want)
			}
			if _, fast := decodeCard(text); fast != tc.fast {
				t.Errorf("decodeCard(%s) took the fast path: %v, want %v", text, fast, tc.fast)
			}
		})
	}
}

func TestReadCardRefusesWhatEncodingJSONRefuses(t *testing.T) {
	t.Parallel()
	for _, text := range []string{``, `{`, `{"n":"1"`, `{"n":"1"}x`, `{"s":[{"i":"a"}`, `[]`, `{"n":1}`} {
		if _, err := readCard(text); err == nil {
			t.Errorf("readCard(%q) read a card", text)
		}
	}
}

// FuzzDecodeCard: whatever decodeCard accepts, encoding/json reads the same way.
func FuzzDecodeCard(f *testing.F) {
	for _, s := range []string{
		`{"n":"0042-117","f":"Marie","l":"Tremblay","e":"m@example.ca","p":"+1 514","s":[{"i":"e","b":"b","st":"1 Main","u":"4"}]}`,
		`{}`, `{"s":[]}`, `{"s":null}`, `{"n":"a","n":"b"}`, `{"N":"x"}`, `{"n":"\u00e9"}`, `{ "n":"a"}`, `{"s":[{"i":"a"},{"i":"b","i":"c"}]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got, ok := decodeCard(text)
		if !ok {
			return
		}
		want, err := jsonCard(t, text)
		if err != nil {
			t.Fatalf("decodeCard read %q, encoding/json refuses it: %v", text, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("decodeCard(%q) = %+v, encoding/json: %+v", text, got, want)
		}
	})
}
