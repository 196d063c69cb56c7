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

// KeyedStatement is a statement that names its rows by id and checks their provider besides,
// with its arguments.
type KeyedStatement struct {
	Query string
	Args  []any
}

// KeyedStatements are those statements for one provider and ids, for the plan test in
// queryplans_test.go.
func KeyedStatements(providerID string, ids []string) map[string]KeyedStatement {
	n, keyed := len(ids), anyArgs(providerID, ids)
	var number []any
	for i, id := range ids {
		number = append(number, id, int64(i+1))
	}
	return map[string]KeyedStatement{
		"mark events delivered":  {markDelivered(n), keyed},
		"number events":          {numberEvents(n), append(number, keyed...)},
		"search cards":           {candidateCards(n), keyed},
		"search cards from rows": {joinedCards(n), keyed},
		"service locations":      {serviceLocationsOf(n), keyed},
	}
}
