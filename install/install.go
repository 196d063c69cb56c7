// Package install runs everything on the install route after the order: install jobs and their
// life cycle (open, booked, held, done, cancelled), who books the visit (the customer on a
// booking page, or the operator), booking invitations held until the line's start date is
// inside the provider's booking window, the provider's technician capacity and its slots,
// hold and restore of a pending line, and the operator's install queue.
package install

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/store"
)

// Install job kinds (docs/installations.md).
const (
	KindInstall   = "install"
	KindReinstall = "reinstall"
)

// Who books the visit (docs/installations.md, `booking`; "" is null).
const (
	BookingCustomer = "customer"
	BookingOperator = "operator"
)

// Install job states.
const (
	StateOpen      = "open"
	StateBooked    = "booked"
	StateHeld      = "held"
	StateDone      = "done"
	StateCancelled = "cancelled"
)

// FlagNoContactEmail marks a customer-booked job nobody can invite: the operator books it.
const FlagNoContactEmail = "No contact e-mail"

// BookingPath is the booking page; links are SUBPROV_PUBLIC_URL + BookingPath + "?token=…".
const BookingPath = "/book"

// Mailer queues a message inside the caller's transaction.
type Mailer interface {
	QueueLocalized(ctx context.Context, tx *store.Tx, providerID, to string, m locale.Mail) error
}

// Completer finishes an install: PENDING_INSTALL becomes ACTIVE and billing starts (the
// provisioning service's confirm-install path).
type Completer interface {
	CompleteInstall(ctx context.Context, providerID, subscriptionID, mac, via string) (*subprov.Subscription, error)
}

// Service runs the install rules.
type Service struct {
	Store     *store.Store
	Clock     subprov.Clock
	Mail      Mailer
	Completer Completer
	PublicURL string
	Log       *slog.Logger
}

// BookingFor says who books the visit of a job: the customer on a third-line building (and,
// for a reinstall, on a first-line one), the operator on a second-line building (and for a
// first-line install reached by suite only); nobody on an unclassified building.
func BookingFor(line subprov.LineType, kind string) string {
	switch line {
	case subprov.LineThird:
		return BookingCustomer
	case subprov.LineSecond:
		return BookingOperator
	case subprov.LineFirst:
		if kind == KindReinstall {
			return BookingCustomer
		}
		return BookingOperator
	}
	return ""
}

// InvitationDue is the day a booking invitation goes out: windowDays before the line can
// start, the later of the requested start date and the building's earliest service date.
// "" means at once (no start date is known).
func InvitationDue(windowDays int, requestedStart, earliestService string) string {
	start := requestedStart
	if earliestService > start {
		start = earliestService
	}
	d, err := time.Parse(time.DateOnly, start)
	if err != nil {
		return ""
	}
	return d.AddDate(0, 0, -windowDays).Format(time.DateOnly)
}

// Open opens the install job of a line that just took the install route: who books it, the
// `No contact e-mail` flag when the customer books and nobody can be mailed, and the booking
// invitation, sent at once when it is already due and otherwise left to the clock.
func (s *Service) Open(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription, b *subprov.Building,
	kind string, now time.Time) (*subprov.InstallJob, error) {
	job := &subprov.InstallJob{ID: store.NewID(), ProviderID: p.ID, SubscriptionID: sub.ID, Kind: kind}
	email, err := makeBookable(ctx, tx, p, b, sub, job, now)
	if err != nil {
		return nil, err
	}
	if err := tx.InsertInstallJob(ctx, job, now); err != nil {
		return nil, err
	}
	job.CreatedAt, job.UpdatedAt = now.UTC(), now.UTC()
	if err := s.inviteIfDue(ctx, tx, p, job, sub, b, email, now); err != nil {
		return nil, err
	}
	return job, nil
}

// makeBookable opens job with the building's own booking (BookingFor) and, when the customer
// books, sets the day the invitation is due or, with nobody to mail, the `No contact e-mail`
// flag. It returns the address the invitation goes to ("" for none). The caller writes job.
func makeBookable(ctx context.Context, tx *store.Tx, p *subprov.Provider, b *subprov.Building, sub *subprov.Subscription,
	job *subprov.InstallJob, now time.Time) (string, error) {
	job.State, job.Booking = StateOpen, BookingFor(b.LineType, job.Kind)
	if job.Booking != BookingCustomer {
		return "", nil
	}
	email, err := contactEmail(ctx, tx, sub)
	if err != nil {
		return "", err
	}
	if email == "" {
		job.Flags = addFlag(job.Flags, FlagNoContactEmail)
		return "", nil
	}
	job.InvitationDueOn = invitationDueOn(p, b, sub, now)
	return email, nil
}

// inviteIfDue sends the booking invitation of a written job once its day has come; a later
// one is left to the clock.
func (s *Service) inviteIfDue(ctx context.Context, tx *store.Tx, p *subprov.Provider, job *subprov.InstallJob, sub *subprov.Subscription,
	b *subprov.Building, email string, now time.Time) error {
	if email == "" || job.InvitationDueOn == "" || job.InvitationDueOn > p.Today(now) {
		return nil
	}
	return s.sendInvitation(ctx, tx, p, job, sub, b, email, now)
}

// invitationDueOn is InvitationDue for a line, never before today.
func invitationDueOn(p *subprov.Provider, b *subprov.Building, sub *subprov.Subscription, now time.Time) string {
	due, day := InvitationDue(p.BookingWindowDays, sub.RequestedStartDate, b.EarliestServiceDate), p.Today(now)
	if due == "" || due < day {
		return day
	}
	return due
}

// contactEmail is where a line's booking mail goes: the address stored on the line (anonymous
// checkout), else the subscriber's holder.
func contactEmail(ctx context.Context, tx *store.Tx, sub *subprov.Subscription) (string, error) {
	if e := strings.TrimSpace(sub.ContactEmail); e != "" {
		return e, nil
	}
	if sub.SubscriberID == "" {
		return "", nil
	}
	holder, _, err := tx.Contacts(ctx, sub.SubscriberID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return "", nil
		}
		return "", fmt.Errorf("contact e-mail: %w", err)
	}
	return strings.TrimSpace(holder.Email), nil
}

// sendInvitation mails a fresh single-use booking link; every earlier link of the job is
// replaced by it.
func (s *Service) sendInvitation(ctx context.Context, tx *store.Tx, p *subprov.Provider, job *subprov.InstallJob, sub *subprov.Subscription,
	b *subprov.Building, email string, now time.Time) error {
	for _, from := range []string{"live", "paused"} {
		if err := tx.MoveBookingLinks(ctx, job.ID, from, "replaced"); err != nil {
			return err
		}
	}
	raw := identity.NewToken(32)
	if err := tx.InsertBookingLink(ctx, identity.HashSecret(raw), p.ID, job.ID, now); err != nil {
		return err
	}
	job.InvitationDueOn = ""
	if err := tx.SaveInstallJob(ctx, job, now); err != nil {
		return err
	}
	sent := true
	if err := tx.UpdateSubscription(ctx, sub.ID, subprov.SubscriptionChange{BookingLinkSent: &sent}, now); err != nil {
		return err
	}
	sub.BookingLinkSent = true
	where, err := s.addressOf(ctx, b, sub)
	if err != nil {
		return err
	}
	link := s.PublicURL + BookingPath + "?token=" + raw
	body := locale.Texts{locale.Msg("mail.hello"), locale.Msg("booking.invite.body", where), locale.Verbatim(link),
		locale.Msg("booking.invite.once"), locale.Verbatim(p.Name)}
	return s.Mail.QueueLocalized(ctx, tx, p.ID, email, locale.Mail{Subject: locale.Msg("booking.invite.subject"), Body: body, Links: []string{link}, Account: sub.SubscriberID})
}

// addressOf is the line's service address on one line: street, suite, city.
func (s *Service) addressOf(ctx context.Context, b *subprov.Building, sub *subprov.Subscription) (string, error) {
	if b == nil {
		var err error
		if b, err = s.Store.Building(ctx, sub.BuildingID); err != nil {
			return "", err
		}
	}
	parts := []string{b.Street}
	if sub.UnitID != "" {
		u, err := s.Store.Unit(ctx, sub.UnitID)
		if err != nil {
			return "", err
		}
		label := u.UnitNumber
		if u.PostalUnit != "" {
			label = u.PostalUnit
		}
		parts = append(parts, "suite "+label)
	}
	return strings.Join(append(parts, b.City), ", "), nil
}

// SweepInvitations sends the booking invitations that fell due: the scheduler runs it every
// second and whenever the dev clock moves. Each job is re-checked under its lock, so two
// sweeps never send one invitation twice.
func (s *Service) SweepInvitations(ctx context.Context) error {
	now := s.Clock.Now()
	latestToday := now.Add(14 * time.Hour).UTC().Format(time.DateOnly) // no time zone is further ahead
	due, err := s.Store.DueInvitations(ctx, latestToday, 100)
	if err != nil {
		return err
	}
	providers := map[string]*subprov.Provider{}
	for _, j := range due {
		p, ok := providers[j.ProviderID]
		if !ok {
			if p, err = s.Store.Provider(ctx, j.ProviderID); err != nil {
				return err
			}
			providers[j.ProviderID] = p
		}
		if j.InvitationDueOn > p.Today(now) {
			continue
		}
		if err := s.sendDue(ctx, p, j.ID); err != nil {
			return fmt.Errorf("invitation of job %s: %w", j.ID, err)
		}
	}
	return nil
}

func (s *Service) sendDue(ctx context.Context, p *subprov.Provider, jobID string) error {
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		now := s.Clock.Now()
		job, err := tx.LockInstallJob(ctx, jobID)
		if err != nil {
			return err
		}
		if job.State != StateOpen || job.Booking != BookingCustomer || job.InvitationDueOn == "" || job.InvitationDueOn > p.Today(now) {
			return nil
		}
		sub, err := tx.LockSubscription(ctx, p.ID, job.SubscriptionID)
		if err != nil {
			return err
		}
		email, err := contactEmail(ctx, tx, sub)
		if err != nil {
			return err
		}
		if email == "" || sub.Status != subprov.StatusPendingInstall {
			job.InvitationDueOn = ""
			if email == "" {
				job.Flags = addFlag(job.Flags, FlagNoContactEmail)
			}
			return tx.SaveInstallJob(ctx, job, now)
		}
		return s.sendInvitation(ctx, tx, p, job, sub, nil, email, now)
	})
}

// addFlag adds a flag to a comma-separated flag list once.
func addFlag(flags, flag string) string {
	for _, f := range Flags(flags) {
		if f == flag {
			return flags
		}
	}
	if flags == "" {
		return flag
	}
	return flags + "," + flag
}

// Flags splits a job's stored flag list.
func Flags(flags string) []string {
	if flags == "" {
		return []string{}
	}
	return strings.Split(flags, ",")
}
