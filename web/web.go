// Package web renders subprov's server-rendered pages: the sandbox payment page a marketplace
// shopper pays on, the booking page a customer picks an installation slot on, and the password
// page that set-up, activation and reset links open. Pages are plain html/template with one
// shared layout and stylesheet, no script and no external asset, so they work with a keyboard,
// a screen reader and no network beyond subprov itself.
package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"

	"github.com/subprov/subprov/locale"
)

//go:embed templates/*.html
var files embed.FS

// Page is what every template receives: the document title, the language it is written in
// and the page's own data. Templates write text with {{$.T "key" args…}} (package locale).
type Page struct {
	Title string
	Lang  locale.Lang
	Data  any
}

// T is the catalogue's text for key in the page's language.
func (p Page) T(key string, args ...any) string { return p.Lang.T(key, args...) }

// Renderer holds the parsed pages: each page file is parsed on a clone of the layout, so every
// page defines its own "content" block.
type Renderer struct {
	pages map[string]*template.Template
}

// funcs are the helpers templates may call.
var funcs = template.FuncMap{
	"join": strings.Join,
}

// NewRenderer parses the layout and every page under templates/.
func NewRenderer() (*Renderer, error) {
	layout, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html")
	if err != nil {
		return nil, fmt.Errorf("parse layout: %w", err)
	}
	names, err := fs.Glob(files, "templates/*.html")
	if err != nil {
		return nil, err
	}
	r := &Renderer{pages: map[string]*template.Template{}}
	for _, n := range names {
		name := strings.TrimSuffix(strings.TrimPrefix(n, "templates/"), ".html")
		if name == "layout" {
			continue
		}
		t, err := template.Must(layout.Clone()).ParseFS(files, n)
		if err != nil {
			return nil, fmt.Errorf("parse page %s: %w", name, err)
		}
		r.pages[name] = t
	}
	return r, nil
}

// MustRenderer is NewRenderer for package-level use; the templates are embedded, so a parse
// error is a build defect caught by the package's tests.
func MustRenderer() *Renderer {
	r, err := NewRenderer()
	if err != nil {
		panic(err)
	}
	return r
}

// Render writes page with status. The page is rendered to a buffer first, so a template error
// never leaves a half-written page behind.
func (r *Renderer) Render(w http.ResponseWriter, status int, page string, p Page) error {
	t, ok := r.pages[page]
	if !ok {
		return fmt.Errorf("web: no page %q", page)
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout.html", p); err != nil {
		return fmt.Errorf("render %s: %w", page, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, err := w.Write(buf.Bytes())
	return err
}

// Message renders the shared "message" page: a heading and a sentence, for outcomes such as an
// unknown link, an expired session or a paused booking.
func (r *Renderer) Message(w http.ResponseWriter, status int, l locale.Lang, title, text string) error {
	return r.Render(w, status, "message", Page{Title: title, Lang: l, Data: text})
}
