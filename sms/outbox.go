package sms

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// DevOutbox is dev mode's stand-in for a gateway that is not configured: each message is
// written to the outbox, where GET /api/v1/dev/outbox lists it (`to` the phone number, subject
// "SMS") beside the mail, and to the log with the number masked to its last four digits (logs
// never carry personal data). It reaches no phone. serve uses it only with SUBPROV_DEV=1 and
// no SUBPROV_SMS_* gateway, so a provider whose sms_configured is true can
// be tried in the demo and in tests; outside dev mode such a provider's SMS codes answer 503
// until the gateway is configured.
type DevOutbox struct {
	Store *store.Store
	Clock subprov.Clock
	Log   *slog.Logger
}

// devTransport names the outbox rows DevOutbox writes.
const devTransport = "sms (dev mode: logged, not sent)"

// Send records the message.
func (o *DevOutbox) Send(ctx context.Context, to, body string) error {
	m := &subprov.Mail{ID: store.NewID(), To: to, Subject: "SMS", Body: body}
	if err := o.Store.LogMessage(ctx, m, devTransport, o.Clock.Now()); err != nil {
		return fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	if o.Log != nil {
		o.Log.Info("sms logged, not sent (dev mode, no SMS gateway configured)", "to", subprov.MaskPhone(to), "outbox_id", m.ID)
	}
	return nil
}
