package ops

import (
	"net/http"
	"time"

	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/inventory"
)

// Switches: GET /api/v1/switches.
func (h *Handler) Switches(w http.ResponseWriter, r *http.Request) error {
	sws, err := h.Inventory.Switches(r.Context(), api.CallerOf(r).Operator)
	if err != nil {
		return err
	}
	out := make([]switchJSON, len(sws))
	for i, sw := range sws {
		out[i] = switchOf(sw)
	}
	api.List(w, "switches", out, "")
	return nil
}

// Switch: GET /api/v1/switches/{switch_id}.
func (h *Handler) Switch(w http.ResponseWriter, r *http.Request) error {
	sw, err := h.Inventory.SwitchByID(r.Context(), api.CallerOf(r).Operator, r.PathValue("switch_id"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, switchOf(sw))
	return nil
}

// CreateSwitch: POST /api/v1/switches.
func (h *Handler) CreateSwitch(w http.ResponseWriter, r *http.Request) error {
	row, err := api.Decode[inventory.Switch](r)
	if err != nil {
		return err
	}
	sw, err := h.Inventory.CreateSwitch(r.Context(), api.CallerOf(r).Operator, row)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusCreated, switchOf(sw))
	return nil
}

// EditSwitch: PATCH /api/v1/switches/{switch_id}.
func (h *Handler) EditSwitch(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := api.IfMatch(r)
	if err != nil {
		return err
	}
	patch, err := api.Decode[inventory.SwitchPatch](r)
	if err != nil {
		return err
	}
	sw, err := h.Inventory.EditSwitch(r.Context(), api.CallerOf(r).Operator, r.PathValue("switch_id"), ifMatch, patch)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, switchOf(sw))
	return nil
}

// switchJSON is a switch as the surface shows it: whether it has a password, never the
// password.
type switchJSON struct {
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	Driver      string       `json:"driver"`
	Address     string       `json:"address"`
	Username    string       `json:"username"`
	HasPassword bool         `json:"has_password"`
	HostKey     string       `json:"host_key"`
	Model       string       `json:"model"`
	ProviderIDs []string     `json:"provider_ids"`
	Ports       int          `json:"ports"`
	Unconverged int          `json:"unconverged_ports"`
	Breaker     *breakerJSON `json:"breaker"`
	Version     int64        `json:"version"`
	CreatedAt   string       `json:"created_at"`
	UpdatedAt   string       `json:"updated_at"`
}

type breakerJSON struct {
	State    string  `json:"state"` // closed, open
	OpenTill *string `json:"open_until"`
	Failures int     `json:"failures"`
}

func switchOf(sw *inventory.SwitchView) switchJSON {
	out := switchJSON{ID: sw.ID, Name: sw.Name, Driver: sw.Driver, Address: sw.Address, Username: sw.Username, HasPassword: sw.HasPassword(),
		HostKey: sw.HostKey, Model: sw.Model, ProviderIDs: sw.ProviderIDs, Ports: sw.Ports, Unconverged: sw.Unconverged,
		Version:   sw.Version,
		CreatedAt: sw.CreatedAt.UTC().Format(time.RFC3339), UpdatedAt: sw.UpdatedAt.UTC().Format(time.RFC3339)}
	if out.ProviderIDs == nil {
		out.ProviderIDs = []string{}
	}
	if b := sw.Breaker; b != nil {
		out.Breaker = &breakerJSON{State: "closed", Failures: b.Failures}
		if b.Open {
			out.Breaker.State = "open"
			out.Breaker.OpenTill = api.Instant(&b.OpenTill)
		}
	}
	return out
}
