package store

import (
	"context"
	"testing"
)

// TestPauseCheckpointsFreesTheFile: paused, the checkpointer has stopped and closed its
// connection, so nothing but the writer holds the file and it can leave WAL mode (subprov
// gen's bulk load does); resumed (twice: gen restores on every path), one checkpointer runs.
func TestPauseCheckpointsFreesTheFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTestSQLite(t)
	running := s.checkpoints
	resume, err := s.PauseCheckpoints()
	if err != nil {
		t.Fatal(err)
	}
	if err := running.Ping(ctx); err == nil || s.checkpoints != nil {
		t.Fatalf("paused: the checkpointer's connection still answers (%v) or it is still set", err)
	}
	for _, mode := range []string{"off", "wal"} {
		var got string
		if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode="+mode).Scan(&got); err != nil || got != mode {
			t.Fatalf("journal_mode=%s with checkpoints paused: %q, %v", mode, got, err)
		}
	}
	if err := resume(); err != nil {
		t.Fatal(err)
	}
	first := s.checkpoints
	if err := resume(); err != nil || s.checkpoints != first || first == nil {
		t.Fatalf("second resume: %v; checkpointer replaced or missing", err)
	}
	if err := first.Ping(ctx); err != nil {
		t.Fatalf("resumed checkpointer's connection: %v", err)
	}
}

// TestSQLiteConnectionSettings: the writer keeps statement journals in memory
// (SQLiteWriterTempStore); the readers keep SQLite's default.
func TestSQLiteConnectionSettings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTestSQLite(t)
	for _, tc := range []struct {
		name string
		q    Querier
		want int
	}{{"writer", reader{s.db, s.Dialect}, SQLiteWriterTempStore}, {"readers", s.R(), 0}} {
		var got int
		if err := tc.q.QueryRow(ctx, "PRAGMA temp_store").Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("%s: temp_store %d, want %d", tc.name, got, tc.want)
		}
	}
}
