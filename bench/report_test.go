package main

import "testing"

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
