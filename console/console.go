// Package console is the operator web console (/console/, docs/console.md): pages rendered on
// the server from embedded templates, over the same capabilities the operations surface
// (/api/v1) calls. It adds no rule of its own: every page reads, and every form calls, the
// capability service its API route calls, with the signed-in operator, and the capability
// checks role and scope and writes the audit entry. The console only keeps the session
// (package auth), checks each route's permission and the forms' CSRF token, and renders.
//
// A page is one handler file and one template: add its route to routes.go (method, path, the
// permission it needs and, for a section of the navigation, its label), its handler, and
// templates/<name>.html defining "title" and "content".
package console

import (
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/httpapi/ops"
	"github.com/subprov/subprov/install"
)

// Handler serves the console.
type Handler struct {
	Log  *slog.Logger
	Auth *auth.Service
	// Ops holds the capabilities the console's pages call: the operations surface's.
	Ops *ops.Handler
	// ClientIP is the address of the client that sent r, as the API's middleware reads it
	// (behind a trusted proxy, the one it forwarded): the limits on guessing and the audit
	// log record it.
	ClientIP func(r *http.Request) string
	// HTTPS reports whether r came over HTTPS (directly, by the public URL, or through a
	// trusted proxy): the session cookie is then Secure.
	HTTPS func(r *http.Request) bool
	// Install is the install queue's capability (the API's /api/v1/install-jobs routes call it).
	Install *install.Service
	// SignInFailures limits the sign-in form's failed attempts from r's client IP, in the
	// budget of the API's operator login, so that failures at either count together. It takes
	// the attempt's place, or says how long to wait when the client has used the budget up;
	// the attempt's outcome, given to end, keeps the place for a wrong secret and gives it back
	// otherwise. Nil limits nothing here; the limits on each login (auth) hold anyway.
	SignInFailures func(r *http.Request) (wait time.Duration, end func(err error))

	once sync.Once
	mux  *http.ServeMux
}

// Prefix is where the console is served.
const Prefix = "/console/"

// Cookies: the session's, the sign-in form's pre-session CSRF token, and the one-time flash
// message a redirect leaves for the next page.
const (
	sessionCookie = "subprov_console"
	signInCookie  = "subprov_console_signin"
	flashCookie   = "subprov_console_flash"
)

// csrfField is the hidden field every form carries its CSRF token in.
const csrfField = "csrf"

// maxForm bounds a console form's body.
const maxForm = 64 << 10

// contentSecurityPolicy is the console's policy: scripts, styles and requests from the console
// itself only, nothing inline (no <script>, no style="", no on* attribute runs), no framing.
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// ServeHTTP serves every path under Prefix.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hd := w.Header()
	hd.Set("Content-Security-Policy", contentSecurityPolicy)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("X-Frame-Options", "DENY")
	hd.Set("Referrer-Policy", "same-origin")
	hd.Set("Cache-Control", "no-store")
	h.once.Do(func() {
		h.mux = http.NewServeMux()
		for _, rt := range h.routes() {
			h.mux.Handle(rt.method+" "+rt.pattern(), h.adapt(rt))
		}
		h.mux.Handle(Prefix, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.fail(w, r, h.viewOf(r, nil), subprov.Errorf(subprov.ENOTFOUND, "not_found", "There is no such page."))
		}))
	})
	h.mux.ServeHTTP(w, r)
}

// adapt wraps a route's handler: the session and its operator (read on every request), the
// route's permission, the CSRF token of a POST, the request's audit context, and the answer
// to an error.
func (h *Handler) adapt(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		var sess *auth.ConsoleSession
		if !rt.public {
			var err error
			sess, err = h.session(r)
			if err != nil {
				if subprov.ErrorCode(err) != subprov.EUNAUTHORIZED {
					h.fail(w, r, h.viewOf(r, nil), err)
					return
				}
				clearCookie(w, r, h, sessionCookie)
				h.redirect(w, r, signInPath(r), "")
				return
			}
		}
		v := h.viewOf(r, sess)
		if sess != nil && !sess.Operator.Role.Can(rt.perm) {
			h.fail(w, r, v, subprov.Forbidden())
			return
		}
		if r.Method == http.MethodPost {
			read := api.ReadForm
			if rt.upload {
				read = readUpload
			}
			if err := read(w, r, maxForm); err != nil {
				h.fail(w, r, v, err)
				return
			}
			if sess != nil && !sess.CheckCSRF(r.PostForm.Get(csrfField)) {
				h.fail(w, r, v, badCSRF())
				return
			}
		}
		actor := subprov.Actor{}
		if sess != nil {
			actor = subprov.OperatorActor(sess.Operator)
			v.loadProvider(ctx, h)
		}
		ctx = subprov.WithRequest(ctx, subprov.Request{ID: api.RequestID(r), IP: h.ClientIP(r), Actor: actor})
		v.ctx = ctx
		if err := rt.handle(w, r.WithContext(ctx), v); err != nil {
			h.fail(w, r, v, err)
		}
	})
}

// badCSRF is the answer to a form without its session's CSRF token: nothing is done.
func badCSRF() error {
	return subprov.Errorf(subprov.EFORBIDDEN, "csrf", "This form has expired or did not come from the console. Go back, reload the page and try again.")
}

// session is r's live console session, or an EUNAUTHORIZED error.
func (h *Handler) session(r *http.Request) (*auth.ConsoleSession, error) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return nil, subprov.Errorf(subprov.EUNAUTHORIZED, "unauthorized", "Not signed in")
	}
	return h.Auth.ConsoleSession(r.Context(), c.Value)
}

// signInPath is the sign-in page, with the page to return to after it for a GET.
func signInPath(r *http.Request) string {
	if r.Method != http.MethodGet || r.URL.Path == Prefix {
		return Prefix + "sign-in"
	}
	return Prefix + "sign-in?next=" + url.QueryEscape(r.URL.RequestURI())
}

// localPath is next when it is a path of the console (the sign-in form's return address),
// else the home page: a sign-in never sends the browser elsewhere.
func localPath(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(u.Path, Prefix) || strings.HasPrefix(next, "//") ||
		strings.Contains(next, "\\") {
		return Prefix
	}
	return u.RequestURI()
}

// redirect answers a form with 303 See Other to path, leaving flash (if any) for the page it
// shows.
func (h *Handler) redirect(w http.ResponseWriter, r *http.Request, path, flash string) {
	if flash != "" {
		h.setCookie(w, r, flashCookie, url.QueryEscape(flash), time.Minute)
	}
	http.Redirect(w, r, path, http.StatusSeeOther)
}

// setCookie sets one of the console's cookies: HttpOnly, SameSite=Strict, for the console's
// paths only, Secure over HTTPS; maxAge 0 keeps it for the browser's session only.
func (h *Handler) setCookie(w http.ResponseWriter, r *http.Request, name, value string, maxAge time.Duration) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: value, Path: Prefix, HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: h.HTTPS != nil && h.HTTPS(r), MaxAge: int(maxAge.Seconds())})
}

// clearCookie removes one of the console's cookies.
func clearCookie(w http.ResponseWriter, r *http.Request, h *Handler, name string) {
	http.SetCookie(w, &http.Cookie{Name: name, Value: "", Path: Prefix, HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: h.HTTPS != nil && h.HTTPS(r), MaxAge: -1})
}

// fail answers an error as a page: its status and its caller-safe message; an internal error
// is logged and shown as a plain apology.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, v *View, err error) {
	code := subprov.ErrorCode(err)
	msg := "Something went wrong on our side. Please try again."
	var e *subprov.Error
	if errors.As(err, &e) && code != subprov.EINTERNAL {
		msg = e.Message
	} else if h.Log != nil {
		h.Log.ErrorContext(r.Context(), "console", "path", r.URL.Path, "request_id", api.RequestID(r), "err", err)
	}
	v.Title, v.Data = "Error", msg
	h.render(w, r, v, api.Status(code), "error")
}
