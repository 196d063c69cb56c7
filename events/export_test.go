package events

// MaxUnsettled is maxUnsettled, for the tests of package events_test.
const MaxUnsettled = maxUnsettled
