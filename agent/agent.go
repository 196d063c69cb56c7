// Package agent holds the rules of the support-agent API (docs/agent.md): provider scoping before
// anything else, masked search, one-time-code verification yielding a 15-minute session bound to
// (provider, customer), slim reads, gated writes, and tickets. The HTTP handlers (package
// httpapi/agent) and the MCP server (subprov mcp) both call this package, so both surfaces keep
// the same rules.
package agent

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/billing"
	"github.com/subprov/subprov/cpe"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/monitoring"
	"github.com/subprov/subprov/portal"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/sms"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/tickets"
)

// Mailer queues a message inside a transaction (the outbox).
type Mailer interface {
	QueueLocalized(ctx context.Context, tx *store.Tx, providerID, to string, m locale.Mail) error
	// LanguageOf is the language the person at address to chose (an SMS follows the holder's).
	LanguageOf(ctx context.Context, tx *store.Tx, providerID, subscriberID, to string) (locale.Lang, error)
}

// Service runs the agent rules.
type Service struct {
	Store *store.Store
	Clock subprov.Clock
	Auth  *auth.Service
	Mail  Mailer
	SMS   sms.Sender // nil: the SMS gateway is not configured
	CPE   cpe.Reader // nil: no CPE management server; modem status is unknown
	// Monitoring reads the lines' link state and outages as sampled; nil: unknown, none.
	Monitoring   monitoring.Source
	Faults       *faults.Switches
	Provisioning *provisioning.Service
	Billing      *billing.Service
	Portal       *portal.Service
	Desk         tickets.Desk
	Log          *slog.Logger
}

// Caller is the agent calling: its key's provider, the key, and the verified-session token it
// sent ("" when none).
type Caller struct {
	Provider *subprov.Provider
	Key      *subprov.APIKey
	Session  string
}

// actor names the caller in audit entries and plan-change records.
func (c Caller) actor() string { return "agent:" + c.Key.Prefix }

// Stable errors of the agent surface (docs/agent.md).
var (
	errCustomerNotFound = subprov.Errorf(subprov.ENOTFOUND, "not_found", "Customer not found")
	errInternal         = subprov.Errorf(subprov.EINTERNAL, "internal", "Internal server error")
)

// customer resolves a customer of the caller's provider. Scoping comes first: a customer of
// another provider (or none) is 404 whatever the session says; then, when verified is true,
// the session must be bound to this provider and customer (401 verification_required).
func (s *Service) customer(ctx context.Context, c Caller, customerID string, verified bool) (*subprov.SubscriberContacts, error) {
	customerID = strings.TrimSpace(customerID)
	if customerID == "" {
		return nil, errCustomerNotFound
	}
	rec, err := s.Store.SubscriberRecordOf(ctx, c.Provider.ID, customerID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, errCustomerNotFound
		}
		return nil, err
	}
	if verified {
		if err := s.Auth.CheckVerifiedSession(c.Session, c.Provider.ID, rec.ID); err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// Check runs the checks a call on a customer starts with, in their order (docs/agent.md, Scoping
// first): the customer must be of the caller's provider (404 otherwise, whatever the session says),
// then, when verified is true, the session must be bound to this provider and customer (401
// verification_required). The HTTP layer runs it before answering a body that does not decode, so a
// malformed request learns nothing the checks would not tell.
func (s *Service) Check(ctx context.Context, c Caller, customerID string, verified bool) error {
	_, err := s.customer(ctx, c, customerID, verified)
	return err
}

// codes are the agent surface's error codes: the list in docs/agent.md, invalid_state (409, a plan
// change on a line that is not ACTIVE), the 405 of a wrong method, and rate_limited, which
// only the MCP tools show (HTTP answers 429 outside the envelope).
var codes = map[string]bool{
	"unauthorized": true, "forbidden": true, "verification_required": true, "verification_failed": true,
	"not_found": true, "validation_error": true, "confirmation_required": true, "plan_change_limit": true,
	"already_activated": true, "dependency_unconfigured": true, "upstream_unavailable": true, "internal": true,
	"invalid_state": true, "method_not_allowed": true, "rate_limited": true,
}

// codeOfClass names an error whose reason is not an agent code by its class. A class missing
// here (a conflict the agent rules did not name, not implemented) has no code the agent could
// act on: it is a bug, answered as internal.
var codeOfClass = map[subprov.Code]string{
	subprov.EBADREQUEST: "validation_error", subprov.EUNAUTHORIZED: "unauthorized", subprov.EFORBIDDEN: "forbidden",
	subprov.ENOTFOUND: "not_found", subprov.EINVALID: "validation_error", subprov.ETOOLARGE: "validation_error",
	subprov.EGONE: "not_found", subprov.EUNAVAILABLE: "upstream_unavailable", subprov.EUNCONFIGURED: "dependency_unconfigured",
	subprov.EINTERNAL: "internal", subprov.EMETHOD: "method_not_allowed", subprov.ERATELIMITED: "rate_limited",
}

// Public returns err as the agent surfaces show it: a coded error whose Reason is one of the
// agent codes, never empty. A reason outside them is replaced by its class's code; anything
// else (uncoded, or a class without an agent code) is the internal error, without detail, and
// unlisted is true so the caller can log what was hidden.
func Public(err error) (e *subprov.Error, unlisted bool) {
	in, ok := subprov.AsError(err)
	if !ok {
		return errInternal, true
	}
	if codes[in.Reason] {
		return in, false
	}
	code, ok := codeOfClass[in.Code]
	if !ok {
		return errInternal, true
	}
	out := *in
	out.Reason = code
	return &out, false
}

// PublicError is the stable code and safe message of err for a surface without HTTP (the MCP
// tools). Validation problems are appended to the message.
func PublicError(err error) (code, message string) {
	e, _ := Public(err)
	message = e.Message
	for f, p := range e.Fields {
		message += "; " + f + ": " + p
	}
	return e.Reason, message
}
