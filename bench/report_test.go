package main

import (
	"strings"
	"testing"
	"time"
)

func TestLatestNotesLeaveEarlierReportsOut(t *testing.T) {
	for _, tc := range []struct{ name, notes, want string }{
		{"latest and earlier", "## Targets\n\nmet\n\n## Previous report (commit a)\n\nold\n", "## Targets\n\nmet\n"},
		{"latest only", "## Targets\n\nmet\n", "## Targets\n\nmet\n"},
		{"a later heading that is not a report", "## Targets\n\n### Previous reports are in NOTES\n", "## Targets\n\n### Previous reports are in NOTES\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := latestNotes(tc.notes); got != tc.want {
				t.Errorf("latestNotes(%q) = %q, want %q", tc.notes, got, tc.want)
			}
		})
	}
}

// TestMeSharesNameTheirScenario: each `/me` scenario's share of the ceiling says which one it is.
func TestMeSharesNameTheirScenario(t *testing.T) {
	run := func(name string, requests int64) result {
		return result{name: name, requests: requests, elapsed: time.Second}
	}
	e := &engineResult{ceiling: run("bare", 1000), scenarios: []result{run("GET /partner/subscriber/me", 500), run("agent search: name", 900),
		run("GET /partner/subscriber/me over 1000 logins, under the writes", 200)}}
	var b strings.Builder
	writeMeShares(&b, e)
	want := "- `/partner/subscriber/me` throughput / ceiling (Go client): 50% (target ≥ 40%)\n" +
		"- `/partner/subscriber/me over 1000 logins, under the writes` throughput / ceiling (Go client): 20% (target ≥ 40%)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
