package console

import (
	"fmt"
	"html/template"
	"image/color"
	"net/http"
	"net/url"
	"strings"

	"github.com/boombuler/barcode/qr"

	"github.com/subprov/subprov"
)

// The signed-in operator's own account: its password and its second factor, through the
// capabilities of PATCH /api/v1/operators/me/password and POST /api/v1/operators/me/totp.

// passwordPage: GET /console/account/password.
func (h *Handler) passwordPage(w http.ResponseWriter, r *http.Request, v *View) error {
	v.Title = "Change your password"
	h.render(w, r, v, http.StatusOK, "password")
	return nil
}

// changePassword: POST /console/account/password. The change ends every session and token of
// the operator, this one included (as the API's does): it signs in again with the new password.
func (h *Handler) changePassword(w http.ResponseWriter, r *http.Request, v *View) error {
	f := r.PostForm
	err := h.Ops.Operators.ChangePassword(r.Context(), v.Operator, f.Get("current_password"), f.Get("new_password"), h.ClientIP(r))
	if err != nil {
		reason := subprov.ErrorReason(err)
		status, err := v.Refuse(r, err, "current_password", "new_password")
		if err != nil {
			return err
		}
		if reason == "incorrect_password" {
			v.Errors = map[string]string{"current_password": "is not your current password"}
		}
		v.Title = "Change your password"
		h.render(w, r, v, status, "password")
		return nil
	}
	clearCookie(w, r, h, sessionCookie)
	h.redirect(w, r, Prefix+"sign-in", "Your password is changed. Sign in with the new one.")
	return nil
}

// secondFactorData is the second-factor page's: whether it is on, and an enrolment under way
// (its key as text and as a QR code) or the recovery codes just given.
type secondFactorData struct {
	On            bool
	Secret        string
	OTPAuthURL    string
	QR            template.HTML
	RecoveryCodes []string
}

// secondFactorPage: GET /console/account/second-factor.
func (h *Handler) secondFactorPage(w http.ResponseWriter, r *http.Request, v *View) error {
	v.Title, v.Data = "Second factor", secondFactorData{On: v.Operator.TOTPEnabled}
	h.render(w, r, v, http.StatusOK, "second_factor")
	return nil
}

// startSecondFactor: POST /console/account/second-factor. It starts (or restarts) the
// enrolment and shows its key: the page is the answer, since the key is shown once and kept
// nowhere but sealed in the store.
func (h *Handler) startSecondFactor(w http.ResponseWriter, r *http.Request, v *View) error {
	e, err := h.Ops.Operators.StartSecondFactor(r.Context(), v.Operator)
	if err != nil {
		return err
	}
	return h.enrolment(w, r, v, e.URL, http.StatusOK)
}

// enrolment shows the key being enrolled, from its otpauth URL, with the form that confirms it.
func (h *Handler) enrolment(w http.ResponseWriter, r *http.Request, v *View, otpauth string, status int) error {
	u, err := url.Parse(otpauth)
	if err != nil || u.Scheme != "otpauth" {
		return subprov.Errorf(subprov.EBADREQUEST, "bad_form", "The enrolment could not be read. Start it again.")
	}
	svg, err := qrSVG(otpauth)
	if err != nil {
		return err
	}
	v.Title, v.Data = "Second factor", secondFactorData{Secret: u.Query().Get("secret"), OTPAuthURL: otpauth, QR: svg}
	h.render(w, r, v, status, "second_factor")
	return nil
}

// confirmSecondFactor: POST /console/account/second-factor/confirm. Confirming does not end
// the operator's sessions (its token generation stays), so the operator stays signed in and
// is shown its recovery codes, once. A wrong code shows the key again with the error; the key
// comes back in the form only to be drawn again (the capability checks the code against the
// key it keeps).
func (h *Handler) confirmSecondFactor(w http.ResponseWriter, r *http.Request, v *View) error {
	codes, err := h.Ops.Operators.ConfirmSecondFactor(r.Context(), v.Operator, strings.TrimSpace(r.PostForm.Get("code")))
	if err != nil {
		status, err := v.Refuse(r, err)
		if err != nil {
			return err
		}
		if status != http.StatusUnprocessableEntity {
			v.Title, v.Data = "Second factor", secondFactorData{On: v.Operator.TOTPEnabled}
			h.render(w, r, v, status, "second_factor")
			return nil
		}
		return h.enrolment(w, r, v, r.PostForm.Get("otpauth_url"), status)
	}
	v.Flash = "Your second factor is on. Keep these recovery codes somewhere safe: they are shown only this once."
	v.Title, v.Data = "Second factor", secondFactorData{On: true, RecoveryCodes: codes}
	h.render(w, r, v, http.StatusOK, "second_factor")
	return nil
}

// qrSVG draws text as a QR code in SVG: one path of dark modules, sized by the stylesheet.
func qrSVG(text string) (template.HTML, error) {
	code, err := qr.Encode(text, qr.M, qr.Auto)
	if err != nil {
		return "", fmt.Errorf("qr code: %w", err)
	}
	n := code.Bounds().Dx()
	var d strings.Builder
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			if c := color.GrayModel.Convert(code.At(x, y)).(color.Gray); c.Y < 128 {
				fmt.Fprintf(&d, "M%d %dh1v1h-1z", x+4, y+4)
			}
		}
	}
	// Every value is a number this function wrote: nothing of the text reaches the markup.
	return template.HTML(fmt.Sprintf(`<svg class="qr" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="QR code of the key"><rect width="100%%" height="100%%" fill="#fff"/><path fill="#000" d="%s"/></svg>`,
		n+8, n+8, d.String())), nil //nolint:gosec // see above
}
