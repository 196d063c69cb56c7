package console

import (
	"cmp"
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

// listData is what a list page's template is given: the page's address, the filters as asked,
// the providers a platform operator narrows the list to, the rows, the next page's address (""
// on the last page), and the page's own choices (the states it filters on).
type listData struct {
	Path      string
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
	d := listData{Path: l.path, Query: r.URL.Query(), Choices: l.choices}
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
		if status, err = refuseQuery(v, r, err, nil); err != nil {
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

// refused answers a form an object's page sent that the capability refused: an object not
// found is the error page; any other refusal shows the page again (page, with the refusal's
// status), the input kept and the error beside its field.
func refused(r *http.Request, v *View, err error, page func(status int) error) error {
	if subprov.ErrorCode(err) == subprov.ENOTFOUND {
		return err
	}
	status, err := v.Refuse(r, err)
	if err != nil {
		return err
	}
	return page(status)
}

// providerOf is the provider of an object's page, for its name and time zone.
func (h *Handler) providerOf(v *View, providerID string) (*subprov.Provider, error) {
	return h.Ops.Providers.Get(v.ctx, v.Operator, providerID)
}
