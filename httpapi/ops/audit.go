package ops

import (
	"net/http"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/audit"
	"github.com/subprov/subprov/httpapi/api"
)

// AuditEntries: GET /api/v1/audit.
func (h *Handler) AuditEntries(w http.ResponseWriter, r *http.Request) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	es, next, err := h.Audit.Entries(r.Context(), api.CallerOf(r).Operator,
		audit.Filter{ActorID: q.Get("actor_id"), ObjectID: q.Get("object_id"), Action: q.Get("action")}, page)
	if err != nil {
		return err
	}
	out := make([]auditEntryJSON, len(es))
	for i, e := range es {
		out[i] = auditEntryOf(e)
	}
	api.List(w, "entries", out, next)
	return nil
}

type auditEntryJSON struct {
	ID         string          `json:"id"`
	At         string          `json:"at"`
	Actor      auditActorJSON  `json:"actor"`
	Action     string          `json:"action"`
	ObjectType string          `json:"object_type"`
	ObjectID   string          `json:"object_id"`
	ProviderID *string         `json:"provider_id"`
	RequestID  *string         `json:"request_id"`
	IP         *string         `json:"ip"`
	Reason     *string         `json:"reason"`
	Changes    subprov.Changes `json:"changes"`
}

type auditActorJSON struct {
	Type  subprov.ActorType `json:"type"`
	ID    *string           `json:"id"`
	Email *string           `json:"email"`
}

func auditEntryOf(e subprov.AuditEntry) auditEntryJSON {
	return auditEntryJSON{ID: e.ID, At: e.At.UTC().Format(time.RFC3339), Action: e.Action, ObjectType: e.ObjectType, ObjectID: e.ObjectID,
		Actor:      auditActorJSON{Type: e.Actor.Type, ID: api.Optional(e.Actor.ID), Email: api.Optional(e.Actor.Email)},
		ProviderID: api.Optional(e.ProviderID), RequestID: api.Optional(e.RequestID), IP: api.Optional(e.IP),
		Reason: api.Optional(e.Reason), Changes: e.Changes}
}
