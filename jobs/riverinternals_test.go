package jobs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/rivertype"

	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestRiverInternals fails loudly when a River upgrade breaks what riverinternals.go relies
// on: the schema River migrates (tables and columns read outside River), the executor's job
// counts, and the plugin hook that hands over the commit wake-up.
func TestRiverInternals(t *testing.T) {
	testdb.EachStore(t, func(t *testing.T, s *store.Store) {
		ctx := context.Background()
		if ok, err := jobTableExists(ctx, s); err != nil || ok {
			t.Fatalf("before River's migrations: job table exists %v, %v; want false", ok, err)
		}
		if err := Migrate(ctx, s); err != nil {
			t.Fatal(err)
		}
		ex := reads(s)
		for _, table := range []string{jobTable, leaderTable} {
			ok, err := ex.TableExists(ctx, &riverdriver.TableExistsParams{Table: table})
			if err != nil || !ok {
				t.Errorf("River's schema has no table %s (%v)", table, err)
			}
		}
		for _, col := range jobColumns {
			ok, err := ex.ColumnExists(ctx, &riverdriver.ColumnExistsParams{Table: jobTable, Column: col})
			if err != nil || !ok {
				t.Errorf("River's job table has no column %s (%v)", col, err)
			}
		}
		if err := Ready(ctx, s); err != nil {
			t.Errorf("Ready after River's migrations: %v", err)
		}

		// Not started: the job inserted below stays available.
		c, err := New(s, Handlers{DeliverMail: func(context.Context, DeliverMail) error { return nil }}, Options{Work: true})
		if err != nil {
			t.Fatal(err)
		}
		if c.pilot.notify == nil {
			t.Error("River handed the driver plugin no NotifyNonTxJobInsert: commits no longer wake the workers")
		}
		if err := c.EnqueueNow(ctx, s, DeliverMail{MailID: "count"}); err != nil {
			t.Fatal(err)
		}
		counts, err := Counts(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		// /metrics reports these states, 0 when a state has no job.
		for _, st := range []string{"available", "scheduled", "running", "retryable", "completed", "cancelled", "discarded", "pending"} {
			if _, ok := counts[st]; !ok {
				t.Errorf("River counts no state %q (counts %v)", st, counts)
			}
		}
		if counts[string(rivertype.JobStateAvailable)] != 1 {
			t.Errorf("counts after one insert: %v, want 1 available", counts)
		}
	})
}

// TestRiverVersionIsTheVerifiedOne: the store's PostgreSQL sessions encode the lib/pq arrays
// River's database/sql driver passes (store/pgarrays.go), and nothing but a reading of River's
// driver says which arrays it passes. An upgrade must read it again and move riverVerified.
func TestRiverVersionIsTheVerifiedOne(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join("..", "go.mod"))
	if err != nil {
		t.Fatalf("read the module's go.mod: %v", err)
	}
	var river []string
	for _, line := range strings.Split(string(mod), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], "github.com/riverqueue/river") {
			continue
		}
		river = append(river, f[0])
		if f[1] != riverVerified {
			t.Errorf("%s is %s; riverinternals.go was checked against %s: check its array parameters, driver hooks and schema again",
				f[0], f[1], riverVerified)
		}
	}
	if !slices.Contains(river, "github.com/riverqueue/river/riverdriver/riverdatabasesql") {
		t.Errorf("River's database/sql driver is not among the module's requirements (%v)", river)
	}
}
