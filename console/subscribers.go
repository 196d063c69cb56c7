package console

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/inventory"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/subscribers"
)

// Subscribers and their accounts: the list (GET /api/v1/subscribers' capability), one account
// (GET /api/v1/subscribers/{id}'s) with its invoices' PDFs, and the line actions (suspend,
// restore, cancel, plan change, reprovision, note), each through the capability its API
// route calls.

// subscriberListData is the list page's: the filters as asked, one page of rows and the
// address of the next.
type subscriberListData struct {
	Q, ProviderID, Status, WorkflowState string
	Statuses                             []subprov.Status
	WorkflowStates                       []string
	Providers                            []*subprov.Provider // a platform operator's filter; nil for a provider's
	Rows                                 []listedRow
	Next                                 string
}

// listedRow is a listed subscriber with its holder's name.
type listedRow struct {
	subscribers.Listed
	Name string
}

// holderName is a subscriber's holder's name, or its e-mail when it has none.
func holderName(c subprov.Contact) string {
	if n := strings.TrimSpace(c.FirstName + " " + c.LastName); n != "" {
		return n
	}
	return c.Email
}

// subscriberList: GET /console/subscribers. The filters are the API's query parameters; an
// htmx request (the search field typing) gets the results fragment alone.
func (h *Handler) subscriberList(w http.ResponseWriter, r *http.Request, v *View) error {
	q := r.URL.Query()
	d := subscriberListData{Q: q.Get("q"), ProviderID: q.Get("provider_id"), Status: q.Get("status"), WorkflowState: q.Get("workflow_state"),
		Statuses: subscriberStatuses, WorkflowStates: subscribers.WorkflowStates}
	v.Title, v.Data = "Subscribers", &d
	if v.Operator.Platform() {
		ps, _, err := h.Ops.Providers.List(r.Context(), v.Operator, subprov.Page{Limit: 200})
		if err != nil {
			return err
		}
		d.Providers = ps
	}
	page, err := api.PageOf(r)
	var rows []subscribers.Listed
	var next string
	if err == nil {
		rows, next, err = h.Ops.Subscribers.List(r.Context(), v.Operator,
			subscribers.Filter{Q: d.Q, ProviderID: d.ProviderID, Status: d.Status, WorkflowState: d.WorkflowState}, page)
	}
	if err != nil {
		status, err := refuseQuery(v, r, err, nil)
		if err != nil {
			return err
		}
		h.render(w, r, v, status, "subscribers")
		return nil
	}
	for _, x := range rows {
		d.Rows = append(d.Rows, listedRow{Listed: x, Name: holderName(x.Holder)})
	}
	if next != "" {
		nq := url.Values{}
		for k, vs := range q {
			if k != "cursor" {
				nq[k] = vs
			}
		}
		nq.Set("cursor", next)
		d.Next = Prefix + "subscribers?" + nq.Encode()
	}
	h.render(w, r, v, http.StatusOK, "subscribers")
	return nil
}

// subscriberStatuses are the statuses the list filters by, in the order the form offers them.
var subscriberStatuses = []subprov.Status{subprov.StatusPendingInstall, subprov.StatusActive, subprov.StatusSuspended, subprov.StatusCancelled}

// accountData is the account page's: the account, its provider and, per line, the plan
// versions a plan change may pick.
type accountData struct {
	*subscribers.Account
	Provider *subprov.Provider
	Name     string
	Views    []accountLine
}

// accountLine is a line as its section shows it: the line, and its status form (suspend, or
// restore for a suspended or held line) with the page's view, for its CSRF token and a refused
// form's input.
type accountLine struct {
	*subscribers.Line
	Status reasonForm
}

// reasonForm is a line form that takes a reason: the line, the action (its path's last
// element), its button's label, and the page's view.
type reasonForm struct {
	V             *View
	ID            string
	Action, Label string
}

// subscriberPage: GET /console/subscribers/{subscriber_id}.
func (h *Handler) subscriberPage(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.account(w, r, v, r.PathValue("subscriber_id"), http.StatusOK)
}

// account renders a subscriber's account page with status: a refused line action re-renders
// it with its errors and input (v.Form, v.Errors).
func (h *Handler) account(w http.ResponseWriter, r *http.Request, v *View, subscriberID string, status int) error {
	a, err := h.Ops.Subscribers.Get(r.Context(), v.Operator, subscriberID)
	if err != nil {
		return err
	}
	p, err := h.Ops.Providers.Get(r.Context(), v.Operator, a.ProviderID)
	if err != nil {
		return err
	}
	v.Loc = p.Location()
	d := &accountData{Account: a, Provider: p, Name: holderName(a.Holder)}
	for i := range a.Lines {
		l := &a.Lines[i]
		f := reasonForm{V: v, ID: l.Subscription.ID, Action: "suspend", Label: "Suspend"}
		if l.Subscription.Status == subprov.StatusSuspended || l.OnHold {
			f.Action, f.Label = "restore", "Restore"
		}
		d.Views = append(d.Views, accountLine{Line: l, Status: f})
	}
	v.Title, v.Data = d.Name, d
	h.render(w, r, v, status, "subscriber")
	return nil
}

// lineAction is a line action's form: what it calls with the form's values, and the flash
// message of its success.
type lineAction struct {
	act   func(h *Handler, r *http.Request, v *View, subscriptionID string) error
	flash string
}

// lineActions are the account page's line forms, by the last element of their path.
var lineActions = map[string]lineAction{
	"suspend": {flash: "The line is suspended.", act: func(h *Handler, r *http.Request, v *View, id string) error {
		_, err := h.Ops.Subscribers.Suspend(r.Context(), v.Operator, id, r.PostForm.Get("reason"))
		return err
	}},
	"restore": {flash: "The line is restored.", act: func(h *Handler, r *http.Request, v *View, id string) error {
		_, err := h.Ops.Subscribers.Restore(r.Context(), v.Operator, id, r.PostForm.Get("reason"))
		return err
	}},
	"reprovision": {flash: "The line's port is being written to its switch again.", act: func(h *Handler, r *http.Request, v *View, id string) error {
		_, err := h.Ops.Subscribers.Reprovision(r.Context(), v.Operator, id)
		return err
	}},
	"notes": {flash: "The note is added.", act: func(h *Handler, r *http.Request, v *View, id string) error {
		_, err := h.Ops.Subscribers.AddNote(r.Context(), v.Operator, id, r.PostForm.Get("note"))
		return err
	}},
}

// lineForm: POST /console/subscriptions/{subscription_id}/{suspend,restore,reprovision,notes}.
// On success it returns to the account; refused, it shows the account again with the error
// beside the form's field (the form names itself in its hidden field "form").
func (h *Handler) lineForm(w http.ResponseWriter, r *http.Request, v *View) error {
	id := r.PathValue("subscription_id")
	name := r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]
	a := lineActions[name]
	if err := a.act(h, r, v, id); err != nil {
		return h.refuseLine(w, r, v, id, err)
	}
	return h.toAccount(w, r, v, id, a.flash)
}

// refuseLine shows a refused line form's account again with its error and input.
func (h *Handler) refuseLine(w http.ResponseWriter, r *http.Request, v *View, subscriptionID string, err error) error {
	status, err := v.Refuse(r, err)
	if err != nil {
		return err
	}
	subscriberID, err := h.subscriberOf(r, v, subscriptionID)
	if err != nil {
		return err
	}
	return h.account(w, r, v, subscriberID, status)
}

// toAccount redirects to the account of a line's subscriber with flash.
func (h *Handler) toAccount(w http.ResponseWriter, r *http.Request, v *View, subscriptionID, flash string) error {
	subscriberID, err := h.subscriberOf(r, v, subscriptionID)
	if err != nil {
		return err
	}
	h.redirect(w, r, Prefix+"subscribers/"+url.PathEscape(subscriberID)+"#line-"+subscriptionID, flash)
	return nil
}

// subscriberOf is the subscriber of a line in the operator's scope, read as the cancellation
// read does (GET /api/v1/subscription/{id}/cancel's capability); an anonymous line has none.
func (h *Handler) subscriberOf(r *http.Request, v *View, subscriptionID string) (string, error) {
	sub, err := h.Ops.Subscribers.Provisioning.CancellationAs(r.Context(), v.Operator, subscriptionID)
	if err != nil {
		return "", err
	}
	if sub.SubscriberID == "" {
		return "", subprov.Errorf(subprov.ENOTFOUND, "not_found", "The line has no subscriber account to show.")
	}
	return sub.SubscriberID, nil
}

// cancelData is the cancellation page's: the line, the end date asked and, once it is valid,
// the preview of what cancelling bills or credits.
type cancelData struct {
	SubscriptionID, SubscriberID, EndDate string
	Currency                              string
	Quote                                 *provisioning.CancelQuote
}

// cancelPage: GET /console/subscriptions/{subscription_id}/cancel?end_date=…. Without a date
// it asks for one; with one it shows the preview (GET /api/v1/subscription/{id}/cancel/preview's
// capability) and the form that confirms it with a reason.
func (h *Handler) cancelPage(w http.ResponseWriter, r *http.Request, v *View) error {
	id := r.PathValue("subscription_id")
	subscriberID, err := h.subscriberOf(r, v, id)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	d := &cancelData{SubscriptionID: id, SubscriberID: subscriberID, EndDate: strings.TrimSpace(q.Get("end_date"))}
	v.Title, v.Data = "Cancel a line", d
	status := http.StatusOK
	if d.EndDate != "" {
		d.Quote, err = h.Ops.Subscribers.Provisioning.QuoteCancellationAs(r.Context(), v.Operator, id, d.EndDate)
		if err != nil {
			if status, err = refuseQuery(v, r, err, nil); err != nil {
				return err
			}
		}
	}
	h.setLineZone(r, v, d)
	h.render(w, r, v, status, "cancel")
	return nil
}

// setLineZone shows a cancellation's dates in its line's provider's time zone and its amounts
// in the provider's currency.
func (h *Handler) setLineZone(r *http.Request, v *View, d *cancelData) {
	if d.Quote == nil {
		return
	}
	if p, err := h.Ops.Providers.Get(r.Context(), v.Operator, d.Quote.Subscription.ProviderID); err == nil {
		v.Loc, d.Currency = p.Location(), p.Currency
	}
}

// cancel: POST /console/subscriptions/{subscription_id}/cancel, the confirmation of the
// preview (POST /api/v1/subscription/{id}/cancel's capability). Refused, the page shows the
// preview again with the error.
func (h *Handler) cancel(w http.ResponseWriter, r *http.Request, v *View) error {
	id := r.PathValue("subscription_id")
	f := r.PostForm
	if _, err := h.Ops.Subscribers.Provisioning.CancelAs(r.Context(), v.Operator, id, f.Get("end_date"), f.Get("reason")); err != nil {
		status, err := v.Refuse(r, err)
		if err != nil {
			return err
		}
		subscriberID, err := h.subscriberOf(r, v, id)
		if err != nil {
			return err
		}
		d := &cancelData{SubscriptionID: id, SubscriberID: subscriberID, EndDate: strings.TrimSpace(f.Get("end_date"))}
		if d.EndDate != "" {
			d.Quote, _ = h.Ops.Subscribers.Provisioning.QuoteCancellationAs(r.Context(), v.Operator, id, d.EndDate)
		}
		h.setLineZone(r, v, d)
		v.Title, v.Data = "Cancel a line", d
		h.render(w, r, v, status, "cancel")
		return nil
	}
	return h.toAccount(w, r, v, id, "The line is cancelled.")
}

// planChangeData is the plan change page's: the plan versions the line's provider sells,
// the one picked and, once picked, the preview.
type planChangeData struct {
	SubscriptionID, SubscriberID, PlanVersionID string
	Current                                     string // the line's plan version
	Currency                                    string // the provider's
	Plans                                       []*inventory.PlanView
	Quote                                       *provisioning.PlanChangeQuote
}

// planChangePage: GET /console/subscriptions/{subscription_id}/plan-change?plan_version_id=….
// It lists the provider's sellable plan versions (GET /api/v1/plans' capability); with one
// picked it shows the preview (POST /api/v1/subscriptions/{id}/plan-change/preview's) and the
// form that confirms it.
func (h *Handler) planChangePage(w http.ResponseWriter, r *http.Request, v *View) error {
	id := r.PathValue("subscription_id")
	d, err := h.planChangeData(r, v, id, r.URL.Query().Get("plan_version_id"))
	if err != nil {
		return err
	}
	status := http.StatusOK
	if d.PlanVersionID != "" {
		d.Quote, err = h.Ops.Subscribers.PreviewPlanChange(r.Context(), v.Operator, id, d.PlanVersionID)
		if err != nil {
			if status, err = refuseQuery(v, r, err, nil); err != nil {
				return err
			}
		}
	}
	h.render(w, r, v, status, "plan_change")
	return nil
}

// planChangeData reads what the plan change page shows of a line in scope.
func (h *Handler) planChangeData(r *http.Request, v *View, id, planVersionID string) (*planChangeData, error) {
	sub, err := h.Ops.Subscribers.Provisioning.CancellationAs(r.Context(), v.Operator, id)
	if err != nil {
		return nil, err
	}
	plans, _, err := h.Ops.Inventory.Plans(r.Context(), v.Operator, inventory.ListFilter{ProviderID: sub.ProviderID}, subprov.Page{Limit: 200})
	if err != nil {
		return nil, err
	}
	p, err := h.Ops.Providers.Get(r.Context(), v.Operator, sub.ProviderID)
	if err != nil {
		return nil, err
	}
	d := &planChangeData{SubscriptionID: id, SubscriberID: sub.SubscriberID, PlanVersionID: strings.TrimSpace(planVersionID),
		Current: sub.PlanVersionID, Currency: p.Currency, Plans: plans}
	v.Title, v.Data = "Change a line's plan", d
	return d, nil
}

// changePlan: POST /console/subscriptions/{subscription_id}/plan-change, the confirmation of
// the preview (POST /api/v1/subscriptions/{id}/plan-change's capability).
func (h *Handler) changePlan(w http.ResponseWriter, r *http.Request, v *View) error {
	id := r.PathValue("subscription_id")
	pv := r.PostForm.Get("plan_version_id")
	if _, err := h.Ops.Subscribers.ChangePlan(r.Context(), v.Operator, id, pv); err != nil {
		status, err := v.Refuse(r, err)
		if err != nil {
			return err
		}
		d, err := h.planChangeData(r, v, id, pv)
		if err != nil {
			return err
		}
		if d.PlanVersionID != "" {
			d.Quote, _ = h.Ops.Subscribers.PreviewPlanChange(r.Context(), v.Operator, id, d.PlanVersionID)
		}
		h.render(w, r, v, status, "plan_change")
		return nil
	}
	return h.toAccount(w, r, v, id, "The line's plan is changed.")
}
