// Package golden compares a test's output with a golden file kept in the repository; run the
// tests with -update to rewrite the files after a deliberate change, then read the diff.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files the tests compare with")

// Check fails t unless got is the content of the file at path (with -update: writes it first).
// what names the output in the failure ("payload", "commands").
func Check(t testing.TB, path, what, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s:\n--- got\n%s--- want\n%s", what, path, got, want)
	}
}
