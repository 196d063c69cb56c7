// Package inventory is the network inventory, the plans and the install windows: the rows a
// fixture file describes (buildings, units, ports, plans with their versions, install windows)
// and the operations surface's reads and writes of them. The rules a row is held to, and the
// writes that store it, are the same for a fixture load (package fixture calls them) and for an
// operator's request: one set of rules.
package inventory

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/address"
	"github.com/subprov/subprov/install"
)

// Building is a building row: its address, how it is wired and the providers that cover it.
type Building struct {
	ID                  string   `json:"id"`
	ProviderIDs         []string `json:"provider_ids"`
	Street              string   `json:"street"`
	City                string   `json:"city"`
	PostalCode          string   `json:"postal_code"`
	Province            string   `json:"province"`
	Country             string   `json:"country"`
	LineType            *string  `json:"line_type"`
	Orderable           *bool    `json:"orderable"`
	EarliestServiceDate *string  `json:"earliest_service_date"`
	Presale             bool     `json:"presale"`
}

// Unit is a suite of a building.
type Unit struct {
	ID         string  `json:"id"`
	BuildingID string  `json:"building_id"`
	UnitNumber string  `json:"unit_number"`
	PostalUnit *string `json:"postal_unit"`
}

// Port is a switch port of a building, wired to a suite or to none yet.
type Port struct {
	BuildingID         string  `json:"building_id"`
	UnitID             *string `json:"unit_id"`
	Switch             string  `json:"switch"`
	Port               string  `json:"port"`
	LocationHash       *string `json:"location_hash"`
	LocationIdentifier *string `json:"location_identifier"`
}

// Plan is a provider's plan with its versions.
type Plan struct {
	ID         string        `json:"id"`
	ProviderID string        `json:"provider_id"`
	Name       string        `json:"name"`
	Versions   []PlanVersion `json:"versions"`
}

// PlanVersion is one priced version of a plan. Amounts are decimal strings ("60.00").
type PlanVersion struct {
	ID             string  `json:"id"`
	MonthlyPrice   string  `json:"monthly_price"`
	SetupFee       string  `json:"setup_fee"`
	DownloadMbps   int     `json:"download_mbps"`
	UploadMbps     int     `json:"upload_mbps"`
	StoreProductID string  `json:"store_product_id"`
	Sellable       *bool   `json:"sellable"`
	PromoPrice     *string `json:"promo_price"`
	PromoEndsOn    *string `json:"promo_ends_on"`
}

// InstallWindow is a provider's technician capacity: on every such weekday, a window from
// starts to ends (local HH:MM in the provider's time zone) with technicians places.
type InstallWindow struct {
	ID          string `json:"id"`
	ProviderID  string `json:"provider_id"`
	Weekday     string `json:"weekday"`
	Starts      string `json:"starts"`
	Ends        string `json:"ends"`
	Technicians int    `json:"technicians"`
}

// Problem is one problem of a row: Field is the row's key it is at ("street",
// "versions[1].monthly_price"), or "" for the row as a whole; Msg says what is wrong.
type Problem struct {
	Field, Msg string
}

// Problems are every problem of one row.
type Problems []Problem

func (ps *Problems) add(field, format string, args ...any) {
	*ps = append(*ps, Problem{Field: field, Msg: fmt.Sprintf(format, args...)})
}

func (ps *Problems) required(field, s string) {
	if strings.TrimSpace(s) == "" {
		ps.add(field, "required")
	}
}

func (ps *Problems) date(field string, s *string) {
	if s == nil {
		return
	}
	if _, err := time.Parse(time.DateOnly, *s); err != nil {
		ps.add(field, "want a date YYYY-MM-DD")
	}
}

func (ps *Problems) money(field, s string, required bool) {
	if s == "" {
		if required {
			ps.add(field, "required")
		}
		return
	}
	if m, err := subprov.ParseMoney(s); err != nil || m < 0 {
		ps.add(field, "want a non-negative amount with at most two decimals, like \"60.00\"")
	}
}

func (ps *Problems) oneOf(field, s string, allowed ...string) {
	for _, a := range allowed {
		if s == a {
			return
		}
	}
	ps.add(field, "want one of %s", strings.Join(allowed, ", "))
}

// Under prefixes every field with path: a plan's version problems inside the plan.
func (ps Problems) Under(path string) Problems {
	out := make(Problems, len(ps))
	for i, p := range ps {
		out[i] = Problem{Field: join(path, p.Field), Msg: p.Msg}
	}
	return out
}

// Fields is the problems as field -> message, the row-level ones under whole.
func (ps Problems) Fields(whole string) map[string]string {
	out := map[string]string{}
	for _, p := range ps {
		f := p.Field
		if f == "" {
			f = whole
		}
		if _, seen := out[f]; !seen {
			out[f] = p.Msg
		}
	}
	return out
}

func join(path, field string) string {
	switch {
	case path == "":
		return field
	case field == "":
		return path
	case strings.HasPrefix(field, "["):
		return path + field
	}
	return path + "." + field
}

// LineTypes are a building's line types; a building without one is unclassified.
var LineTypes = []string{"first", "second", "third"}

// Check lists the problems of a building's own values.
func (b Building) Check() Problems {
	var ps Problems
	seen := map[string]bool{}
	for j, pid := range b.ProviderIDs {
		if seen[pid] {
			ps.add(fmt.Sprintf("provider_ids[%d]", j), "provider %q named twice", pid)
		}
		seen[pid] = true
	}
	ps.required("street", b.Street)
	if b.PostalCode != "" && (b.Country == "" || b.Country == "CA") {
		if _, ok := address.PostalCode(b.PostalCode); !ok {
			ps.add("postal_code", "not a Canadian postal code (A1A 1A1)")
		}
	}
	if b.LineType != nil {
		ps.oneOf("line_type", *b.LineType, LineTypes...)
	}
	ps.date("earliest_service_date", b.EarliestServiceDate)
	return ps
}

// Value is the building as the service keeps it: the postal code and province in their
// canonical form, Canada and orderable unless the row says otherwise.
func (b Building) Value() *subprov.Building {
	bl := &subprov.Building{ID: b.ID, Street: b.Street, City: b.City, PostalCode: b.PostalCode, Province: b.Province,
		Country: cmp.Or(b.Country, "CA"), Orderable: b.Orderable == nil || *b.Orderable, Presale: b.Presale}
	if pc, ok := address.PostalCode(b.PostalCode); ok {
		bl.PostalCode = pc
	}
	if code, ok := address.Province(b.Province); ok {
		bl.Province = code
	}
	if b.LineType != nil {
		bl.LineType = subprov.LineType(*b.LineType)
	}
	if b.EarliestServiceDate != nil {
		bl.EarliestServiceDate = *b.EarliestServiceDate
	}
	return bl
}

// Check lists the problems of a unit's own values.
func (u Unit) Check() Problems {
	var ps Problems
	ps.required("building_id", u.BuildingID)
	ps.required("unit_number", u.UnitNumber)
	return ps
}

// Value is the unit as the service keeps it.
func (u Unit) Value() *subprov.Unit {
	return &subprov.Unit{ID: u.ID, BuildingID: u.BuildingID, UnitNumber: u.UnitNumber, PostalUnit: subprov.Deref(u.PostalUnit)}
}

// Check lists the problems of a port's own values.
func (p Port) Check() Problems {
	var ps Problems
	ps.required("building_id", p.BuildingID)
	ps.required("switch", p.Switch)
	ps.required("port", p.Port)
	if p.Switch != "" {
		ps.name("switch", p.Switch, switchNamePunct, 100)
	}
	if p.Port != "" {
		ps.name("port", p.Port, portNamePunct, 64)
	}
	return ps
}

// Value is the port as the service keeps it, under id.
func (p Port) Value(id string) *subprov.Port {
	return &subprov.Port{ID: id, BuildingID: p.BuildingID, UnitID: subprov.Deref(p.UnitID), Switch: p.Switch, Name: p.Port,
		LocationHash: subprov.Deref(p.LocationHash), LocationIdentifier: subprov.Deref(p.LocationIdentifier)}
}

// Check lists the problems of a plan's own values and of each of its versions'.
func (p Plan) Check() Problems {
	var ps Problems
	ps.required("provider_id", p.ProviderID)
	ps.required("name", p.Name)
	for j, v := range p.Versions {
		ps = append(ps, v.Check().Under(fmt.Sprintf("versions[%d]", j))...)
	}
	return ps
}

// Check lists the problems of a plan version's own values.
func (v PlanVersion) Check() Problems {
	var ps Problems
	ps.money("monthly_price", v.MonthlyPrice, true)
	ps.money("setup_fee", v.SetupFee, false)
	if v.PromoPrice != nil {
		ps.money("promo_price", *v.PromoPrice, true)
	}
	ps.date("promo_ends_on", v.PromoEndsOn)
	if v.DownloadMbps <= 0 {
		ps.add("download_mbps", "want a positive number")
	}
	if v.UploadMbps <= 0 {
		ps.add("upload_mbps", "want a positive number")
	}
	return ps
}

// Value is the version of plan pl as the service keeps it. Check has passed: an amount that
// does not parse is an error of the caller.
func (v PlanVersion) Value(pl Plan) (*subprov.PlanVersion, error) {
	price, err := subprov.ParseMoney(v.MonthlyPrice)
	if err != nil {
		return nil, fmt.Errorf("monthly_price: %w", err)
	}
	var setup subprov.Money
	if v.SetupFee != "" {
		if setup, err = subprov.ParseMoney(v.SetupFee); err != nil {
			return nil, fmt.Errorf("setup_fee: %w", err)
		}
	}
	out := &subprov.PlanVersion{ID: v.ID, PlanID: pl.ID, ProviderID: pl.ProviderID, PlanName: pl.Name, MonthlyPrice: price,
		SetupFee: setup, DownloadMbps: v.DownloadMbps, UploadMbps: v.UploadMbps, StoreProductID: v.StoreProductID,
		Sellable: v.Sellable == nil || *v.Sellable, PromoEndsOn: subprov.Deref(v.PromoEndsOn)}
	if v.PromoPrice != nil {
		m, err := subprov.ParseMoney(*v.PromoPrice)
		if err != nil {
			return nil, fmt.Errorf("promo_price: %w", err)
		}
		out.PromoPrice = &m
	}
	return out, nil
}

// Weekdays maps weekday names to time.Weekday numbers (Sunday 0).
var Weekdays = map[string]int{"sunday": 0, "monday": 1, "tuesday": 2, "wednesday": 3, "thursday": 4, "friday": 5, "saturday": 6}

// WeekdayName is the name of a weekday number.
func WeekdayName(n int) string { return strings.ToLower(time.Weekday(n).String()) }

// Check lists the problems of an install window's own values.
func (w InstallWindow) Check() Problems {
	var ps Problems
	ps.required("provider_id", w.ProviderID)
	if _, ok := Weekdays[w.Weekday]; !ok {
		ps.add("weekday", "want monday, tuesday, wednesday, thursday, friday, saturday or sunday")
	}
	if !install.ValidClock(w.Starts) {
		ps.add("starts", "want a local time HH:MM")
	}
	if !install.ValidClock(w.Ends) || w.Ends <= w.Starts {
		ps.add("ends", "want a local time HH:MM after starts")
	}
	if w.Technicians < 1 || w.Technicians > 1000 {
		ps.add("technicians", "want 1 to 1000")
	}
	return ps
}

// Value is the window as the service keeps it.
func (w InstallWindow) Value() *subprov.InstallWindow {
	return &subprov.InstallWindow{ID: w.ID, ProviderID: w.ProviderID, Weekday: Weekdays[w.Weekday], Starts: w.Starts,
		Ends: w.Ends, Technicians: w.Technicians}
}
