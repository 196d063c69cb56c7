package store

// PendingEventReads are the webhook flusher's reads of a provider's pending events, for the
// plan test in events_test.go.
var PendingEventReads = map[string]string{
	"events to number":        eventsToSequence,
	"any event to number":     hasEventsToSequence,
	"pending events in order": pendingInOrder,
}
