package console

import (
	"net/http"
)

// Switches (/console/network/switches): the switch inventory with each switch's driver, ports,
// unconverged ports and breaker, as GET /api/v1/switches answers it; never a password.
func (h *Handler) switchesPage(w http.ResponseWriter, r *http.Request, v *View) error {
	sws, err := h.Ops.Inventory.Switches(r.Context(), v.Operator)
	if err != nil {
		return err
	}
	v.Title, v.Data = "Switches", sws
	h.render(w, r, v, http.StatusOK, "switches")
	return nil
}
