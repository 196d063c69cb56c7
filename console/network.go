package console

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/inventory"
)

// The network (/console/network): buildings with their units and ports, and the import of a
// CSV file. The same capabilities as /api/v1/buildings, /buildings/{id}, /buildings/{id}/units,
// /ports and /buildings/import.

// buildingsData is the building list's.
type buildingsData struct {
	Q, ProviderID string
	Buildings     []*inventory.BuildingView
	Next          string
	LineTypes     []string
}

// network: GET /console/network.
func (h *Handler) network(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.showNetwork(w, r, v, http.StatusOK)
}

func (h *Handler) showNetwork(w http.ResponseWriter, r *http.Request, v *View, status int) error {
	page, err := api.PageOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	d := buildingsData{Q: q.Get("q"), ProviderID: q.Get("provider_id"), LineTypes: inventory.LineTypes}
	bs, next, err := h.Ops.Inventory.Buildings(r.Context(), v.Operator, inventory.ListFilter{Q: d.Q, ProviderID: d.ProviderID}, page)
	if err != nil {
		return err
	}
	d.Buildings, d.Next = bs, nextPage(r, next)
	v.Title, v.Data = "Network", d
	h.render(w, r, v, status, "network")
	return nil
}

// buildingForm is a building's fields as the create and edit forms send them: every field, the
// unticked boxes false. The providers covering it are a platform operator's field only (a
// provider's operator covers its buildings by its own provider).
func buildingForm(f url.Values, platform bool) inventory.Building {
	b := inventory.Building{Street: f.Get("street"), City: f.Get("city"), PostalCode: f.Get("postal_code"),
		Province: f.Get("province"), Country: f.Get("country"), LineType: optionalField(f, "line_type"),
		EarliestServiceDate: optionalField(f, "earliest_service_date"), Presale: f.Get("presale") == "on"}
	orderable := f.Get("orderable") == "on"
	b.Orderable = &orderable
	if platform {
		b.ProviderIDs = providerIDs(f.Get("provider_ids"))
	}
	return b
}

// providerIDs splits a comma-separated list of provider ids.
func providerIDs(s string) []string {
	out := []string{}
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// optionalField is a form's field, nil when empty.
func optionalField(f url.Values, name string) *string {
	if s := strings.TrimSpace(f.Get(name)); s != "" {
		return &s
	}
	return nil
}

// createBuilding: POST /console/network/buildings.
func (h *Handler) createBuilding(w http.ResponseWriter, r *http.Request, v *View) error {
	b, err := h.Ops.Inventory.CreateBuilding(r.Context(), v.Operator, buildingForm(r.PostForm, v.Operator.Platform()))
	if err != nil {
		status, err := v.Refuse(r, err)
		if err != nil {
			return err
		}
		return h.showNetwork(w, r, v, status)
	}
	h.redirect(w, r, buildingPath(b.ID), "Building created: "+b.Street+".")
	return nil
}

func buildingPath(id string) string { return Prefix + "network/buildings/" + url.PathEscape(id) }

// buildingData is a building's page.
type buildingData struct {
	B         *inventory.BuildingView
	LineTypes []string
	// Version is the version the edit form was read at: a stale one is refused.
	Version int64
}

// buildingPage: GET /console/network/buildings/{building_id}.
func (h *Handler) buildingPage(w http.ResponseWriter, r *http.Request, v *View) error {
	return h.showBuilding(w, r, v, http.StatusOK)
}

func (h *Handler) showBuilding(w http.ResponseWriter, r *http.Request, v *View, status int) error {
	b, err := h.Ops.Inventory.Building(r.Context(), v.Operator, r.PathValue("building_id"))
	if err != nil {
		return err
	}
	d := buildingData{B: b, LineTypes: inventory.LineTypes, Version: b.Version}
	if s := v.Value("version"); s != "" {
		// A refused edit keeps the version it was read at: saving again is refused again until
		// the page is reloaded.
		d.Version, _ = strconv.ParseInt(s, 10, 64)
	}
	v.Title, v.Data = b.Street, d
	h.render(w, r, v, status, "building")
	return nil
}

// editBuilding: POST /console/network/buildings/{building_id}, under the version the form was
// read at (If-Match's): a building changed since answers "Changed since you read it".
func (h *Handler) editBuilding(w http.ResponseWriter, r *http.Request, v *View) error {
	f := r.PostForm
	version, err := strconv.ParseInt(f.Get("version"), 10, 64)
	if err != nil || version < 1 {
		return subprov.Errorf(subprov.EBADREQUEST, "bad_form", "The form could not be read. Reload the page and try again.")
	}
	row := buildingForm(f, v.Operator.Platform())
	patch := inventory.BuildingPatch{
		Street: set(row.Street), City: set(row.City), PostalCode: set(row.PostalCode), Province: set(row.Province),
		Country: set(row.Country), LineType: setOptional(row.LineType), Orderable: set(*row.Orderable),
		EarliestServiceDate: setOptional(row.EarliestServiceDate), Presale: set(row.Presale)}
	if v.Operator.Platform() {
		patch.ProviderIDs = set(row.ProviderIDs)
	}
	b, err := h.Ops.Inventory.EditBuilding(r.Context(), v.Operator, r.PathValue("building_id"), version, patch)
	if err != nil {
		status, err := v.Refuse(r, err)
		if err != nil {
			return err
		}
		return h.showBuilding(w, r, v, status)
	}
	h.redirect(w, r, buildingPath(b.ID), "Building saved.")
	return nil
}

func set[T any](v T) inventory.Optional[T] { return inventory.Optional[T]{Set: true, V: v} }

// setOptional sets a field to s, or to null when s is nil.
func setOptional(s *string) inventory.Optional[string] {
	if s == nil {
		return inventory.Optional[string]{Set: true, Null: true}
	}
	return set(*s)
}

// createUnit: POST /console/network/buildings/{building_id}/units.
func (h *Handler) createUnit(w http.ResponseWriter, r *http.Request, v *View) error {
	f := r.PostForm
	u, err := h.Ops.Inventory.CreateUnit(r.Context(), v.Operator, r.PathValue("building_id"),
		inventory.Unit{UnitNumber: strings.TrimSpace(f.Get("unit_number")), PostalUnit: optionalField(f, "postal_unit")})
	if err != nil {
		status, err := v.Refuse(r, err)
		if err != nil {
			return err
		}
		return h.showBuilding(w, r, v, status)
	}
	h.redirect(w, r, buildingPath(u.BuildingID), "Unit "+u.UnitNumber+" added.")
	return nil
}

// createPort: POST /console/network/buildings/{building_id}/ports.
func (h *Handler) createPort(w http.ResponseWriter, r *http.Request, v *View) error {
	f := r.PostForm
	p, err := h.Ops.Inventory.CreatePort(r.Context(), v.Operator, inventory.Port{BuildingID: r.PathValue("building_id"),
		UnitID: optionalField(f, "unit_id"), Switch: strings.TrimSpace(f.Get("switch")), Port: strings.TrimSpace(f.Get("port")),
		LocationHash: optionalField(f, "location_hash"), LocationIdentifier: optionalField(f, "location_identifier")})
	if err != nil {
		status, err := v.Refuse(r, err)
		if err != nil {
			return err
		}
		return h.showBuilding(w, r, v, status)
	}
	h.redirect(w, r, buildingPath(p.BuildingID), "Port "+p.Switch+" "+p.Name+" added.")
	return nil
}

// importData is the import page's: the columns a file may have and, for a refused file, its
// problems by row and column.
type importData struct {
	Columns  []string
	Problems inventory.ImportProblems
}

// importPage: GET /console/network/import.
func (h *Handler) importPage(w http.ResponseWriter, r *http.Request, v *View) error {
	v.Title, v.Data = "Import buildings", importData{Columns: inventory.ImportColumns}
	h.render(w, r, v, http.StatusOK, "network_import")
	return nil
}

// importBuildings: POST /console/network/import, a CSV file (or its rows pasted). A file with
// any problem writes nothing and shows every problem by row and column; an import that
// succeeds goes to the building list, with what it created.
func (h *Handler) importBuildings(w http.ResponseWriter, r *http.Request, v *View) error {
	if r.MultipartForm != nil {
		defer func() { _ = r.MultipartForm.RemoveAll() }()
	}
	data, err := uploaded(r, "file", "csv")
	var res *inventory.Imported
	if err == nil {
		res, err = h.Ops.Inventory.Import(r.Context(), v.Operator, data)
	}
	d := importData{Columns: inventory.ImportColumns}
	if errors.As(err, &d.Problems) {
		v.Form = url.Values{"csv": {r.PostForm.Get("csv")}}
		v.Errors = map[string]string{"": fmt.Sprintf("The file has %d problem(s), listed below. Nothing was imported.", len(d.Problems))}
		v.Title, v.Data = "Import buildings", d
		h.render(w, r, v, http.StatusUnprocessableEntity, "network_import")
		return nil
	}
	if err != nil {
		status, err := v.Refuse(r, err)
		if err != nil {
			return err
		}
		v.Title, v.Data = "Import buildings", d
		h.render(w, r, v, status, "network_import")
		return nil
	}
	h.redirect(w, r, Prefix+"network", importedFlash(res))
	return nil
}

// uploaded is a form's file (field file), or, without one, its pasted text (field text).
func uploaded(r *http.Request, file, text string) ([]byte, error) {
	if r.MultipartForm != nil {
		if fh := r.MultipartForm.File[file]; len(fh) > 0 && fh[0].Size > 0 {
			f, err := fh[0].Open()
			if err != nil {
				return nil, fmt.Errorf("open upload: %w", err)
			}
			defer f.Close()
			return io.ReadAll(f)
		}
	}
	if s := r.PostForm.Get(text); strings.TrimSpace(s) != "" {
		return []byte(s), nil
	}
	return nil, subprov.Invalid(map[string]string{file: "Choose a CSV file, or paste its rows below."})
}

// importedFlash says what an import created, naming its first buildings.
func importedFlash(res *inventory.Imported) string {
	var names []string
	for i, b := range res.Buildings {
		if i == 5 {
			names = append(names, fmt.Sprintf("and %d more", len(res.Buildings)-i))
			break
		}
		names = append(names, b.Street)
	}
	msg := fmt.Sprintf("Imported %d building(s), %d unit(s) and %d port(s).", res.BuildingsCreated, res.Units, res.Ports)
	if len(names) > 0 {
		msg += " " + strings.Join(names, ", ") + "."
	}
	return msg
}
