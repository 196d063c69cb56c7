package payments_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stripe/stripe-go/v82"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/payments"
)

// StripeMockEnv names the variable holding stripe-mock's URL (CI sets it); the stripe-mock
// tests skip only when it is unset.
const StripeMockEnv = "SUBPROV_TEST_STRIPE_MOCK_URL"

var stripeProvider = &subprov.Provider{ID: "p-stripe", Currency: "CAD", PaymentProcessor: "stripe", ProcessorAccountID: "acct_1Provider"}

func stripeMockURL(t *testing.T) string {
	t.Helper()
	u := os.Getenv(StripeMockEnv)
	if u == "" {
		t.Skip(StripeMockEnv + " is not set")
	}
	return u
}

// TestStripeAgainstStripeMock sends every call to a real stripe-mock, which checks each request
// against Stripe's OpenAPI description (paths, parameter names and types) and answers with
// fixture objects. It keeps no state, so the answers are fixed: the assertions are on shapes
// and on the outcomes stripe-mock can produce.
func TestStripeAgainstStripeMock(t *testing.T) {
	t.Parallel()
	base := stripeMockURL(t)
	ctx := context.Background()
	st := payments.NewStripe("sk_test_123", base)

	t.Run("Customer lists cards and an adoptable one", func(t *testing.T) {
		c, err := st.Customer(ctx, stripeProvider, "cus_subprov")
		if err != nil {
			t.Fatal(err)
		}
		if c.ID != "cus_subprov" || len(c.Methods) == 0 {
			t.Fatalf("customer = %+v, want the id asked for and at least one card", c)
		}
		for _, m := range c.Methods {
			if !strings.HasPrefix(m.ID, "pm_") || m.Brand == "" || len(m.Last4) != 4 {
				t.Fatalf("method = %+v, want pm_ id, brand and last4", m)
			}
		}
		if c.AdoptableMethod() != c.Methods[0].ID {
			t.Fatalf("AdoptableMethod() = %q, want the first card %q (no default in the fixture)", c.AdoptableMethod(), c.Methods[0].ID)
		}
	})
	t.Run("CreateCustomer", func(t *testing.T) {
		id, err := st.CreateCustomer(ctx, stripeProvider, "new@example.net")
		if err != nil || !strings.HasPrefix(id, "cus_") {
			t.Fatalf("CreateCustomer = %q, %v", id, err)
		}
	})
	t.Run("CreateSetupIntent", func(t *testing.T) {
		si, err := st.CreateSetupIntent(ctx, stripeProvider, "cus_subprov")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(si.ID, "seti_") || !strings.Contains(si.ClientSecret, "_secret_") || si.Status != "requires_payment_method" {
			t.Fatalf("setup intent = %+v", si)
		}
	})
	t.Run("Refund", func(t *testing.T) {
		re, err := st.Refund(ctx, stripeProvider, "pi_subprov", 500, "refund-key-1")
		if err != nil || !strings.HasPrefix(re.ID, "re_") {
			t.Fatalf("refund = %+v, %v", re, err)
		}
	})
	// stripe-mock accepts the charge and the confirmation (a parameter it rejected would be an
	// invalid request) but answers with its fixture intent, still requires_payment_method. A
	// real off-session confirmation never answers 200 in that state, and the adapter must not
	// book such an intent as paid, so it reports a decline; the succeeded path is covered by
	// TestStripeMapsStripeAnswers.
	t.Run("Charge with valid params reaches a fixture intent", func(t *testing.T) {
		_, err := st.Charge(ctx, stripeProvider, payments.ChargeRequest{CustomerID: "cus_subprov", MethodID: "pm_card_visa",
			Amount: 1250, IdempotencyKey: "charge-key-1", Description: "Invoice 1"})
		if !errors.Is(err, payments.ErrCardDeclined) || !strings.Contains(err.Error(), "requires_payment_method") {
			t.Fatalf("err = %v, want the fixture's requires_payment_method reported as a decline", err)
		}
	})
	// The intent is read before it is confirmed; stripe-mock's fixture intent belongs to no
	// customer, so it is nobody's to confirm (the confirmation itself is checked against
	// TestStripeMapsStripeAnswers' stub).
	t.Run("ConfirmSetupIntent reads a fixture intent that is not the customer's", func(t *testing.T) {
		_, err := st.ConfirmSetupIntent(ctx, stripeProvider, "cus_subprov", "seti_subprov_secret_abc", payments.TestCardSucceeds)
		if !errors.Is(err, payments.ErrSetupIntentNotFound) {
			t.Fatalf("err = %v, want the fixture intent (no customer) refused as not the customer's", err)
		}
	})
	t.Run("a rejected API key is the processor failing", func(t *testing.T) {
		_, err := payments.NewStripe("not-a-key", base).Customer(ctx, stripeProvider, "cus_subprov")
		var se *stripe.Error
		if !errors.Is(err, payments.ErrUnavailable) || !errors.As(err, &se) || se.HTTPStatusCode != http.StatusUnauthorized {
			t.Fatalf("err = %v, want processor unavailable carrying Stripe's 401", err)
		}
	})
	t.Run("no connected account: no call at all", func(t *testing.T) {
		p := *stripeProvider
		p.ProcessorAccountID = ""
		if _, err := st.Customer(ctx, &p, "cus_subprov"); !errors.Is(err, payments.ErrNotConnected) {
			t.Fatalf("err = %v, want not connected", err)
		}
	})
}

// TestStripeMapsStripeAnswers serves Stripe's documented answers from a local server, for the
// outcomes stripe-mock never produces (declines, missing objects, outages, a succeeded intent),
// and checks what the adapter sends: the connected account and idempotency key headers and the
// off-session confirmation parameters.
func TestStripeMapsStripeAnswers(t *testing.T) {
	t.Parallel()
	type answer struct {
		status int
		body   string
	}
	ok := func(body string) answer { return answer{http.StatusOK, body} }
	stripeError := func(status int, body string) answer { return answer{status, `{"error": ` + body + `}`} }
	chargeCall := func(p payments.Processor) error {
		_, err := p.Charge(context.Background(), stripeProvider, payments.ChargeRequest{CustomerID: "cus_1", MethodID: "pm_1",
			Amount: 1250, IdempotencyKey: "inv-1-attempt-1"})
		return err
	}
	customerCall := func(p payments.Processor) error {
		_, err := p.Customer(context.Background(), stripeProvider, "cus_1")
		return err
	}
	confirmCall := func(p payments.Processor) error {
		_, err := p.ConfirmSetupIntent(context.Background(), stripeProvider, "cus_1", "seti_1_secret_xyz", payments.TestCardSucceeds)
		return err
	}
	confirmedNothing := func(t *testing.T, reqs []seen) {
		for _, r := range reqs {
			if r.key != "GET /v1/setup_intents/seti_1" {
				t.Errorf("request %s: a setup that is not the customer's must only be read", r.key)
			}
		}
	}
	tests := []struct {
		name    string
		answers map[string]answer // by "METHOD /path"
		call    func(p payments.Processor) error
		wantErr error
		check   func(t *testing.T, reqs []seen)
	}{
		{
			name:    "charge succeeded",
			answers: map[string]answer{"POST /v1/payment_intents": ok(`{"id": "pi_1", "object": "payment_intent", "status": "succeeded"}`)},
			call:    chargeCall,
			check: func(t *testing.T, reqs []seen) {
				r := reqs[0]
				want := map[string]string{"amount": "1250", "currency": "cad", "customer": "cus_1", "payment_method": "pm_1",
					"confirm": "true", "off_session": "true", "payment_method_types[0]": "card"}
				for k, v := range want {
					if got := r.form.Get(k); got != v {
						t.Errorf("form %s = %q, want %q", k, got, v)
					}
				}
				if r.header.Get("Stripe-Account") != "acct_1Provider" || r.header.Get("Idempotency-Key") != "inv-1-attempt-1" {
					t.Errorf("headers Stripe-Account %q, Idempotency-Key %q", r.header.Get("Stripe-Account"), r.header.Get("Idempotency-Key"))
				}
			},
		},
		{
			name: "card declined",
			answers: map[string]answer{"POST /v1/payment_intents": stripeError(402,
				`{"type": "card_error", "code": "card_declined", "decline_code": "insufficient_funds", "message": "Your card has insufficient funds."}`)},
			call: chargeCall, wantErr: payments.ErrCardDeclined,
		},
		{
			name: "authentication required off-session",
			answers: map[string]answer{"POST /v1/payment_intents": stripeError(402,
				`{"type": "card_error", "code": "authentication_required", "message": "This payment requires authentication."}`)},
			call: chargeCall, wantErr: payments.ErrCardDeclined,
		},
		{
			name: "processing error",
			answers: map[string]answer{"POST /v1/payment_intents": stripeError(402,
				`{"type": "card_error", "code": "processing_error", "message": "An error occurred while processing your card."}`)},
			call: chargeCall, wantErr: payments.ErrUnavailable,
		},
		{
			name: "charge names a missing payment method",
			answers: map[string]answer{"POST /v1/payment_intents": stripeError(400,
				`{"type": "invalid_request_error", "code": "resource_missing", "param": "payment_method", "message": "No such PaymentMethod: 'pm_1'"}`)},
			call: chargeCall, wantErr: payments.ErrNoPaymentMethod,
		},
		{
			name: "charge names a missing customer",
			answers: map[string]answer{"POST /v1/payment_intents": stripeError(400,
				`{"type": "invalid_request_error", "code": "resource_missing", "param": "customer", "message": "No such customer: 'cus_1'"}`)},
			call: chargeCall, wantErr: payments.ErrCustomerNotFound,
		},
		{
			name: "idempotency key reused with other parameters",
			answers: map[string]answer{"POST /v1/payment_intents": stripeError(400,
				`{"type": "idempotency_error", "message": "Keys for idempotent requests can only be used with the same parameters they were first used with."}`)},
			call: chargeCall, wantErr: payments.ErrInvalidRequest,
		},
		{
			name: "customer missing",
			answers: map[string]answer{"GET /v1/customers/cus_1": stripeError(404,
				`{"type": "invalid_request_error", "code": "resource_missing", "param": "id", "message": "No such customer: 'cus_1'"}`)},
			call: customerCall, wantErr: payments.ErrCustomerNotFound,
		},
		{
			name:    "customer deleted",
			answers: map[string]answer{"GET /v1/customers/cus_1": ok(`{"id": "cus_1", "object": "customer", "deleted": true}`)},
			call:    customerCall, wantErr: payments.ErrCustomerNotFound,
		},
		{
			name: "Stripe outage",
			answers: map[string]answer{"GET /v1/customers/cus_1": stripeError(500,
				`{"type": "api_error", "message": "Something went wrong on Stripe's end."}`)},
			call: customerCall, wantErr: payments.ErrUnavailable,
		},
		{
			name: "rate limited",
			answers: map[string]answer{"GET /v1/customers/cus_1": stripeError(429,
				`{"type": "invalid_request_error", "code": "rate_limit", "message": "Too many requests."}`)},
			call: customerCall, wantErr: payments.ErrUnavailable,
		},
		{
			name: "connected account revoked",
			answers: map[string]answer{"GET /v1/customers/cus_1": stripeError(403,
				`{"type": "invalid_request_error", "code": "account_invalid", "message": "The provided key does not have access to account 'acct_1Provider'."}`)},
			call: customerCall, wantErr: payments.ErrNotConnected,
		},
		{
			name: "customer cards oldest first, default from invoice settings",
			answers: map[string]answer{
				"GET /v1/customers/cus_1": ok(`{"id": "cus_1", "object": "customer", "invoice_settings": {"default_payment_method": "pm_new"}}`),
				"GET /v1/customers/cus_1/payment_methods": ok(`{"object": "list", "has_more": false, "url": "/v1/customers/cus_1/payment_methods", "data": [
					{"id": "pm_new", "object": "payment_method", "type": "card", "created": 200, "card": {"brand": "mastercard", "last4": "4444"}},
					{"id": "pm_old", "object": "payment_method", "type": "card", "created": 100, "card": {"brand": "visa", "last4": "4242"}}]}`),
			},
			call: func(p payments.Processor) error {
				c, err := p.Customer(context.Background(), stripeProvider, "cus_1")
				if err != nil {
					return err
				}
				if c.DefaultMethodID != "pm_new" || len(c.Methods) != 2 || c.Methods[0] != (payments.Method{ID: "pm_old", Brand: "visa", Last4: "4242"}) {
					return errors.New("unexpected customer")
				}
				return nil
			},
			check: func(t *testing.T, reqs []seen) {
				if len(reqs) != 2 || reqs[1].query.Get("type") != "card" || reqs[1].header.Get("Stripe-Account") != "acct_1Provider" {
					t.Errorf("requests = %+v, want the card list on the connected account", reqs)
				}
			},
		},
		{
			name: "setup of another customer is not confirmed",
			answers: map[string]answer{"GET /v1/setup_intents/seti_1": ok(`{"id": "seti_1", "object": "setup_intent", "status": "requires_payment_method", "customer": "cus_2"}`),
				"POST /v1/setup_intents/seti_1/confirm": ok(`{"id": "seti_1", "object": "setup_intent", "status": "succeeded",
				"payment_method": {"id": "pm_9", "object": "payment_method", "type": "card", "card": {"brand": "visa", "last4": "0341"}}}`)},
			call: confirmCall, wantErr: payments.ErrSetupIntentNotFound, check: confirmedNothing,
		},
		{
			name: "setup of no customer is not confirmed",
			answers: map[string]answer{"GET /v1/setup_intents/seti_1": ok(`{"id": "seti_1", "object": "setup_intent", "status": "requires_payment_method", "customer": null}`),
				"POST /v1/setup_intents/seti_1/confirm": ok(`{"id": "seti_1", "object": "setup_intent", "status": "succeeded"}`)},
			call: confirmCall, wantErr: payments.ErrSetupIntentNotFound, check: confirmedNothing,
		},
		{
			name: "unknown setup",
			answers: map[string]answer{"GET /v1/setup_intents/seti_1": stripeError(404,
				`{"type": "invalid_request_error", "code": "resource_missing", "param": "intent", "message": "No such setupintent: 'seti_1'"}`)},
			call: confirmCall, wantErr: payments.ErrSetupIntentNotFound, check: confirmedNothing,
		},
		{
			name: "setup confirmed with a test card",
			answers: map[string]answer{"GET /v1/setup_intents/seti_1": ok(`{"id": "seti_1", "object": "setup_intent", "status": "requires_payment_method", "customer": "cus_1"}`),
				"POST /v1/setup_intents/seti_1/confirm": ok(`{"id": "seti_1", "object": "setup_intent", "status": "succeeded",
				"payment_method": {"id": "pm_9", "object": "payment_method", "type": "card", "card": {"brand": "visa", "last4": "0341"}}}`)},
			call: func(p payments.Processor) error {
				m, err := p.ConfirmSetupIntent(context.Background(), stripeProvider, "cus_1", "seti_1_secret_xyz", payments.TestCardDeclines)
				if err != nil {
					return err
				}
				if *m != (payments.Method{ID: "pm_9", Brand: "visa", Last4: "0341"}) {
					return errors.New("unexpected method")
				}
				return nil
			},
			check: func(t *testing.T, reqs []seen) {
				if len(reqs) != 2 || reqs[0].key != "GET /v1/setup_intents/seti_1" || reqs[0].header.Get("Stripe-Account") != "acct_1Provider" {
					t.Fatalf("requests = %+v, want the intent read on the connected account before it is confirmed", reqs)
				}
				if got := reqs[1].form.Get("payment_method"); got != "pm_card_chargeCustomerFail" {
					t.Errorf("payment_method = %q, want the Stripe test card that declines later", got)
				}
			},
		},
		{
			name:    "refund of a payment intent",
			answers: map[string]answer{"POST /v1/refunds": ok(`{"id": "re_1", "object": "refund", "status": "succeeded"}`)},
			call: func(p payments.Processor) error {
				_, err := p.Refund(context.Background(), stripeProvider, "pi_1", 500, "credit-note-1")
				return err
			},
			check: func(t *testing.T, reqs []seen) {
				r := reqs[0]
				if r.form.Get("payment_intent") != "pi_1" || r.form.Get("amount") != "500" || r.header.Get("Idempotency-Key") != "credit-note-1" {
					t.Errorf("refund request form %v, idempotency key %q", r.form, r.header.Get("Idempotency-Key"))
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, reqs := stripeStub(t, func(key string) (int, string, bool) {
				a, found := tt.answers[key]
				return a.status, a.body, found
			})
			err := tt.call(payments.NewStripeNoRetry("sk_test_123", srv.URL))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			failed := false
			for _, a := range tt.answers {
				failed = failed || a.status >= 400
			}
			if failed {
				var se *stripe.Error
				if !errors.As(err, &se) {
					t.Fatalf("err = %v: Stripe's own error should stay reachable", err)
				}
			}
			if tt.check != nil {
				tt.check(t, reqs())
			}
		})
	}
	t.Run("Stripe unreachable", func(t *testing.T) {
		srv, _ := stripeStub(t, func(string) (int, string, bool) { return 0, "", false })
		srv.Close()
		if err := customerCall(payments.NewStripeNoRetry("sk_test_123", srv.URL)); !errors.Is(err, payments.ErrUnavailable) {
			t.Fatalf("err = %v, want processor unavailable", err)
		}
	})
}

// seen is one request the stub received.
type seen struct {
	key    string
	header http.Header
	query  url.Values
	form   url.Values
}

// stripeStub answers "METHOD /path" from answer (404 for anything else) and records requests.
func stripeStub(t *testing.T, answer func(key string) (status int, body string, ok bool)) (*httptest.Server, func() []seen) {
	t.Helper()
	var mu sync.Mutex
	var reqs []seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Method + " " + r.URL.Path
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		mu.Lock()
		reqs = append(reqs, seen{key: key, header: r.Header.Clone(), query: r.URL.Query(), form: form})
		mu.Unlock()
		status, resp, ok := answer(key)
		if !ok {
			status, resp = http.StatusNotFound, `{"error": {"type": "invalid_request_error", "message": "Unrecognized request URL (`+key+`)."}}`
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, resp)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []seen {
		mu.Lock()
		defer mu.Unlock()
		return append([]seen(nil), reqs...)
	}
}
