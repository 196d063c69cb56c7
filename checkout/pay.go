package checkout

import (
	"context"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/store"
)

// The sandbox payment page: a sandbox provider's checkout URL points here. A person sees the
// plan, the address and the price, pays with a test card, and the session completes exactly
// as a real checkout page's `complete` call would, plus a checkout.session.completed event in
// the payment processor's shape.

// TestCard is a card number the sandbox page accepts and what paying with it does.
type TestCard struct {
	Number  string
	Outcome string // succeeds, declined, processing_error
	Label   string
}

// TestCards are the cards listed on the page (the payment processors' usual test numbers).
var TestCards = []TestCard{
	{"4242 4242 4242 4242", "succeeds", "Visa — payment succeeds"},
	{"4000 0000 0000 0002", "declined", "Visa — card declined"},
	{"4000 0000 0000 0119", "processing_error", "Visa — processing error"},
}

// Payment is what the shopper typed on the page.
type Payment struct {
	FirstName, LastName, Email, PhoneNumber string
	CardNumber, Expiry, CVC                 string
}

// Due is what the page charges: the setup fee plus the first month.
func Due(v *subprov.PlanVersion) subprov.Money { return v.SetupFee + v.MonthlyPrice }

// PageSession returns a sandbox session for the payment page; the page is the provider's
// checkout page, so showing it is the session's first read. A live provider's session is 404.
func (s *Service) PageSession(ctx context.Context, id string) (*View, error) {
	sess, p, err := s.sandboxSession(ctx, id)
	if err != nil {
		return nil, err
	}
	if err := s.markRead(ctx, sess); err != nil {
		return nil, err
	}
	return s.view(ctx, p, sess)
}

func (s *Service) sandboxSession(ctx context.Context, id string) (*subprov.CheckoutSession, *subprov.Provider, error) {
	sess, err := s.load(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	p, err := s.Store.Provider(ctx, sess.ProviderID)
	if err != nil {
		return nil, nil, err
	}
	if !p.Sandbox {
		return nil, nil, errSessionNotFound
	}
	if err := cancelled(sess); err != nil {
		return nil, nil, err
	}
	return sess, p, nil
}

var (
	digitsOnly = regexp.MustCompile(`[\s-]`)
	expiryRE   = regexp.MustCompile(`^(0[1-9]|1[0-2])\s*/\s*(\d{2})$`)
	cvcRE      = regexp.MustCompile(`^\d{3,4}$`)
)

// Pay charges a test card and completes the session. Field problems are 422 naming each
// field; a declined card or a processing error changes nothing.
func (s *Service) Pay(ctx context.Context, id string, pay Payment) (*Completion, error) {
	sess, p, err := s.sandboxSession(ctx, id)
	if err != nil {
		return nil, err
	}
	problems := map[string]string{}
	for field, v := range map[string]string{"firstname": pay.FirstName, "lastname": pay.LastName, "email": pay.Email,
		"phonenumber": pay.PhoneNumber, "card_number": pay.CardNumber, "expiry": pay.Expiry, "cvc": pay.CVC} {
		if strings.TrimSpace(v) == "" {
			problems[field] = "Required."
		}
	}
	if e := strings.TrimSpace(pay.Email); e != "" && !auth.ValidEmail(e) {
		problems["email"] = "Enter an e-mail address such as name@example.com."
	}
	now := s.Clock.Now()
	if e := strings.TrimSpace(pay.Expiry); e != "" {
		if m := expiryRE.FindStringSubmatch(e); m == nil {
			problems["expiry"] = "Enter the expiry as MM/YY."
		} else {
			month, _ := strconv.Atoi(m[1])
			year, _ := strconv.Atoi(m[2])
			if time.Date(2000+year, time.Month(month)+1, 1, 0, 0, 0, 0, time.UTC).Before(now) {
				problems["expiry"] = "This card has expired."
			}
		}
	}
	if c := strings.TrimSpace(pay.CVC); c != "" && !cvcRE.MatchString(c) {
		problems["cvc"] = "Enter the 3 or 4 digits on the back of the card."
	}
	card := cardOf(pay.CardNumber)
	if pay.CardNumber != "" && card == nil {
		problems["card_number"] = "Use one of the sandbox test cards listed on this page."
	}
	if len(problems) > 0 {
		return nil, subprov.Invalid(problems)
	}
	switch card.Outcome {
	case "declined":
		return nil, subprov.Errorf(subprov.ECONFLICT, "card_declined", "Your card was declined. Nothing was charged; try another card.")
	case "processing_error":
		return nil, subprov.Errorf(subprov.EUNAVAILABLE, "processing_error", "The payment could not be processed. Nothing was charged; try again.")
	}
	plan, err := s.Store.PlanVersion(ctx, p.ID, sess.PlanVersionID)
	if err != nil {
		return nil, err
	}
	in := CompleteInput{Subscriber: provisioning.Subscriber{FirstName: pay.FirstName, LastName: pay.LastName, Email: pay.Email, PhoneNumber: pay.PhoneNumber}}
	return s.completeSession(ctx, p, sess, in, func(ctx context.Context, tx *store.Tx, sub *subprov.Subscription) error {
		_, err := s.Events.RecordRaw(ctx, tx, p, subprov.EventCheckoutSessionCompleted, sub.ID, func(eventID string, created time.Time) any {
			return processorEvent(eventID, created, p, sess, plan, sub, pay)
		})
		return err
	})
}

func cardOf(number string) *TestCard {
	n := digitsOnly.ReplaceAllString(number, "")
	for i := range TestCards {
		if digitsOnly.ReplaceAllString(TestCards[i].Number, "") == n {
			return &TestCards[i]
		}
	}
	return nil
}

// processorEvent is checkout.session.completed in the payment processor's own shape (an event
// wrapping a checkout.session object), so a partner's handler for the real processor's event works
// against the sandbox unchanged. Its id is the event's own, as every event body's is (X-Webhook-Id
// repeats it, and like every id the service makes it is a UUID), so a receiver can replay or look
// up the event it was sent.
func processorEvent(eventID string, created time.Time, p *subprov.Provider, sess *subprov.CheckoutSession, plan *subprov.PlanVersion,
	sub *subprov.Subscription, pay Payment) any {
	compact := func(id string) string { return strings.ReplaceAll(id, "-", "") }
	amount := int64(Due(plan))
	return map[string]any{
		"id": eventID, "object": "event", "api_version": "2024-06-20", "created": created.Unix(),
		"livemode": false, "pending_webhooks": 1, "type": subprov.EventCheckoutSessionCompleted,
		"request": map[string]any{"id": nil, "idempotency_key": nil},
		"data": map[string]any{"object": map[string]any{
			"id": "cs_test_" + compact(sess.ID), "object": "checkout.session", "client_reference_id": sess.ID,
			"amount_subtotal": amount, "amount_total": amount, "currency": strings.ToLower(p.Currency), "created": created.Unix(),
			"customer_details": map[string]any{"email": strings.TrimSpace(pay.Email), "name": strings.TrimSpace(pay.FirstName + " " + pay.LastName),
				"phone": strings.TrimSpace(pay.PhoneNumber)},
			"livemode": false, "mode": "payment", "payment_intent": "pi_test_" + compact(sub.ID), "payment_status": "paid", "status": "complete",
			"metadata": map[string]any{"session_id": sess.ID, "subscription_id": sub.ID, "provider_id": p.ID,
				"plan_version_id": plan.ID, "store_product_id": plan.StoreProductID},
		}},
	}
}

// CancelPage cancels a sandbox session from the payment page.
func (s *Service) CancelPage(ctx context.Context, id string) error {
	sess, _, err := s.sandboxSession(ctx, id)
	if err != nil {
		return err
	}
	return s.cancel(ctx, sess)
}
