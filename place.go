package subprov

// LocationKey is the place a line occupies: its suite, or its port when the port belongs to no
// suite. A suite and the port wired to it are one place, so a line ordered at the port
// (direct) and one ordered for the suite (home_drop) compete for the same key.
func LocationKey(unitID, portID string) string {
	if unitID != "" {
		return unitID
	}
	return portID
}

// HoldsPlace reports whether a line holds its place, so that no other line may be ordered
// there: from its order while pending, active or suspended, and once cancelled until the
// deprovisioner has reset its port (its service runs until its end date). The store enforces
// it with a unique index on the place whose predicate is this rule.
func HoldsPlace(status Status, deprovisioned bool) bool {
	switch status {
	case StatusPendingInstall, StatusActive, StatusSuspended:
		return true
	case StatusCancelled:
		return !deprovisioned
	}
	return false
}
