// Package engine is the store's database runtime: SQLite's group commit (its one writer), its
// checkpointer and statement cache, and the change feed that tells remembered reads what the
// database changed (both engines). It knows nothing of the store's tables; the store
// persists, this package runs the engine underneath.
package engine

import "database/sql"

// OpenSQLiteConn opens a pool of exactly one connection to the file at path, kept for the
// store's life: the writer, and the connections whose state is their own (the change log's
// reader, the checkpointer).
func OpenSQLiteConn(path, params string) (*sql.DB, error) {
	db, err := sql.Open(SQLiteDriver, "file:"+path+"?"+params)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	return db, nil
}
