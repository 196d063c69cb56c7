package store

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// The operations surface's reads and edits of the inventory, the plans and the install
// windows (package inventory). Reads that take a Querier serve both the read pool and a write
// transaction (a create answers with the row as its transaction wrote it).

// LockName holds, until tx ends, a lock on a name no row holds yet (a caller-given id, a
// switch's port): a create that checks the name is free and then writes it runs one at a
// time per name, so two racing creates never both find it free. On PostgreSQL it is an
// advisory lock; SQLite's one writer runs write transactions one at a time already.
func (tx *Tx) LockName(ctx context.Context, name string) error {
	if tx.d != Postgres {
		return nil
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(?))`, name); err != nil {
		return fmt.Errorf("lock %s: %w", name, err)
	}
	return nil
}

// BuildingRecord is a building with the providers that cover it and its edit version.
type BuildingRecord struct {
	subprov.Building
	ProviderIDs []string
	Version     int64
}

// BuildingFilter narrows a list of buildings: ProviderID to the ones it covers, Tokens to
// addresses with every token as a word prefix (address.Tokens).
type BuildingFilter struct {
	ProviderID string
	Tokens     []string
}

func scanBuildingRecord(row interface{ Scan(...any) error }) (*BuildingRecord, error) {
	var r BuildingRecord
	var lineType, esd sql.NullString
	b := &r.Building
	if err := row.Scan(&b.ID, &b.Street, &b.City, &b.PostalCode, &b.Province, &b.Country, &lineType, &b.Orderable, &esd,
		&b.Presale, &r.Version); err != nil {
		return nil, err
	}
	b.LineType = subprov.LineType(lineType.String)
	b.EarliestServiceDate = esd.String
	return &r, nil
}

// Buildings lists buildings by street and id, page.Limit+1 after the page's position
// (BuildingKey), each with its coverage.
func (s *Store) Buildings(ctx context.Context, f BuildingFilter, page subprov.Page) ([]*BuildingRecord, error) {
	q := `SELECT ` + buildingColumns + `, b.version FROM buildings b WHERE 1 = 1`
	var args []any
	if f.ProviderID != "" {
		q += ` AND EXISTS (SELECT 1 FROM building_providers bp WHERE bp.building_id = b.id AND bp.provider_id = ?)`
		args = append(args, f.ProviderID)
	}
	for _, t := range f.Tokens {
		q += ` AND b.search_key LIKE ?`
		args = append(args, "% "+t+"%")
	}
	if !page.First() {
		if len(page.After) != 2 {
			return nil, badCursor()
		}
		q += ` AND (b.street > ? OR (b.street = ? AND b.id > ?))`
		args = append(args, page.After[0], page.After[0], page.After[1])
	}
	q += ` ORDER BY b.street, b.id LIMIT ?`
	args = append(args, page.Limit+1)
	bs, err := sqltext.QueryAll(ctx, s.R(), "buildings", scanBuildingRecord, q, args...)
	if err != nil {
		return nil, err
	}
	return bs, withCoverage(ctx, s.R(), bs)
}

// BuildingKey is a building's position in the list's order, for the next page's cursor.
func BuildingKey(b *BuildingRecord) []string { return []string{b.Street, b.ID} }

// withCoverage fills in the providers covering each building.
func withCoverage(ctx context.Context, q Querier, bs []*BuildingRecord) error {
	if len(bs) == 0 {
		return nil
	}
	byID := map[string]*BuildingRecord{}
	args := make([]any, len(bs))
	for i, b := range bs {
		byID[b.ID] = b
		b.ProviderIDs = []string{}
		args[i] = b.ID
	}
	rows, err := q.Query(ctx, `SELECT building_id, provider_id FROM building_providers WHERE building_id IN (`+
		strings.TrimSuffix(strings.Repeat("?, ", len(bs)), ", ")+`) ORDER BY provider_id`, args...)
	if err != nil {
		return fmt.Errorf("coverage: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var b, p string
		if err := rows.Scan(&b, &p); err != nil {
			return fmt.Errorf("coverage: %w", err)
		}
		byID[b].ProviderIDs = append(byID[b].ProviderIDs, p)
	}
	return rows.Err()
}

// BuildingRecordOf reads one building with its coverage; forUpdate locks its row (inside a
// write transaction).
func BuildingRecordOf(ctx context.Context, q Querier, d Dialect, id string, forUpdate bool) (*BuildingRecord, error) {
	lock := ""
	if forUpdate {
		lock = d.ForUpdate()
	}
	b, err := scanBuildingRecord(q.QueryRow(ctx, `SELECT `+buildingColumns+`, b.version FROM buildings b WHERE b.id = ?`+lock, id))
	if err != nil {
		return nil, fmt.Errorf("building %s: %w", id, err)
	}
	return b, withCoverage(ctx, q, []*BuildingRecord{b})
}

// BuildingRecord reads one building with its coverage.
func (s *Store) BuildingRecord(ctx context.Context, id string) (*BuildingRecord, error) {
	return BuildingRecordOf(ctx, s.R(), s.Dialect, id, false)
}

// BuildingRecord reads one building with its coverage inside tx, locking its row.
func (tx *Tx) BuildingRecord(ctx context.Context, id string) (*BuildingRecord, error) {
	return BuildingRecordOf(ctx, tx, tx.d, id, true)
}

// BumpBuildingVersion moves a building's edit version on.
func (tx *Tx) BumpBuildingVersion(ctx context.Context, id string) error {
	if _, err := tx.Exec(ctx, `UPDATE buildings SET version = version + 1 WHERE id = ?`, id); err != nil {
		return fmt.Errorf("building %s version: %w", id, err)
	}
	return nil
}

// ProvidersWithLinesAt lists the providers with a line at a building, whatever its status.
func (tx *Tx) ProvidersWithLinesAt(ctx context.Context, buildingID string) ([]string, error) {
	return QueryStrings(ctx, tx, "providers with lines at "+buildingID,
		`SELECT DISTINCT provider_id FROM subscriptions WHERE building_id = ? ORDER BY provider_id`, buildingID)
}

// UnitsOf lists a building's suites in natural order.
func UnitsOf(ctx context.Context, q Querier, buildingID string) ([]subprov.Unit, error) {
	return sqltext.QueryAll(ctx, q, "units of "+buildingID, func(r interface{ Scan(...any) error }) (subprov.Unit, error) {
		var u subprov.Unit
		var postal sql.NullString
		err := r.Scan(&u.ID, &u.BuildingID, &u.UnitNumber, &postal)
		u.PostalUnit = postal.String
		return u, err
	}, `SELECT id, building_id, unit_number, postal_unit FROM units WHERE building_id = ? ORDER BY LENGTH(unit_number), unit_number, id`, buildingID)
}

// PortsOf lists a building's ports by switch and name, each with whether it is unconverged.
func PortsOf(ctx context.Context, q Querier, buildingID string) ([]subprov.Port, error) {
	return sqltext.QueryAll(ctx, q, "ports of "+buildingID, func(r interface{ Scan(...any) error }) (subprov.Port, error) {
		var p subprov.Port
		var unit, lh, li sql.NullString
		err := r.Scan(&p.ID, &p.BuildingID, &unit, &p.Switch, &p.Name, &lh, &li, &p.Unconverged)
		p.UnitID, p.LocationHash, p.LocationIdentifier = unit.String, lh.String, li.String
		return p, err
	}, `SELECT p.id, p.building_id, p.unit_id, p.switch_name, p.port_name, p.location_hash, p.location_identifier,
			COALESCE(ps.unconverged, FALSE)
		FROM ports p LEFT JOIN port_states ps ON ps.port_id = p.id
		WHERE p.building_id = ? ORDER BY p.switch_name, p.port_name`, buildingID)
}

// PortBySwitch reads the port a switch has under a name.
func PortBySwitch(ctx context.Context, q Querier, switchName, portName string) (subprov.Port, error) {
	p, err := scanPort(q.QueryRow(ctx, `SELECT id, building_id, unit_id, switch_name, port_name, location_hash, location_identifier
		FROM ports WHERE switch_name = ? AND port_name = ?`, switchName, portName))
	if err != nil {
		return p, fmt.Errorf("port %s/%s: %w", switchName, portName, err)
	}
	return p, nil
}

// LocationTaken reports whether a port has the location hash, and whether one has the location
// identifier ("" is never taken).
func LocationTaken(ctx context.Context, q Querier, hash, identifier string) (hashTaken, identifierTaken bool, err error) {
	var h, i int
	err = q.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM ports WHERE location_hash = ?), (SELECT COUNT(*) FROM ports WHERE location_identifier = ?)`,
		hash, identifier).Scan(&h, &i)
	if err != nil {
		return false, false, fmt.Errorf("location taken: %w", err)
	}
	return hash != "" && h > 0, identifier != "" && i > 0, nil
}

func scanPort(r interface{ Scan(...any) error }) (subprov.Port, error) {
	var p subprov.Port
	var unit, lh, li sql.NullString
	err := r.Scan(&p.ID, &p.BuildingID, &unit, &p.Switch, &p.Name, &lh, &li)
	p.UnitID, p.LocationHash, p.LocationIdentifier = unit.String, lh.String, li.String
	return p, err
}

// UnitOf reads one suite.
func UnitOf(ctx context.Context, q Querier, id string) (subprov.Unit, error) {
	var u subprov.Unit
	var postal sql.NullString
	err := q.QueryRow(ctx, `SELECT id, building_id, unit_number, postal_unit FROM units WHERE id = ?`, id).
		Scan(&u.ID, &u.BuildingID, &u.UnitNumber, &postal)
	if err != nil {
		return u, fmt.Errorf("unit %s: %w", id, err)
	}
	u.PostalUnit = postal.String
	return u, nil
}

// PlanVersionRecord is a plan version with its edit version.
type PlanVersionRecord struct {
	subprov.PlanVersion
	Version int64
}

// PlansOf lists plans by name and id, page.Limit+1 after the page's position (PlanKey); a
// providerID other than "" lists that provider's only.
func (s *Store) PlansOf(ctx context.Context, providerID string, page subprov.Page) ([]subprov.Plan, error) {
	q := `SELECT id, provider_id, name FROM plans WHERE 1 = 1`
	var args []any
	if providerID != "" {
		q += ` AND provider_id = ?`
		args = append(args, providerID)
	}
	if !page.First() {
		if len(page.After) != 2 {
			return nil, badCursor()
		}
		q += ` AND (name > ? OR (name = ? AND id > ?))`
		args = append(args, page.After[0], page.After[0], page.After[1])
	}
	q += ` ORDER BY name, id LIMIT ?`
	args = append(args, page.Limit+1)
	return sqltext.QueryAll(ctx, s.R(), "plans", scanPlan, q, args...)
}

// PlanKey is a plan's position in the list's order.
func PlanKey(p subprov.Plan) []string { return []string{p.Name, p.ID} }

func scanPlan(r interface{ Scan(...any) error }) (subprov.Plan, error) {
	var p subprov.Plan
	err := r.Scan(&p.ID, &p.ProviderID, &p.Name)
	return p, err
}

// PlanOf reads one plan.
func PlanOf(ctx context.Context, q Querier, id string) (subprov.Plan, error) {
	p, err := scanPlan(q.QueryRow(ctx, `SELECT id, provider_id, name FROM plans WHERE id = ?`, id))
	if err != nil {
		return p, fmt.Errorf("plan %s: %w", id, err)
	}
	return p, nil
}

// VersionsOfPlans lists the versions of the plans named, oldest first, by plan id.
func VersionsOfPlans(ctx context.Context, q Querier, planIDs []string) (map[string][]PlanVersionRecord, error) {
	out := map[string][]PlanVersionRecord{}
	if len(planIDs) == 0 {
		return out, nil
	}
	args := make([]any, len(planIDs))
	for i, id := range planIDs {
		args[i] = id
	}
	vs, err := sqltext.QueryAll(ctx, q, "plan versions", scanPlanVersionRecord, `SELECT `+planVersionColumns+`, v.version
		FROM plan_versions v JOIN plans p ON p.id = v.plan_id WHERE v.plan_id IN (`+
		strings.TrimSuffix(strings.Repeat("?, ", len(planIDs)), ", ")+`) ORDER BY v.created_at, v.id`, args...)
	if err != nil {
		return nil, err
	}
	for _, v := range vs {
		out[v.PlanID] = append(out[v.PlanID], v)
	}
	return out, nil
}

func scanPlanVersionRecord(row interface{ Scan(...any) error }) (PlanVersionRecord, error) {
	var r planVersionRow
	var version int64
	if err := row.Scan(append(r.dest(), &version)...); err != nil {
		return PlanVersionRecord{}, err
	}
	return PlanVersionRecord{PlanVersion: *r.value(), Version: version}, nil
}

// PlanVersionRecordOf reads one plan version; forUpdate locks its row.
func PlanVersionRecordOf(ctx context.Context, q Querier, d Dialect, id string, forUpdate bool) (PlanVersionRecord, error) {
	lock := ""
	if forUpdate {
		lock = d.ForUpdate()
	}
	v, err := scanPlanVersionRecord(q.QueryRow(ctx, `SELECT `+planVersionColumns+`, v.version
		FROM plan_versions v JOIN plans p ON p.id = v.plan_id WHERE v.id = ?`+lock, id))
	if err != nil {
		return v, fmt.Errorf("plan version %s: %w", id, err)
	}
	return v, nil
}

// PlanVersionRecord reads one plan version inside tx, locking its row.
func (tx *Tx) PlanVersionRecord(ctx context.Context, id string) (PlanVersionRecord, error) {
	return PlanVersionRecordOf(ctx, tx, tx.d, id, true)
}

// SetPlanVersionSellable offers a plan version for sale, or stops, and moves its version on.
func (tx *Tx) SetPlanVersionSellable(ctx context.Context, id string, sellable bool) error {
	if _, err := tx.Exec(ctx, `UPDATE plan_versions SET sellable = ?, version = version + 1 WHERE id = ?`, sellable, id); err != nil {
		return fmt.Errorf("plan version %s sellable: %w", id, err)
	}
	return nil
}

// InstallWindowList lists the install windows not deleted by provider, weekday, start and id,
// page.Limit+1 after the page's position (InstallWindowKey); a providerID other than "" lists
// that provider's only.
func (s *Store) InstallWindowList(ctx context.Context, providerID string, page subprov.Page) ([]subprov.InstallWindow, error) {
	q := `SELECT id, provider_id, weekday, starts_at, ends_at, technicians FROM install_windows WHERE deleted_at IS NULL`
	var args []any
	if providerID != "" {
		q += ` AND provider_id = ?`
		args = append(args, providerID)
	}
	if !page.First() {
		if len(page.After) != 4 {
			return nil, badCursor()
		}
		day, err := strconv.Atoi(page.After[1])
		if err != nil {
			return nil, badCursor()
		}
		p, st, id := page.After[0], page.After[2], page.After[3]
		q += ` AND (provider_id > ? OR (provider_id = ? AND (weekday > ? OR (weekday = ? AND (starts_at > ? OR (starts_at = ? AND id > ?))))))`
		args = append(args, p, p, day, day, st, st, id)
	}
	q += ` ORDER BY provider_id, weekday, starts_at, id LIMIT ?`
	args = append(args, page.Limit+1)
	return sqltext.QueryAll(ctx, s.R(), "install windows", scanInstallWindow, q, args...)
}

// InstallWindowKey is a window's position in the list's order.
func InstallWindowKey(w subprov.InstallWindow) []string {
	return []string{w.ProviderID, strconv.Itoa(w.Weekday), w.Starts, w.ID}
}

func scanInstallWindow(r interface{ Scan(...any) error }) (subprov.InstallWindow, error) {
	var w subprov.InstallWindow
	err := r.Scan(&w.ID, &w.ProviderID, &w.Weekday, &w.Starts, &w.Ends, &w.Technicians)
	return w, err
}

// InstallWindowOf reads one install window that is not deleted; forUpdate locks its row.
func InstallWindowOf(ctx context.Context, q Querier, d Dialect, id string, forUpdate bool) (subprov.InstallWindow, error) {
	lock := ""
	if forUpdate {
		lock = d.ForUpdate()
	}
	w, err := scanInstallWindow(q.QueryRow(ctx, `SELECT id, provider_id, weekday, starts_at, ends_at, technicians FROM install_windows
		WHERE id = ? AND deleted_at IS NULL`+lock, id))
	if err != nil {
		return w, fmt.Errorf("install window %s: %w", id, err)
	}
	return w, nil
}

// InstallWindow reads one install window inside tx, locking its row.
func (tx *Tx) InstallWindow(ctx context.Context, id string) (subprov.InstallWindow, error) {
	return InstallWindowOf(ctx, tx, tx.d, id, true)
}

// DeleteInstallWindow marks a window deleted: no slot is offered or booked in it from now on,
// and the bookings already made in it keep their slot.
func (tx *Tx) DeleteInstallWindow(ctx context.Context, id string, now time.Time) error {
	if _, err := tx.Exec(ctx, `UPDATE install_windows SET deleted_at = ? WHERE id = ? AND deleted_at IS NULL`, now.UTC(), id); err != nil {
		return fmt.Errorf("delete install window %s: %w", id, err)
	}
	return nil
}
