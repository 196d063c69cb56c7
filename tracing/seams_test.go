package tracing_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/mail"
	"github.com/subprov/subprov/mail/smtptest"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/tracing"
)

// TestCallsToOtherSystemsAreSpans: a call to a payment processor or an SMTP relay is a client
// span of the work that made it, named after the call, carrying the request id, and failed
// when the call failed. (Switch writes, webhook deliveries and SQL transactions are checked on
// an order's trace: TestOneOrderIsOneTrace.)
func TestCallsToOtherSystemsAreSpans(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	defer tracing.Use(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))()

	// A Stripe that refuses every call, on loopback.
	stripeSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"type":"invalid_request_error","message":"No such customer"}}`))
	}))
	defer stripeSrv.Close()
	processor := payments.NewRouter(nil, payments.NewStripe("sk_test_tracing", stripeSrv.URL))
	relay := smtptest.Start(t)
	smtp, err := mail.NewTransport(relay.URL(), "no-reply@localhost", nil)
	if err != nil {
		t.Fatal(err)
	}
	provider := &subprov.Provider{ID: "prov-tracing", PaymentProcessor: payments.ProcessorStripe}

	cases := []struct {
		rule   string
		span   string
		failed bool
		call   func(ctx context.Context) error
	}{
		{"a processor call is a span, failed when the processor refuses", "payments.customer", true, func(ctx context.Context) error {
			_, err := processor.Customer(ctx, provider, "cus_missing")
			return err
		}},
		{"a message handed to the SMTP relay is a span", "smtp.send", false, func(ctx context.Context) error {
			return smtp.Send(ctx, "msg-tracing-1", mail.Message{To: "a@example.org", Subject: "s", Body: "b"})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.rule, func(t *testing.T) {
			ctx, parent := tracing.Start(tracing.WithRequestID(context.Background(), "req-"+tc.span), "test", trace.SpanKindInternal)
			err := tc.call(ctx)
			parent.End()
			if (err != nil) != tc.failed {
				t.Fatalf("call err %v, want failed %v", err, tc.failed)
			}
			var got sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				if s.Name() == tc.span && s.Parent().SpanID() == parent.SpanContext().SpanID() {
					got = s
				}
			}
			if got == nil {
				t.Fatalf("no span %s under the caller's", tc.span)
			}
			if got.SpanKind() != trace.SpanKindClient || attr(got, tracing.RequestIDKey) != "req-"+tc.span {
				t.Errorf("span kind %v, request id %q", got.SpanKind(), attr(got, tracing.RequestIDKey))
			}
			if failed := got.Status().Code.String() == "Error"; failed != tc.failed {
				t.Errorf("span status %v, want failed %v", got.Status(), tc.failed)
			}
		})
	}
}
