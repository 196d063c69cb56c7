package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

const buildingColumns = `b.id, b.street, b.city, b.postal_code, b.province, b.country, b.line_type, b.orderable, b.earliest_service_date, b.presale`

func scanBuilding(row interface{ Scan(...any) error }) (*subprov.Building, error) {
	var b subprov.Building
	var lineType, esd sql.NullString
	if err := row.Scan(&b.ID, &b.Street, &b.City, &b.PostalCode, &b.Province, &b.Country, &lineType, &b.Orderable, &esd, &b.Presale); err != nil {
		return nil, err
	}
	b.LineType = subprov.LineType(lineType.String)
	b.EarliestServiceDate = esd.String
	return &b, nil
}

// UpsertBuilding writes a building by id with its normalised search key. A changed address
// re-indexes the subscribers with a line there (their search terms and cards show it).
func (tx *Tx) UpsertBuilding(ctx context.Context, b *subprov.Building, searchKey string, now time.Time) error {
	moved, err := tx.differs(ctx, `SELECT street, city, postal_code, province, country FROM buildings WHERE id = ?`, b.ID,
		b.Street, b.City, b.PostalCode, b.Province, b.Country)
	if err != nil {
		return fmt.Errorf("upsert building %s: %w", b.ID, err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO buildings (id, street, city, postal_code, province, country, line_type, orderable,
			earliest_service_date, presale, search_key, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET street = excluded.street, city = excluded.city, postal_code = excluded.postal_code,
			province = excluded.province, country = excluded.country, line_type = excluded.line_type,
			orderable = excluded.orderable, earliest_service_date = excluded.earliest_service_date,
			presale = excluded.presale, search_key = excluded.search_key`,
		b.ID, b.Street, b.City, b.PostalCode, b.Province, b.Country, nullStr(string(b.LineType)), b.Orderable,
		nullStr(b.EarliestServiceDate), b.Presale, searchKey, now.UTC())
	if err != nil {
		return fmt.Errorf("upsert building %s: %w", b.ID, err)
	}
	if moved {
		return tx.reindexLinesAt(ctx, "building_id", b.ID)
	}
	return nil
}

// differs reports whether the row that query (one ? for id) reads differs from want, column
// by column; a missing row is no change (nothing refers to it yet).
func (tx *Tx) differs(ctx context.Context, query, id string, want ...string) (bool, error) {
	got := make([]sql.NullString, len(want))
	dest := make([]any, len(want))
	for i := range got {
		dest[i] = &got[i]
	}
	switch err := tx.QueryRow(ctx, query, id).Scan(dest...); {
	case errors.Is(err, sql.ErrNoRows):
		return false, nil
	case err != nil:
		return false, err
	}
	for i, w := range want {
		if got[i].String != w {
			return true, nil
		}
	}
	return false, nil
}

// reindexLinesAt re-indexes, at commit, every subscriber with a line whose column
// (building_id or unit_id) is id. Addresses change rarely (fixture loads): the lines are
// found by a scan where no index serves.
func (tx *Tx) reindexLinesAt(ctx context.Context, column, id string) error {
	ids, err := QueryStrings(ctx, tx, "subscribers at "+id, `SELECT DISTINCT subscriber_id FROM subscriptions WHERE `+column+` = ?`, id)
	if err != nil {
		return err
	}
	for _, sub := range ids {
		tx.reindexAtCommit(sub)
	}
	return nil
}

// SetCoverage makes exactly providerIDs cover building id.
func (tx *Tx) SetCoverage(ctx context.Context, buildingID string, providerIDs []string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM building_providers WHERE building_id = ?`, buildingID); err != nil {
		return fmt.Errorf("reset coverage of %s: %w", buildingID, err)
	}
	for _, p := range providerIDs {
		if _, err := tx.Exec(ctx, `INSERT INTO building_providers (building_id, provider_id) VALUES (?, ?)`, buildingID, p); err != nil {
			return fmt.Errorf("cover %s by %s: %w", buildingID, p, err)
		}
	}
	return nil
}

// UpsertUnit writes a suite by id; a renumbered suite re-indexes its subscribers.
func (tx *Tx) UpsertUnit(ctx context.Context, u *subprov.Unit, now time.Time) error {
	moved, err := tx.differs(ctx, `SELECT building_id, unit_number, COALESCE(postal_unit, '') FROM units WHERE id = ?`, u.ID,
		u.BuildingID, u.UnitNumber, u.PostalUnit)
	if err != nil {
		return fmt.Errorf("upsert unit %s: %w", u.ID, err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO units (id, building_id, unit_number, postal_unit, created_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET building_id = excluded.building_id, unit_number = excluded.unit_number,
			postal_unit = excluded.postal_unit`,
		u.ID, u.BuildingID, u.UnitNumber, nullStr(u.PostalUnit), now.UTC())
	if err != nil {
		return fmt.Errorf("upsert unit %s: %w", u.ID, err)
	}
	if moved {
		return tx.reindexLinesAt(ctx, "unit_id", u.ID)
	}
	return nil
}

// UpsertPort writes a switch port by (switch, port).
func (tx *Tx) UpsertPort(ctx context.Context, p *subprov.Port, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO ports (id, building_id, unit_id, switch_name, port_name, location_hash, location_identifier, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (switch_name, port_name) DO UPDATE SET building_id = excluded.building_id, unit_id = excluded.unit_id,
			location_hash = excluded.location_hash, location_identifier = excluded.location_identifier`,
		p.ID, p.BuildingID, nullStr(p.UnitID), p.Switch, p.Name, nullStr(p.LocationHash), nullStr(p.LocationIdentifier), now.UTC())
	if err != nil {
		return fmt.Errorf("upsert port %s/%s: %w", p.Switch, p.Name, err)
	}
	// A switch named for the first time joins the inventory with the default driver.
	return tx.EnsureSwitch(ctx, p.Switch, now)
}

// CoveredBuilding returns a building only if providerID covers it.
func (s *Store) CoveredBuilding(ctx context.Context, providerID, buildingID string) (*subprov.Building, error) {
	return coveredBuilding(ctx, s.R(), providerID, buildingID)
}

// CoveredBuilding is Store.CoveredBuilding as tx sees it: a transaction never waits for a
// second connection.
func (tx *Tx) CoveredBuilding(ctx context.Context, providerID, buildingID string) (*subprov.Building, error) {
	return coveredBuilding(ctx, tx, providerID, buildingID)
}

func coveredBuilding(ctx context.Context, q Querier, providerID, buildingID string) (*subprov.Building, error) {
	b, err := scanBuilding(q.QueryRow(ctx, `SELECT `+buildingColumns+` FROM buildings b
		JOIN building_providers bp ON bp.building_id = b.id AND bp.provider_id = ? WHERE b.id = ?`, providerID, buildingID))
	if err != nil {
		return nil, fmt.Errorf("building %s of provider %s: %w", buildingID, providerID, err)
	}
	return b, nil
}

// Building returns a building by id, whoever covers it.
func (s *Store) Building(ctx context.Context, id string) (*subprov.Building, error) {
	b, err := scanBuilding(s.R().QueryRow(ctx, `SELECT `+buildingColumns+` FROM buildings b WHERE b.id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("building %s: %w", id, err)
	}
	return b, nil
}

// SearchBuildings returns buildings covered by providerID whose search key has every token as
// a word prefix, at most limit, in a stable order. Tokens come from address.Tokens, which
// leaves only letters and digits, so they need no LIKE escaping.
func (s *Store) SearchBuildings(ctx context.Context, providerID string, tokens []string, limit int) ([]*subprov.Building, error) {
	q := `SELECT ` + buildingColumns + ` FROM buildings b
		JOIN building_providers bp ON bp.building_id = b.id AND bp.provider_id = ? WHERE 1 = 1`
	args := []any{providerID}
	for _, t := range tokens {
		q += ` AND b.search_key LIKE ?`
		args = append(args, "% "+t+"%")
	}
	q += ` ORDER BY b.street, b.city, b.id LIMIT ?`
	args = append(args, limit)
	return sqltext.QueryAll(ctx, s.R(), "search buildings", scanBuilding, q, args...)
}

// liveOnUnit is true while a line holds the suite (holdsPlace): pending, running or
// suspended, or cancelled and not yet deprovisioned; exactly when an order for it is refused.
const liveOnUnit = `EXISTS (SELECT 1 FROM subscriptions s WHERE s.unit_id = u.id AND ` + holdsPlace + `)`

// UnitsOfBuilding lists a building's suites in natural order with their availability.
func (s *Store) UnitsOfBuilding(ctx context.Context, buildingID string) ([]subprov.UnitAvailability, error) {
	rows, err := s.R().Query(ctx, `SELECT u.id, u.building_id, u.unit_number, u.postal_unit, `+liveOnUnit+`
		FROM units u WHERE u.building_id = ? ORDER BY LENGTH(u.unit_number), u.unit_number`, buildingID)
	if err != nil {
		return nil, fmt.Errorf("units of %s: %w", buildingID, err)
	}
	defer rows.Close()
	var out []subprov.UnitAvailability
	for rows.Next() {
		var u subprov.UnitAvailability
		var postal sql.NullString
		var taken bool
		if err := rows.Scan(&u.ID, &u.BuildingID, &u.UnitNumber, &postal, &taken); err != nil {
			return nil, fmt.Errorf("scan unit: %w", err)
		}
		u.PostalUnit = postal.String
		u.Available = !taken
		out = append(out, u)
	}
	return out, rows.Err()
}

// Unit returns a suite by id.
func (s *Store) Unit(ctx context.Context, id string) (*subprov.Unit, error) {
	var u subprov.Unit
	var postal sql.NullString
	err := s.R().QueryRow(ctx, `SELECT id, building_id, unit_number, postal_unit FROM units WHERE id = ?`, id).
		Scan(&u.ID, &u.BuildingID, &u.UnitNumber, &postal)
	if err != nil {
		return nil, fmt.Errorf("unit %s: %w", id, err)
	}
	u.PostalUnit = postal.String
	return &u, nil
}

// LocationByPort resolves a port by location_hash, or else by location_identifier. The hash
// wins when both are given, so the identifier is only consulted without one.
func (s *Store) LocationByPort(ctx context.Context, hash, identifier string) (*subprov.PortLocation, error) {
	return s.LocationByPortFor(ctx, "", hash, identifier)
}

// LocationByPortFor is LocationByPort that also tells whether providerID covers the port's
// building (PortLocation.Covered), in the same round trip: an order at a port needs both, and
// the building read with the port is the one CoveredBuilding would return.
func (s *Store) LocationByPortFor(ctx context.Context, providerID, hash, identifier string) (*subprov.PortLocation, error) {
	where, arg := `p.location_hash = ?`, hash
	if hash == "" {
		where, arg = `p.location_identifier = ?`, identifier
	}
	var l subprov.PortLocation
	var unitID, unitNumber, postal, lh, li, lineType, esd sql.NullString
	err := s.R().QueryRow(ctx, `SELECT p.id, p.building_id, p.unit_id, p.switch_name, p.port_name, p.location_hash, p.location_identifier,
			u.unit_number, u.postal_unit, b.street, b.city, b.postal_code, b.province, b.country, b.line_type, b.orderable,
			b.earliest_service_date, b.presale,
			EXISTS (SELECT 1 FROM building_providers bp WHERE bp.building_id = b.id AND bp.provider_id = ?)
		FROM ports p JOIN buildings b ON b.id = p.building_id LEFT JOIN units u ON u.id = p.unit_id
		WHERE `+where, providerID, arg).Scan(&l.Port.ID, &l.Port.BuildingID, &unitID, &l.Port.Switch, &l.Port.Name, &lh, &li,
		&unitNumber, &postal, &l.Building.Street, &l.Building.City, &l.Building.PostalCode, &l.Building.Province,
		&l.Building.Country, &lineType, &l.Building.Orderable, &esd, &l.Building.Presale, &l.Covered)
	if err != nil {
		return nil, fmt.Errorf("location by port: %w", err)
	}
	l.Building.ID = l.Port.BuildingID
	l.Building.LineType = subprov.LineType(lineType.String)
	l.Building.EarliestServiceDate = esd.String
	l.Port.UnitID, l.Port.LocationHash, l.Port.LocationIdentifier = unitID.String, lh.String, li.String
	if unitID.Valid {
		l.Unit = &subprov.Unit{ID: unitID.String, BuildingID: l.Port.BuildingID, UnitNumber: unitNumber.String, PostalUnit: postal.String}
	}
	return &l, nil
}

// CoveringProviders returns the ids of providers covering a building.
func (s *Store) CoveringProviders(ctx context.Context, buildingID string) ([]string, error) {
	return coveringProviders(ctx, s.R(), buildingID)
}

// CoveringProviders is the same read inside tx.
func (tx *Tx) CoveringProviders(ctx context.Context, buildingID string) ([]string, error) {
	return coveringProviders(ctx, tx, buildingID)
}

func coveringProviders(ctx context.Context, q Querier, buildingID string) ([]string, error) {
	return QueryStrings(ctx, q, "coverage of "+buildingID, `SELECT provider_id FROM building_providers WHERE building_id = ? ORDER BY provider_id`, buildingID)
}

// PortIDOfUnit returns the port wired to a suite, or "" when the suite has none.
func (s *Store) PortIDOfUnit(ctx context.Context, unitID string) (string, error) {
	var id string
	err := s.R().QueryRow(ctx, `SELECT id FROM ports WHERE unit_id = ? ORDER BY id LIMIT 1`, unitID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("port of unit %s: %w", unitID, err)
	}
	return id, nil
}

// UnitHeldByOther reports whether a line other than exceptID holds the suite (holdsPlace):
// pending, running or suspended, or cancelled and not yet deprovisioned.
func (s *Store) UnitHeldByOther(ctx context.Context, unitID, exceptID string) (bool, error) {
	var n int
	err := s.R().QueryRow(ctx, `SELECT COUNT(*) FROM subscriptions s WHERE s.unit_id = ? AND s.id <> ? AND `+holdsPlace,
		unitID, exceptID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("suite %s held: %w", unitID, err)
	}
	return n > 0, nil
}
