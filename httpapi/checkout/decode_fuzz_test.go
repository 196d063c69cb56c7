package checkout

import (
	"testing"

	"github.com/subprov/subprov/httpapi/api/apitest"
)

// requestDecoders decodes a body as each request type the handlers decode. FuzzDecode feeds
// them arbitrary bytes; TestEveryRequestTypeIsFuzzed fails when a handler decodes a type
// that is not listed here.
var requestDecoders = apitest.Decoders{
	"anonymousRequest":          apitest.DecoderOf[anonymousRequest],
	"completeRequest":           apitest.DecoderOf[completeRequest],
	"sessionCreateRequest":      apitest.DecoderOf[sessionCreateRequest],
	"sessionPatchRequest":       apitest.DecoderOf[sessionPatchRequest],
	"subscriptionStatusRequest": apitest.DecoderOf[subscriptionStatusRequest],
}

func TestEveryRequestTypeIsFuzzed(t *testing.T) { apitest.EveryRequestTypeIsFuzzed(t, requestDecoders) }

// FuzzDecode: any body, decoded as any request type, is accepted or refused with 422 in the
// envelope's field list; it never panics and never becomes a 500.
func FuzzDecode(f *testing.F) { apitest.FuzzDecode(f, requestDecoders) }
