package payments

// NewStripeNoRetry is NewStripe without stripe-go's network retries, so tests of 5xx and
// connection errors answer at once instead of after backoff sleeps.
func NewStripeNoRetry(apiKey, baseURL string) *Stripe { return newStripe(apiKey, baseURL, 0) }

// The fake processor's transaction steps, for its table tests.
var (
	InsertFakeCustomer = insertFakeCustomer
	InsertFakeChargeTx = insertFakeChargeTx
	FakeRefundTotal    = fakeRefundTotal
	LockFakeCharge     = lockFakeCharge
	FakeChargeByKey    = fakeChargeByKey
)
