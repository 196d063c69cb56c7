package store

// PendingEventStatements are the statements on a provider's pending events as d writes them,
// for the plan test in events_test.go.
func PendingEventStatements(d Dialect) map[string]string {
	return map[string]string{
		"events to number":        eventsToSequence(d),
		"any event to number":     hasEventsToSequence(d),
		"pending events in order": pendingInOrder(d),
		"hold queued events":      holdQueuedEvents(d),
	}
}
