package ops

import (
	"net/http"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/operators"
)

type operatorJSON struct {
	ID          string       `json:"id"`
	Email       string       `json:"email"`
	Role        subprov.Role `json:"role"`
	ProviderID  *string      `json:"provider_id"`
	TOTPEnabled bool         `json:"totp_enabled"`
	DisabledAt  *string      `json:"disabled_at"`
	Version     int64        `json:"version"`
}

func operatorOf(o *subprov.Operator) operatorJSON {
	return operatorJSON{ID: o.ID, Email: o.Email, Role: o.Role, ProviderID: api.Optional(o.ProviderID),
		TOTPEnabled: o.TOTPEnabled, DisabledAt: api.Instant(o.DisabledAt), Version: o.Version}
}

type newOperatorRequest struct {
	Email      string  `json:"email"`
	Password   string  `json:"password"`
	Role       string  `json:"role"`
	ProviderID *string `json:"provider_id"`
}

// OperatorList: GET /api/v1/operators.
func (h *Handler) OperatorList(w http.ResponseWriter, r *http.Request) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	os, next, err := h.Operators.List(r.Context(), api.CallerOf(r).Operator, page)
	if err != nil {
		return err
	}
	out := make([]operatorJSON, len(os))
	for i, o := range os {
		out[i] = operatorOf(o)
	}
	api.List(w, "operators", out, next)
	return nil
}

// CreateOperator: POST /api/v1/operators.
func (h *Handler) CreateOperator(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[newOperatorRequest](r)
	if err != nil {
		return err
	}
	n := operators.New{Email: q.Email, Password: q.Password, Role: subprov.Role(q.Role)}
	if q.ProviderID != nil {
		n.ProviderID = *q.ProviderID
	}
	o, err := h.Operators.Create(r.Context(), api.CallerOf(r).Operator, n)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusCreated, operatorOf(o))
	return nil
}

// Operator: GET /api/v1/operators/{operator_id}.
func (h *Handler) Operator(w http.ResponseWriter, r *http.Request) error {
	o, err := h.Operators.Get(r.Context(), api.CallerOf(r).Operator, r.PathValue("operator_id"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, operatorOf(o))
	return nil
}

type operatorChangeRequest struct {
	Role     *string `json:"role"`
	Disabled *bool   `json:"disabled"`
}

// UpdateOperator: PATCH /api/v1/operators/{operator_id}.
func (h *Handler) UpdateOperator(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := api.IfMatch(r)
	if err != nil {
		return err
	}
	q, err := api.Decode[operatorChangeRequest](r)
	if err != nil {
		return err
	}
	c := operators.Change{Disabled: q.Disabled}
	if q.Role != nil {
		role := subprov.Role(*q.Role)
		c.Role = &role
	}
	o, err := h.Operators.Update(r.Context(), api.CallerOf(r).Operator, r.PathValue("operator_id"), ifMatch, c)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, operatorOf(o))
	return nil
}

type passwordChangeRequest struct {
	CurrentPassword string `json:"current_password"`
	NewPassword     string `json:"new_password"`
}

// MyOperatorPassword: PATCH /api/v1/operators/me/password.
func (h *Handler) MyOperatorPassword(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[passwordChangeRequest](r)
	if err != nil {
		return err
	}
	c := api.CallerOf(r)
	if err := h.Operators.ChangePassword(r.Context(), c.Operator, q.CurrentPassword, q.NewPassword, c.Client); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// StartSecondFactor: POST /api/v1/operators/me/totp.
func (h *Handler) StartSecondFactor(w http.ResponseWriter, r *http.Request) error {
	if _, err := api.Decode[struct{}](r); err != nil {
		return err
	}
	e, err := h.Operators.StartSecondFactor(r.Context(), api.CallerOf(r).Operator)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, map[string]string{"secret": e.Secret, "otpauth_url": e.URL})
	return nil
}

// ConfirmSecondFactor: POST /api/v1/operators/me/totp/confirm.
func (h *Handler) ConfirmSecondFactor(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[struct {
		Code string `json:"code"`
	}](r)
	if err != nil {
		return err
	}
	codes, err := h.Operators.ConfirmSecondFactor(r.Context(), api.CallerOf(r).Operator, q.Code)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, map[string][]string{"recovery_codes": codes})
	return nil
}

// ResetSecondFactor: POST /api/v1/operators/{operator_id}/totp/reset.
func (h *Handler) ResetSecondFactor(w http.ResponseWriter, r *http.Request) error {
	if _, err := api.Decode[struct{}](r); err != nil {
		return err
	}
	o, err := h.Operators.ResetSecondFactor(r.Context(), api.CallerOf(r).Operator, r.PathValue("operator_id"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, operatorOf(o))
	return nil
}
