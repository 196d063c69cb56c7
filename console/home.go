package console

import (
	"net/http"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/overview"
)

// homeData is the home page's: the counts of what needs attention, for a role that reads them.
type homeData struct {
	Counts *overview.Counts
	// Statuses and InstallStates are the orders the counts are shown in.
	Statuses      []subprov.Status
	InstallStates []string
}

// home: GET /console/. The counts are the operations surface's (GET /api/v1/overview, the
// same capability); a role that may not read them (the installer's) sees its sections only.
func (h *Handler) home(w http.ResponseWriter, r *http.Request, v *View) error {
	d := homeData{Statuses: overview.LineStatuses, InstallStates: overview.InstallStates}
	if v.Operator.Role.Can(subprov.PermRead) {
		c, err := h.Ops.Summary.Counts(r.Context(), v.Operator)
		if err != nil {
			return err
		}
		d.Counts = c
	}
	v.Title, v.Data = "Home", d
	h.render(w, r, v, http.StatusOK, "home")
	return nil
}
