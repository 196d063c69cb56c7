package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/subprov/subprov/httpapi"
	"github.com/subprov/subprov/internal/apptest"
	"github.com/subprov/subprov/internal/testdb"
)

// The OpenAPI document is checked against the route table (every served route documented,
// nothing documented that is not served), for internal consistency, and as served.

const oasFile = "openapi.json"

// oasMethods are the keys of a path item that name operations.
var oasMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// oasOp is one documented operation.
type oasOp struct {
	Method string // upper case
	Path   string
	Op     map[string]any
	Item   map[string]any // the path item, for parameters shared by its operations
}

func (o oasOp) key() string { return o.Method + " " + o.Path }

func oasLoad(t *testing.T) (map[string]any, []byte) {
	t.Helper()
	raw, err := os.ReadFile(oasFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s is not valid JSON: %v", oasFile, err)
	}
	return doc, raw
}

// oasResolve follows a local JSON pointer ("#/components/...") inside doc.
func oasResolve(doc map[string]any, ref string) (any, bool) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, false
	}
	var cur any = doc
	for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// oasDeref resolves v while it is a {"$ref": …} object; a broken reference yields nil.
func oasDeref(doc map[string]any, v any) map[string]any {
	for range 32 {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		if v, ok = oasResolve(doc, ref); !ok {
			return nil
		}
	}
	return nil
}

// oasOps lists every documented operation, following path items given by $ref.
func oasOps(doc map[string]any) []oasOp {
	paths, _ := doc["paths"].(map[string]any)
	var out []oasOp
	for path, item := range paths {
		pi := oasDeref(doc, item)
		for _, m := range oasMethods {
			if op, ok := pi[m].(map[string]any); ok {
				out = append(out, oasOp{Method: strings.ToUpper(m), Path: path, Op: op, Item: pi})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// oasPattern turns a registered mux path into its OpenAPI form: "{name...}" is "{name}" and
// a trailing "{$}" (exact match) adds nothing to the path string.
func oasPattern(p string) string {
	p = strings.TrimSuffix(p, "{$}")
	return strings.ReplaceAll(p, "...}", "}")
}

// oasRouteDiff compares served routes with documented operations.
func oasRouteDiff(doc map[string]any, routes []httpapi.RouteInfo) (missing, extra []string) {
	served := map[string]bool{}
	for _, r := range routes {
		served[strings.ToUpper(r.Method)+" "+oasPattern(r.Path)] = true
	}
	documented := map[string]bool{}
	for _, o := range oasOps(doc) {
		documented[o.key()] = true
		if !served[o.key()] {
			extra = append(extra, o.key())
		}
	}
	for k := range served {
		if !documented[k] {
			missing = append(missing, k)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return missing, extra
}

// oasClone deep-copies a decoded document so a case can mutate it.
func oasClone(t *testing.T, doc map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestOpenAPIMatchesServedRoutes(t *testing.T) {
	t.Parallel()
	doc, _ := oasLoad(t)
	routes := httpapi.Routes()
	if len(routes) == 0 {
		t.Fatal("httpapi.Routes() is empty")
	}
	// A served route to drop in the self-check below.
	dropped := routes[len(routes)-1]
	tests := []struct {
		name        string
		mutate      func(doc map[string]any)
		wantMissing []string // reported by the diff of the mutated document
		wantExtra   []string
	}{
		{name: "the shipped document documents exactly the served routes"},
		{
			name: "a served route left out of the document is reported",
			mutate: func(d map[string]any) {
				item := oasDeref(d, d["paths"].(map[string]any)[oasPattern(dropped.Path)])
				delete(item, strings.ToLower(dropped.Method))
			},
			wantMissing: []string{dropped.Method + " " + oasPattern(dropped.Path)},
		},
		{
			name: "a documented operation that is not served is reported",
			mutate: func(d map[string]any) {
				d["paths"].(map[string]any)["/partner/not-served/{id}"] = map[string]any{
					"delete": map[string]any{"summary": "x", "responses": map[string]any{}},
				}
			},
			wantExtra: []string{"DELETE /partner/not-served/{id}"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := doc
			if tt.mutate != nil {
				d = oasClone(t, doc)
				tt.mutate(d)
			}
			missing, extra := oasRouteDiff(d, routes)
			if tt.mutate == nil {
				for _, m := range missing {
					t.Errorf("served but not in %s: %s", oasFile, m)
				}
				for _, e := range extra {
					t.Errorf("documented in %s but not served: %s", oasFile, e)
				}
				return
			}
			for _, w := range tt.wantMissing {
				if !slices.Contains(missing, w) {
					t.Errorf("%s not reported as missing (missing %v)", w, missing)
				}
			}
			for _, w := range tt.wantExtra {
				if !slices.Contains(extra, w) {
					t.Errorf("%s not reported as extra (extra %v)", w, extra)
				}
			}
		})
	}
}

// oasSchemeFor is the security scheme a route's credential must be documented with.
var oasSchemeFor = map[string]string{
	"api_key":             "apiKey",
	"agent_key":           "agentApiKey",
	"webhook_secret":      "webhookSecret",
	"subscriber":          "subscriberJWT",
	"holder":              "subscriberJWT",
	"operator":            "dashboardJWT",
	"optional_subscriber": "subscriberJWT",
	"device_secret":       "deviceSecret",
}

// oasWalkRefs calls fn with the location and target of every "$ref" in v.
func oasWalkRefs(v any, at string, fn func(at, ref string)) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			if s, ok := c.(string); ok && k == "$ref" {
				fn(at, s)
				continue
			}
			oasWalkRefs(c, at+"/"+k, fn)
		}
	case []any:
		for i, c := range x {
			oasWalkRefs(c, fmt.Sprintf("%s/%d", at, i), fn)
		}
	}
}

var (
	oasPathParam = regexp.MustCompile(`\{([^}/]+)\}`)
	oasStatus    = regexp.MustCompile(`^([1-5][0-9][0-9]|default)$`)
)

func TestOpenAPIIsWellFormed(t *testing.T) {
	t.Parallel()
	doc, _ := oasLoad(t)
	if v, _ := doc["openapi"].(string); v != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", v)
	}
	info, _ := doc["info"].(map[string]any)
	for _, k := range []string{"title", "version", "description"} {
		if s, _ := info[k].(string); s == "" {
			t.Errorf("info.%s is missing", k)
		}
	}

	t.Run("every $ref resolves", func(t *testing.T) {
		n := 0
		oasWalkRefs(doc, "#", func(at, ref string) {
			n++
			if _, ok := oasResolve(doc, ref); !ok {
				t.Errorf("%s: $ref %q does not resolve", at, ref)
			}
		})
		if n == 0 {
			t.Error("no $ref at all: the X-Request-Id header at least must be shared")
		}
	})

	tags := map[string]bool{}
	topTags, _ := doc["tags"].([]any)
	for _, tg := range topTags {
		tm, _ := tg.(map[string]any)
		name, _ := tm["name"].(string)
		if d, _ := tm["description"].(string); name == "" || d == "" {
			t.Errorf("tag %v lacks a name or description", tm)
		}
		tags[name] = true
	}
	schemes, _ := oasResolve(doc, "#/components/securitySchemes")
	schemeMap, _ := schemes.(map[string]any)

	ops := oasOps(doc)
	if len(ops) == 0 {
		t.Fatal("no operations documented")
	}
	ids := map[string]string{}
	for _, o := range ops {
		t.Run(o.key(), func(t *testing.T) {
			if s, _ := o.Op["summary"].(string); s == "" {
				t.Error("no summary")
			}
			if s, _ := o.Op["description"].(string); s == "" {
				t.Error("no description")
			}
			opTags, _ := o.Op["tags"].([]any)
			if len(opTags) == 0 {
				t.Error("no tags")
			}
			for _, tg := range opTags {
				if name, _ := tg.(string); !tags[name] {
					t.Errorf("tag %v is not declared in the top-level tags", tg)
				}
			}
			id, _ := o.Op["operationId"].(string)
			if id == "" {
				t.Error("no operationId")
			} else if prev, dup := ids[id]; dup {
				t.Errorf("operationId %q is also used by %s", id, prev)
			}
			ids[id] = o.key()

			// Path parameters are declared.
			declared := map[string]bool{}
			itemParams, _ := o.Item["parameters"].([]any)
			opParams, _ := o.Op["parameters"].([]any)
			for _, p := range append(itemParams, opParams...) {
				if pm := oasDeref(doc, p); pm["in"] == "path" {
					name, _ := pm["name"].(string)
					declared[name] = true
				}
			}
			for _, m := range oasPathParam.FindAllStringSubmatch(o.Path, -1) {
				if !declared[m[1]] {
					t.Errorf("path parameter {%s} is not declared", m[1])
				}
			}

			// Request bodies reject unknown fields (422), so their schemas say so.
			if rb := oasDeref(doc, o.Op["requestBody"]); rb != nil {
				content, _ := rb["content"].(map[string]any)
				mt, _ := content["application/json"].(map[string]any)
				if mt == nil && !strings.HasPrefix(o.Path, "/partner/") && !strings.HasPrefix(o.Path, "/api/") { // pages post HTML forms
					mt, _ = content["application/x-www-form-urlencoded"].(map[string]any)
				}
				if csv, _ := content["text/csv"].(map[string]any); mt == nil && csv != nil { // an import: a file, not an object
					mt = csv
				}
				if mt == nil {
					t.Error("request body is not application/json")
				} else if s := oasDeref(doc, mt["schema"]); s["type"] == "object" && s["additionalProperties"] != false {
					t.Error("request body schema lacks additionalProperties: false")
				}
			}

			responses, _ := o.Op["responses"].(map[string]any)
			if len(responses) == 0 {
				t.Fatal("no responses")
			}
			for status, rv := range responses {
				if !oasStatus.MatchString(status) {
					t.Errorf("response key %q is not a status", status)
				}
				res := oasDeref(doc, rv)
				if d, _ := res["description"].(string); d == "" {
					t.Errorf("response %s has no description", status)
				}
				hs, _ := res["headers"].(map[string]any)
				h, _ := hs["X-Request-Id"].(map[string]any)
				if h["$ref"] != "#/components/headers/X-Request-Id" {
					t.Errorf("response %s does not reference the shared X-Request-Id header", status)
				}
				if _, ok := hs["Retry-After"]; status == "429" && !ok {
					t.Error("429 does not declare Retry-After")
				}
				for _, hname := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
					if _, ok := hs[hname]; ok {
						t.Errorf("response %s declares %s, which is never sent", status, hname)
					}
				}
			}

			// Every security requirement names a declared scheme.
			for _, req := range oasSecurity(doc, o.Op) {
				for name := range req {
					if _, ok := schemeMap[name]; !ok {
						t.Errorf("security scheme %q is not in components.securitySchemes", name)
					}
				}
			}
		})
	}

	t.Run("security matches each route's credential", func(t *testing.T) {
		byKey := map[string]oasOp{}
		for _, o := range ops {
			byKey[o.key()] = o
		}
		for _, r := range httpapi.Routes() {
			key := strings.ToUpper(r.Method) + " " + oasPattern(r.Path)
			o, ok := byKey[key]
			if !ok {
				continue // reported by TestOpenAPIMatchesServedRoutes
			}
			sec := oasSecurity(doc, o.Op)
			optional, names := false, map[string]bool{}
			for _, req := range sec {
				if len(req) == 0 {
					optional = true
				}
				for n := range req {
					names[n] = true
				}
			}
			switch {
			case r.Auth == "none":
				if len(names) > 0 {
					t.Errorf("%s needs no credential but documents security %v", key, sec)
				}
			case len(names) == 0:
				t.Errorf("%s requires %s but documents no security", key, r.Auth)
			default:
				if want, known := oasSchemeFor[r.Auth]; known && !names[want] {
					t.Errorf("%s requires %s: security %v lacks scheme %q", key, r.Auth, sec, want)
				}
				if wantOptional := r.Auth == "optional_subscriber"; optional != wantOptional {
					t.Errorf("%s (%s): an empty security requirement {} must be listed iff the credential is optional; got %v", key, r.Auth, sec)
				}
			}
		}
	})
}

// oasSecurity is an operation's effective security: its own, else the document's.
func oasSecurity(doc map[string]any, op map[string]any) []map[string]any {
	raw, ok := op["security"]
	if !ok {
		raw = doc["security"]
	}
	list, _ := raw.([]any)
	out := make([]map[string]any, 0, len(list))
	for _, r := range list {
		m, _ := r.(map[string]any)
		out = append(out, m)
	}
	return out
}

// Markup that would make the docs page load something: any external URL in an attribute or
// in CSS, a script file, or a <link> to another host.
var (
	oasExternal   = regexp.MustCompile(`(?i)(\b(src|href|action|srcset|poster|data)\s*=\s*["']?\s*(https?:|//)|url\(\s*["']?\s*(https?:|//)|@import)`)
	oasScriptSrc  = regexp.MustCompile(`(?i)<script[^>]*\bsrc\s*=`)
	oasLinkTag    = regexp.MustCompile(`(?i)<link\b[^>]*>`)
	oasExternHref = regexp.MustCompile(`(?i)href\s*=\s*["']?\s*(https?:|//)`)
)

func TestOpenAPIServedAndDocsPage(t *testing.T) {
	t.Parallel()
	doc, raw := oasLoad(t)
	s := apptest.Start(t, testdb.MigratedURL(t, "sqlite", testdb.AppSchema))
	tests := []struct {
		name  string
		path  string
		ctype string
		check func(t *testing.T, body []byte)
	}{
		{"the document is served as shipped", "/openapi.json", "application/json", func(t *testing.T, body []byte) {
			if !bytes.Equal(body, raw) {
				t.Errorf("served document (%d bytes) differs from %s (%d bytes)", len(body), oasFile, len(raw))
			}
		}},
		{"the docs page lists every path and stays self-contained", "/docs", "text/html", func(t *testing.T, body []byte) {
			page := string(body)
			if !strings.Contains(page, "<html lang=") {
				t.Error("page has no <html lang=…>")
			}
			for path := range doc["paths"].(map[string]any) {
				if !strings.Contains(page, template.HTMLEscapeString(path)) {
					t.Errorf("page does not show path %s", path)
				}
			}
			if oasScriptSrc.MatchString(page) {
				t.Error("page loads a script file")
			}
			for _, link := range oasLinkTag.FindAllString(page, -1) {
				if oasExternHref.MatchString(link) {
					t.Errorf("page links an external resource: %s", link)
				}
			}
			if m := oasExternal.FindString(page); m != "" {
				t.Errorf("page references an external URL: %q", m)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.Do(apptest.Request{Method: "GET", Path: tt.path})
			if res.Status != 200 {
				t.Fatalf("GET %s: %d %.300s", tt.path, res.Status, res.Raw)
			}
			if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, tt.ctype) {
				t.Errorf("Content-Type %q, want %s", ct, tt.ctype)
			}
			if res.Header.Get("X-Request-Id") == "" {
				t.Error("no X-Request-Id")
			}
			tt.check(t, res.Raw)
		})
	}
}
