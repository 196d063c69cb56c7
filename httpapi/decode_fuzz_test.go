package httpapi

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/agent"
)

// requestDecoders decodes a body as each request type the handlers decode. FuzzDecode feeds
// them arbitrary bytes; TestEveryRequestTypeIsFuzzed fails when a handler decodes a type
// that is not listed here.
var requestDecoders = map[string]func([]byte) error{
	"activateRequest":             decoderOf[activateRequest],
	"agent.ApplyRequest":          decoderOf[agent.ApplyRequest],
	"agent.ContactPatch":          decoderOf[agent.ContactPatch],
	"agent.PreviewRequest":        decoderOf[agent.PreviewRequest],
	"agent.TicketInput":           decoderOf[agent.TicketInput],
	"agentLinkRequest":            decoderOf[agentLinkRequest],
	"agentNoteRequest":            decoderOf[agentNoteRequest],
	"anonymousRequest":            decoderOf[anonymousRequest],
	"assignRequest":               decoderOf[assignRequest],
	"authorizedUserRequest":       decoderOf[authorizedUserRequest],
	"billingDayRequest":           decoderOf[billingDayRequest],
	"bookRequest":                 decoderOf[bookRequest],
	"bulkRequest":                 decoderOf[bulkRequest],
	"cancelRequest":               decoderOf[cancelRequest],
	"changePlanRequest":           decoderOf[changePlanRequest],
	"checkRequest":                decoderOf[checkRequest],
	"clockRequest":                decoderOf[clockRequest],
	"completeJobRequest":          decoderOf[completeJobRequest],
	"completeRequest":             decoderOf[completeRequest],
	"confirmInstallRequest":       decoderOf[confirmInstallRequest],
	"contactPatchRequest":         decoderOf[contactPatchRequest],
	"devicePullRequest":           decoderOf[devicePullRequest],
	"locationRequest":             decoderOf[locationRequest],
	"loginRequest":                decoderOf[loginRequest],
	"orderRequest":                decoderOf[orderRequest],
	"ownContactRequest":           decoderOf[ownContactRequest],
	"passwordChangeRequest":       decoderOf[passwordChangeRequest],
	"passwordResetConfirmRequest": decoderOf[passwordResetConfirmRequest],
	"passwordResetRequest":        decoderOf[passwordResetRequest],
	"paymentConfirmRequest":       decoderOf[paymentConfirmRequest],
	"portalOrderRequest":          decoderOf[portalOrderRequest],
	"sessionCreateRequest":        decoderOf[sessionCreateRequest],
	"sessionPatchRequest":         decoderOf[sessionPatchRequest],
	"subscriptionStatusRequest":   decoderOf[subscriptionStatusRequest],
	"verifyCheckRequest":          decoderOf[verifyCheckRequest],
	"verifyIssueRequest":          decoderOf[verifyIssueRequest],
	"webhookConfigRequest":        decoderOf[webhookConfigRequest],
}

func decoderOf[T any](body []byte) error {
	_, err := decodeBytes[T](body)
	return err
}

// decodedTypes finds every T in decode[T] / decodeBytes[T] in the handlers.
func decodedTypes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`decode(?:Bytes)?\[([A-Za-z.]+)\]\(`)
	seen := map[string]bool{}
	for _, f := range files {
		if filepath.Ext(f) != ".go" || regexp.MustCompile(`_test\.go$`).MatchString(f) {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			if m[1] != "T" {
				seen[m[1]] = true
			}
		}
	}
	var out []string
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestEveryRequestTypeIsFuzzed(t *testing.T) {
	t.Parallel()
	types := decodedTypes(t)
	if len(types) < 10 {
		t.Fatalf("found only %d decoded types: %v", len(types), types)
	}
	for _, name := range types {
		if requestDecoders[name] == nil {
			t.Errorf("handlers decode %s but requestDecoders does not list it (FuzzDecode would skip it)", name)
		}
	}
}

// FuzzDecode: any body, decoded as any request type, is accepted or refused with 422 in the
// envelope's field list; it never panics and never becomes a 500.
func FuzzDecode(f *testing.F) {
	names := make([]string, 0, len(requestDecoders))
	for k := range requestDecoders {
		names = append(names, k)
	}
	sort.Strings(names)
	for i := range names {
		for _, seed := range []string{`{}`, `null`, `{"a":1}`} {
			f.Add(uint8(i), []byte(seed))
		}
	}
	for i, seed := range []string{``, `[]`, `{"email":"x@example.ca","password":"p"}`,
		`{"subscriber":{"firstname":"A","lastname":"B","email":"a@b.c"},"plan_version_id":"x"}`,
		`{"items":[{"plan_version_id":1},{}]}`, `{"billing_day":99}`, `{"advance_seconds":-9223372036854775808}`,
		`{"mac_address":"zz"}`, `{"x":"\ud800"}`, `{"a":` + "\xff" + `}`, `{"plan_version_id":{"a":[1,2,{"b":null}]}}`} {
		f.Add(uint8(i*7), []byte(seed))
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		name := names[int(which)%len(names)]
		err := requestDecoders[name](body)
		if err == nil {
			return
		}
		var e *subprov.Error
		if !errors.As(err, &e) || e.Code != subprov.EINVALID {
			t.Fatalf("%s: decoding %q gave %v, want a 422 validation error", name, body, err)
		}
		if len(e.Fields) == 0 {
			t.Fatalf("%s: decoding %q gave a 422 without fields", name, body)
		}
	})
}
