package console

import (
	"net/http"
	"time"

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
// the API login's (auth.StartConsoleSession); any failure is the one generic answer, with the
// e-mail and the code kept and the password not.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request, v *View) error {
	c, err := r.Cookie(signInCookie)
	if err != nil || !identity.EqualHash(c.Value, r.PostForm.Get(csrfField)) || c.Value == "" {
		return badCSRF()
	}
	f := r.PostForm
	raw, _, err := h.Auth.StartConsoleSession(r.Context(), f.Get("email"), f.Get("password"), f.Get("code"), h.ClientIP(r))
	if err != nil {
		status, err := v.Refuse(r, err, "password")
		if err != nil {
			return err
		}
		if status == http.StatusUnauthorized {
			v.Errors = map[string]string{"": "The e-mail, password or code is not right."}
		}
		h.signInForm(w, r, v, status)
		return nil
	}
	clearCookie(w, r, h, signInCookie)
	h.setCookie(w, r, sessionCookie, raw, 0)
	h.redirect(w, r, localPath(f.Get("next")), "")
	return nil
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
