package partner

import (
	"testing"

	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/httpapi/api/apitest"
)

// requestDecoders decodes a body as each request type the handlers decode. FuzzDecode feeds
// them arbitrary bytes; TestEveryRequestTypeIsFuzzed fails when a handler decodes a type
// that is not listed here.
var requestDecoders = apitest.Decoders{
	"api.LoginRequest":      apitest.DecoderOf[api.LoginRequest],
	"assignRequest":         apitest.DecoderOf[assignRequest],
	"bookRequest":           apitest.DecoderOf[bookRequest],
	"bulkRequest":           apitest.DecoderOf[bulkRequest],
	"cancelRequest":         apitest.DecoderOf[cancelRequest],
	"changePlanRequest":     apitest.DecoderOf[changePlanRequest],
	"checkRequest":          apitest.DecoderOf[checkRequest],
	"completeJobRequest":    apitest.DecoderOf[completeJobRequest],
	"confirmInstallRequest": apitest.DecoderOf[confirmInstallRequest],
	"devicePullRequest":     apitest.DecoderOf[devicePullRequest],
	"locationRequest":       apitest.DecoderOf[locationRequest],
	"orderRequest":          apitest.DecoderOf[orderRequest],
	"webhookConfigRequest":  apitest.DecoderOf[webhookConfigRequest],
}

func TestEveryRequestTypeIsFuzzed(t *testing.T) { apitest.EveryRequestTypeIsFuzzed(t, requestDecoders) }

// FuzzDecode: any body, decoded as any request type, is accepted or refused with 422 in the
// envelope's field list; it never panics and never becomes a 500.
func FuzzDecode(f *testing.F) { apitest.FuzzDecode(f, requestDecoders) }
