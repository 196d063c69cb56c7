// Package outbox queues the service's mail inside the business transaction and delivers it
// through a durable job, so a message goes out exactly when the change that asked for it
// committed, and a failed relay is retried instead of losing the mail.
package outbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/faults"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/mail"
	"github.com/subprov/subprov/store"
)

// Outbox queues and delivers mail.
type Outbox struct {
	Store     *store.Store
	Jobs      *jobs.Client
	Transport mail.Transport
	Clock     subprov.Clock
	Faults    *faults.Switches
	Log       *slog.Logger

	// PersonLanguage is the language the person with this e-mail address chose at the
	// provider ("" for none), read inside the queueing transaction; subscriberID is the account
	// the mail is about ("" when unknown), whose holder answers for an address that is no
	// login. Nil: the provider's default_language decides alone.
	PersonLanguage func(ctx context.Context, tx *store.Tx, providerID, subscriberID, email string) (string, error)
}

// Queue records m in the outbox and enqueues its delivery, both inside tx.
func (o *Outbox) Queue(ctx context.Context, tx *store.Tx, m mail.Message) (string, error) {
	row := &subprov.Mail{ID: store.NewID(), To: m.To, Subject: m.Subject, Body: m.Body, Links: m.Links}
	if err := tx.InsertMail(ctx, row, o.Clock.Now()); err != nil {
		return "", err
	}
	if err := o.Jobs.Enqueue(ctx, tx, jobs.DeliverMail{MailID: row.ID}); err != nil {
		return "", err
	}
	return row.ID, nil
}

// Deliver is the mail.deliver job: send one queued message. Running it again after a crash
// resends at most a message the receiver can de-duplicate by its Message-ID (the outbox id);
// a message already marked sent is skipped.
func (o *Outbox) Deliver(ctx context.Context, args jobs.DeliverMail) error {
	m, err := o.Store.Mail(ctx, args.MailID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil // nothing to send: the row is gone
		}
		return err
	}
	if m.Status == "sent" || m.Status == "logged" || m.Status == store.MailErased {
		return nil // sent already, or erased by a privacy deletion before it went
	}
	now := o.Clock.Now()
	if o.Faults.Is("smtp", "down") {
		err := fmt.Errorf("%w: smtp fault injected", mail.ErrUnavailable)
		o.markRetrying(ctx, m.ID, err, now)
		return err
	}
	msg := mail.Message{To: m.To, Subject: m.Subject, Body: m.Body, Links: m.Links}
	if err := o.Transport.Send(ctx, m.ID, msg); err != nil {
		o.markRetrying(ctx, m.ID, err, now)
		return fmt.Errorf("deliver mail %s: %w", m.ID, err)
	}
	status := "sent"
	if o.Transport.Name() == "log" {
		status = "logged"
	}
	return o.Store.MarkMail(ctx, m.ID, status, o.Transport.Name(), "", now)
}

// markRetrying records a failed send on the message for the operator's view. The delivery
// error is what the job returns and retries on; failing to record it only loses the note, so
// it is logged rather than returned in its place.
func (o *Outbox) markRetrying(ctx context.Context, id string, cause error, now time.Time) {
	if err := o.Store.MarkMail(ctx, id, "retrying", o.Transport.Name(), cause.Error(), now); err != nil {
		o.logger().Warn("record mail retry", "mail_id", id, "err", err)
	}
}

func (o *Outbox) logger() *slog.Logger {
	if o.Log == nil {
		return slog.Default()
	}
	return o.Log
}

// QueueText queues a plain-text message inside tx.
func (o *Outbox) QueueText(ctx context.Context, tx *store.Tx, to, subject, body string, links []string) error {
	_, err := o.Queue(ctx, tx, mail.Message{To: to, Subject: subject, Body: body, Links: links})
	return err
}

// LanguageOf is the language to write to the person with e-mail address to at providerID
// about subscriber subscriberID's account ("" when unknown): their own choice, else the
// provider's default_language (locale.Choose).
func (o *Outbox) LanguageOf(ctx context.Context, tx *store.Tx, providerID, subscriberID, to string) (locale.Lang, error) {
	person := ""
	if o.PersonLanguage != nil {
		var err error
		if person, err = o.PersonLanguage(ctx, tx, providerID, subscriberID, to); err != nil {
			return "", fmt.Errorf("language of %s: %w", providerID, err)
		}
	}
	def, err := tx.ProviderLanguage(ctx, providerID)
	if err != nil {
		return "", err
	}
	return locale.Choose(person, "", def), nil
}

// QueueLocalized queues m to a subscriber of providerID inside tx, its subject and body written
// now in the recipient's language.
func (o *Outbox) QueueLocalized(ctx context.Context, tx *store.Tx, providerID, to string, m locale.Mail) error {
	l, err := o.LanguageOf(ctx, tx, providerID, m.Account, to)
	if err != nil {
		return err
	}
	return o.QueueText(ctx, tx, to, m.Subject.In(l), m.Body.In(l), m.Links)
}
