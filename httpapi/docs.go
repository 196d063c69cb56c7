package httpapi

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
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
	Method, Path, Summary, Auth, Tag string
	Description                      template.HTML
	Params                           []string
	// Mirrors are the other paths serving the same route (a /partner route's /api/v1 form),
	// listed with it rather than as operations of their own.
	Mirrors []string
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
.mirror{color:#444;font-size:.9rem}
table{border-collapse:collapse}th,td{border:1px solid #ddd;padding:.2rem .5rem;text-align:left}
a:focus,summary:focus{outline:3px solid #0b4fa8}
</style></head><body>
<header><h1>{{.Title}} <small>{{.Version}}</small></h1>
{{.Description}}
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1).</p>
<nav aria-label="Sections">{{range .Tags}}<a href="#{{.}}">{{.}}</a>{{end}}</nav></header>
<main>{{range $tag, $ops := .ByTag}}<section id="{{$tag}}"><h2>{{$tag}}</h2>
{{range $ops}}<div class="op"><details><summary><span class="m {{.Method}}">{{.Method}}</span> <code>{{.Path}}</code> — {{.Summary}}</summary>
{{if .Mirrors}}<p class="mirror">Also at {{range $i, $p := .Mirrors}}{{if $i}}, {{end}}<code>{{$p}}</code>{{end}}, with the same credential, answers and rate limit.</p>{{end}}
{{.Description}}<p><strong>Credential:</strong> {{.Auth}}</p>
{{if .Params}}<p><strong>Parameters:</strong> {{range .Params}}<code>{{.}}</code> {{end}}</p>{{end}}
</details></div>{{end}}</section>{{end}}</main></body></html>`))

// handleDocs: GET /docs, the API reference rendered from the OpenAPI document on the server,
// so it needs no script or asset from the internet.
func (s *server) handleDocs(w http.ResponseWriter, r *http.Request) error {
	page, err := s.docsPage()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, err = w.Write(page)
	return err
}

// renderDocs renders the docs page; a /partner route's /api/v1 mirror is noted on it rather
// than listed again.
func (s *server) renderDocs() ([]byte, error) {
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
		return nil, fmt.Errorf("docs page: %w", err)
	}
	mirrors, mirrored := s.docsMirrors()
	byTag := map[string][]docsOperation{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			method = strings.ToUpper(method)
			if primary, ok := mirrored[method+" "+path]; ok {
				if _, documented := doc.Paths[primary][strings.ToLower(method)]; documented {
					continue // listed with the route it mirrors
				}
			}
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
			var also []string
			for _, m := range mirrors[method+" "+path] {
				if _, documented := doc.Paths[m][strings.ToLower(method)]; documented {
					also = append(also, m)
				}
			}
			byTag[tag] = append(byTag[tag], docsOperation{Method: method, Path: path, Summary: op.Summary,
				Description: renderMarkdown(op.Description), Auth: strings.Join(auth, " or "), Tag: tag, Params: params, Mirrors: also})
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
	var page bytes.Buffer
	if err := docsTemplate.Execute(&page, map[string]any{"Title": doc.Info.Title, "Version": doc.Info.Version,
		"Description": renderMarkdown(doc.Info.Description), "Tags": tags, "ByTag": byTag}); err != nil {
		return nil, fmt.Errorf("docs page: %w", err)
	}
	return page.Bytes(), nil
}

// docsMirrors reads the route table for the paths that serve one route twice: mirrors maps
// "METHOD /partner/…" to its other paths, mirrored maps "METHOD /api/v1/…" to the path it mirrors.
func (s *server) docsMirrors() (mirrors map[string][]string, mirrored map[string]string) {
	mirrors, mirrored = map[string][]string{}, map[string]string{}
	for _, rt := range s.routes {
		paths := rt.paths()
		for _, p := range paths[1:] {
			mirrors[rt.method+" "+paths[0]] = append(mirrors[rt.method+" "+paths[0]], p)
			mirrored[rt.method+" "+p] = paths[0]
		}
	}
	return mirrors, mirrored
}
