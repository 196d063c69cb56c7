package partner

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/serviceability"
)

type suggestionJSON struct {
	BuildingID          string `json:"building_id"`
	Display             string `json:"display"`
	Orderable           bool   `json:"orderable"`
	EarliestServiceDate string `json:"earliest_service_date,omitempty"`
	Presale             bool   `json:"presale"`
}

// Autocomplete: GET /partner/serviceability/autocomplete?q=…&limit=…
func (h *Handler) Autocomplete(w http.ResponseWriter, r *http.Request) error {
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
	sgs, err := h.Serviceability.Autocomplete(r.Context(), api.CallerOf(r).Provider, q, limit)
	if err != nil {
		return err
	}
	out := make([]suggestionJSON, 0, len(sgs))
	for _, g := range sgs {
		out = append(out, suggestionJSON{BuildingID: g.BuildingID, Display: g.Display, Orderable: g.Orderable,
			EarliestServiceDate: g.EarliestServiceDate, Presale: g.Presale})
	}
	api.JSON(w, http.StatusOK, suggestionsJSON{Suggestions: out})
	return nil
}

type suggestionsJSON struct {
	Suggestions []suggestionJSON `json:"suggestions"`
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

// Check: POST /partner/serviceability/check.
func (h *Handler) Check(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[checkRequest](r)
	if err != nil {
		return err
	}
	res, err := h.Serviceability.Check(r.Context(), api.CallerOf(r).Provider, serviceability.CheckInput(q))
	if err != nil {
		return err
	}
	body := checkJSON{Serviceable: res.Serviceable}
	if m := res.Match; m != nil {
		b := m.Building
		mj := matchJSON{BuildingID: b.ID, Display: m.Display, Street: b.Street, City: b.City, Province: b.Province,
			PostalCode: b.PostalCode, Country: b.Country, Orderable: b.Orderable, Presale: b.Presale, EarliestServiceDate: m.EarliestServiceDate}
		if m.Unit != nil {
			mj.Unit = &unitJSON{UnitID: m.Unit.ID, UnitNumber: m.Unit.UnitNumber, Available: m.Unit.Available}
		}
		body.Match, body.BuildingID = &mj, &b.ID
	}
	plans := make([]planJSON, 0, len(res.Plans))
	for _, p := range res.Plans {
		plans = append(plans, planOf(p))
	}
	body.Plans = plans
	api.JSON(w, http.StatusOK, body)
	return nil
}

type checkJSON struct {
	BuildingID  *string    `json:"building_id"`
	Match       *matchJSON `json:"match"`
	Plans       []planJSON `json:"plans"`
	Serviceable bool       `json:"serviceable"`
}

// Units: GET /partner/serviceability/units?building_id=…
func (h *Handler) Units(w http.ResponseWriter, r *http.Request) error {
	id := strings.TrimSpace(r.URL.Query().Get("building_id"))
	if id == "" {
		return subprov.Invalid(map[string]string{"query:building_id": "required"})
	}
	units, err := h.Serviceability.Units(r.Context(), api.CallerOf(r).Provider.ID, id)
	if err != nil {
		return err
	}
	out := make([]unitJSON, 0, len(units))
	for _, u := range units {
		out = append(out, unitJSON{UnitID: u.ID, UnitNumber: u.UnitNumber, Available: u.Available})
	}
	api.JSON(w, http.StatusOK, unitsJSON{BuildingID: id, Units: out})
	return nil
}

type unitsJSON struct {
	BuildingID string     `json:"building_id"`
	Units      []unitJSON `json:"units"`
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

func locationOf(l *subprov.PortLocation) locationJSON {
	out := locationJSON{LocationHash: api.Optional(l.Port.LocationHash), LocationIdentifier: api.Optional(l.Port.LocationIdentifier),
		BuildingID: l.Building.ID, Street: api.Optional(l.Building.Street), City: api.Optional(l.Building.City),
		PostalCode: api.Optional(l.Building.PostalCode), Province: api.Optional(l.Building.Province), Country: api.Optional(l.Building.Country)}
	if l.Unit != nil {
		out.UnitNumber = api.Optional(l.Unit.UnitNumber)
		out.PostalUnit = api.Optional(l.Unit.PostalUnit)
	}
	return out
}

// Location: POST /partner/location/ (no auth): resolve a port's hash or identifier.
func (h *Handler) Location(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[locationRequest](r)
	if err != nil {
		return err
	}
	l, err := h.Serviceability.Locate(r.Context(), q.LocationHash, q.LocationIdentifier)
	if err != nil {
		return err
	}
	api.JSON(w, http.StatusOK, locationOf(l))
	return nil
}

// LocationDetails: POST /partner/location/details (dashboard JWT): the full record,
// with the switch port and line type an operator needs.
func (h *Handler) LocationDetails(w http.ResponseWriter, r *http.Request) error {
	q, err := api.Decode[locationRequest](r)
	if err != nil {
		return err
	}
	l, err := h.Serviceability.LocateDetails(r.Context(), api.CallerOf(r).Operator.Scope(), q.LocationHash, q.LocationIdentifier)
	if err != nil {
		return err
	}
	var unitID *string
	if l.Unit != nil {
		unitID = &l.Unit.ID
	}
	api.JSON(w, http.StatusOK, locationDetailsJSON{
		Location:    locationOf(l.PortLocation),
		UnitID:      unitID,
		Port:        switchPortJSON{PortID: l.Port.ID, Switch: l.Port.Switch, Port: l.Port.Name},
		LineType:    api.Optional(string(l.Building.LineType)),
		Orderable:   l.Building.Orderable,
		ProviderIDs: l.ProviderIDs,
	})
	return nil
}

type locationDetailsJSON struct {
	LineType    *string        `json:"line_type"`
	Location    locationJSON   `json:"location"`
	Orderable   bool           `json:"orderable"`
	Port        switchPortJSON `json:"port"`
	ProviderIDs []string       `json:"provider_ids"`
	UnitID      *string        `json:"unit_id"`
}

type switchPortJSON struct {
	Port   string `json:"port"`
	PortID string `json:"port_id"`
	Switch string `json:"switch"`
}
