package inventory

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// An import is a CSV file with one row per unit: a header row names the columns, after the
// keys of a building, a unit and a port row. A building's columns repeat on each of its units'
// rows; its id is building_id (the key a unit names its building by) and a unit's is unit_id
// (the key a port names its unit by). Rows with the same building_id, or without one and with
// the same address, are one building. The port columns are optional: a row that fills any of
// them wires a port to its unit.

// ImportColumns are the columns an import may have; street and unit_number are required.
var ImportColumns = []string{"building_id", "provider_ids", "street", "city", "postal_code", "province", "country",
	"line_type", "orderable", "earliest_service_date", "presale", "unit_id", "unit_number", "postal_unit",
	"switch", "port", "location_hash", "location_identifier"}

var buildingColumns = []string{"building_id", "provider_ids", "street", "city", "postal_code", "province", "country",
	"line_type", "orderable", "earliest_service_date", "presale"}

// ImportProblem is one problem of an import: the row (the line of the file, the header being
// 1), the column and what is wrong.
type ImportProblem struct {
	Row    int    `json:"row"`
	Column string `json:"column"`
	Msg    string `json:"msg"`
}

// ImportProblems are every problem of an import; nothing of it was written.
type ImportProblems []ImportProblem

func (ps ImportProblems) Error() string {
	return fmt.Sprintf("import has %d problem(s)", len(ps))
}

// Imported is what an import created.
type Imported struct {
	Buildings            []*BuildingView
	Units, Ports         int
	BuildingsCreated     int
	importedBuildingRows []*importBuilding
}

type importRow struct {
	line  int
	cells map[string]string
}

func (r importRow) get(col string) string { return strings.TrimSpace(r.cells[col]) }

func (r importRow) opt(col string) *string {
	if v := r.get(col); v != "" {
		return &v
	}
	return nil
}

type importBuilding struct {
	first importRow
	row   Building
	bad   bool
	units []*importUnit
}

type importUnit struct {
	line int
	row  Unit
	port *Port
	bad  bool
}

// importer collects an import's problems.
type importer struct {
	op       *subprov.Operator
	problems ImportProblems
}

func (im *importer) add(line int, column, format string, args ...any) {
	im.problems = append(im.problems, ImportProblem{Row: line, Column: column, Msg: fmt.Sprintf(format, args...)})
}

// rowProblems adds a row's problems under the import's columns; column maps a row field
// ("id", "provider_ids[1]") to its column.
func (im *importer) rowProblems(line int, ps Problems, column func(field string) string) {
	for _, p := range ps {
		im.add(line, column(p.Field), "%s", p.Msg)
	}
}

func fieldColumn(idColumn, whole string) func(string) string {
	return func(field string) string {
		field, _, _ = strings.Cut(field, "[")
		switch field {
		case "id":
			return idColumn
		case "":
			return whole
		}
		return field
	}
}

// parse reads the file into rows, keyed by column.
func (im *importer) parse(data []byte) []importRow {
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if errors.Is(err, io.EOF) {
		im.add(1, "", "empty file: want a header row naming the columns, then one row per unit")
		return nil
	}
	if err != nil {
		im.add(1, "", "not CSV: %v", err)
		return nil
	}
	known := map[string]bool{}
	for _, c := range ImportColumns {
		known[c] = true
	}
	seen := map[string]bool{}
	for i, c := range header {
		c = strings.TrimSpace(strings.TrimPrefix(c, "\ufeff"))
		header[i] = c
		switch {
		case !known[c]:
			im.add(1, c, "unknown column; want %s", strings.Join(ImportColumns, ", "))
		case seen[c]:
			im.add(1, c, "column named twice")
		}
		seen[c] = true
	}
	missing := false
	for _, c := range []string{"street", "unit_number"} {
		if !seen[c] {
			im.add(1, c, "required column")
			missing = true
		}
	}
	if missing {
		return nil // every row would lack them too
	}
	var rows []importRow
	for {
		line, _ := r.FieldPos(0)
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				im.add(pe.StartLine, "", "not CSV: %v", pe.Err)
				return rows
			}
			im.add(line, "", "not CSV: %v", err)
			return rows
		}
		line, _ = r.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue // a blank line
		}
		if len(rec) != len(header) {
			im.add(line, "", "%d cells; the header names %d columns", len(rec), len(header))
			continue
		}
		row := importRow{line: line, cells: map[string]string{}}
		for i, c := range header {
			row.cells[c] = rec[i]
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 && len(im.problems) == 0 {
		im.add(2, "", "no rows: want one row per unit after the header")
	}
	return rows
}

func (im *importer) boolean(row importRow, col string) *bool {
	v := row.get(col)
	if v == "" {
		return nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		im.add(row.line, col, "want true or false")
		return nil
	}
	return &b
}

// buildings groups the rows into buildings and checks each row's values and the rows against
// each other.
func (im *importer) buildings(op *subprov.Operator, rows []importRow) []*importBuilding {
	var out []*importBuilding
	byKey := map[string]*importBuilding{}
	unitIDs, units, ports, hashes, idents := map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	once := func(seen map[string]int, key string, line int, column, what string) bool {
		if prev, ok := seen[key]; ok {
			im.add(line, column, "the same %s as row %d", what, prev)
			return false
		}
		seen[key] = line
		return true
	}
	for _, row := range rows {
		key := "id\x00" + row.get("building_id")
		if row.get("building_id") == "" {
			key = "address\x00" + strings.ToLower(strings.Join([]string{row.get("street"), row.get("city"), row.get("postal_code"),
				row.get("province"), row.get("country")}, "\x00"))
		}
		b, ok := byKey[key]
		if !ok {
			b = &importBuilding{first: row}
			var ps Problems
			b.row = Building{ID: row.get("building_id"), Street: row.get("street"), City: row.get("city"),
				PostalCode: row.get("postal_code"), Province: row.get("province"), Country: row.get("country"),
				LineType: row.opt("line_type"), Orderable: im.boolean(row, "orderable"),
				EarliestServiceDate: row.opt("earliest_service_date")}
			if p := im.boolean(row, "presale"); p != nil {
				b.row.Presale = *p
			}
			var ids []string
			if v := row.get("provider_ids"); v != "" {
				ids = strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ',' || r == ' ' })
			}
			b.row.ProviderIDs = coverage(op, ids, &ps)
			if b.row.ProviderIDs == nil {
				b.row.ProviderIDs = []string{}
			}
			ps = append(ps, b.row.Check()...)
			b.row.ID = newID(b.row.ID)
			b.bad = len(ps) > 0
			im.rowProblems(row.line, ps, fieldColumn("building_id", "street"))
			byKey[key] = b
			out = append(out, b)
		} else {
			for _, c := range buildingColumns {
				if row.get(c) != b.first.get(c) {
					im.add(row.line, c, "differs from row %d, the first row of this building", b.first.line)
					b.bad = true
				}
			}
		}
		u := &importUnit{line: row.line, row: Unit{ID: newID(row.get("unit_id")), BuildingID: b.row.ID,
			UnitNumber: row.get("unit_number"), PostalUnit: row.opt("postal_unit")}}
		ps := u.row.Check()
		if row.get("unit_id") != "" && !once(unitIDs, row.get("unit_id"), row.line, "unit_id", "unit_id") {
			u.bad = true
		}
		if u.row.UnitNumber != "" && !once(units, key+"\x00"+u.row.UnitNumber, row.line, "unit_number", "unit of this building") {
			u.bad = true
		}
		if row.get("switch") != "" || row.get("port") != "" || row.get("location_hash") != "" || row.get("location_identifier") != "" {
			uid := u.row.ID
			u.port = &Port{BuildingID: b.row.ID, UnitID: &uid, Switch: row.get("switch"), Port: row.get("port"),
				LocationHash: row.opt("location_hash"), LocationIdentifier: row.opt("location_identifier")}
			ps = append(ps, u.port.Check()...)
			if u.port.Switch != "" && u.port.Port != "" && !once(ports, u.port.Switch+"\x00"+u.port.Port, row.line, "port", "switch and port") {
				u.bad = true
			}
			if h := row.get("location_hash"); h != "" && !once(hashes, h, row.line, "location_hash", "location_hash") {
				u.bad = true
			}
			if l := row.get("location_identifier"); l != "" && !once(idents, l, row.line, "location_identifier", "location_identifier") {
				u.bad = true
			}
		}
		if len(ps) > 0 {
			u.bad = true
		}
		im.rowProblems(row.line, ps, fieldColumn("unit_id", "unit_number"))
		b.units = append(b.units, u)
	}
	return out
}

// write writes the buildings, their units and their ports inside tx, checking each against
// the rows already stored; a row with a problem, or whose building or unit has one, is not
// written, and neither is anything once the import has one (the caller rolls back).
func (im *importer) write(ctx context.Context, tx *store.Tx, bs []*importBuilding, res *Imported, now subprov.Clock) error {
	at := now.Now()
	for _, b := range bs {
		line := b.first.line
		var ps Problems
		if b.first.get("building_id") != "" {
			if err := idFree(ctx, tx, &ps, "id", "buildings", "a building", b.row.ID); err != nil {
				return err
			}
		}
		refs, err := BuildingRefs(ctx, tx, b.row)
		if err != nil {
			return err
		}
		ps = append(ps, refs...)
		im.rowProblems(line, ps, fieldColumn("building_id", "street"))
		written := !b.bad && len(ps) == 0
		if written {
			if err := WriteBuilding(ctx, tx, b.row, at); err != nil {
				return err
			}
			res.BuildingsCreated++
			res.importedBuildingRows = append(res.importedBuildingRows, b)
		}
		for _, u := range b.units {
			if err := im.unit(ctx, tx, u, written, res, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// unit checks a unit's row and its port's against the rows already stored and, when neither
// it nor its building (written) has a problem, writes them.
func (im *importer) unit(ctx context.Context, tx *store.Tx, u *importUnit, written bool, res *Imported, at time.Time) error {
	var ps Problems
	if err := idFree(ctx, tx, &ps, "id", "units", "a unit", u.row.ID); err != nil {
		return err
	}
	if u.port != nil {
		taken, err := portTaken(ctx, tx, *u.port)
		if err != nil {
			return err
		}
		ps = append(ps, taken...)
		switch err := switchOpenTo(ctx, tx, im.op, u.port.Switch); {
		case errors.Is(err, ErrSharedSwitch):
			ps.add("switch", "switch %q serves another provider's buildings: only a platform administrator adds ports to it", u.port.Switch)
		case err != nil:
			return err
		}
	}
	if !written || u.bad || len(ps) > 0 {
		im.rowProblems(u.line, ps, fieldColumn("unit_id", "unit_number"))
		return nil
	}
	ps, err := WriteUnit(ctx, tx, u.row, at)
	if err != nil {
		return err
	}
	if len(ps) > 0 {
		im.rowProblems(u.line, ps, fieldColumn("unit_id", "unit_number"))
		return nil
	}
	res.Units++
	if u.port == nil {
		return nil
	}
	if ps, err = WritePort(ctx, tx, *u.port, store.NewID(), at); err != nil {
		return err
	}
	im.rowProblems(u.line, ps, fieldColumn("unit_id", "location_hash"))
	if len(ps) == 0 {
		res.Ports++
	}
	return nil
}

// Import creates the buildings, units and ports of a CSV file (one row per unit) in one
// transaction: with any problem in any row, nothing is written and every problem is listed
// (ImportProblems). A provider's operator imports buildings covered by its own provider.
func (s *Service) Import(ctx context.Context, op *subprov.Operator, data []byte) (*Imported, error) {
	if err := op.Authorize(subprov.PermAdminister); err != nil {
		return nil, err
	}
	im := &importer{op: op}
	rows := im.parse(data)
	bs := im.buildings(op, rows)
	if len(im.problems) > 0 && len(rows) == 0 {
		return nil, im.sorted()
	}
	res := &Imported{}
	parsed := im.problems
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		*res = Imported{}
		im.problems = append(ImportProblems(nil), parsed...)
		if err := im.write(ctx, tx, bs, res, s.Clock); err != nil {
			return err
		}
		if len(im.problems) > 0 {
			return im.sorted()
		}
		now := s.Clock.Now()
		e := subprov.NewAudit(ctx, op.ProviderID, "buildings.imported", "import", store.NewID())
		e.Changes.Set("buildings", 0, res.BuildingsCreated)
		e.Changes.Set("units", 0, res.Units)
		e.Changes.Set("ports", 0, res.Ports)
		if err := tx.RecordAudit(ctx, e, now); err != nil {
			return err
		}
		for _, b := range res.importedBuildingRows {
			rec, err := tx.BuildingRecord(ctx, b.row.ID)
			if err != nil {
				return err
			}
			v, err := withInventory(ctx, tx, op, rec)
			if err != nil {
				return err
			}
			res.Buildings = append(res.Buildings, v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// sorted is the problems by row and column.
func (im *importer) sorted() ImportProblems {
	ps := im.problems
	sort.SliceStable(ps, func(i, j int) bool {
		if ps[i].Row != ps[j].Row {
			return ps[i].Row < ps[j].Row
		}
		return ps[i].Column < ps[j].Column
	})
	return ps
}
