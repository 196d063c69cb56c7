package apptest

import (
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/subprov/subprov/httpapi"
)

// The OpenAPI document is the reference partners build against, so every answer a test
// receives is checked against it: a JSON answer against the schema the document gives for its
// route, method and status, any other answer (a page, a PDF, the metrics) for its content type
// only. The validator covers the JSON Schema keywords the document uses; "format" is an
// annotation, as JSON Schema 2020-12 has it by default, and is not checked.

// contract is the parsed document, shared by every test.
var contract = sync.OnceValues(func() (*openAPI, error) {
	var doc openAPI
	if err := json.Unmarshal(httpapi.OpenAPIDocument(), &doc.raw); err != nil {
		return nil, fmt.Errorf("parse the OpenAPI document: %w", err)
	}
	paths, _ := doc.raw["paths"].(map[string]any)
	for p := range paths {
		doc.templates = append(doc.templates, strings.Split(p, "/"))
	}
	return &doc, nil
})

type openAPI struct {
	raw       map[string]any
	templates [][]string
}

// checkAgainstContract reports how an answer to method path differs from what the document
// says of it; nothing when the path is not one the document lists (the tests of unknown paths
// and of the catch-all 404 and 405).
func checkAgainstContract(method, path string, status int, header http.Header, body []byte) []string {
	doc, err := contract()
	if err != nil {
		return []string{err.Error()}
	}
	tmpl := doc.match(path)
	if tmpl == "" {
		return nil
	}
	ops := doc.raw["paths"].(map[string]any)[tmpl].(map[string]any)
	op, ok := ops[strings.ToLower(method)].(map[string]any)
	if !ok {
		if status == http.StatusMethodNotAllowed {
			return nil
		}
		return []string{fmt.Sprintf("%s %s: the document lists no %s at %s", method, path, method, tmpl)}
	}
	responses, _ := op["responses"].(map[string]any)
	resp, ok := responses[strconv.Itoa(status)].(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s %s (%s): status %d is not in the document (body %.300s)", method, path, tmpl, status, body)}
	}
	resp = doc.resolve(resp)
	content, _ := resp["content"].(map[string]any)
	where := fmt.Sprintf("%s %s (%s) %d", method, path, tmpl, status)
	if len(content) == 0 {
		if len(body) > 0 && status != http.StatusNoContent {
			return []string{fmt.Sprintf("%s: the document gives no body, the answer has %.300s", where, body)}
		}
		return nil
	}
	ct, _, _ := mime.ParseMediaType(header.Get("Content-Type"))
	media, ok := content[ct].(map[string]any)
	if !ok {
		var listed []string
		for k := range content {
			listed = append(listed, k)
		}
		sort.Strings(listed)
		return []string{fmt.Sprintf("%s: content type %q, the document lists %v", where, ct, listed)}
	}
	if ct != "application/json" {
		return nil
	}
	schema, ok := media["schema"]
	if !ok {
		return nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return []string{fmt.Sprintf("%s: the answer is not JSON: %v", where, err)}
	}
	var problems []string
	doc.validate(schema, v, "$", func(at, msg string) {
		problems = append(problems, fmt.Sprintf("%s: %s: %s (body %.500s)", where, at, msg, body))
	})
	return problems
}

// match is the document's path template serving path, the one with the most literal
// segments when several do (/partner/location/details, not /partner/location/{x}).
func (doc *openAPI) match(path string) string {
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	segs := strings.Split(path, "/")
	best, bestLiterals := "", -1
	for _, t := range doc.templates {
		if len(t) != len(segs) {
			continue
		}
		literals := 0
		ok := true
		for i, s := range t {
			switch {
			case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
				ok = segs[i] != ""
			case s == segs[i]:
				literals++
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok && literals > bestLiterals {
			best, bestLiterals = strings.Join(t, "/"), literals
		}
	}
	return best
}

// resolve follows a local $ref ("#/components/…").
func (doc *openAPI) resolve(node map[string]any) map[string]any {
	for i := 0; i < 16; i++ {
		ref, ok := node["$ref"].(string)
		if !ok {
			return node
		}
		var cur any = doc.raw
		for _, part := range strings.Split(strings.TrimPrefix(ref, "#/"), "/") {
			m, _ := cur.(map[string]any)
			cur = m[part]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			return map[string]any{"not": map[string]any{}, "description": "unresolved " + ref}
		}
		node = next
	}
	return node
}

// validate reports through fail each way v breaks schema, at JSON path at.
func (doc *openAPI) validate(schema any, v any, at string, fail func(at, msg string)) {
	if b, ok := schema.(bool); ok {
		if !b {
			fail(at, "no value is allowed here")
		}
		return
	}
	s, ok := schema.(map[string]any)
	if !ok {
		return
	}
	if _, ok := s["$ref"]; ok {
		s = doc.resolve(s)
	}
	if _, ok := s["not"]; ok {
		fail(at, fmt.Sprintf("schema %v", s["description"]))
		return
	}
	if t, ok := s["type"]; ok && !typeAllows(t, v) {
		fail(at, fmt.Sprintf("want type %v, got %s", t, jsonType(v)))
		return
	}
	if c, ok := s["const"]; ok && !sameJSON(c, v) {
		fail(at, fmt.Sprintf("want %v, got %v", c, v))
	}
	if e, ok := s["enum"].([]any); ok {
		found := false
		for _, x := range e {
			found = found || sameJSON(x, v)
		}
		if !found {
			fail(at, fmt.Sprintf("%v is not one of %v", v, e))
		}
	}
	switch x := v.(type) {
	case map[string]any:
		doc.validateObject(s, x, at, fail)
	case []any:
		if min, ok := s["minItems"].(float64); ok && float64(len(x)) < min {
			fail(at, fmt.Sprintf("want at least %v items, got %d", min, len(x)))
		}
		if max, ok := s["maxItems"].(float64); ok && float64(len(x)) > max {
			fail(at, fmt.Sprintf("want at most %v items, got %d", max, len(x)))
		}
		if items, ok := s["items"]; ok {
			for i, item := range x {
				doc.validate(items, item, fmt.Sprintf("%s[%d]", at, i), fail)
			}
		}
	case string:
		n := float64(utf8.RuneCountInString(x))
		if min, ok := s["minLength"].(float64); ok && n < min {
			fail(at, fmt.Sprintf("want at least %v characters, got %q", min, x))
		}
		if max, ok := s["maxLength"].(float64); ok && n > max {
			fail(at, fmt.Sprintf("want at most %v characters, got %q", max, x))
		}
		if p, ok := s["pattern"].(string); ok {
			if re, err := regexp.Compile(p); err == nil && !re.MatchString(x) {
				fail(at, fmt.Sprintf("%q does not match %s", x, p))
			}
		}
	case float64:
		if min, ok := s["minimum"].(float64); ok && x < min {
			fail(at, fmt.Sprintf("want at least %v, got %v", min, x))
		}
		if max, ok := s["maximum"].(float64); ok && x > max {
			fail(at, fmt.Sprintf("want at most %v, got %v", max, x))
		}
	}
	if all, ok := s["allOf"].([]any); ok {
		for _, sub := range all {
			doc.validate(sub, v, at, fail)
		}
	}
	if any_, ok := s["anyOf"].([]any); ok && doc.matching(any_, v, at) == 0 {
		fail(at, "matches none of anyOf")
	}
	if one, ok := s["oneOf"].([]any); ok {
		if n := doc.matching(one, v, at); n != 1 {
			fail(at, fmt.Sprintf("matches %d of oneOf, want exactly 1", n))
		}
	}
}

func (doc *openAPI) validateObject(s map[string]any, x map[string]any, at string, fail func(at, msg string)) {
	props, _ := s["properties"].(map[string]any)
	if req, ok := s["required"].([]any); ok {
		for _, name := range req {
			if _, ok := x[name.(string)]; !ok {
				fail(at, fmt.Sprintf("missing required %q", name))
			}
		}
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if p, ok := props[k]; ok {
			doc.validate(p, x[k], at+"."+k, fail)
			continue
		}
		if ap, ok := s["additionalProperties"]; ok {
			doc.validate(ap, x[k], at+"."+k, func(at, msg string) {
				if ap == false {
					msg = "a property the document does not list"
				}
				fail(at, msg)
			})
		}
	}
}

// matching counts the schemas v satisfies.
func (doc *openAPI) matching(schemas []any, v any, at string) int {
	n := 0
	for _, sub := range schemas {
		ok := true
		doc.validate(sub, v, at, func(string, string) { ok = false })
		if ok {
			n++
		}
	}
	return n
}

func typeAllows(t any, v any) bool {
	switch t := t.(type) {
	case string:
		return typeIs(t, v)
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && typeIs(s, v) {
				return true
			}
		}
	}
	return false
}

func typeIs(t string, v any) bool {
	switch t {
	case "null":
		return v == nil
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		_, ok := v.(float64)
		return ok
	case "integer":
		f, ok := v.(float64)
		return ok && f == math.Trunc(f)
	}
	return false
}

func jsonType(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) {
			return "integer"
		}
		return "number"
	}
	return fmt.Sprintf("%T", v)
}

func sameJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}
