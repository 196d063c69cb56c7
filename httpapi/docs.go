package httpapi

import (
	_ "embed"
	"encoding/json"
	"html/template"
	"net/http"
	"sort"
	"strings"
)

// openAPIDoc is the OpenAPI 3 document of everything served; a test keeps it and the route
// table in step.
//
//go:embed openapi.json
var openAPIDoc []byte

// OpenAPIDocument is the OpenAPI document the service serves at /openapi.json, for the test
// client that checks every answer against it.
func OpenAPIDocument() []byte { return openAPIDoc }

// handleOpenAPI: GET /openapi.json.
func (s *server) handleOpenAPI(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, err := w.Write(openAPIDoc)
	return err
}

// docsOperation is one operation as the docs page shows it.
type docsOperation struct {
	Method, Path, Summary, Description, Auth, Tag string
	Params                                        []string
}

var docsTemplate = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} — API reference</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:60rem;margin:0 auto;padding:1rem 1.5rem;color:#1a1a1a}
h1{font-size:1.6rem}h2{margin-top:2rem;border-bottom:1px solid #ddd}
.op{border:1px solid #ddd;border-radius:6px;padding:.6rem .9rem;margin:.6rem 0}
.m{display:inline-block;min-width:4.2rem;font-weight:700;font-family:monospace}
.GET{color:#0b6e2e}.POST{color:#0b4fa8}.PATCH{color:#8a5a00}.DELETE{color:#a00}
code{font-family:monospace;background:#f4f4f4;padding:0 .2rem}
nav a{margin-right:1rem}
a:focus,summary:focus{outline:3px solid #0b4fa8}
</style></head><body>
<header><h1>{{.Title}} <small>{{.Version}}</small></h1>
<p>{{.Description}}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>
<nav aria-label="Sections">{{range .Tags}}<a href="#{{.}}">{{.}}</a>{{end}}</nav></header>
<main>{{range $tag, $ops := .ByTag}}<section id="{{$tag}}"><h2>{{$tag}}</h2>
{{range $ops}}<div class="op"><details><summary><span class="m {{.Method}}">{{.Method}}</span> <code>{{.Path}}</code> — {{.Summary}}</summary>
<p>{{.Description}}</p><p><strong>Credential:</strong> {{.Auth}}</p>
{{if .Params}}<p><strong>Parameters:</strong> {{range .Params}}<code>{{.}}</code> {{end}}</p>{{end}}
</details></div>{{end}}</section>{{end}}</main></body></html>`))

// handleDocs: GET /docs, the API reference rendered from the OpenAPI document on the server,
// so it needs no script or asset from the internet.
func (s *server) handleDocs(w http.ResponseWriter, r *http.Request) error {
	var doc struct {
		Info struct {
			Title, Version, Description string
		} `json:"info"`
		Paths map[string]map[string]struct {
			Summary     string                `json:"summary"`
			Description string                `json:"description"`
			Tags        []string              `json:"tags"`
			Security    []map[string][]string `json:"security"`
			Parameters  []struct {
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		return err
	}
	byTag := map[string][]docsOperation{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			tag := "Other"
			if len(op.Tags) > 0 {
				tag = op.Tags[0]
			}
			var auth []string
			for _, sec := range op.Security {
				for k := range sec {
					auth = append(auth, k)
				}
			}
			if len(auth) == 0 {
				auth = []string{"none"}
			}
			var params []string
			for _, p := range op.Parameters {
				params = append(params, p.In+":"+p.Name)
			}
			byTag[tag] = append(byTag[tag], docsOperation{Method: strings.ToUpper(method), Path: path, Summary: op.Summary,
				Description: op.Description, Auth: strings.Join(auth, " or "), Tag: tag, Params: params})
		}
	}
	var tags []string
	for t, ops := range byTag {
		tags = append(tags, t)
		sort.Slice(ops, func(i, j int) bool {
			if ops[i].Path != ops[j].Path {
				return ops[i].Path < ops[j].Path
			}
			return ops[i].Method < ops[j].Method
		})
	}
	sort.Strings(tags)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	return docsTemplate.Execute(w, map[string]any{"Title": doc.Info.Title, "Version": doc.Info.Version,
		"Description": doc.Info.Description, "Tags": tags, "ByTag": byTag})
}
