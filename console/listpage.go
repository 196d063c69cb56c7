package console

import (
	"cmp"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
)

// A list page reads one page of a capability's list with the filters of its query string (a
// GET form), shows each row's dates in the row's provider's time zone, and links the next
// page with the same filters and the list's cursor. A filter the capability refuses (422) is
// shown beside its field with the list empty.

// listData is what a list page's template is given: the filters as asked, the providers a
// platform operator narrows the list to, the rows, the next page's address ("" on the last
// page), and the page's own choices (the states it filters on).
type listData struct {
	Query     url.Values
	Providers []*subprov.Provider // a platform operator's filter choices; nil for a provider's operator
	Rows      any
	Next      string
	Choices   []string
}

// Get is the filter field's value as asked.
func (d listData) Get(field string) string { return d.Query.Get(field) }

// providerIndex finds the providers of the operator's scope by id: each row's name and time
// zone.
type providerIndex struct {
	byID map[string]*subprov.Provider
	list []*subprov.Provider
}

// providersOf reads the providers the operator sees (the capability of GET /api/v1/providers).
func (h *Handler) providersOf(v *View) (providerIndex, error) {
	ps, _, err := h.Ops.Providers.List(v.ctx, v.Operator, subprov.Page{Limit: subprov.MaxPageLimit})
	if err != nil {
		return providerIndex{}, err
	}
	idx := providerIndex{byID: map[string]*subprov.Provider{}, list: ps}
	for _, p := range ps {
		idx.byID[p.ID] = p
	}
	return idx, nil
}

// Loc is the time zone of a provider's rows.
func (p providerIndex) Loc(providerID string) *time.Location {
	if pr := p.byID[providerID]; pr != nil {
		return pr.Location()
	}
	return time.UTC
}

// Name is a provider's name, or its id when it is not among those read.
func (p providerIndex) Name(providerID string) string {
	if pr := p.byID[providerID]; pr != nil {
		return pr.Name
	}
	return providerID
}

// list names a list page: its title, template and path, the states it filters on, and the
// status it answers with (a refused form's, when the list is shown again after one).
type list struct {
	title, tmpl, path string
	choices           []string
	status            int
}

// listPage renders a list page: read is given the page asked for and the providers, and
// returns the rows and the next page's cursor.
func (h *Handler) listPage(w http.ResponseWriter, r *http.Request, v *View, l list,
	read func(page subprov.Page, idx providerIndex) (any, string, error)) error {
	d := listData{Query: r.URL.Query(), Choices: l.choices}
	idx, err := h.providersOf(v)
	if err != nil {
		return err
	}
	if v.Operator.Platform() {
		d.Providers = idx.list
	}
	status := cmp.Or(l.status, http.StatusOK)
	page, err := api.PageOf(r)
	var next string
	if err == nil {
		d.Rows, next, err = read(page, idx)
	}
	if err != nil {
		if status, err = refuseQuery(v, err); err != nil {
			return err
		}
	}
	if next != "" {
		q := r.URL.Query()
		q.Set("cursor", next)
		d.Next = l.path + "?" + q.Encode()
	}
	v.Title, v.Data = l.title, d
	h.render(w, r, v, status, l.tmpl)
	return nil
}

// refuseQuery shows a list's refused filter (422) beside its field; any other error is
// returned.
func refuseQuery(v *View, err error) (int, error) {
	var e *subprov.Error
	if !errors.As(err, &e) || e.Code != subprov.EINVALID {
		return 0, err
	}
	v.Errors = map[string]string{}
	for f, p := range e.Fields {
		v.Errors[f] = p
	}
	if len(e.Fields) == 0 {
		v.Errors[""] = e.Message
	}
	return api.Status(e.Code), nil
}
