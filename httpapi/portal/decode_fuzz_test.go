package portal

import (
	"testing"

	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/httpapi/api/apitest"
)

// requestDecoders decodes a body as each request type the handlers decode. FuzzDecode feeds
// them arbitrary bytes; TestEveryRequestTypeIsFuzzed fails when a handler decodes a type
// that is not listed here.
var requestDecoders = apitest.Decoders{
	"activateRequest":             apitest.DecoderOf[activateRequest],
	"api.LoginRequest":            apitest.DecoderOf[api.LoginRequest],
	"authorizedUserRequest":       apitest.DecoderOf[authorizedUserRequest],
	"autoPayRequest":              apitest.DecoderOf[autoPayRequest],
	"billingDayRequest":           apitest.DecoderOf[billingDayRequest],
	"contactPatchRequest":         apitest.DecoderOf[contactPatchRequest],
	"ownContactRequest":           apitest.DecoderOf[ownContactRequest],
	"paperBillingRequest":         apitest.DecoderOf[paperBillingRequest],
	"passwordChangeRequest":       apitest.DecoderOf[passwordChangeRequest],
	"passwordResetConfirmRequest": apitest.DecoderOf[passwordResetConfirmRequest],
	"passwordResetRequest":        apitest.DecoderOf[passwordResetRequest],
	"paymentConfirmRequest":       apitest.DecoderOf[paymentConfirmRequest],
	"portalOrderRequest":          apitest.DecoderOf[portalOrderRequest],
	"preferencesPatchRequest":     apitest.DecoderOf[preferencesPatchRequest],
	"secondFactorCodeRequest":     apitest.DecoderOf[secondFactorCodeRequest],
}

func TestEveryRequestTypeIsFuzzed(t *testing.T) { apitest.EveryRequestTypeIsFuzzed(t, requestDecoders) }

// FuzzDecode: any body, decoded as any request type, is accepted or refused with 422 in the
// envelope's field list; it never panics and never becomes a 500.
func FuzzDecode(f *testing.F) { apitest.FuzzDecode(f, requestDecoders) }
