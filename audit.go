package subprov

import (
	"context"
	"strings"
	"time"
)

// AuditEntry is one entry of the audit log: who did what to which object, from which request,
// why, and which fields changed. Entries are appended and never changed or removed.
type AuditEntry struct {
	ID         string
	At         time.Time
	ProviderID string // "" for a platform object (an operator of every provider, a platform setting)
	Actor      Actor
	// Action is <object>.<verb> in the past tense: subscription.suspended, api_key.revoked,
	// operator.login_failed.
	Action     string
	ObjectType string
	ObjectID   string
	Reason     string // the reason the action was given, or ""
	Changes    Changes
	// Details is free JSON an earlier entry kind records (a bill run's amounts); "" for none.
	Details   string
	RequestID string
	IP        string
}

// ActorType is the kind of caller an audit entry names.
type ActorType string

const (
	ActorOperator   ActorType = "operator"
	ActorAPIKey     ActorType = "api_key"
	ActorSubscriber ActorType = "subscriber"
	ActorAgent      ActorType = "agent"
	ActorSystem     ActorType = "system"
)

// Actor is who did an audited action. Email is an operator's only: the log names subscribers
// by id, so that it keeps nothing personal once a subscriber's data is deleted.
type Actor struct {
	Type  ActorType
	ID    string
	Email string
}

// OperatorActor is the actor an operator's actions are recorded under.
func OperatorActor(o *Operator) Actor { return Actor{Type: ActorOperator, ID: o.ID, Email: o.Email} }

// Changes records each changed field as [before, after].
type Changes map[string][2]any

// Set records field's change from before to after; an unchanged field is left out.
func (c Changes) Set(field string, before, after any) {
	if before != after {
		c[field] = [2]any{before, after}
	}
}

// Redacted is the value a secret, a password or a personal contact field shows in the log:
// that it changed, never what it was or became.
const Redacted = "changed"

// SetRedacted records that field changed without its values: a secret, a password, or a
// personal contact field (a name, an e-mail, a phone, an address), so that the log holds
// nothing a privacy deletion must erase.
func (c Changes) SetRedacted(field string) { c[field] = [2]any{Redacted, Redacted} }

// Request is what the audit log records of the request an action came from.
type Request struct {
	ID    string
	IP    string
	Actor Actor
}

type requestKey struct{}

// WithRequest carries the request's id, client address and authenticated actor to the
// capabilities it calls, for their audit entries.
func WithRequest(ctx context.Context, r Request) context.Context {
	return context.WithValue(ctx, requestKey{}, r)
}

// RequestOf is the request ctx carries, empty outside one (a job, a sweep).
func RequestOf(ctx context.Context) Request {
	r, _ := ctx.Value(requestKey{}).(Request)
	return r
}

// NewAudit starts the entry of an action on an object, made by ctx's request (its actor, id
// and client address) or, outside a request, by the system.
func NewAudit(ctx context.Context, providerID, action, objectType, objectID string) AuditEntry {
	r := RequestOf(ctx)
	a := r.Actor
	if a.Type == "" {
		a = Actor{Type: ActorSystem}
	}
	return AuditEntry{ProviderID: providerID, Actor: a, Action: action, ObjectType: objectType, ObjectID: objectID,
		Changes: Changes{}, RequestID: r.ID, IP: r.IP}
}

// ActorNamed is the actor an earlier kind of entry names by one string: "operator:EMAIL",
// "subscriber:ID", "technician:NAME", or a part of the system ("billing", "partner").
// ctx's request, when it authenticated someone, is preferred: it knows the actor's id.
func ActorNamed(ctx context.Context, name string) Actor {
	if a := RequestOf(ctx).Actor; a.Type != "" {
		return a
	}
	kind, rest, _ := strings.Cut(name, ":")
	switch kind {
	case "operator":
		return Actor{Type: ActorOperator, Email: rest}
	case "subscriber":
		return Actor{Type: ActorSubscriber, ID: rest}
	case "partner":
		return Actor{Type: ActorAPIKey}
	case "agent":
		return Actor{Type: ActorAgent}
	}
	return Actor{Type: ActorSystem, ID: name}
}
