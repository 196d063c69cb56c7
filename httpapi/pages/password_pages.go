package pages

import (
	"net/http"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/web"
)

// The password pages: where the links in set-up, activation and password-reset
// mails lead (auth.TokenKind.Path). Each shows a form for a new password and sets it through
// the same service call as the JSON routes (/partner/subscriber/auth/activate and
// password-reset/confirm), so a person who follows the link from the mail needs nothing else.

// passwordPage is one kind of link's page.
type passwordPage struct {
	title, intro, button string
	kinds                []auth.TokenKind // the links it accepts
}

// passwordPages are the pages by path.
var passwordPages = map[string]passwordPage{
	auth.TokenPasswordReset.Path: {
		title: "Choose a new password", intro: "Choose the new password of your internet account.", button: "Change password",
		kinds: auth.ResetLinks,
	},
	auth.TokenSetup.Path: { // the activation link's path too
		title: "Set your password", intro: "Choose the password you will sign in with, together with your e-mail address.", button: "Set password",
		kinds: auth.ActivationLinks,
	},
}

// maxPasswordForm bounds the password form body.
const maxPasswordForm = 8 << 10

// passwordForm is what password.html receives.
type passwordForm struct {
	Intro, Button, Action, Token, Error string
	MinLength                           int
}

func (p passwordPage) render(w http.ResponseWriter, status int, action, token, problem string) error {
	return api.Pages.Render(w, status, "password", web.Page{Title: p.title, Data: passwordForm{
		Intro: p.intro, Button: p.button, Action: action, Token: token, Error: problem, MinLength: subprov.MinPasswordLength}})
}

// deadLink is the page of a link that is unknown, used or expired.
func deadLink(w http.ResponseWriter) error {
	return api.Pages.Message(w, http.StatusGone, "This link no longer works",
		"The link is invalid, was already used, or has expired. Ask for a new one: the password-reset form of the portal sends one to your e-mail address.")
}

// linkAnswer answers the error of a link check or of a password set: the dead link's page
// when the link is unknown, used or expired (a failed attempt, which the route's limit on
// failures counts), else the error itself.
func linkAnswer(w http.ResponseWriter, r *http.Request, err error) error {
	if auth.IsInvalidLink(err) {
		api.AttemptFailed(r)
		return deadLink(w)
	}
	return err
}

// PasswordPage: GET /portal/reset-password?token=… and /portal/activate?token=….
func (h *Handler) PasswordPage(w http.ResponseWriter, r *http.Request) error {
	p := passwordPages[r.URL.Path]
	token := strings.TrimSpace(r.URL.Query().Get("token"))
	if err := h.Auth.CheckLink(r.Context(), token, p.kinds...); err != nil {
		return linkAnswer(w, r, err)
	}
	return p.render(w, http.StatusOK, r.URL.Path, token, "")
}

// formProblem is what keeps the form's password from being set, for the person, or "".
func formProblem(password, repeat string) string {
	switch pp := subprov.PasswordProblem(password); {
	case pp == "required":
		return "Enter a new password."
	case pp != "":
		return "The password needs " + pp + "."
	case password != repeat:
		return "The two passwords differ. Type the same password twice."
	}
	return ""
}

// PasswordSet: POST of the same paths (form: token, password, repeat). A password that
// is refused shows the form again with the reason, unless the link is dead anyway; the link
// is used only by a password set, which checks it itself.
func (h *Handler) PasswordSet(w http.ResponseWriter, r *http.Request) error {
	p := passwordPages[r.URL.Path]
	if err := api.ReadForm(w, r, maxPasswordForm); err != nil {
		return err
	}
	token, password := strings.TrimSpace(r.PostForm.Get("token")), r.PostForm.Get("password")
	if problem := formProblem(password, r.PostForm.Get("repeat")); problem != "" {
		if err := h.Auth.CheckLink(r.Context(), token, p.kinds...); err != nil {
			return linkAnswer(w, r, err)
		}
		return p.render(w, http.StatusUnprocessableEntity, r.URL.Path, token, problem)
	}
	if err := h.Auth.SetPasswordWithLink(r.Context(), token, password, p.kinds...); err != nil {
		return linkAnswer(w, r, err)
	}
	return api.Pages.Message(w, http.StatusOK, "Your password is set",
		"You can now sign in to your internet account with your e-mail address and the new password.")
}
