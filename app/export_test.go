package app

import "time"

// ProductionTimeouts are the request time limits the server runs with.
var ProductionTimeouts = [2]time.Duration{readHeaderTimeout, readTimeout}

// SetTimeouts shortens the request time limits for a test and restores them when it ends.
func SetTimeouts(t interface{ Cleanup(func()) }, header, body time.Duration) {
	oldHeader, oldBody := readHeaderTimeout, readTimeout
	readHeaderTimeout, readTimeout = header, body
	t.Cleanup(func() { readHeaderTimeout, readTimeout = oldHeader, oldBody })
}
