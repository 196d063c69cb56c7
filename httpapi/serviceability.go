package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/serviceability"
)

type suggestionJSON struct {
	BuildingID          string `json:"building_id"`
	Display             string `json:"display"`
	Orderable           bool   `json:"orderable"`
	EarliestServiceDate string `json:"earliest_service_date,omitempty"`
	Presale             bool   `json:"presale"`
}

// handleAutocomplete: GET /partner/serviceability/autocomplete?q=…&limit=…
func (s *server) handleAutocomplete(w http.ResponseWriter, r *http.Request) error {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	problems := map[string]string{}
	if q == "" {
		problems["query:q"] = "required"
	}
	limit := subprov.MaxAutocomplete
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			problems["query:limit"] = "want a whole number from 1 to 15"
		} else {
			limit = min(n, subprov.MaxAutocomplete)
		}
	}
	if len(problems) > 0 {
		return subprov.Invalid(problems)
	}
	sgs, err := s.Serviceability.Autocomplete(r.Context(), callerOf(r).Provider, q, limit)
	if err != nil {
		return err
	}
	out := make([]suggestionJSON, 0, len(sgs))
	for _, g := range sgs {
		out = append(out, suggestionJSON{BuildingID: g.BuildingID, Display: g.Display, Orderable: g.Orderable,
			EarliestServiceDate: g.EarliestServiceDate, Presale: g.Presale})
	}
	writeJSON(w, http.StatusOK, map[string]any{"suggestions": out})
	return nil
}

type checkRequest struct {
	Address    string `json:"address"`
	Street     string `json:"street"`
	City       string `json:"city"`
	Province   string `json:"province"`
	PostalCode string `json:"postal_code"`
	Country    string `json:"country"`
	Unit       string `json:"unit"`
}

func (q checkRequest) Valid() map[string]string {
	p := map[string]string{}
	if strings.TrimSpace(q.Address) == "" && strings.TrimSpace(q.Street) == "" {
		p["address"] = "give address (free text) or street (structured)"
	}
	if len(q.Address) > 500 || len(q.Street) > 300 {
		p["address"] = "too long"
	}
	return p
}

type planJSON struct {
	PlanVersionID  string        `json:"plan_version_id"`
	PlanID         string        `json:"plan_id"`
	Name           string        `json:"name"`
	MonthlyPrice   subprov.Money `json:"monthly_price"`
	SetupFee       subprov.Money `json:"setup_fee"`
	DownloadMbps   int           `json:"download_mbps"`
	UploadMbps     int           `json:"upload_mbps"`
	StoreProductID string        `json:"store_product_id"`
}

func planOf(v *subprov.PlanVersion) planJSON {
	return planJSON{PlanVersionID: v.ID, PlanID: v.PlanID, Name: v.PlanName, MonthlyPrice: v.MonthlyPrice, SetupFee: v.SetupFee,
		DownloadMbps: v.DownloadMbps, UploadMbps: v.UploadMbps, StoreProductID: v.StoreProductID}
}

type unitJSON struct {
	UnitID     string `json:"unit_id"`
	UnitNumber string `json:"unit_number"`
	Available  bool   `json:"available"`
}

type matchJSON struct {
	BuildingID          string    `json:"building_id"`
	Display             string    `json:"display"`
	Street              string    `json:"street"`
	City                string    `json:"city"`
	Province            string    `json:"province"`
	PostalCode          string    `json:"postal_code"`
	Country             string    `json:"country"`
	Orderable           bool      `json:"orderable"`
	Presale             bool      `json:"presale"`
	EarliestServiceDate string    `json:"earliest_service_date,omitempty"`
	Unit                *unitJSON `json:"unit"`
}

// handleCheck: POST /partner/serviceability/check.
func (s *server) handleCheck(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[checkRequest](r)
	if err != nil {
		return err
	}
	res, err := s.Serviceability.Check(r.Context(), callerOf(r).Provider, serviceability.CheckInput(q))
	if err != nil {
		return err
	}
	body := map[string]any{"serviceable": res.Serviceable, "match": nil, "plans": []planJSON{}, "building_id": nil}
	if m := res.Match; m != nil {
		b := m.Building
		mj := matchJSON{BuildingID: b.ID, Display: m.Display, Street: b.Street, City: b.City, Province: b.Province,
			PostalCode: b.PostalCode, Country: b.Country, Orderable: b.Orderable, Presale: b.Presale, EarliestServiceDate: m.EarliestServiceDate}
		if m.Unit != nil {
			mj.Unit = &unitJSON{UnitID: m.Unit.ID, UnitNumber: m.Unit.UnitNumber, Available: m.Unit.Available}
		}
		body["match"], body["building_id"] = mj, b.ID
	}
	plans := make([]planJSON, 0, len(res.Plans))
	for _, p := range res.Plans {
		plans = append(plans, planOf(p))
	}
	body["plans"] = plans
	writeJSON(w, http.StatusOK, body)
	return nil
}

// handleUnits: GET /partner/serviceability/units?building_id=…
func (s *server) handleUnits(w http.ResponseWriter, r *http.Request) error {
	id := strings.TrimSpace(r.URL.Query().Get("building_id"))
	if id == "" {
		return subprov.Invalid(map[string]string{"query:building_id": "required"})
	}
	units, err := s.Serviceability.Units(r.Context(), callerOf(r).Provider.ID, id)
	if err != nil {
		return err
	}
	out := make([]unitJSON, 0, len(units))
	for _, u := range units {
		out = append(out, unitJSON{UnitID: u.ID, UnitNumber: u.UnitNumber, Available: u.Available})
	}
	writeJSON(w, http.StatusOK, map[string]any{"building_id": id, "units": out})
	return nil
}

type locationRequest struct {
	LocationHash       string `json:"location_hash"`
	LocationIdentifier string `json:"location_identifier"`
}

type locationJSON struct {
	LocationHash       *string `json:"location_hash"`
	LocationIdentifier *string `json:"location_identifier"`
	UnitNumber         *string `json:"unit_number"`
	PostalUnit         *string `json:"postal_unit"`
	BuildingID         string  `json:"building_id"`
	Street             *string `json:"street"`
	City               *string `json:"city"`
	PostalCode         *string `json:"postal_code"`
	Province           *string `json:"province"`
	Country            *string `json:"country"`
}

func strOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func locationOf(l *subprov.PortLocation) locationJSON {
	out := locationJSON{LocationHash: strOrNil(l.Port.LocationHash), LocationIdentifier: strOrNil(l.Port.LocationIdentifier),
		BuildingID: l.Building.ID, Street: strOrNil(l.Building.Street), City: strOrNil(l.Building.City),
		PostalCode: strOrNil(l.Building.PostalCode), Province: strOrNil(l.Building.Province), Country: strOrNil(l.Building.Country)}
	if l.Unit != nil {
		out.UnitNumber = strOrNil(l.Unit.UnitNumber)
		out.PostalUnit = strOrNil(l.Unit.PostalUnit)
	}
	return out
}

// handleLocation: POST /partner/location/ (no auth): resolve a port's hash or identifier.
func (s *server) handleLocation(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[locationRequest](r)
	if err != nil {
		return err
	}
	l, err := s.Serviceability.Locate(r.Context(), q.LocationHash, q.LocationIdentifier)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, locationOf(l))
	return nil
}

// handleLocationDetails: POST /partner/location/details (dashboard JWT): the full record,
// with the switch port and line type an operator needs.
func (s *server) handleLocationDetails(w http.ResponseWriter, r *http.Request) error {
	q, err := decode[locationRequest](r)
	if err != nil {
		return err
	}
	l, err := s.Serviceability.LocateDetails(r.Context(), q.LocationHash, q.LocationIdentifier)
	if err != nil {
		return err
	}
	var unitID *string
	if l.Unit != nil {
		unitID = &l.Unit.ID
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"location":     locationOf(l.PortLocation),
		"unit_id":      unitID,
		"port":         map[string]string{"port_id": l.Port.ID, "switch": l.Port.Switch, "port": l.Port.Name},
		"line_type":    strOrNil(string(l.Building.LineType)),
		"orderable":    l.Building.Orderable,
		"provider_ids": l.ProviderIDs,
	})
	return nil
}
