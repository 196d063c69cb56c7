package testdb

import (
	"strconv"
	"testing"
	"time"
)

func TestIsStale(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	stamp := func(ago time.Duration) string { return strconv.FormatInt(now.Add(-ago).Unix(), 10) }
	current := templatePrefix + "app_0123456789abcdef"
	for _, c := range []struct {
		name, db, comment string
		want              bool
	}{
		{"a copy of this run", clonePrefix + stamp(time.Minute) + "_0a1b2c3d", "", false},
		{"a copy of a killed run", clonePrefix + stamp(3*time.Hour) + "_0a1b2c3d", "", true},
		{"a copy named otherwise", clonePrefix + "x_0a1b2c3d", "", false},
		{"the current template, however old", current, stamp(30 * 24 * time.Hour), false},
		{"another template used today", templatePrefix + "app_fedcba9876543210", stamp(time.Hour), false},
		{"another template unused for two days", templatePrefix + "app_fedcba9876543210", stamp(48 * time.Hour), true},
		{"another template without its mark", templatePrefix + "store_fedcba9876543210", "", true},
		{"an unfinished template", current + "_building", "", true},
		{"a database of someone else's", "subprov_bench_10000", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := isStale(c.db, c.comment, current, now); got != c.want {
				t.Errorf("isStale(%q, %q) = %v, want %v", c.db, c.comment, got, c.want)
			}
		})
	}
}
