package console

import (
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/audit"
	"github.com/subprov/subprov/httpapi/api"
)

// The audit log, through GET /api/v1/audit's capability (package audit): a provider's operator
// reads its provider's entries only. Each entry's time is shown in its provider's time zone,
// a platform-wide entry's in UTC.

// auditRow is one entry as the page shows it.
type auditRow struct {
	Entry    subprov.AuditEntry
	At       string
	Provider string // the provider's name, "" for a platform-wide entry
	Changes  []auditChange
}

// auditChange is one changed field: its values as the log holds them (a secret or personal
// field only as "changed").
type auditChange struct {
	Field, Before, After string
}

// auditData is the audit log page's: its filters, one page of entries and the next page's
// address.
type auditData struct {
	ActorID, ObjectID, Action string
	Rows                      []auditRow
	NextURL                   string
}

// auditLog: GET /console/audit (GET /api/v1/audit), with its filters actor_id, object_id and
// action as query parameters, newest first, one page at a time.
func (h *Handler) auditLog(w http.ResponseWriter, r *http.Request, v *View) error {
	ctx := r.Context()
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	f := audit.Filter{ActorID: q.Get("actor_id"), ObjectID: q.Get("object_id"), Action: q.Get("action")}
	es, next, err := h.Ops.Audit.Entries(ctx, v.Operator, f, page)
	if err != nil {
		return err
	}
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.ProviderID
	}
	ps, err := h.providersByID(ctx, v.Operator, ids)
	if err != nil {
		return err
	}
	d := auditData{ActorID: f.ActorID, ObjectID: f.ObjectID, Action: f.Action, Rows: make([]auditRow, len(es))}
	for i, e := range es {
		row := auditRow{Entry: e, At: e.At.In(locOf(ps, e.ProviderID)).Format("2 Jan 2006 15:04:05 MST")}
		if p := ps[e.ProviderID]; p != nil {
			row.Provider = p.Name
		}
		for field, c := range e.Changes {
			row.Changes = append(row.Changes, auditChange{Field: field, Before: auditValue(c[0]), After: auditValue(c[1])})
		}
		sort.Slice(row.Changes, func(a, b int) bool { return row.Changes[a].Field < row.Changes[b].Field })
		d.Rows[i] = row
	}
	if next != "" {
		nq := url.Values{"cursor": {next}}
		for k, s := range map[string]string{"actor_id": f.ActorID, "object_id": f.ObjectID, "action": f.Action, "limit": q.Get("limit")} {
			if s != "" {
				nq.Set(k, s)
			}
		}
		d.NextURL = Prefix + "audit?" + nq.Encode()
	}
	v.Title, v.Data = "Audit log", d
	h.render(w, r, v, http.StatusOK, "audit")
	return nil
}

// auditValue is a changed field's value as the page prints it: "none" for an absent one.
func auditValue(x any) string {
	switch x := x.(type) {
	case nil:
		return "none"
	case string:
		if x == "" {
			return "none"
		}
		return x
	case time.Time:
		return x.UTC().Format(time.RFC3339)
	}
	return fmt.Sprint(x)
}
