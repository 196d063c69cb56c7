package pages

import (
	"net/http"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/web"
)

// The password pages: where the links in set-up, activation and password-reset
// mails lead (auth.TokenKind.Path). Each shows a form for a new password and sets it through
// the same service call as the JSON routes (/partner/subscriber/auth/activate and
// password-reset/confirm), so a person who follows the link from the mail needs nothing else.

// passwordPage is one kind of link's page; its texts are catalogue keys.
type passwordPage struct {
	title, intro, button string
	kinds                []auth.TokenKind // the links it accepts
}

// passwordPages are the pages by path.
var passwordPages = map[string]passwordPage{
	auth.TokenPasswordReset.Path: {
		title: "page.password.reset.title", intro: "page.password.reset.intro", button: "page.password.reset.button",
		kinds: auth.ResetLinks,
	},
	auth.TokenSetup.Path: { // the activation link's path too
		title: "page.password.set.title", intro: "page.password.set.intro", button: "page.password.set.button",
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

// pageLanguage is the language of a page opened without a login: the browser's, else English.
func pageLanguage(r *http.Request) locale.Lang {
	return locale.Choose("", r.Header.Get("Accept-Language"), "")
}

func (p passwordPage) render(w http.ResponseWriter, r *http.Request, status int, action, token, problem string) error {
	l := pageLanguage(r)
	return api.Pages.Render(w, status, "password", web.Page{Title: l.T(p.title), Lang: l, Data: passwordForm{
		Intro: l.T(p.intro), Button: l.T(p.button), Action: action, Token: token, Error: problem, MinLength: subprov.MinPasswordLength}})
}

// deadLink is the page of a link that is unknown, used or expired.
func deadLink(w http.ResponseWriter, r *http.Request) error {
	l := pageLanguage(r)
	return api.Pages.Message(w, http.StatusGone, l, l.T("page.password.dead.title"), l.T("page.password.dead.text"))
}

// linkAnswer answers the error of a link check or of a password set: the dead link's page
// when the link is unknown, used or expired (a failed attempt, which the route's limit on
// failures counts), else the error itself.
func linkAnswer(w http.ResponseWriter, r *http.Request, err error) error {
	if auth.IsInvalidLink(err) {
		api.AttemptFailed(r)
		return deadLink(w, r)
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
	return p.render(w, r, http.StatusOK, r.URL.Path, token, "")
}

// formProblem is what keeps the form's password from being set, for the person, or "".
func formProblem(l locale.Lang, password, repeat string) string {
	switch pp := subprov.PasswordProblem(password); {
	case pp == "required":
		return l.T("page.password.enter")
	case pp != "":
		return l.T("page.password.too_short", subprov.MinPasswordLength)
	case password != repeat:
		return l.T("page.password.differ")
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
	if problem := formProblem(pageLanguage(r), password, r.PostForm.Get("repeat")); problem != "" {
		if err := h.Auth.CheckLink(r.Context(), token, p.kinds...); err != nil {
			return linkAnswer(w, r, err)
		}
		return p.render(w, r, http.StatusUnprocessableEntity, r.URL.Path, token, problem)
	}
	if err := h.Auth.SetPasswordWithLink(r.Context(), token, password, p.kinds...); err != nil {
		return linkAnswer(w, r, err)
	}
	l := pageLanguage(r)
	return api.Pages.Message(w, http.StatusOK, l, l.T("page.password.done.title"), l.T("page.password.done.text"))
}
