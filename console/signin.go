package console

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/identity"
)

// signInLifetime is how long the sign-in form's pre-session CSRF token lasts.
const signInLifetime = 30 * time.Minute

// signInPage: GET /console/sign-in. A signed-in operator goes home; anyone else gets the form
// with a fresh pre-session CSRF token, in a cookie and in the form alike.
func (h *Handler) signInPage(w http.ResponseWriter, r *http.Request, v *View) error {
	if _, err := h.session(r); err == nil {
		h.redirect(w, r, Prefix, "")
		return nil
	}
	v.Form = r.URL.Query()
	h.signInForm(w, r, v, http.StatusOK)
	return nil
}

// signInForm renders the sign-in form with a new pre-session CSRF token.
func (h *Handler) signInForm(w http.ResponseWriter, r *http.Request, v *View, status int) {
	v.CSRF = identity.NewToken(32)
	h.setCookie(w, r, signInCookie, v.CSRF, signInLifetime)
	v.Title = "Sign in"
	h.render(w, r, v, status, "sign_in")
}

// signIn: POST /console/sign-in. The check, its limits on guessing and its audit entries are
// the API login's (auth.StartConsoleSession), and so is the limit on one client IP's failures
// (SignInFailures), counted with the API login's. A refusal keeps the e-mail and the code, not
// the password: a wrong e-mail, password or code is the one generic answer, and a client or a
// login over its limits is 429 with how long to wait.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request, v *View) error {
	c, err := r.Cookie(signInCookie)
	if err != nil || !identity.EqualHash(c.Value, r.PostForm.Get(csrfField)) || c.Value == "" {
		return badCSRF()
	}
	raw, refusal := h.checkSignIn(r)
	if refusal == nil {
		clearCookie(w, r, h, signInCookie)
		h.setCookie(w, r, sessionCookie, raw, 0)
		h.redirect(w, r, localPath(r.PostForm.Get("next")), "")
		return nil
	}
	status, err := v.Refuse(r, refusal, "password")
	if err != nil {
		return err
	}
	switch status {
	case http.StatusUnauthorized:
		v.Errors = map[string]string{"": "The e-mail, password or code is not right."}
	case http.StatusTooManyRequests:
		secs := 60
		var e *subprov.Error
		if errors.As(refusal, &e) {
			if n, ok := e.Extra["retry_after"].(int); ok {
				secs = n
			}
		}
		w.Header().Set("Retry-After", strconv.Itoa(secs))
		v.Errors = map[string]string{"": "Too many failed sign-ins. Wait " + waitFor(secs) + " before trying again: until then no sign-in is checked."}
	}
	h.signInForm(w, r, v, status)
	return nil
}

// checkSignIn checks the form's e-mail, password and code under the client's limit on
// failures: a client that has used it up is refused before anything is checked, and the
// check's outcome is counted. It returns the new session's cookie value.
func (h *Handler) checkSignIn(r *http.Request) (raw string, err error) {
	if h.SignInFailures != nil {
		wait, end := h.SignInFailures(r)
		if wait > 0 {
			return "", auth.RateLimited(wait)
		}
		defer func() { end(err) }()
	}
	f := r.PostForm
	raw, _, err = h.Auth.StartConsoleSession(r.Context(), f.Get("email"), f.Get("password"), f.Get("code"), h.ClientIP(r))
	return raw, err
}

// waitFor says a wait of secs seconds in words: "1 second", "40 seconds", "2 minutes".
func waitFor(secs int) string {
	switch {
	case secs <= 1:
		return "1 second"
	case secs < 120:
		return strconv.Itoa(secs) + " seconds"
	default:
		return strconv.Itoa((secs+59)/60) + " minutes"
	}
}

// signOut: POST /console/sign-out.
func (h *Handler) signOut(w http.ResponseWriter, r *http.Request, v *View) error {
	c, err := r.Cookie(sessionCookie)
	if err == nil {
		if err := h.Auth.EndConsoleSession(r.Context(), c.Value); err != nil {
			return err
		}
	}
	clearCookie(w, r, h, sessionCookie)
	h.redirect(w, r, Prefix+"sign-in", "You are signed out.")
	return nil
}
