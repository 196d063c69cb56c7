package ops

import (
	"testing"

	"github.com/subprov/subprov/httpapi/api/apitest"
	"github.com/subprov/subprov/inventory"
	"github.com/subprov/subprov/providers"
)

// requestDecoders decodes a body as each request type the handlers decode. FuzzDecode feeds
// them arbitrary bytes; TestEveryRequestTypeIsFuzzed fails when a handler decodes a type
// that is not listed here.
var requestDecoders = apitest.Decoders{
	"apiKeyBody":                 apitest.DecoderOf[apiKeyBody],
	"creditNoteRequest":          apitest.DecoderOf[creditNoteRequest],
	"inventory.Building":         apitest.DecoderOf[inventory.Building],
	"inventory.BuildingPatch":    apitest.DecoderOf[inventory.BuildingPatch],
	"inventory.InstallWindow":    apitest.DecoderOf[inventory.InstallWindow],
	"inventory.Plan":             apitest.DecoderOf[inventory.Plan],
	"inventory.PlanVersion":      apitest.DecoderOf[inventory.PlanVersion],
	"inventory.PlanVersionPatch": apitest.DecoderOf[inventory.PlanVersionPatch],
	"inventory.Port":             apitest.DecoderOf[inventory.Port],
	"inventory.Switch":           apitest.DecoderOf[inventory.Switch],
	"inventory.SwitchPatch":      apitest.DecoderOf[inventory.SwitchPatch],
	"newOperatorRequest":         apitest.DecoderOf[newOperatorRequest],
	"noteRequest":                apitest.DecoderOf[noteRequest],
	"operatorChangeRequest":      apitest.DecoderOf[operatorChangeRequest],
	"passwordChangeRequest":      apitest.DecoderOf[passwordChangeRequest],
	"planChangeRequest":          apitest.DecoderOf[planChangeRequest],
	"providerPatch":              apitest.DecoderOf[providerPatch],
	"providers.Fields":           apitest.DecoderOf[providers.Fields],
	"reasonRequest":              apitest.DecoderOf[reasonRequest],
	"rejectRequest":              apitest.DecoderOf[rejectRequest],
	"rotateBody":                 apitest.DecoderOf[rotateBody],
	"ticketPatch":                apitest.DecoderOf[ticketPatch],
	"unitBody":                   apitest.DecoderOf[unitBody],
}

func TestEveryRequestTypeIsFuzzed(t *testing.T) { apitest.EveryRequestTypeIsFuzzed(t, requestDecoders) }

// FuzzDecode: any body, decoded as any request type, is accepted or refused with 422 in the
// envelope's field list; it never panics and never becomes a 500.
func FuzzDecode(f *testing.F) { apitest.FuzzDecode(f, requestDecoders) }
