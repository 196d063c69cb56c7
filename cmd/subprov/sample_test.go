package main

import (
	"bytes"
	"testing"

	"github.com/subprov/subprov/counters"
	"github.com/subprov/subprov/switches"
)

// The sample table: the bytes since each port's last reading, a port not read marked so.
func TestSampleTable(t *testing.T) {
	var out bytes.Buffer
	writeSampled(&out, []sampledRow{
		{"sw-a", counters.PortSampled{Port: "ge-0/0/1", Reading: counters.Reading{LinkUp: true}, Step: counters.Step{Download: 3456789012, Upload: 1234}}},
		{"sw-a", counters.PortSampled{Port: "ge-0/0/2", Reading: counters.Reading{LinkUp: false}}},
		{"sw-a", counters.PortSampled{Port: "ge-0/0/3", Reading: counters.Reading{LinkUp: true}, Stale: true}},
		{"sw-b", counters.PortSampled{Port: "swp1", Err: switches.ErrUnavailable}},
	})
	want := `SWITCH  PORT      LINK        DOWNLOAD    UPLOAD
sw-a    ge-0/0/1  up          3456789012  1234
sw-a    ge-0/0/2  down        0           0
sw-a    ge-0/0/3  up          -           -
sw-b    swp1      unreadable  -           -
`
	if out.String() != want {
		t.Errorf("table:\n%s\nwant:\n%s", out.String(), want)
	}
}
