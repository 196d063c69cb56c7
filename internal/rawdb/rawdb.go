// Package rawdb hands out the store's connection pools to the few that run statements the
// store does not: River's driver (jobs), the bulk generator (gen), the benchmarks and tests.
// Everything else reads and writes through the store's methods, so that on SQLite every write
// takes its turn at the group committer and every engine error comes back translated. The
// pools are no field of the store for that reason; the store registers them here instead.
package rawdb

import (
	"database/sql"
	"fmt"
)

// Pools is how the store gives out its pools: write (on SQLite the one writer connection) and
// read (a pool of its own on both engines). ok is false for a value that is no store.
type Pools func(store any) (write, read *sql.DB, ok bool)

var pools Pools

// Register is called once, by the store's package initialisation.
func Register(p Pools) { pools = p }

// Writer is the store's write pool.
func Writer(store any) *sql.DB {
	w, _ := must(store)
	return w
}

// Reader is the store's read pool.
func Reader(store any) *sql.DB {
	_, r := must(store)
	return r
}

func must(store any) (write, read *sql.DB) {
	if pools == nil {
		panic("rawdb: the store package registered no pools")
	}
	w, r, ok := pools(store)
	if !ok {
		// A programming error, never input: the argument is always a *store.Store.
		panic(fmt.Sprintf("rawdb: %T is no store", store))
	}
	return w, r
}
