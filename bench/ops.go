package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/subprov/subprov/gen"
)

// The operations surface's scenario signs in as two viewers that `subprov operator add`
// creates on the measured database: a platform-wide one, which reads every provider, and one
// of the last provider.
const (
	opsEmail         = "bench-viewer@example.com"
	opsProviderEmail = "bench-provider-viewer@example.com"
	opsPassword      = "bench-viewer-password-1"
)

// opsQuery is one request of the operations scenario: its name in the report, its path and
// query on the service, whether the last provider's operator sends it (else the platform's),
// and whether it asks for the page after the first.
type opsQuery struct {
	name, path string
	provider   bool
	nextPage   bool // the page after path's first (its next_cursor read once)
}

// opsQueries are the operations surface's subscriber search and list (GET /api/v1/subscribers)
// as a platform's operators use them: agent search's query kinds within provider 1, as agent
// search measures them; the last provider's list, its first page, the page after it and its
// suspended subscribers (gen numbers the subscribers provider by provider, so the last
// provider's come last in id order: a list that read the providers before it would show
// here) and those whose provisioning failed (none in generated data: the page reads what the
// filter's index holds); every provider's first page, and every provider's subscribers
// suspended and those being provisioned (none at rest), the last two read from a partial index
// of those lines; a name searched over every provider (every provider's index entries at
// once); and the overview's counts, of every provider and of the last one (its operator signed
// in).
func opsQueries(kinds [][2]string, providers int) []opsQuery {
	one, last := gen.ProviderID(1), gen.ProviderID(providers)
	list := "/api/v1/subscribers?limit=50&provider_id=" + url.QueryEscape(last)
	var qs []opsQuery
	for _, k := range kinds {
		qs = append(qs, opsQuery{name: "operations search: " + k[0], path: "/api/v1/subscribers?limit=50&provider_id=" + url.QueryEscape(one) + "&q=" + url.QueryEscape(k[1])})
	}
	return append(qs,
		opsQuery{name: "operations list: the last provider's first page", path: list},
		opsQuery{name: "operations list: the last provider's second page", path: list, nextPage: true},
		opsQuery{name: "operations list: the last provider's SUSPENDED", path: list + "&status=SUSPENDED"},
		opsQuery{name: "operations list: the last provider's provisioning_failed", path: list + "&workflow_state=provisioning_failed"},
		opsQuery{name: "operations list: every provider's first page", path: "/api/v1/subscribers?limit=50"},
		opsQuery{name: "operations list: every provider's SUSPENDED", path: "/api/v1/subscribers?limit=50&status=SUSPENDED"},
		opsQuery{name: "operations list: every provider's provisioning", path: "/api/v1/subscribers?limit=50&workflow_state=provisioning"},
		opsQuery{name: "operations search: a name over every provider", path: "/api/v1/subscribers?limit=50&q=" + url.QueryEscape(kinds[0][1])},
		opsQuery{name: "operations overview: every provider's", path: "/api/v1/overview"},
		opsQuery{name: "operations overview: the last provider's", path: "/api/v1/overview", provider: true},
	)
}

// measureOps runs the operations surface's subscriber search and list and its overview, with 8
// clients each.
func measureOps(ctx context.Context, o options, bin, dbURL string, srv *server, res *engineResult, kinds [][2]string) error {
	platform, err := operatorAuth(ctx, bin, dbURL, srv, opsEmail)
	if err != nil {
		return err
	}
	provider, err := operatorAuth(ctx, bin, dbURL, srv, opsProviderEmail, "--provider", gen.ProviderID(o.providers))
	if err != nil {
		return err
	}
	client, closeClient := loadClient(1)
	defer closeClient()
	for _, q := range opsQueries(kinds, o.providers) {
		u, auth := srv.base+q.path, platform
		if q.provider {
			auth = provider
		}
		if q.nextPage {
			cursor, err := nextCursor(client, u, auth)
			if err != nil {
				return err
			}
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		r := load(8, o.duration, func(c *http.Client, _ int64) (bool, error) { return true, get(c, u, auth) })
		r.name = q.name
		res.scenarios = append(res.scenarios, r)
		logf("%s: %s ×8: p50 %s p99 %s %.0f/s", res.engine, r.name, r.p50, r.p99, r.rps())
	}
	return nil
}

// operatorAuth creates (or updates) a viewer with `subprov operator add` (scope: extra flags)
// and signs it in over HTTP, returning the bearer header.
func operatorAuth(ctx context.Context, bin, dbURL string, srv *server, email string, scope ...string) (http.Header, error) {
	cmd := subprovCmd(ctx, bin, dbURL, append([]string{"operator", "add", email, "--role", "viewer"}, scope...)...)
	cmd.Stdin = strings.NewReader(opsPassword + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("operator add: %w\n%s", err, out)
	}
	body, _ := json.Marshal(map[string]string{"email": email, "password": opsPassword})
	req, err := http.NewRequest("POST", srv.base+"/api/v1/auth/login", strings.NewReader(string(body)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	client, closeClient := loadClient(1)
	defer closeClient()
	raw, err := send(client, req)
	if err != nil {
		return nil, fmt.Errorf("operator login: %w", err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(raw, &tok); err != nil || tok.AccessToken == "" {
		return nil, fmt.Errorf("operator login: no access_token in %s", raw)
	}
	return http.Header{"Authorization": {"Bearer " + tok.AccessToken}}, nil
}

// nextCursor reads the list page at u and returns its next_cursor.
func nextCursor(c *http.Client, u string, auth http.Header) (string, error) {
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return "", err
	}
	req.Header = auth
	raw, err := send(c, req)
	if err != nil {
		return "", err
	}
	var page struct {
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal(raw, &page); err != nil || page.NextCursor == nil {
		return "", fmt.Errorf("list page %s: no next_cursor", u)
	}
	return *page.NextCursor, nil
}
