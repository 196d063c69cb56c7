package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/store"
)

// Operator scope: an operator of one provider (Maple) calling any operator route with the id of
// another provider's (Northwind's) object gets the answer an id that does not exist gets: the
// same status, 404, and the same body. The routes come from the route table: every operator
// route whose path names an object must have its parameter in scopeObjects, or the test fails.

// scopeObjects selects, for each path parameter of an operator route, a Northwind object's id
// (the query's one parameter is Northwind's provider id).
var scopeObjects = map[string]string{
	"subscription_id": `SELECT id FROM subscriptions WHERE provider_id = ? ORDER BY id`,
	"invoice_id":      `SELECT id FROM invoices WHERE provider_id = ? ORDER BY id`,
	"credit_note_id":  `SELECT id FROM credit_notes WHERE provider_id = ? AND state NOT IN ('draft', 'archived', 'voided') ORDER BY id`,
	"job_id":          `SELECT id FROM install_jobs WHERE provider_id = ? ORDER BY id`,
	"event_id":        `SELECT id FROM events WHERE provider_id = ? ORDER BY id`,
	"provider_id":     `SELECT id FROM providers WHERE id = ?`,
	"key_id":          `SELECT id FROM api_keys WHERE provider_id = ? ORDER BY id`,

	// Inventory: a building only Northwind covers, plans, plan versions, install windows.
	"building_id": `SELECT b.id FROM buildings b JOIN building_providers bp ON bp.building_id = b.id AND bp.provider_id = ?
		WHERE NOT EXISTS (SELECT 1 FROM building_providers o WHERE o.building_id = b.id AND o.provider_id <> bp.provider_id) ORDER BY b.id`,
	"plan_id":         `SELECT id FROM plans WHERE provider_id = ? ORDER BY id`,
	"plan_version_id": `SELECT id FROM plan_versions WHERE provider_id = ? ORDER BY id`,
	"window_id":       `SELECT id FROM install_windows WHERE provider_id = ? ORDER BY id`,
	// A switch serving only buildings Northwind alone covers.
	"switch_id": `SELECT w.id FROM switches w JOIN ports p ON p.switch_name = w.name JOIN building_providers bp ON bp.building_id = p.building_id
		GROUP BY w.id HAVING MIN(bp.provider_id) = ? AND MAX(bp.provider_id) = MIN(bp.provider_id) ORDER BY w.id`,

	// Tickets and privacy requests.
	"ticket_id":   `SELECT id FROM tickets WHERE provider_id = ? ORDER BY id`,
	"request_id":  `SELECT id FROM privacy_requests WHERE provider_id = ? ORDER BY id`,
	"operator_id": `SELECT id FROM operators WHERE provider_id = ? AND email LIKE 'target.%'`,

	// Subscribers and lines.
	"subscriber_id": `SELECT id FROM subscribers WHERE provider_id = ? ORDER BY id`,
}

// scopeRequests completes the calls of the routes that check their body or query before they
// look the object up: without them those routes answer 422 to both calls, which proves nothing
// about scope. Each names what the route's rules require; the ids are unknown ones.
var scopeRequests = map[string]struct {
	query string
	body  map[string]any
}{
	"POST /api/v1/subscription/{subscription_id}/cancel":               {body: map[string]any{"end_date": "2031-01-31"}},
	"GET /api/v1/subscription/{subscription_id}/cancel/preview":        {query: "?end_date=2031-01-31"},
	"POST /api/v1/install-jobs/{job_id}/assign":                        {body: map[string]any{"assigned_to": ""}},
	"POST /api/v1/install-jobs/{job_id}/book":                          {body: map[string]any{"slot_id": "00000000-0000-4000-8000-000000000000"}},
	"PATCH /api/v1/tickets/{ticket_id}":                                {body: map[string]any{"status": "pending"}},
	"PATCH /api/v1/operators/{operator_id}":                            {body: map[string]any{"role": "viewer"}},
	"PATCH /api/v1/plan-versions/{plan_version_id}":                    {body: map[string]any{"sellable": false}},
	"POST /api/v1/subscriptions/{subscription_id}/suspend":             {body: map[string]any{"reason": "scope probe"}},
	"POST /api/v1/subscriptions/{subscription_id}/restore":             {body: map[string]any{"reason": "scope probe"}},
	"POST /api/v1/subscriptions/{subscription_id}/plan-change/preview": {body: map[string]any{"plan_version_id": "00000000-0000-4000-8000-000000000000"}},
	"POST /api/v1/subscriptions/{subscription_id}/plan-change":         {body: map[string]any{"plan_version_id": "00000000-0000-4000-8000-000000000000"}},
	"POST /api/v1/subscriptions/{subscription_id}/notes":               {body: map[string]any{"note": "scope probe"}},
}

func TestOperatorScope(t *testing.T) {
	t.Parallel()
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		northwindBillingDocuments(t, s) // an invoice and a credit note to name
		ctx := context.Background()
		p, _ := s.Store.Provider(ctx, northwind)
		sub, _ := s.Store.SubscriptionByID(ctx, marieLine)
		if err := s.Store.InTx(ctx, func(tx *store.Tx) error { // an event to name
			_, err := s.Events.Record(ctx, tx, p, "subscription.updated", sub, nil)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Privacy.Request(ctx, northwind, marieID); err != nil { // a privacy request and its ticket to name
			t.Fatal(err)
		}
		targetOperator(t, s, northwind) // an operator to name
		ids := map[string]string{}
		for param, q := range scopeObjects {
			var id string
			if err := s.Store.R().QueryRow(ctx, q, northwind).Scan(&id); err != nil {
				t.Fatalf("a Northwind object for {%s}: %v", param, err)
			}
			ids[param] = id
		}
		maple := s.OperatorAs(subprov.RoleAdmin, mapleProvider)
		northwindAdmin := s.OperatorAs(subprov.RoleAdmin, northwind)
		for i, rt := range operatorRoutes() {
			key := rt.Method + " " + rt.Path
			if !strings.Contains(rt.Path, "{") {
				continue
			}
			own, missing := rt.Path, rt.Path
			for _, m := range pathParam.FindAllStringSubmatch(rt.Path, -1) {
				id, ok := ids[m[1]]
				if !ok {
					t.Errorf("%s: no Northwind object for {%s}: add a query to scopeObjects", key, m[1])
					continue
				}
				own = strings.Replace(own, m[0], id, 1)
				missing = strings.Replace(missing, m[0], store.NewID(), 1)
			}
			ip := fmt.Sprintf("127.0.2.%d", 10+i%200)
			if rt.Method == "GET" { // a read proves the object is there for its own provider
				if res := doFrom(t, s, ip, apptest.Request{Method: rt.Method, Path: own, Headers: northwindAdmin}); res.Status == 404 {
					t.Errorf("%s: Northwind's own operator gets 404, so the probe proves nothing: %s", key, res.Raw)
				}
			}
			body := authzBody(rt.Method)
			extra, completed := scopeRequests[key]
			if completed && extra.body != nil {
				body = extra.body
			}
			theirs := doFrom(t, s, ip, apptest.Request{Method: rt.Method, Path: own + extra.query, Headers: maple, Body: body})
			none := doFrom(t, s, ip, apptest.Request{Method: rt.Method, Path: missing + extra.query, Headers: maple, Body: body})
			if theirs.Status == 422 && none.Status == 422 && !completed {
				t.Errorf("%s: 422 to both calls, before any lookup: add a body or query its rules accept to scopeRequests: %s", key, theirs.Raw)
				continue
			}
			if theirs.Status != none.Status || theirs.Status != 404 {
				t.Errorf("%s: another provider's object %d, a missing one %d; want 404 for both: %s | %s", key, theirs.Status, none.Status, theirs.Raw, none.Raw)
				continue
			}
			if a, b := withoutRequestIDs(theirs.Raw), withoutRequestIDs(none.Raw); a != b {
				t.Errorf("%s: bodies differ:\n another provider's: %s\n missing:            %s", key, a, b)
			}
		}
	})
}
