package ops

import (
	"errors"
	"mime"
	"net/http"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/inventory"
	"github.com/subprov/subprov/store"
)

// Buildings: GET /api/v1/buildings.
func (h *Handler) Buildings(w http.ResponseWriter, r *http.Request) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	bs, next, err := h.Inventory.Buildings(r.Context(), api.CallerOf(r).Operator,
		inventory.ListFilter{Q: q.Get("q"), ProviderID: q.Get("provider_id")}, page)
	if err != nil {
		return err
	}
	out := make([]buildingJSON, len(bs))
	for i, b := range bs {
		out[i] = buildingOf(b, false)
	}
	api.List(w, "buildings", out, next)
	return nil
}

// Building: GET /api/v1/buildings/{building_id}.
func (h *Handler) Building(w http.ResponseWriter, r *http.Request) error {
	b, err := h.Inventory.Building(r.Context(), api.CallerOf(r).Operator, r.PathValue("building_id"))
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, buildingOf(b, true))
	return nil
}

// CreateBuilding: POST /api/v1/buildings.
func (h *Handler) CreateBuilding(w http.ResponseWriter, r *http.Request) error {
	row, err := api.Decode[inventory.Building](r)
	if err != nil {
		return err
	}
	b, err := h.Inventory.CreateBuilding(r.Context(), api.CallerOf(r).Operator, row)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusCreated, buildingOf(b, true))
	return nil
}

// EditBuilding: PATCH /api/v1/buildings/{building_id}.
func (h *Handler) EditBuilding(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := api.IfMatch(r)
	if err != nil {
		return err
	}
	patch, err := api.Decode[inventory.BuildingPatch](r)
	if err != nil {
		return err
	}
	b, err := h.Inventory.EditBuilding(r.Context(), api.CallerOf(r).Operator, r.PathValue("building_id"), ifMatch, patch)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, buildingOf(b, true))
	return nil
}

// unitBody is a unit's row without its building, which the path names.
type unitBody struct {
	ID         string  `json:"id"`
	UnitNumber string  `json:"unit_number"`
	PostalUnit *string `json:"postal_unit"`
}

// CreateUnit: POST /api/v1/buildings/{building_id}/units.
func (h *Handler) CreateUnit(w http.ResponseWriter, r *http.Request) error {
	body, err := api.Decode[unitBody](r)
	if err != nil {
		return err
	}
	u, err := h.Inventory.CreateUnit(r.Context(), api.CallerOf(r).Operator, r.PathValue("building_id"),
		inventory.Unit{ID: body.ID, UnitNumber: body.UnitNumber, PostalUnit: body.PostalUnit})
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusCreated, unitOf(*u))
	return nil
}

// CreatePort: POST /api/v1/ports.
func (h *Handler) CreatePort(w http.ResponseWriter, r *http.Request) error {
	row, err := api.Decode[inventory.Port](r)
	if err != nil {
		return err
	}
	p, err := h.Inventory.CreatePort(r.Context(), api.CallerOf(r).Operator, row)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusCreated, portOf(*p))
	return nil
}

type buildingJSON struct {
	ID                  string     `json:"id"`
	ProviderIDs         []string   `json:"provider_ids"`
	Shared              bool       `json:"shared"`
	Street              string     `json:"street"`
	City                string     `json:"city"`
	PostalCode          string     `json:"postal_code"`
	Province            string     `json:"province"`
	Country             string     `json:"country"`
	LineType            *string    `json:"line_type"`
	Orderable           bool       `json:"orderable"`
	EarliestServiceDate *string    `json:"earliest_service_date"`
	Presale             bool       `json:"presale"`
	Version             int64      `json:"version"`
	Units               []unitJSON `json:"units,omitempty"`
	Ports               []portJSON `json:"ports,omitempty"`
}

// buildingOf is a building as the list (without its units and ports) or a read shows it.
func buildingOf(b *inventory.BuildingView, full bool) buildingJSON {
	out := buildingJSON{ID: b.ID, ProviderIDs: b.ProviderIDs, Shared: b.Shared, Street: b.Street, City: b.City,
		PostalCode: b.PostalCode, Province: b.Province, Country: b.Country, LineType: api.Optional(string(b.LineType)),
		Orderable: b.Orderable, EarliestServiceDate: api.Optional(b.EarliestServiceDate), Presale: b.Presale, Version: b.Version}
	if out.ProviderIDs == nil {
		out.ProviderIDs = []string{}
	}
	if full {
		out.Units, out.Ports = []unitJSON{}, []portJSON{}
		for _, u := range b.Units {
			out.Units = append(out.Units, unitOf(u))
		}
		for _, p := range b.Ports {
			out.Ports = append(out.Ports, portOf(p))
		}
	}
	return out
}

type unitJSON struct {
	ID         string  `json:"id"`
	BuildingID string  `json:"building_id"`
	UnitNumber string  `json:"unit_number"`
	PostalUnit *string `json:"postal_unit"`
}

func unitOf(u subprov.Unit) unitJSON {
	return unitJSON{ID: u.ID, BuildingID: u.BuildingID, UnitNumber: u.UnitNumber, PostalUnit: api.Optional(u.PostalUnit)}
}

type portJSON struct {
	ID                 string  `json:"id"`
	BuildingID         string  `json:"building_id"`
	UnitID             *string `json:"unit_id"`
	Switch             string  `json:"switch"`
	Port               string  `json:"port"`
	LocationHash       *string `json:"location_hash"`
	LocationIdentifier *string `json:"location_identifier"`
	// Unconverged: the port's convergence ran out of retries (an operator ticket is open).
	Unconverged bool `json:"unconverged"`
}

func portOf(p subprov.Port) portJSON {
	return portJSON{ID: p.ID, BuildingID: p.BuildingID, UnitID: api.Optional(p.UnitID), Switch: p.Switch, Port: p.Name,
		LocationHash: api.Optional(p.LocationHash), LocationIdentifier: api.Optional(p.LocationIdentifier), Unconverged: p.Unconverged}
}

// Plans: GET /api/v1/plans.
func (h *Handler) Plans(w http.ResponseWriter, r *http.Request) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	pls, next, err := h.Inventory.Plans(r.Context(), api.CallerOf(r).Operator,
		inventory.ListFilter{ProviderID: r.URL.Query().Get("provider_id")}, page)
	if err != nil {
		return err
	}
	out := make([]planJSON, len(pls))
	for i, p := range pls {
		out[i] = planOf(p)
	}
	api.List(w, "plans", out, next)
	return nil
}

// CreatePlan: POST /api/v1/plans.
func (h *Handler) CreatePlan(w http.ResponseWriter, r *http.Request) error {
	row, err := api.Decode[inventory.Plan](r)
	if err != nil {
		return err
	}
	p, err := h.Inventory.CreatePlan(r.Context(), api.CallerOf(r).Operator, row)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusCreated, planOf(p))
	return nil
}

// CreatePlanVersion: POST /api/v1/plans/{plan_id}/versions.
func (h *Handler) CreatePlanVersion(w http.ResponseWriter, r *http.Request) error {
	row, err := api.Decode[inventory.PlanVersion](r)
	if err != nil {
		return err
	}
	v, err := h.Inventory.CreatePlanVersion(r.Context(), api.CallerOf(r).Operator, r.PathValue("plan_id"), row)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusCreated, planVersionOf(*v))
	return nil
}

// EditPlanVersion: PATCH /api/v1/plan-versions/{plan_version_id}.
func (h *Handler) EditPlanVersion(w http.ResponseWriter, r *http.Request) error {
	ifMatch, err := api.IfMatch(r)
	if err != nil {
		return err
	}
	patch, err := api.Decode[inventory.PlanVersionPatch](r)
	if err != nil {
		return err
	}
	v, err := h.Inventory.EditPlanVersion(r.Context(), api.CallerOf(r).Operator, r.PathValue("plan_version_id"), ifMatch, patch)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, planVersionOf(*v))
	return nil
}

type planJSON struct {
	ID         string            `json:"id"`
	ProviderID string            `json:"provider_id"`
	Name       string            `json:"name"`
	Versions   []planVersionJSON `json:"versions"`
}

func planOf(p *inventory.PlanView) planJSON {
	out := planJSON{ID: p.ID, ProviderID: p.ProviderID, Name: p.Name, Versions: make([]planVersionJSON, len(p.Versions))}
	for i, v := range p.Versions {
		out.Versions[i] = planVersionOf(v)
	}
	return out
}

type planVersionJSON struct {
	ID             string         `json:"id"`
	PlanID         string         `json:"plan_id"`
	ProviderID     string         `json:"provider_id"`
	MonthlyPrice   subprov.Money  `json:"monthly_price"`
	SetupFee       subprov.Money  `json:"setup_fee"`
	DownloadMbps   int            `json:"download_mbps"`
	UploadMbps     int            `json:"upload_mbps"`
	StoreProductID string         `json:"store_product_id"`
	Sellable       bool           `json:"sellable"`
	PromoPrice     *subprov.Money `json:"promo_price"`
	PromoEndsOn    *string        `json:"promo_ends_on"`
	Version        int64          `json:"version"`
}

func planVersionOf(v store.PlanVersionRecord) planVersionJSON {
	return planVersionJSON{ID: v.ID, PlanID: v.PlanID, ProviderID: v.ProviderID, MonthlyPrice: v.MonthlyPrice, SetupFee: v.SetupFee,
		DownloadMbps: v.DownloadMbps, UploadMbps: v.UploadMbps, StoreProductID: v.StoreProductID, Sellable: v.Sellable,
		PromoPrice: v.PromoPrice, PromoEndsOn: api.Optional(v.PromoEndsOn), Version: v.Version}
}

// InstallWindows: GET /api/v1/install-windows.
func (h *Handler) InstallWindows(w http.ResponseWriter, r *http.Request) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	ws, next, err := h.Inventory.InstallWindows(r.Context(), api.CallerOf(r).Operator,
		inventory.ListFilter{ProviderID: r.URL.Query().Get("provider_id")}, page)
	if err != nil {
		return err
	}
	out := make([]installWindowJSON, len(ws))
	for i, iw := range ws {
		out[i] = installWindowOf(iw)
	}
	api.List(w, "install_windows", out, next)
	return nil
}

// CreateInstallWindow: POST /api/v1/install-windows.
func (h *Handler) CreateInstallWindow(w http.ResponseWriter, r *http.Request) error {
	row, err := api.Decode[inventory.InstallWindow](r)
	if err != nil {
		return err
	}
	iw, err := h.Inventory.CreateInstallWindow(r.Context(), api.CallerOf(r).Operator, row)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusCreated, installWindowOf(*iw))
	return nil
}

// DeleteInstallWindow: DELETE /api/v1/install-windows/{window_id}.
func (h *Handler) DeleteInstallWindow(w http.ResponseWriter, r *http.Request) error {
	if err := h.Inventory.DeleteInstallWindow(r.Context(), api.CallerOf(r).Operator, r.PathValue("window_id")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

type installWindowJSON struct {
	ID          string `json:"id"`
	ProviderID  string `json:"provider_id"`
	Weekday     string `json:"weekday"`
	Starts      string `json:"starts"`
	Ends        string `json:"ends"`
	Technicians int    `json:"technicians"`
}

func installWindowOf(w subprov.InstallWindow) installWindowJSON {
	return installWindowJSON{ID: w.ID, ProviderID: w.ProviderID, Weekday: inventory.WeekdayName(w.Weekday), Starts: w.Starts,
		Ends: w.Ends, Technicians: w.Technicians}
}

// ImportBuildings: POST /api/v1/buildings/import (text/csv, one row per unit). Every problem
// of the file answers 422 {"detail": [{"row", "column", "msg"}]}, and nothing is written.
func (h *Handler) ImportBuildings(w http.ResponseWriter, r *http.Request) error {
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "text/csv" {
		return api.Errorf(subprov.EBADREQUEST, "bad_request", "Send the rows as text/csv: a header row naming the columns, then one row per unit")
	}
	body, err := api.ReadBody(r)
	if err != nil {
		return err
	}
	res, err := h.Inventory.Import(r.Context(), api.CallerOf(r).Operator, body)
	var problems inventory.ImportProblems
	if errors.As(err, &problems) {
		api.JSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": problems})
		return nil
	}
	if err != nil {
		return err
	}
	out := importedJSON{Buildings: make([]buildingJSON, len(res.Buildings))}
	for i, b := range res.Buildings {
		out.Buildings[i] = buildingOf(b, true)
	}
	out.Created.Buildings, out.Created.Units, out.Created.Ports = res.BuildingsCreated, res.Units, res.Ports
	api.JSON(w, http.StatusOK, out)
	return nil
}

type importedJSON struct {
	Created struct {
		Buildings int `json:"buildings"`
		Units     int `json:"units"`
		Ports     int `json:"ports"`
	} `json:"created"`
	Buildings []buildingJSON `json:"buildings"`
}
