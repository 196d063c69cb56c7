package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/subprov/subprov"
)

// The reads a fixture load makes inside its own transaction: it checks each reference of the
// file against the rows loaded before it, its own earlier rows included, so none of them can
// go through the read pool.

// referenced lists the tables a fixture may name a row of by id.
var referenced = map[string]bool{"providers": true, "buildings": true, "units": true, "plans": true, "plan_versions": true, "install_windows": true}

// Exists reports whether table holds a row with id; table is one a fixture references.
func (tx *Tx) Exists(ctx context.Context, table, id string) (bool, error) {
	if !referenced[table] {
		return false, fmt.Errorf("exists: %s is no referenced table", table)
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM `+table+` WHERE id = ?`, id).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// InstallJobExists reports whether an install job has id.
func (tx *Tx) InstallJobExists(ctx context.Context, id string) (bool, error) {
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM install_jobs WHERE id = ?`, id).Scan(&n); err != nil {
		return false, err
	}
	return n > 0, nil
}

// UnitBuildingID is the building of a suite.
func (tx *Tx) UnitBuildingID(ctx context.Context, unitID string) (string, error) {
	var id string
	err := tx.QueryRow(ctx, `SELECT building_id FROM units WHERE id = ?`, unitID).Scan(&id)
	return id, err
}

// BuildingLineType is a building's line type, nil when it has none.
func (tx *Tx) BuildingLineType(ctx context.Context, buildingID string) (*string, error) {
	var line *string
	err := tx.QueryRow(ctx, `SELECT line_type FROM buildings WHERE id = ?`, buildingID).Scan(&line)
	return line, err
}

// CustomerNumberOf is a subscriber's customer number, nil when it has none.
func (tx *Tx) CustomerNumberOf(ctx context.Context, subscriberID string) (*string, error) {
	var number *string
	err := tx.QueryRow(ctx, `SELECT customer_number FROM subscribers WHERE id = ?`, subscriberID).Scan(&number)
	return number, err
}

// PlanVersionProvider is the provider that sells a plan version.
func (tx *Tx) PlanVersionProvider(ctx context.Context, id string) (string, error) {
	var providerID string
	err := tx.QueryRow(ctx, `SELECT provider_id FROM plan_versions WHERE id = ?`, id).Scan(&providerID)
	return providerID, err
}

// PortName is the switch and the name of a port.
func (tx *Tx) PortName(ctx context.Context, portID string) (switchName, portName string, err error) {
	err = tx.QueryRow(ctx, `SELECT switch_name, port_name FROM ports WHERE id = ?`, portID).Scan(&switchName, &portName)
	return switchName, portName, err
}

// PlanSpeeds is a plan version's download and upload speeds.
func (tx *Tx) PlanSpeeds(ctx context.Context, planVersionID string) (downMbps, upMbps int, err error) {
	err = tx.QueryRow(ctx, `SELECT download_mbps, upload_mbps FROM plan_versions WHERE id = ?`, planVersionID).Scan(&downMbps, &upMbps)
	return downMbps, upMbps, err
}

// UnlessDuplicate runs write inside a savepoint and rolls back to it when a unique index
// refuses the write (refused true); any other failure of write is returned as it is. On
// PostgreSQL a refused statement aborts the whole transaction: rolled back to the savepoint,
// the transaction goes on as it does on SQLite.
func (tx *Tx) UnlessDuplicate(ctx context.Context, write func() error) (refused bool, err error) {
	if _, err := tx.Exec(ctx, `SAVEPOINT unless_duplicate`); err != nil {
		return false, fmt.Errorf("savepoint: %w", err)
	}
	err = write()
	refused = err != nil && errors.Is(err, subprov.ErrDuplicate)
	if refused {
		if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT unless_duplicate`); err != nil {
			return false, fmt.Errorf("roll back to savepoint: %w", err)
		}
	} else if err != nil {
		return false, err
	}
	if _, err := tx.Exec(ctx, `RELEASE SAVEPOINT unless_duplicate`); err != nil {
		return false, fmt.Errorf("release savepoint: %w", err)
	}
	return refused, nil
}

// Field is one column of a row read as text, for a report of what a write changed.
type Field struct {
	Column, Value string
	Null          bool
}

// identifier is a table or column name this file builds into a query: code gives them, never
// input, and they are checked all the same.
var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// RowFields reads the row of table whose key columns hold the key values (given as pairs:
// column, value, column, value…), every column as text in the table's order; nil when there
// is no such row. A fixture load in update mode reads each row before and after it writes it
// to report what changed.
func (tx *Tx) RowFields(ctx context.Context, table string, key ...any) ([]Field, error) {
	if !identifier.MatchString(table) || len(key) == 0 || len(key)%2 != 0 {
		return nil, fmt.Errorf("row of %q: bad table or key", table)
	}
	var where []string
	var args []any
	for i := 0; i < len(key); i += 2 {
		col, ok := key[i].(string)
		if !ok || !identifier.MatchString(col) {
			return nil, fmt.Errorf("row of %s: bad key column %v", table, key[i])
		}
		where = append(where, col+" = ?")
		args = append(args, key[i+1])
	}
	rows, err := tx.Query(ctx, `SELECT * FROM `+table+` WHERE `+strings.Join(where, " AND "), args...)
	if err != nil {
		return nil, fmt.Errorf("row of %s: %w", table, err)
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, fmt.Errorf("row of %s: %w", table, err)
	}
	if !rows.Next() {
		return nil, rows.Err()
	}
	vals := make([]any, len(types))
	dest := make([]any, len(types))
	for i := range vals {
		dest[i] = &vals[i]
	}
	if err := rows.Scan(dest...); err != nil {
		return nil, fmt.Errorf("row of %s: %w", table, err)
	}
	fields := make([]Field, len(types))
	for i, ct := range types {
		fields[i] = Field{Column: ct.Name()}
		switch v := vals[i].(type) {
		case nil:
			fields[i].Null = true
		case []byte:
			fields[i].Value = string(v)
		case time.Time:
			fields[i].Value = v.UTC().Format(time.RFC3339Nano)
		case int64:
			// SQLite keeps a boolean as 0 or 1; its declared type tells it from a number.
			if strings.Contains(strings.ToUpper(ct.DatabaseTypeName()), "BOOL") {
				fields[i].Value = strconv.FormatBool(v != 0)
			} else {
				fields[i].Value = strconv.FormatInt(v, 10)
			}
		default:
			fields[i].Value = fmt.Sprint(v)
		}
	}
	return fields, rows.Err()
}

// OperatorPasswordHash is the password hash of the operator with email; found is false when
// there is none.
func (tx *Tx) OperatorPasswordHash(ctx context.Context, email string) (hash string, found bool, err error) {
	err = tx.QueryRow(ctx, `SELECT password_hash FROM operators WHERE email = ?`, email).Scan(&hash)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("operator password: %w", err)
	}
	return hash, true, nil
}
