package httpapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/store"
)

// Operator scope in queries: every operator list that takes provider_id (found in the OpenAPI
// document, so a new one is covered as it is documented) answers an operator of Maple that
// asks for Northwind's objects with none of them, while a platform operator asking the same
// gets Northwind's (so the probe proves something).
func TestOperatorScopeOfQueries(t *testing.T) {
	t.Parallel()
	var lists []string
	var doc map[string]any
	if err := json.Unmarshal(httpapi.OpenAPIDocument(), &doc); err != nil {
		t.Fatal(err)
	}
	for path, item := range doc["paths"].(map[string]any) {
		get, _ := item.(map[string]any)["get"].(map[string]any)
		params, _ := get["parameters"].([]any)
		for _, p := range params {
			if pm, _ := p.(map[string]any); pm["in"] == "query" && pm["name"] == "provider_id" && strings.HasPrefix(path, "/api/v1/") {
				lists = append(lists, path)
			}
		}
	}
	if len(lists) < 5 {
		t.Fatalf("found %d operator lists taking provider_id: %v", len(lists), lists)
	}
	apptest.Each(t, func(t *testing.T, s *apptest.Service) {
		ctx := context.Background()
		northwindBillingDocuments(t, s)
		p, _ := s.Store.Provider(ctx, northwind)
		sub, _ := s.Store.SubscriptionByID(ctx, marieLine)
		if err := s.Store.InTx(ctx, func(tx *store.Tx) error {
			_, err := s.Events.Record(ctx, tx, p, "subscription.updated", sub, nil)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Privacy.Request(ctx, northwind, marieID); err != nil { // and its ticket
			t.Fatal(err)
		}
		maple, platform := s.OperatorAs(subprov.RoleAdmin, mapleProvider), s.Operator()
		for _, path := range lists {
			q := path + "?provider_id=" + northwind
			if got := items(t, s.Do(apptest.Request{Method: "GET", Path: q, Headers: platform})); got == 0 {
				t.Errorf("%s: a platform operator gets no Northwind object, so the probe proves nothing", q)
			}
			res := s.Do(apptest.Request{Method: "GET", Path: q, Headers: maple})
			if res.Status == 404 {
				continue
			}
			if got := items(t, res); res.Status != 200 || got != 0 {
				t.Errorf("%s as Maple's admin: %d with %d items, want none of Northwind's: %.300s", q, res.Status, got, res.Raw)
			}
		}
	})
}

// items counts the entries of every list in a list answer.
func items(t *testing.T, res *apptest.Response) int {
	t.Helper()
	n := 0
	for _, v := range res.JSON {
		if a, ok := v.([]any); ok {
			n += len(a)
		}
	}
	return n
}
