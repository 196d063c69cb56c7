package cpe_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/cpe"
)

func TestGenieACSLookup(t *testing.T) {
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	informs := map[string]string{"line-online": now.Add(-time.Minute).Format(time.RFC3339), "line-offline": now.Add(-2 * time.Hour).Format(time.RFC3339)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/devices" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		q := r.URL.Query().Get("query")
		if strings.Contains(q, "line-broken") {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		var query map[string][]map[string]any
		if err := json.Unmarshal([]byte(q), &query); err != nil {
			t.Errorf("query %q: %v", q, err)
		}
		out := []map[string]string{}
		for _, cond := range query["$or"] {
			if tag, ok := cond["_tags"].(string); ok && informs[tag] != "" {
				out = append(out, map[string]string{"_id": "ABC-Router-0001", "_lastInform": informs[tag]})
			}
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	defer srv.Close()
	g := cpe.NewGenieACS(srv.URL)
	for line, want := range map[string]string{"line-online": cpe.Online, "line-offline": cpe.Offline, "line-none": cpe.NotFound} {
		st, err := g.Lookup(context.Background(), line, "aa:bb:cc:dd:ee:ff", now)
		if err != nil || st.State != want {
			t.Errorf("%s: %+v %v, want %s", line, st, err, want)
		}
	}
	if st, err := g.Lookup(context.Background(), "line-broken", "", now); !errors.Is(err, cpe.ErrUnavailable) || st.State != cpe.Unknown {
		t.Errorf("broken: %+v %v", st, err)
	}
	if cpe.NewGenieACS("") != nil {
		t.Error("no URL: want nil (unconfigured)")
	}
}
