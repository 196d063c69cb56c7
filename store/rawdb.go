package store

import (
	"database/sql"

	"github.com/subprov/subprov/internal/rawdb"
)

func init() {
	rawdb.Register(func(v any) (write, read *sql.DB, ok bool) {
		s, ok := v.(*Store)
		if !ok || s == nil {
			return nil, nil, false
		}
		return s.db, s.rdb, true
	})
}
