package inventory

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/address"
	"github.com/subprov/subprov/store"
)

// BuildingView is a building as an operator reads it: its coverage as the operator may see
// it (a provider's operator sees its own provider only; Shared says whether others cover it
// too), its units and its ports.
type BuildingView struct {
	*store.BuildingRecord
	Shared bool
	Units  []subprov.Unit
	Ports  []subprov.Port
}

// ListFilter narrows a list: Q matches addresses word by word (buildings only), ProviderID
// keeps one provider's objects.
type ListFilter struct {
	Q          string
	ProviderID string
}

// ErrSharedBuilding refuses a provider's operator an edit of a building another provider
// covers too: only a platform operator edits it.
var ErrSharedBuilding = subprov.Errorf(subprov.EFORBIDDEN, "shared_building",
	"Only a platform administrator edits a building that more than one provider covers")

// visible reports whether the operator sees the building: a platform operator every one, a
// provider's operator those its provider covers.
func visible(op *subprov.Operator, b *store.BuildingRecord) bool {
	return op.Platform() || slices.Contains(b.ProviderIDs, op.ProviderID)
}

// editable refuses a provider's operator a building another provider covers too.
func editable(op *subprov.Operator, b *store.BuildingRecord) error {
	if op.Platform() || len(b.ProviderIDs) == 1 {
		return nil
	}
	return ErrSharedBuilding
}

// auditProvider is the provider a building's entries are recorded under: the one provider
// covering it, else none (a platform entry).
func auditProvider(b *store.BuildingRecord) string {
	if len(b.ProviderIDs) == 1 {
		return b.ProviderIDs[0]
	}
	return ""
}

// view is the building as op sees it.
func view(op *subprov.Operator, b *store.BuildingRecord) *BuildingView {
	v := &BuildingView{BuildingRecord: b, Shared: len(b.ProviderIDs) > 1, Units: []subprov.Unit{}, Ports: []subprov.Port{}}
	if !op.Platform() {
		r := *b
		r.ProviderIDs = []string{op.ProviderID}
		v.BuildingRecord = &r
	}
	return v
}

// Buildings lists the buildings in the operator's scope by street, one page at a time.
func (s *Service) Buildings(ctx context.Context, op *subprov.Operator, f ListFilter, page subprov.Page) ([]*BuildingView, string, error) {
	if err := op.Authorize(subprov.PermReadNetwork); err != nil {
		return nil, "", err
	}
	provider := f.ProviderID
	if !op.Platform() {
		if provider != "" && provider != op.ProviderID {
			return []*BuildingView{}, "", nil
		}
		provider = op.ProviderID
	}
	bs, err := s.Store.Buildings(ctx, store.BuildingFilter{ProviderID: provider, Tokens: address.Tokens(f.Q)}, page)
	if err != nil {
		return nil, "", err
	}
	bs, next := subprov.Cut(page, bs, store.BuildingKey)
	out := make([]*BuildingView, len(bs))
	for i, b := range bs {
		out[i] = view(op, b)
	}
	return out, next, nil
}

// Building reads one building in the operator's scope with its units and ports.
func (s *Service) Building(ctx context.Context, op *subprov.Operator, id string) (*BuildingView, error) {
	if err := op.Authorize(subprov.PermReadNetwork); err != nil {
		return nil, err
	}
	b, err := s.Store.BuildingRecord(ctx, id)
	if err != nil {
		return nil, notFound(err, "Building")
	}
	if !visible(op, b) {
		return nil, subprov.NotFound("Building")
	}
	return withInventory(ctx, s.Store.R(), op, b)
}

func withInventory(ctx context.Context, q store.Querier, op *subprov.Operator, b *store.BuildingRecord) (*BuildingView, error) {
	v := view(op, b)
	var err error
	if v.Units, err = store.UnitsOf(ctx, q, b.ID); err != nil {
		return nil, err
	}
	if v.Ports, err = store.PortsOf(ctx, q, b.ID); err != nil {
		return nil, err
	}
	if v.Units == nil {
		v.Units = []subprov.Unit{}
	}
	if v.Ports == nil {
		v.Ports = []subprov.Port{}
	}
	return v, nil
}

// coverage checks the providers a building is to be covered by, as op may name them: a
// provider's operator names its own provider only (none named: its own).
func coverage(op *subprov.Operator, ids []string, ps *Problems) []string {
	if op.Platform() {
		return ids
	}
	if ids == nil {
		return []string{op.ProviderID}
	}
	if len(ids) != 1 || ids[0] != op.ProviderID {
		ps.add("provider_ids", "a provider's operator covers a building by its own provider only")
	}
	return ids
}

// CreateBuilding creates a building from its row (the fixture's): the id is generated unless
// given. It is found by serviceability as soon as it is created.
func (s *Service) CreateBuilding(ctx context.Context, op *subprov.Operator, b Building) (*BuildingView, error) {
	if err := op.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	var ps Problems
	b.ProviderIDs = coverage(op, b.ProviderIDs, &ps)
	if b.ProviderIDs == nil {
		b.ProviderIDs = []string{}
	}
	ps = append(ps, b.Check()...)
	b.ID = newID(b.ID)
	var out *BuildingView
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		refs, err := BuildingRefs(ctx, tx, b)
		if err != nil {
			return err
		}
		ps := append(ps, refs...)
		if err := idFree(ctx, tx, &ps, "id", "buildings", "a building", b.ID); err != nil {
			return err
		}
		if len(ps) > 0 {
			return invalid(ps, "body")
		}
		now := s.Clock.Now()
		if err := WriteBuilding(ctx, tx, b, now); err != nil {
			return err
		}
		rec, err := tx.BuildingRecord(ctx, b.ID)
		if err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, auditProvider(rec), "building.created", "building", b.ID)
		created(&e, buildingFields(rec))
		if err := tx.RecordAudit(ctx, e, now); err != nil {
			return err
		}
		out, err = withInventory(ctx, tx, op, rec)
		return err
	})
	return out, err
}

// buildingFields are a building's fields as its audit entries record them. A building's
// address is no person's personal data: it is recorded as it is.
func buildingFields(b *store.BuildingRecord) map[string]any {
	return map[string]any{"provider_ids": b.ProviderIDs, "street": b.Street, "city": b.City, "postal_code": b.PostalCode,
		"province": b.Province, "country": b.Country, "line_type": nullable(string(b.LineType)), "orderable": b.Orderable,
		"earliest_service_date": nullable(b.EarliestServiceDate), "presale": b.Presale}
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// BuildingPatch is an edit of a building: the fields sent change, the others stay.
type BuildingPatch struct {
	ProviderIDs         Optional[[]string] `json:"provider_ids"`
	Street              Optional[string]   `json:"street"`
	City                Optional[string]   `json:"city"`
	PostalCode          Optional[string]   `json:"postal_code"`
	Province            Optional[string]   `json:"province"`
	Country             Optional[string]   `json:"country"`
	LineType            Optional[string]   `json:"line_type"`
	Orderable           Optional[bool]     `json:"orderable"`
	EarliestServiceDate Optional[string]   `json:"earliest_service_date"`
	Presale             Optional[bool]     `json:"presale"`
}

// row is the building's row with the patch's fields applied.
func (p BuildingPatch) row(b *store.BuildingRecord, ps *Problems) Building {
	r := Building{ID: b.ID, ProviderIDs: b.ProviderIDs, Street: b.Street, City: b.City, PostalCode: b.PostalCode,
		Province: b.Province, Country: b.Country, Presale: b.Presale}
	orderable := b.Orderable
	r.Orderable = &orderable
	if b.LineType != "" {
		lt := string(b.LineType)
		r.LineType = &lt
	}
	if b.EarliestServiceDate != "" {
		d := b.EarliestServiceDate
		r.EarliestServiceDate = &d
	}
	str := func(f Optional[string], dst *string) {
		if f.Set {
			*dst = f.V
		}
	}
	str(p.Street, &r.Street)
	str(p.City, &r.City)
	str(p.PostalCode, &r.PostalCode)
	str(p.Province, &r.Province)
	str(p.Country, &r.Country)
	ptr := func(f Optional[string], dst **string) {
		if f.Set {
			*dst = nil
			if !f.Null {
				v := f.V
				*dst = &v
			}
		}
	}
	ptr(p.LineType, &r.LineType)
	ptr(p.EarliestServiceDate, &r.EarliestServiceDate)
	for name, f := range map[string]Optional[bool]{"orderable": p.Orderable, "presale": p.Presale} {
		if f.Set && f.Null {
			ps.add(name, "want true or false")
		}
	}
	if p.Orderable.Set && !p.Orderable.Null {
		r.Orderable = &p.Orderable.V
	}
	if p.Presale.Set && !p.Presale.Null {
		r.Presale = p.Presale.V
	}
	if p.ProviderIDs.Set {
		r.ProviderIDs = p.ProviderIDs.V
		if r.ProviderIDs == nil {
			r.ProviderIDs = []string{}
		}
	}
	return r
}

// EditBuilding changes the fields a patch sends, under the version the operator read
// (ifMatch, 0 for none: a stale one is 409). A provider's operator edits only a building its
// provider alone covers (403 for one another provider covers too) and keeps it covered by its
// own provider. A provider with a line in the building keeps covering it.
func (s *Service) EditBuilding(ctx context.Context, op *subprov.Operator, id string, ifMatch int64, p BuildingPatch) (*BuildingView, error) {
	if err := op.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	var out *BuildingView
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		before, err := tx.BuildingRecord(ctx, id)
		if err != nil {
			return notFound(err, "Building")
		}
		if !visible(op, before) {
			return subprov.NotFound("Building")
		}
		if err := editable(op, before); err != nil {
			return err
		}
		if err := subprov.CheckVersion(ifMatch, before.Version); err != nil {
			return err
		}
		var ps Problems
		row := p.row(before, &ps)
		if p.ProviderIDs.Set {
			row.ProviderIDs = coverage(op, row.ProviderIDs, &ps)
		}
		ps = append(ps, row.Check()...)
		refs, err := BuildingRefs(ctx, tx, row)
		if err != nil {
			return err
		}
		ps = append(ps, refs...)
		if err := keepsLines(ctx, tx, before, row, &ps); err != nil {
			return err
		}
		if len(ps) > 0 {
			return invalid(ps, "body")
		}
		e := subprov.NewAudit(ctx, auditProvider(before), "building.updated", "building", id)
		after := &store.BuildingRecord{Building: *row.Value(), ProviderIDs: row.ProviderIDs}
		was, now := buildingFields(before), buildingFields(after)
		for k, v := range now {
			if k == "provider_ids" {
				if !sameSet(before.ProviderIDs, row.ProviderIDs) {
					e.Changes[k] = [2]any{before.ProviderIDs, row.ProviderIDs}
				}
				continue
			}
			e.Changes.Set(k, was[k], v)
		}
		if len(e.Changes) > 0 {
			at := s.Clock.Now()
			if err := WriteBuilding(ctx, tx, row, at); err != nil {
				return err
			}
			if err := tx.BumpBuildingVersion(ctx, id); err != nil {
				return err
			}
			if err := tx.RecordAudit(ctx, e, at); err != nil {
				return err
			}
		}
		rec, err := tx.BuildingRecord(ctx, id)
		if err != nil {
			return err
		}
		out, err = withInventory(ctx, tx, op, rec)
		return err
	})
	return out, err
}

// keepsLines refuses to take a building out of the coverage of a provider with a line there.
func keepsLines(ctx context.Context, tx *store.Tx, before *store.BuildingRecord, row Building, ps *Problems) error {
	withLines, err := tx.ProvidersWithLinesAt(ctx, before.ID)
	if err != nil {
		return err
	}
	for _, pid := range withLines {
		if !slices.Contains(row.ProviderIDs, pid) {
			ps.add("provider_ids", "provider %q has lines in this building and keeps covering it", pid)
		}
	}
	return nil
}

// editableBuilding reads, inside tx, a building op may add to: not found when it is not in
// op's scope, 403 when another provider covers it too.
func editableBuilding(ctx context.Context, tx *store.Tx, op *subprov.Operator, id string) (*store.BuildingRecord, error) {
	b, err := tx.BuildingRecord(ctx, id)
	if err != nil {
		return nil, notFound(err, "Building")
	}
	if !visible(op, b) {
		return nil, subprov.NotFound("Building")
	}
	return b, editable(op, b)
}

// CreateUnit adds a unit to a building from its row (the building is the path's; the id is
// generated unless given). It is offered by serviceability's units as soon as it is created.
func (s *Service) CreateUnit(ctx context.Context, op *subprov.Operator, buildingID string, u Unit) (*subprov.Unit, error) {
	if err := op.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	u.BuildingID = buildingID
	u.ID = newID(u.ID)
	var out subprov.Unit
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		b, err := editableBuilding(ctx, tx, op, buildingID)
		if err != nil {
			return err
		}
		ps := u.Check()
		if err := idFree(ctx, tx, &ps, "id", "units", "a unit", u.ID); err != nil {
			return err
		}
		if len(ps) > 0 {
			return invalid(ps, "body")
		}
		now := s.Clock.Now()
		if ps, err = WriteUnit(ctx, tx, u, now); err != nil {
			return err
		} else if len(ps) > 0 {
			return invalid(ps, "body")
		}
		e := subprov.NewAudit(ctx, auditProvider(b), "unit.created", "unit", u.ID)
		created(&e, map[string]any{"building_id": u.BuildingID, "unit_number": u.UnitNumber, "postal_unit": nullable(subprov.Deref(u.PostalUnit))})
		if err := tx.RecordAudit(ctx, e, now); err != nil {
			return err
		}
		out, err = store.UnitOf(ctx, tx, u.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// CreatePort adds a switch port from its row (the fixture's). A switch named for the first
// time is reached with the default switch driver. The port resolves by location as soon as it
// is created. A building outside the operator's scope is named as unknown (422).
func (s *Service) CreatePort(ctx context.Context, op *subprov.Operator, p Port) (*subprov.Port, error) {
	if err := op.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	var out subprov.Port
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		ps := p.Check()
		if len(ps) > 0 {
			return invalid(ps, "body")
		}
		b, err := tx.BuildingRecord(ctx, p.BuildingID)
		switch {
		case errors.Is(err, subprov.ErrNotFound) || (err == nil && !visible(op, b)):
			ps.add("building_id", "no building with id %q", p.BuildingID)
			return invalid(ps, "body")
		case err != nil:
			return err
		}
		if err := editable(op, b); err != nil {
			return err
		}
		if err := switchOpenTo(ctx, tx, op, p.Switch); err != nil {
			return err
		}
		checked := p
		if p.UnitID != nil {
			seen, err := unitSeen(ctx, tx, op, *p.UnitID)
			if err != nil {
				return err
			}
			if !seen {
				// Another provider's unit is named as unknown: nothing of it (its building) shows.
				ps.add("unit_id", "no unit with id %q", *p.UnitID)
				checked.UnitID = nil
			}
		}
		refs, err := PortRefs(ctx, tx, checked)
		if err != nil {
			return err
		}
		ps = append(ps, refs...)
		taken, err := portTaken(ctx, tx, p)
		if err != nil {
			return err
		}
		ps = append(ps, taken...)
		if len(ps) > 0 {
			return invalid(ps, "body")
		}
		now := s.Clock.Now()
		id := store.NewID()
		if ps, err = WritePort(ctx, tx, p, id, now); err != nil {
			return err
		} else if len(ps) > 0 {
			return invalid(ps, "location_hash")
		}
		e := subprov.NewAudit(ctx, auditProvider(b), "port.created", "port", id)
		created(&e, map[string]any{"building_id": p.BuildingID, "unit_id": p.UnitID, "switch": p.Switch, "port": p.Port,
			"location_hash": p.LocationHash, "location_identifier": p.LocationIdentifier})
		if err := tx.RecordAudit(ctx, e, now); err != nil {
			return err
		}
		out, err = store.PortBySwitch(ctx, tx, p.Switch, p.Port)
		if err != nil {
			return fmt.Errorf("read the port back: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// unitSeen reports whether op sees the unit id: a platform operator every unit (an unknown
// one is PortRefs' to name), a provider's operator the units of the buildings its provider
// covers (an unknown unit is not seen either).
func unitSeen(ctx context.Context, tx *store.Tx, op *subprov.Operator, id string) (bool, error) {
	if op.Platform() {
		return true, nil
	}
	bid, err := tx.UnitBuildingID(ctx, id)
	if errors.Is(err, subprov.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("unit_id: building of unit %q: %w", id, err)
	}
	b, err := store.BuildingRecordOf(ctx, tx, tx.Dialect(), bid, false)
	if err != nil {
		return false, err
	}
	return visible(op, b), nil
}

// portTaken lists what of a new port another port already has: its switch and name, its
// location hash or its location identifier.
func portTaken(ctx context.Context, tx *store.Tx, p Port) (Problems, error) {
	var ps Problems
	if p.Switch != "" && p.Port != "" {
		if err := tx.LockName(ctx, "ports:"+p.Switch+"/"+p.Port); err != nil { // the write is an upsert
			return nil, err
		}
		switch _, err := store.PortBySwitch(ctx, tx, p.Switch, p.Port); {
		case err == nil:
			ps.add("port", "switch %q already has a port %q", p.Switch, p.Port)
		case !errors.Is(err, subprov.ErrNotFound):
			return nil, err
		}
	}
	hash, ident, err := store.LocationTaken(ctx, tx, subprov.Deref(p.LocationHash), subprov.Deref(p.LocationIdentifier))
	if err != nil {
		return nil, err
	}
	if hash {
		ps.add("location_hash", "another port already has this location_hash")
	}
	if ident {
		ps.add("location_identifier", "another port already has this location_identifier")
	}
	return ps, nil
}
