package partner

import (
	"net/http"

	"github.com/subprov/subprov/httpapi/api"
)

// operatorLoginRequest is the dashboard login's body: the subscriber login's, and the second
// factor's code (or a recovery code) for an operator who has one on.
type operatorLoginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	TOTP     string `json:"totp"`
}

func (q operatorLoginRequest) Valid() map[string]string {
	return api.LoginRequest{Email: q.Email, Password: q.Password}.Valid()
}

// OperatorLogin: POST /api/v1/auth/login (dashboard).
func (h *Handler) OperatorLogin(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[operatorLoginRequest](r)
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
