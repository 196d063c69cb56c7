package console

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/operators"
)

// Operators, through the capabilities of /api/v1/operators (package operators): it checks the
// role and the scope (a provider's admin sees and makes its provider's operators only), keeps
// the last active platform admin, and writes the audit entries.

// operatorListData is the operators page's.
type operatorListData struct {
	Operators []*subprov.Operator
	Providers map[string]*subprov.Provider
	Next      string
}

// operatorList: GET /console/operators (GET /api/v1/operators).
func (h *Handler) operatorList(w http.ResponseWriter, r *http.Request, v *View) error {
	ctx := r.Context()
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	os, next, err := h.Ops.Operators.List(ctx, v.Operator, page)
	if err != nil {
		return err
	}
	ids := make([]string, len(os))
	for i, o := range os {
		ids[i] = o.ProviderID
	}
	ps, err := h.providersByID(ctx, v.Operator, ids)
	if err != nil {
		return err
	}
	v.Title, v.Data = "Operators", operatorListData{Operators: os, Providers: ps, Next: next}
	h.render(w, r, v, http.StatusOK, "operators")
	return nil
}

// newOperatorData is the form that creates an operator: the roles, and the providers the
// operator may be given (a provider's admin its own only; a platform admin any, or none for a
// platform-wide operator).
type newOperatorData struct {
	Roles     []subprov.Role
	Providers []*subprov.Provider
	Platform  bool
}

// newOperatorPage: GET /console/operators/new.
func (h *Handler) newOperatorPage(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.showNewOperator(w, r, v, http.StatusOK)
}

func (h *Handler) showNewOperator(w http.ResponseWriter, r *http.Request, v *View, status int) error {
	ps, _, err := h.Ops.Providers.List(r.Context(), v.Operator, subprov.Page{Limit: subprov.MaxPageLimit})
	if err != nil {
		return err
	}
	v.Title, v.Data = "New operator", newOperatorData{Roles: subprov.Roles, Providers: ps, Platform: v.Operator.Platform()}
	h.render(w, r, v, status, "operator_new")
	return nil
}

// createOperator: POST /console/operators (POST /api/v1/operators).
func (h *Handler) createOperator(w http.ResponseWriter, r *http.Request, v *View) error {
	f := r.PostForm
	o, err := h.Ops.Operators.Create(r.Context(), v.Operator, operators.New{Email: strings.TrimSpace(f.Get("email")),
		Password: f.Get("password"), Role: subprov.Role(f.Get("role")), ProviderID: f.Get("provider_id")})
	if err != nil {
		duplicate := subprov.ErrorReason(err) == "duplicate"
		status, err := v.Refuse(r, err, "password")
		if err != nil {
			return err
		}
		if duplicate {
			v.Errors = map[string]string{"email": "another operator has this e-mail"}
		}
		return h.showNewOperator(w, r, v, status)
	}
	h.redirect(w, r, Prefix+"operators/"+o.ID, "The operator "+o.Email+" is created. It signs in with the password you gave.")
	return nil
}

// operatorData is one operator's page: its settings and the forms that change them.
type operatorData struct {
	Target   *subprov.Operator
	Provider *subprov.Provider
	Roles    []subprov.Role
}

// operatorPage: GET /console/operators/{operator_id} (GET /api/v1/operators/{operator_id}).
func (h *Handler) operatorPage(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.showOperator(w, r, v, http.StatusOK)
}

func (h *Handler) showOperator(w http.ResponseWriter, r *http.Request, v *View, status int) error {
	ctx := r.Context()
	o, err := h.Ops.Operators.Get(ctx, v.Operator, r.PathValue("operator_id"))
	if err != nil {
		return err
	}
	ps, err := h.providersByID(ctx, v.Operator, []string{o.ProviderID})
	if err != nil {
		return err
	}
	v.Title, v.Data = o.Email, operatorData{Target: o, Provider: ps[o.ProviderID], Roles: subprov.Roles}
	h.render(w, r, v, status, "operator")
	return nil
}

// editOperator calls fn, one of the capabilities that change an operator, with the version the
// form was read at; on success it returns to the operator's page with flash, on a refusal
// (a stale form, the last active platform admin) it shows the page again with the reason.
func (h *Handler) editOperator(w http.ResponseWriter, r *http.Request, v *View, flash string,
	fn func(ctx context.Context, id string, version int64) error) error {
	id := r.PathValue("operator_id")
	version, err := strconv.ParseInt(r.PostForm.Get("version"), 10, 64)
	if err != nil || version < 1 {
		err = subprov.Errorf(subprov.EBADREQUEST, "bad_form", "The form lacks the version it was read at. Reload the page and try again.")
	} else {
		err = fn(r.Context(), id, version)
	}
	if err != nil {
		status, err := v.Refuse(r, err)
		if err != nil {
			return err
		}
		return h.showOperator(w, r, v, status)
	}
	h.redirect(w, r, Prefix+"operators/"+id, flash)
	return nil
}

// changeOperatorRole: POST /console/operators/{operator_id}/role (PATCH .../{operator_id} {role}).
func (h *Handler) changeOperatorRole(w http.ResponseWriter, r *http.Request, v *View) error {
	role := subprov.Role(r.PostForm.Get("role"))
	return h.editOperator(w, r, v, "The role is changed to "+string(role)+".", func(ctx context.Context, id string, version int64) error {
		_, err := h.Ops.Operators.Update(ctx, v.Operator, id, version, operators.Change{Role: &role})
		return err
	})
}

// changeOperatorStatus: POST /console/operators/{operator_id}/status (PATCH .../{operator_id}
// {disabled}). Disabling ends the operator's sessions and tokens at once.
func (h *Handler) changeOperatorStatus(w http.ResponseWriter, r *http.Request, v *View) error {
	disabled := r.PostForm.Get("disabled") == "true"
	flash := "The operator is enabled: it signs in again with its password."
	if disabled {
		flash = "The operator is disabled: its sessions and tokens have ended."
	}
	return h.editOperator(w, r, v, flash, func(ctx context.Context, id string, version int64) error {
		_, err := h.Ops.Operators.Update(ctx, v.Operator, id, version, operators.Change{Disabled: &disabled})
		return err
	})
}

// resetOperatorSecondFactor: POST /console/operators/{operator_id}/second-factor/reset (POST
// .../{operator_id}/totp/reset, which takes no version).
func (h *Handler) resetOperatorSecondFactor(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.editOperator(w, r, v, "The second factor is reset: the operator signs in with its password and may enrol again.",
		func(ctx context.Context, id string, _ int64) error {
			_, err := h.Ops.Operators.ResetSecondFactor(ctx, v.Operator, id)
			return err
		})
}
