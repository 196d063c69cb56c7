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

// KeyedStatements are the statements that name their rows by id and check the provider
// besides, as d writes them for n ids, for the plan test in plans_test.go.
func KeyedStatements(d Dialect, n int) map[string]string {
	return map[string]string{
		"mark events delivered": markDelivered(d, n),
		"search cards":          candidateCards(d, n),
		"service locations":     serviceLocationsOf(d, n),
	}
}
