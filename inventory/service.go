package inventory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/switches"
)

// Service is the operations surface's inventory, plans and install windows: every read and
// write checks the operator's role first (403 for any id), then its scope (another provider's
// object is not found, exactly as an unknown id). Writes are audited in their transaction, and
// what they write is served at once: serviceability reads the buildings, units, ports and
// plan versions from the database, and no cache holds them.
type Service struct {
	Store *store.Store
	Clock subprov.Clock
	// Sealer seals the switches' passwords; Router tells each switch's breaker (nil on a
	// process without workers, which runs no switch operations: no breaker is shown).
	Sealer *identity.Sealer
	Router *switches.Router
}

// Optional is a field of an edit that may be left out (unchanged), sent as null (cleared) or
// sent with a value.
type Optional[T any] struct {
	Set, Null bool
	V         T
}

// UnmarshalJSON records that the field was sent, and whether as null.
func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(bytes.TrimSpace(b)) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.V)
}

// JSONTypeName names the JSON type the field takes, for a 422 about a value of another type.
func (o Optional[T]) JSONTypeName() string {
	switch any(o.V).(type) {
	case string:
		return "a string or null"
	case bool:
		return "true or false"
	case []string:
		return "an array of strings"
	}
	return "a different type"
}

// invalid is the 422 of a row's problems; whole names the row-level ones.
func invalid(ps Problems, whole string) error {
	return subprov.Invalid(ps.Fields(whole))
}

// notFound turns the store's missing row into the surface's not found (what: "Building").
func notFound(err error, what string) error {
	if errors.Is(err, subprov.ErrNotFound) {
		return subprov.NotFound(what)
	}
	return err
}

// idFree adds a problem at field "id" when table already has a row with id.
func idFree(ctx context.Context, tx *store.Tx, ps *Problems, field, table, what, id string) error {
	if err := tx.LockName(ctx, table+":"+id); err != nil { // the writes are upserts: one create per id at a time
		return err
	}
	found, err := tx.Exists(ctx, table, id)
	if err != nil {
		return fmt.Errorf("check %s: %w", table, err)
	}
	if found {
		ps.add(field, "%s with this id already exists", what)
	}
	return nil
}

// ownProvider fills in a scoped operator's provider for a row that names none, and refuses
// another: to a provider's operator any other provider id is unknown, as one that does not
// exist.
func ownProvider(op *subprov.Operator, providerID *string, ps *Problems) {
	if op.Platform() {
		return
	}
	if *providerID == "" {
		*providerID = op.ProviderID
	}
	if *providerID != op.ProviderID {
		ps.add("provider_id", "no provider with id %q", *providerID)
	}
}

// created records a created object's fields in its audit entry as [null, value].
func created(e *subprov.AuditEntry, fields map[string]any) {
	for k, v := range fields {
		e.Changes[k] = [2]any{nil, v}
	}
}

// newID is id, or a new one when the row names none.
func newID(id string) string {
	if id == "" {
		return store.NewID()
	}
	return id
}

// sameSet reports whether two lists of ids hold the same ids.
func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b))
}
