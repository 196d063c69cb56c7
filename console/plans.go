package console

import (
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/inventory"
)

// Plans (/console/plans): plans with their versions, a new plan, a new version and a version's
// sellable switch. The same capabilities as /api/v1/plans, /plans/{id}/versions and
// /plan-versions/{id}.

// plansData is the plans page's.
type plansData struct {
	ProviderID string
	Plans      []planRow
	Next       string
	// NewPlan is the new plan form's version fields.
	NewPlan versionFormView
}

// planRow is a plan with its provider's currency, for its prices, and its add-a-version form.
type planRow struct {
	*inventory.PlanView
	Currency    string
	VersionForm versionFormView
}

// versionFormView is one of the page's plan version forms: ID prefixes its fields' ids, and a
// refused form (the one the page answers) keeps its input and shows its errors.
type versionFormView struct {
	ID     string
	Form   url.Values
	Errors map[string]string
}

// Value is the refused form's input for field.
func (f versionFormView) Value(field string) string { return f.Form.Get(field) }

// Err is the refused form's problem at field.
func (f versionFormView) Err(field string) string { return f.Errors[field] }

// versionFormOf is the version form id on the page v answers: with the refused input and errors
// when it is the form that was sent (refused names it).
func versionFormOf(v *View, id, refused string) versionFormView {
	if id != refused {
		return versionFormView{ID: id}
	}
	return versionFormView{ID: id, Form: v.Form, Errors: v.Errors}
}

// plans: GET /console/plans.
func (h *Handler) plans(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.showPlans(w, r, v, http.StatusOK)
}

func (h *Handler) showPlans(w http.ResponseWriter, r *http.Request, v *View, status int) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	// The form that was refused, if any: a plan's add-a-version form, or the new plan's.
	refused := r.PathValue("plan_id")
	if r.Method == http.MethodPost && r.URL.Path == Prefix+"plans" {
		refused = "new"
	}
	d := plansData{ProviderID: r.URL.Query().Get("provider_id"), NewPlan: versionFormOf(v, "new", refused)}
	pls, next, err := h.Ops.Inventory.Plans(r.Context(), v.Operator, inventory.ListFilter{ProviderID: d.ProviderID}, page)
	if err != nil {
		return err
	}
	currencies := map[string]string{}
	for _, p := range pls {
		c, ok := currencies[p.ProviderID]
		if !ok {
			pr, err := h.Ops.Providers.Get(r.Context(), v.Operator, p.ProviderID)
			if err != nil {
				return err
			}
			c, currencies[p.ProviderID] = pr.Currency, pr.Currency
		}
		d.Plans = append(d.Plans, planRow{PlanView: p, Currency: c, VersionForm: versionFormOf(v, p.ID, refused)})
	}
	d.Next = nextPage(r, next)
	v.Title, v.Data = "Plans", d
	h.render(w, r, v, status, "plans")
	return nil
}

// plansDone answers a plan form: back to the list with flash, or, refused, the list again
// with the error.
func (h *Handler) plansDone(w http.ResponseWriter, r *http.Request, v *View, err error, flash string) error {
	if err != nil {
		status, err := v.Refuse(r, err)
		if err != nil {
			return err
		}
		return h.showPlans(w, r, v, status)
	}
	h.redirect(w, r, Prefix+"plans", flash)
	return nil
}

// versionForm is a plan version's fields as the forms send them; a number that is not one
// adds its problem.
func versionForm(f url.Values, problems map[string]string) inventory.PlanVersion {
	sellable := f.Get("sellable") == "on"
	return inventory.PlanVersion{MonthlyPrice: strings.TrimSpace(f.Get("monthly_price")), SetupFee: strings.TrimSpace(f.Get("setup_fee")),
		DownloadMbps: subprov.Deref(formInt(f, "download_mbps", problems)), UploadMbps: subprov.Deref(formInt(f, "upload_mbps", problems)),
		StoreProductID: strings.TrimSpace(f.Get("store_product_id")), Sellable: &sellable,
		PromoPrice: optionalField(f, "promo_price"), PromoEndsOn: optionalField(f, "promo_ends_on")}
}

// createPlan: POST /console/plans, a plan with its first version.
func (h *Handler) createPlan(w http.ResponseWriter, r *http.Request, v *View) error {
	f := r.PostForm
	problems := map[string]string{}
	pl := inventory.Plan{ProviderID: strings.TrimSpace(f.Get("provider_id")), Name: strings.TrimSpace(f.Get("name")),
		Versions: []inventory.PlanVersion{versionForm(f, problems)}}
	var err error
	if len(problems) > 0 {
		err = subprov.Invalid(problems)
	} else if _, err = h.Ops.Inventory.CreatePlan(r.Context(), v.Operator, pl); err != nil {
		err = versionFields(err, "versions[0].")
	}
	return h.plansDone(w, r, v, err, "Plan "+pl.Name+" created.")
}

// versionFields names a refused version's problems by the form's fields: the capability names
// the first version of a new plan "versions[0].monthly_price".
func versionFields(err error, prefix string) error {
	var e *subprov.Error
	if !errors.As(err, &e) || len(e.Fields) == 0 {
		return err
	}
	fields := map[string]string{}
	for k, p := range e.Fields {
		fields[strings.TrimPrefix(k, prefix)] = p
	}
	return subprov.Invalid(fields)
}

// createPlanVersion: POST /console/plans/{plan_id}/versions.
func (h *Handler) createPlanVersion(w http.ResponseWriter, r *http.Request, v *View) error {
	problems := map[string]string{}
	row := versionForm(r.PostForm, problems)
	var err error
	if len(problems) > 0 {
		err = subprov.Invalid(problems)
	} else {
		_, err = h.Ops.Inventory.CreatePlanVersion(r.Context(), v.Operator, r.PathValue("plan_id"), row)
	}
	return h.plansDone(w, r, v, err, "Version added.")
}

// sellPlanVersion: POST /console/plan-versions/{plan_version_id}/sellable, under the version
// the page was read at.
func (h *Handler) sellPlanVersion(w http.ResponseWriter, r *http.Request, v *View) error {
	f := r.PostForm
	version, err := strconv.ParseInt(f.Get("version"), 10, 64)
	if err != nil || version < 1 {
		return subprov.Errorf(subprov.EBADREQUEST, "bad_form", "The form could not be read. Reload the page and try again.")
	}
	sellable := f.Get("sellable") == "true"
	_, err = h.Ops.Inventory.EditPlanVersion(r.Context(), v.Operator, r.PathValue("plan_version_id"), version,
		inventory.PlanVersionPatch{Sellable: &sellable})
	flash := "The version is no longer sold."
	if sellable {
		flash = "The version is on sale."
	}
	return h.plansDone(w, r, v, err, flash)
}
