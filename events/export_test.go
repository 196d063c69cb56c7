package events

import "time"

// MaxUnsettled is maxUnsettled, for the tests of package events_test.
const MaxUnsettled = maxUnsettled

// SetProviderFresh sets how long a run uses the provider as read; the returned func restores it.
func SetProviderFresh(d time.Duration) (restore func()) {
	was := providerFresh
	providerFresh = d
	return func() { providerFresh = was }
}
