package inventory

import (
	"context"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/serviceability"
	"github.com/subprov/subprov/store"
)

// The rules a row is held to against the rows already stored, and its writes: a fixture load
// and the operations surface call these same functions inside their write transaction. A
// problem of the row is returned as Problems; an error is the database's failure.

// exists adds a problem at field when table has no row with id.
func exists(ctx context.Context, tx *store.Tx, ps *Problems, field, table, id string) (bool, error) {
	found, err := tx.Exists(ctx, table, id)
	if err != nil {
		return false, fmt.Errorf("%s: check %s: %w", field, table, err)
	}
	if !found {
		ps.add(field, "no %s with id %q", table[:len(table)-1], id)
	}
	return found, nil
}

// BuildingRefs checks that every provider a building names is there.
func BuildingRefs(ctx context.Context, tx *store.Tx, b Building) (Problems, error) {
	var ps Problems
	for j, pid := range b.ProviderIDs {
		if _, err := exists(ctx, tx, &ps, fmt.Sprintf("provider_ids[%d]", j), "providers", pid); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// WriteBuilding writes a building (by id: created, or overwritten) and makes exactly its
// providers cover it. Its search key is written with it, so serviceability finds it at once.
func WriteBuilding(ctx context.Context, tx *store.Tx, b Building, now time.Time) error {
	bl := b.Value()
	if err := tx.UpsertBuilding(ctx, bl, serviceability.BuildingKey(bl), now); err != nil {
		return err
	}
	return tx.SetCoverage(ctx, b.ID, b.ProviderIDs)
}

// UnitRefs checks that a unit's building is there.
func UnitRefs(ctx context.Context, tx *store.Tx, u Unit) (Problems, error) {
	var ps Problems
	_, err := exists(ctx, tx, &ps, "building_id", "buildings", u.BuildingID)
	return ps, err
}

// WriteUnit writes a unit by id: a unit number its building already has under another id is a
// problem of the row, and nothing is written.
func WriteUnit(ctx context.Context, tx *store.Tx, u Unit, now time.Time) (Problems, error) {
	refused, err := tx.UnlessDuplicate(ctx, func() error { return tx.UpsertUnit(ctx, u.Value(), now) })
	if err != nil || !refused {
		return nil, err
	}
	return Problems{{Field: "unit_number", Msg: fmt.Sprintf("building %q already has a unit %q with another id", u.BuildingID, u.UnitNumber)}}, nil
}

// PortRefs checks that a port's building is there and that its unit, when it names one, is
// a unit of that building.
func PortRefs(ctx context.Context, tx *store.Tx, p Port) (Problems, error) {
	var ps Problems
	if _, err := exists(ctx, tx, &ps, "building_id", "buildings", p.BuildingID); err != nil {
		return nil, err
	}
	if p.UnitID == nil {
		return ps, nil
	}
	found, err := exists(ctx, tx, &ps, "unit_id", "units", *p.UnitID)
	if err != nil || !found {
		return ps, err
	}
	bid, err := tx.UnitBuildingID(ctx, *p.UnitID)
	if err != nil {
		return nil, fmt.Errorf("unit_id: building of unit %q: %w", *p.UnitID, err)
	}
	if bid != p.BuildingID {
		ps.add("unit_id", "unit %q is in building %q, not %q", *p.UnitID, bid, p.BuildingID)
	}
	return ps, nil
}

// WritePort writes a port by its switch and name (a new one under id). A location hash or
// identifier another port already has is a problem of the row, and nothing is written. A
// switch named for the first time needs no row of its own: the port names it, and the switch
// driver the service runs with (the default driver) reaches it.
func WritePort(ctx context.Context, tx *store.Tx, p Port, id string, now time.Time) (Problems, error) {
	refused, err := tx.UnlessDuplicate(ctx, func() error { return tx.UpsertPort(ctx, p.Value(id), now) })
	if err != nil || !refused {
		return nil, err
	}
	return Problems{{Msg: "location_hash or location_identifier already names another port"}}, nil
}

// ProviderRef checks that the provider a plan or an install window names is there.
func ProviderRef(ctx context.Context, tx *store.Tx, providerID string) (Problems, error) {
	var ps Problems
	_, err := exists(ctx, tx, &ps, "provider_id", "providers", providerID)
	return ps, err
}

// WritePlan writes a plan (without its versions) by id.
func WritePlan(ctx context.Context, tx *store.Tx, pl Plan, now time.Time) error {
	return tx.UpsertPlan(ctx, &subprov.Plan{ID: pl.ID, ProviderID: pl.ProviderID, Name: pl.Name}, now)
}

// WritePlanVersion writes one version of plan pl by id; it is sold from the moment it commits.
func WritePlanVersion(ctx context.Context, tx *store.Tx, pl Plan, v PlanVersion, now time.Time) error {
	pv, err := v.Value(pl)
	if err != nil {
		return err
	}
	return tx.UpsertPlanVersion(ctx, pv, now)
}

// WriteInstallWindow writes an install window by id; its slots are offered from the moment it
// commits.
func WriteInstallWindow(ctx context.Context, tx *store.Tx, w InstallWindow, now time.Time) error {
	return tx.UpsertInstallWindow(ctx, w.Value(), now)
}
