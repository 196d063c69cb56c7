package portal

import (
	"net/http"

	"github.com/subprov/subprov/httpapi/api"
)

// SubscriberLogin: POST /partner/subscriber/auth/login.
func (h *Handler) SubscriberLogin(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[api.LoginRequest](r)
	if err != nil {
		return err
	}
	t, err := h.Auth.LoginSubscriber(r.Context(), q.Email, q.Password, q.TOTP, api.CallerOf(r).Client)
	if err != nil {
		return err
	}
	api.Token(w, t)
	return nil
}

type passwordResetRequest struct {
	Email string `json:"email"`
}

func (q passwordResetRequest) Valid() map[string]string {
	p := map[string]string{}
	api.Required(p, map[string]string{"email": q.Email})
	return p
}

// PasswordReset: always 202, whether or not the e-mail has a login.
func (h *Handler) PasswordReset(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[passwordResetRequest](r)
	if err != nil {
		return err
	}
	if err := h.Auth.RequestPasswordReset(r.Context(), q.Email); err != nil {
		return err
	}
	api.JSON(w, http.StatusAccepted, api.Success("If the address has an account, a reset link is on its way."))
	return nil
}

type passwordResetConfirmRequest struct {
	Token       string `json:"token"`
	NewPassword string `json:"new_password"`
}

func (q passwordResetConfirmRequest) Valid() map[string]string {
	p := map[string]string{}
	api.Required(p, map[string]string{"token": q.Token, "new_password": q.NewPassword})
	return p
}

func (h *Handler) PasswordResetConfirm(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[passwordResetConfirmRequest](r)
	if err != nil {
		return err
	}
	if err := h.Auth.ConfirmPasswordReset(r.Context(), q.Token, q.NewPassword); err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, api.Success("Password changed"))
	return nil
}

type activateRequest struct {
	Token    string `json:"token"`
	Password string `json:"password"`
}

func (q activateRequest) Valid() map[string]string {
	p := map[string]string{}
	api.Required(p, map[string]string{"token": q.Token, "password": q.Password})
	return p
}

// Activate sets the first password of an authorized user or an activated account.
func (h *Handler) Activate(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[activateRequest](r)
	if err != nil {
		return err
	}
	if err := h.Auth.Activate(r.Context(), q.Token, q.Password); err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, api.Success("Account activated"))
	return nil
}
