package portal

import (
	"net/http"

	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/preferences"
)

// The signed-in person's own settings: preferences, the personal-data export, the second
// factor. Each belongs to whoever is signed in, holder or authorized user.

type notificationsJSON struct {
	Billing bool `json:"billing"`
	Service bool `json:"service"`
}

type preferencesJSON struct {
	Language      string            `json:"language"`
	Notifications notificationsJSON `json:"notifications"`
}

func preferencesOf(v *preferences.View) preferencesJSON {
	return preferencesJSON{Language: v.Language, Notifications: notificationsJSON{Billing: v.Notifications.Billing, Service: v.Notifications.Service}}
}

// MyPreferences: GET /partner/subscriber/me/preferences.
func (h *Handler) MyPreferences(w http.ResponseWriter, r *http.Request) error {
	v, err := h.Preferences.Of(r.Context(), api.CallerOf(r).Account)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, preferencesOf(v))
	return nil
}

type notificationsPatch struct {
	Billing *bool `json:"billing"`
	Service *bool `json:"service"`
}

type preferencesPatchRequest struct {
	Language      *string             `json:"language"`
	Notifications *notificationsPatch `json:"notifications"`
}

func (q preferencesPatchRequest) patch() preferences.Patch {
	p := preferences.Patch{Language: q.Language}
	if q.Notifications != nil {
		p.Billing, p.Service = q.Notifications.Billing, q.Notifications.Service
	}
	return p
}

func (q preferencesPatchRequest) Valid() map[string]string { return q.patch().Problems() }

// PatchMyPreferences: PATCH /partner/subscriber/me/preferences (only the fields sent change).
func (h *Handler) PatchMyPreferences(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[preferencesPatchRequest](r)
	if err != nil {
		return err
	}
	v, err := h.Preferences.Update(r.Context(), api.CallerOf(r).Account, q.patch())
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, preferencesOf(v))
	return nil
}

// PrivacyExport: POST /partner/subscriber/me/privacy/export → 202; the link is mailed.
func (h *Handler) PrivacyExport(w http.ResponseWriter, r *http.Request) error {
	if _, err := api.Decode[struct{}](r); err != nil {
		return err
	}
	if err := h.Privacy.RequestExport(r.Context(), api.CallerOf(r).Account); err != nil {
		return err
	}
	api.JSON(w, http.StatusAccepted, api.Success("A link to your data is on its way to your e-mail address."))
	return nil
}

// StartSecondFactor: POST /partner/subscriber/me/totp.
func (h *Handler) StartSecondFactor(w http.ResponseWriter, r *http.Request) error {
	if _, err := api.Decode[struct{}](r); err != nil {
		return err
	}
	acc := api.CallerOf(r).Account
	p, err := h.Store.Provider(r.Context(), acc.ProviderID)
	if err != nil {
		return err
	}
	e, err := h.Auth.StartAccountSecondFactor(r.Context(), acc, p.Name)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, map[string]string{"secret": e.Secret, "otpauth_url": e.URL})
	return nil
}

type secondFactorCodeRequest struct {
	Code string `json:"code"`
}

// ConfirmSecondFactor: POST /partner/subscriber/me/totp/confirm.
func (h *Handler) ConfirmSecondFactor(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[secondFactorCodeRequest](r)
	if err != nil {
		return err
	}
	codes, err := h.Auth.ConfirmAccountSecondFactor(r.Context(), api.CallerOf(r).Account, q.Code)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, map[string][]string{"recovery_codes": codes})
	return nil
}

// TurnOffSecondFactor: DELETE /partner/subscriber/me/totp {code} → 204.
func (h *Handler) TurnOffSecondFactor(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[secondFactorCodeRequest](r)
	if err != nil {
		return err
	}
	c := api.CallerOf(r)
	if err := h.Auth.TurnOffAccountSecondFactor(r.Context(), c.Account, q.Code, c.Client); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
