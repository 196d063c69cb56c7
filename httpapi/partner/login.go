package partner

import (
	"net/http"

	"github.com/subprov/subprov/httpapi/api"
)

// OperatorLogin: POST /api/v1/auth/login (dashboard).
func (h *Handler) OperatorLogin(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[api.LoginRequest](r)
	if err != nil {
		return err
	}
	t, err := h.Auth.LoginOperator(r.Context(), q.Email, q.Password, q.TOTP, api.CallerOf(r).Client)
	if err != nil {
		return err
	}
	api.Token(w, t)
	return nil
}
