package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/httpapi/api"
)

//go:embed templates/*.html templates/parts/*.html
var templateFiles embed.FS

//go:embed assets
var assetFiles embed.FS

// View is what every template is given: who is signed in, the navigation, the form's CSRF
// token, the flash message a redirect left, a refused form's input and errors, and the page's
// own Data.
type View struct {
	Title    string
	Operator *subprov.Operator // nil on the sign-in page
	Nav      []navItem
	CSRF     string
	Flash    string
	// Form is the input of a refused form, shown again; Errors its problems by field name
	// ("" for the form as a whole).
	Form   url.Values
	Errors map[string]string
	// Loc is the time zone dates are shown in: the operator's provider's, UTC for a platform
	// operator (a page listing several providers' objects passes each row's own).
	Loc  *time.Location
	Data any

	ctx context.Context
}

// Can reports whether the signed-in operator's role holds the permission named perm
// ("line_actions", subprov.Permission's names): a template renders a control only when it is
// true ({{if $.Can "line_actions"}}). The route refuses the form anyway.
func (v *View) Can(perm string) bool {
	if v.Operator == nil {
		return false
	}
	for _, p := range subprov.Permissions {
		if p.String() == perm {
			return v.Operator.Role.Can(p)
		}
	}
	return perm == subprov.PermNone.String()
}

// Value is the refused form's input for field, to fill it in again.
func (v *View) Value(field string) string { return v.Form.Get(field) }

// Refuse keeps a refused form's input (but for the fields in secret, never sent back) and maps
// a capability's error to its fields: a 422's field list to the fields, any other refusal to
// the form as a whole. It returns the status to answer with; an internal error is returned
// for the caller to fail with.
func (v *View) Refuse(r *http.Request, err error, secret ...string) (int, error) {
	var e *subprov.Error
	if !errors.As(err, &e) || e.Code == subprov.EINTERNAL {
		return 0, err
	}
	v.Form = url.Values{}
	for k, vs := range r.PostForm {
		if k != csrfField && !contains(secret, k) {
			v.Form[k] = vs
		}
	}
	v.Errors = map[string]string{}
	for f, p := range e.Fields {
		v.Errors[f] = p
	}
	if len(e.Fields) == 0 {
		v.Errors[""] = e.Message
	}
	return api.Status(e.Code), nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// viewOf starts the view of a request: the session's operator, navigation and CSRF token, and
// the flash message left for it.
func (h *Handler) viewOf(r *http.Request, sess *auth.ConsoleSession) *View {
	v := &View{Loc: time.UTC, ctx: r.Context()}
	if sess != nil {
		v.Operator, v.CSRF = sess.Operator, sess.CSRFToken
		v.Nav = h.navFor(sess.Operator.Role, r.URL.Path)
	}
	if c, err := r.Cookie(flashCookie); err == nil {
		v.Flash, _ = url.QueryUnescape(c.Value)
	}
	return v
}

// loadProvider sets the view's time zone to the operator's provider's.
func (v *View) loadProvider(ctx context.Context, h *Handler) {
	if v.Operator.Platform() || h.Ops == nil || h.Ops.Providers == nil {
		return
	}
	if p, err := h.Ops.Providers.Get(ctx, v.Operator, v.Operator.ProviderID); err == nil {
		v.Loc = p.Location()
	}
}

// funcs are the templates' helpers: dates in a time zone, money with its currency, and the
// versioned address of an asset.
var funcs = template.FuncMap{
	// date is t's day and time in loc: {{date $.Loc .CreatedAt}}.
	"date": func(loc *time.Location, t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.In(loc).Format("2 Jan 2006 15:04 MST")
	},
	// day is t's day in loc.
	"day": func(loc *time.Location, t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.In(loc).Format("2 Jan 2006")
	},
	// money is an amount with its currency code, as invoices print it: {{money .Currency .Total}}.
	"money": func(currency string, m subprov.Money) string {
		return strings.TrimSpace(m.String() + " " + strings.ToUpper(currency))
	},
	"asset": func(name string) string { return Prefix + "assets/" + assetVersion + "/" + name },
}

// pages are the parsed templates by page name: the layout with the page's file.
var pages = parsePages()

func parsePages() map[string]*template.Template {
	// The layout and the parts pages share (templates/parts: a list's filters, pager and table,
	// a new object's provider field).
	layout := template.Must(template.New("layout.html").Funcs(funcs).ParseFS(templateFiles, "templates/layout.html", "templates/parts/*.html"))
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, n := range names {
		name := strings.TrimSuffix(path.Base(n), ".html")
		if name == "layout" {
			continue
		}
		out[name] = template.Must(template.Must(layout.Clone()).ParseFS(templateFiles, n))
	}
	return out
}

// render answers with page: the whole page in the layout, or, for an htmx request of a page
// that defines a "results" fragment, that fragment alone. It renders to a buffer first, so a
// failing template answers a clean error instead of half a page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, v *View, status int, page string) {
	t := pages[page]
	name := "layout.html"
	if r.Header.Get("HX-Request") == "true" && t.Lookup("results") != nil {
		name = "results"
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, v); err != nil {
		if h.Log != nil {
			h.Log.ErrorContext(r.Context(), "console template", "page", page, "err", err)
		}
		http.Error(w, "Something went wrong on our side. Please try again.", http.StatusInternalServerError)
		return
	}
	if v.Flash != "" {
		clearCookie(w, r, h, flashCookie)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// assetVersion names the assets' current content: a hash of every file, so that a new build
// with a changed asset serves it at a new address and the year-long cache never serves a stale
// one.
var assetVersion = func() string {
	sum := sha256.New()
	var names []string
	_ = fs.WalkDir(assetFiles, "assets", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			names = append(names, p)
		}
		return err
	})
	sort.Strings(names)
	for _, n := range names {
		b, _ := assetFiles.ReadFile(n)
		fmt.Fprintf(sum, "%s %d\n", n, len(b))
		sum.Write(b)
	}
	return hex.EncodeToString(sum.Sum(nil))[:12]
}()

// asset serves an embedded asset at its versioned address, cached for a year.
func (h *Handler) asset(w http.ResponseWriter, r *http.Request, _ *View) error {
	name := r.PathValue("name")
	b, err := assetFiles.ReadFile("assets/" + name)
	if r.PathValue("version") != assetVersion || err != nil || strings.HasSuffix(name, ".md") {
		return subprov.Errorf(subprov.ENOTFOUND, "not_found", "There is no such page.")
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "text/plain; charset=utf-8"
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
	_, _ = w.Write(b)
	return nil
}
