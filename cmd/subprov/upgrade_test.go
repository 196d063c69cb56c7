package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/internal/testdb"
	"github.com/subprov/subprov/store"
)

// TestMigrateAndANewerSchema: `migrate --dry-run` lists the pending migrations and applies
// none; `migrate` applies them; serve starts on a schema with a newer, compatible migration
// it does not know (ready, and saying so in its log), and serve, worker and migrate refuse one
// whose migration needs a newer subprov, naming both versions.
func TestMigrateAndANewerSchema(t *testing.T) {
	keepGCPercent(t)
	latest := store.LatestVersion()
	testdb.Each(t, func(t *testing.T, u string) {
		ctx := context.Background()
		e := env(map[string]string{"DATABASE_URL": u, "SUBPROV_ADDR": "127.0.0.1:0", "SUBPROV_LOG_FORMAT": "json"})
		var out, errOut bytes.Buffer
		if err := run(ctx, []string{"migrate", "--dry-run"}, e, &out, &errOut); err != nil {
			t.Fatalf("dry run: %v %s", err, errOut.String())
		}
		for _, w := range []string{"database at schema version 0", "would apply (dry run, nothing applied)", "VERSION", "COMPATIBLE-WITH",
			"job-queue migration"} {
			if !strings.Contains(out.String(), w) {
				t.Errorf("dry run output lacks %q:\n%s", w, out.String())
			}
		}
		for _, row := range []string{`42 +0042_schema_compatibility\.sql +41\n`, fmt.Sprintf(`\n +%d +%04d_\w+\.sql +\d+\n`, latest, latest)} {
			if !regexp.MustCompile(row).MatchString(out.String()) {
				t.Errorf("dry run output lacks a row %s:\n%s", row, out.String())
			}
		}
		s, err := store.Open(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if st, err := s.SchemaState(ctx); err != nil || st.Version != 0 {
			t.Fatalf("after the dry run: %+v, %v", st, err)
		}

		out.Reset()
		if err := run(ctx, []string{"migrate"}, e, &out, &errOut); err != nil {
			t.Fatalf("migrate: %v %s", err, errOut.String())
		}
		if want := fmt.Sprintf("database is at schema version %d\n", latest); !strings.HasSuffix(out.String(), want) {
			t.Fatalf("migrate output lacks %q:\n%s", want, out.String())
		}

		record := func(version, compatibleWith int) {
			t.Helper()
			err := s.InTx(ctx, func(tx *store.Tx) error {
				_, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name, applied_at, compatible_with) VALUES (?, ?, ?, ?)`,
					version, fmt.Sprintf("%04d_newer.sql", version), time.Now().UTC(), compatibleWith)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		record(latest+1, latest)
		if log, want := serveUntilReady(t, e), fmt.Sprintf(`"schema_version":%d,"binary_version":%d`, latest+1, latest); !strings.Contains(log, want) {
			t.Fatalf("log lacks %q:\n%s", want, log)
		}
		out.Reset()
		if err := run(ctx, []string{"migrate", "--dry-run"}, e, &out, &errOut); err != nil || !strings.Contains(out.String(), "no pending migrations") {
			t.Fatalf("dry run on a compatible newer schema: %v\n%s", err, out.String())
		}

		record(latest+2, latest+2)
		want := fmt.Sprintf("the database schema is at version %d and works only with a subprov that knows migration %d or later; this subprov knows migrations up to %d: upgrade subprov", latest+2, latest+2, latest)
		for _, args := range [][]string{{"serve"}, {"worker"}, {"migrate"}, {"migrate", "--dry-run"}} {
			err := run(ctx, args, e, &out, &errOut)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("%s on an incompatible schema: %v", args, err)
			}
		}
	})
}

// serveUntilReady runs `subprov serve`, waits for /readyz to answer 200, and cancels it as
// SIGTERM does; serve must return nil (exit 0). It returns serve's log.
func serveUntilReady(t *testing.T, e func(string) string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errOut syncBuffer
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"serve"}, e, &out, &errOut) }()
	urlRe := regexp.MustCompile(`"url":"(http://127\.0\.0\.1:\d+)"`)
	var base string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && base == ""; time.Sleep(20 * time.Millisecond) {
		if m := urlRe.FindStringSubmatch(errOut.String()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatalf("no listening line in logs:\n%s", errOut.String())
	}
	res, err := http.Get(base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("readyz: %d\n%s", res.StatusCode, errOut.String())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v", err)
		}
	case <-time.After(40 * time.Second):
		t.Fatal("serve did not stop")
	}
	return errOut.String()
}
