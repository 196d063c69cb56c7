// Package audit reads the audit log for the operations surface. Entries are written by the
// capability that makes each change, in its own transaction (store.Tx.RecordAudit); nothing
// changes or removes one.
package audit

import (
	"context"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// Service reads the audit log.
type Service struct {
	Store *store.Store
}

// Filter narrows a read of the log; "" matches anything.
type Filter struct {
	ActorID  string
	ObjectID string
	Action   string
}

// Entries lists the log newest first, one page at a time: an operator reads its own
// provider's entries only, a platform operator every entry.
func (s *Service) Entries(ctx context.Context, op *subprov.Operator, f Filter, page subprov.Page) ([]subprov.AuditEntry, string, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, "", err
	}
	es, err := s.Store.AuditEntries(ctx, store.AuditFilter{ProviderID: op.ProviderID, ActorID: f.ActorID, ObjectID: f.ObjectID, Action: f.Action}, page)
	if err != nil {
		return nil, "", err
	}
	es, next := subprov.Cut(page, es, store.AuditKey)
	return es, next, nil
}
