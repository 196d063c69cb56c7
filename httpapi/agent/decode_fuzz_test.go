package agent

import (
	"testing"

	"github.com/subprov/subprov/agent"
	"github.com/subprov/subprov/httpapi/api/apitest"
)

// requestDecoders decodes a body as each request type the handlers decode. FuzzDecode feeds
// them arbitrary bytes; TestEveryRequestTypeIsFuzzed fails when a handler decodes a type
// that is not listed here.
var requestDecoders = apitest.Decoders{
	"agent.ApplyRequest":   apitest.DecoderOf[agent.ApplyRequest],
	"agent.ContactPatch":   apitest.DecoderOf[agent.ContactPatch],
	"agent.PreviewRequest": apitest.DecoderOf[agent.PreviewRequest],
	"agent.TicketInput":    apitest.DecoderOf[agent.TicketInput],
	"agentLinkRequest":     apitest.DecoderOf[agentLinkRequest],
	"agentNoteRequest":     apitest.DecoderOf[agentNoteRequest],
	"verifyCheckRequest":   apitest.DecoderOf[verifyCheckRequest],
	"verifyIssueRequest":   apitest.DecoderOf[verifyIssueRequest],
}

func TestEveryRequestTypeIsFuzzed(t *testing.T) { apitest.EveryRequestTypeIsFuzzed(t, requestDecoders) }

// FuzzDecode: any body, decoded as any request type, is accepted or refused with 422 in the
// envelope's field list; it never panics and never becomes a 500.
func FuzzDecode(f *testing.F) { apitest.FuzzDecode(f, requestDecoders) }
