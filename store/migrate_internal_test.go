package store

import (
	"strings"
	"testing"
)

// TestEmbeddedMigrationsHaveValidHeaders fails when a migration's compatible-with header is
// malformed or names a version newer than the migration itself.
func TestEmbeddedMigrationsHaveValidHeaders(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.compatibleWith > m.version || m.compatibleWith < 0 {
			t.Errorf("%s: compatible-with %d", m.name, m.compatibleWith)
		}
	}
}

func TestParseCompatibleWith(t *testing.T) {
	tests := []struct {
		name, sql string
		want      int
		err       string
	}{
		{"no header: the version before", "-- adds a column\nALTER TABLE t ADD COLUMN c INTEGER;", 41, ""},
		{"older binaries still work", "-- compatible-with: 38\n-- adds a column\nALTER TABLE t ADD COLUMN c INTEGER;", 38, ""},
		{"after other comments", "-- drops the old column\n--compatible-with:42\nALTER TABLE t DROP COLUMN c;", 42, ""},
		{"only among the leading comments", "ALTER TABLE t ADD COLUMN c INTEGER;\n-- compatible-with: 50\n", 41, ""},
		{"newer than the migration", "-- compatible-with: 43\n", 0, "newer than the migration itself"},
		{"not a number", "-- compatible-with: forty\n", 0, "malformed header"},
		{"no colon", "-- compatible-with 40\n", 0, "malformed header"},
		{"empty", "-- compatible-with:\n", 0, "malformed header"},
		{"negative", "-- compatible-with: -1\n", 0, "not a version"},
		{"twice", "-- compatible-with: 40\n-- compatible-with: 41\n", 0, "a second"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCompatibleWith(42, tt.sql)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("= %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

// TestSplitStatements: a migration splits on the semicolons that end its lines, comment lines
// dropped, but not inside a function's body quoted by $$.
func TestSplitStatements(t *testing.T) {
	for _, c := range []struct {
		name, sql string
		want      []string
	}{
		{"statements", "CREATE TABLE a (x INT);\n-- a comment\n\nCREATE INDEX a_x\n    ON a (x);\n", []string{"CREATE TABLE a (x INT)", "CREATE INDEX a_x\n    ON a (x)"}},
		{"a semicolon inside a line", "INSERT INTO a VALUES (';');\n", []string{"INSERT INTO a VALUES (';')"}},
		{"a function's body", "CREATE FUNCTION f() RETURNS trigger AS $$\nBEGIN\n    x := 1;\n    RETURN NULL;\nEND $$;\nCREATE TABLE b (y INT);\n",
			[]string{"CREATE FUNCTION f() RETURNS trigger AS $$\nBEGIN\n    x := 1;\n    RETURN NULL;\nEND $$", "CREATE TABLE b (y INT)"}},
		{"a body on one line", "CREATE FUNCTION f() AS $$ BEGIN RETURN NULL; END $$;\nSELECT 1;\n", []string{"CREATE FUNCTION f() AS $$ BEGIN RETURN NULL; END $$", "SELECT 1"}},
	} {
		if got := splitStatements(c.sql); strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
