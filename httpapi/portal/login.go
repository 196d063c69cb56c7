package httpapi

import (
	"net/http"
	"strings"

	"github.com/subprov/subprov/auth"
)

type loginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

func (q loginRequest) Valid() map[string]string {
	p := map[string]string{}
	required(p, map[string]string{"email": q.Email, "password": q.Password})
	return p
}

type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
}

func writeToken(w http.ResponseWriter, t *auth.Token) {
	writeJSON(w, http.StatusOK, tokenResponse{AccessToken: t.AccessToken, TokenType: "Bearer", ExpiresIn: t.ExpiresIn})
}

// handleSubscriberLogin: POST /partner/subscriber/auth/login.
func (s *server) handleSubscriberLogin(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[loginRequest](r)
	if err != nil {
		return err
	}
	t, err := s.Auth.LoginSubscriber(r.Context(), q.Email, q.Password)
	if err != nil {
		return err
	}
	writeToken(w, t)
	return nil
}

// handleOperatorLogin: POST /api/v1/auth/login (dashboard).
func (s *server) handleOperatorLogin(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[loginRequest](r)
	if err != nil {
		return err
	}
	t, err := s.Auth.LoginOperator(r.Context(), q.Email, q.Password)
	if err != nil {
		return err
	}
	writeToken(w, t)
	return nil
}

type passwordResetRequest struct {
	Email string `json:"email"`
}

func (q passwordResetRequest) Valid() map[string]string {
	p := map[string]string{}
	if strings.TrimSpace(q.Email) == "" {
		p["email"] = "required"
	}
	return p
}

// handlePasswordReset: always 202, whether or not the e-mail has a login.
func (s *server) handlePasswordReset(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[passwordResetRequest](r)
	if err != nil {
		return err
	}
	if err := s.Auth.RequestPasswordReset(r.Context(), q.Email); err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"success": true, "message": "If the address has an account, a reset link is on its way."})
	return nil
}

type passwordResetConfirmRequest struct {
	Token       string `json:"token"`
	NewPassword string `json:"new_password"`
}

func (q passwordResetConfirmRequest) Valid() map[string]string {
	p := map[string]string{}
	required(p, map[string]string{"token": q.Token, "new_password": q.NewPassword})
	return p
}

func (s *server) handlePasswordResetConfirm(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[passwordResetConfirmRequest](r)
	if err != nil {
		return err
	}
	if err := s.Auth.ConfirmPasswordReset(r.Context(), q.Token, q.NewPassword); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "Password changed"})
	return nil
}

type activateRequest struct {
	Token    string `json:"token"`
	Password string `json:"password"`
}

func (q activateRequest) Valid() map[string]string {
	p := map[string]string{}
	required(p, map[string]string{"token": q.Token, "password": q.Password})
	return p
}

// handleActivate sets the first password of an authorized user or an activated account.
func (s *server) handleActivate(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[activateRequest](r)
	if err != nil {
		return err
	}
	if err := s.Auth.Activate(r.Context(), q.Token, q.Password); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"success": true, "message": "Account activated"})
	return nil
}
