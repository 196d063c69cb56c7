package install

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/store"
)

// What a booking link leads to.
const (
	PageOpen     = "open"     // pick a slot
	PageBooked   = "booked"   // the visit is booked: the page shows it
	PagePaused   = "paused"   // the line is on hold
	PageReplaced = "replaced" // a newer link was sent
	PageClosed   = "closed"   // the install is done or the line was cancelled
)

// Page is what the booking page shows for a link.
type Page struct {
	State        string
	Token        string
	ProviderName string
	Language     string // the provider's default_language
	Address      string
	PlanName     string
	DownloadMbps int
	UploadMbps   int
	Location     *time.Location
	Days         []Day // PageOpen: the slots to choose from
	Appointment  *Slot // PageBooked
}

func invalidLink() error {
	return subprov.Errorf(subprov.ENOTFOUND, "not_found", "This booking link is not valid. Check that you opened the whole link from the e-mail.")
}

// linkTarget is a link resolved to its job, line, provider and building.
type linkTarget struct {
	link *subprov.BookingLink
	job  *subprov.InstallJob
	sub  *subprov.Subscription
	p    *subprov.Provider
	b    *subprov.Building
}

// pageState decides what a link shows, most final first.
func (t *linkTarget) pageState() string {
	switch {
	case t.sub.Status != subprov.StatusPendingInstall || t.job.State == StateDone || t.job.State == StateCancelled:
		return PageClosed
	case t.job.State == StateHeld || t.link.State == "paused":
		return PagePaused
	case t.job.State == StateBooked:
		return PageBooked
	case t.link.State != "live":
		return PageReplaced
	}
	return PageOpen
}

// BookingPage resolves a booking link for the page (reading only: the link stays usable).
func (s *Service) BookingPage(ctx context.Context, token string) (*Page, error) {
	if strings.TrimSpace(token) == "" {
		return nil, invalidLink()
	}
	link, err := s.Store.BookingLinkByHash(ctx, identity.HashSecret(token))
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, invalidLink()
		}
		return nil, err
	}
	job, err := s.Store.InstallJob(ctx, link.ProviderID, link.InstallJobID)
	if err != nil {
		return nil, err
	}
	sub, err := s.Store.Subscription(ctx, link.ProviderID, job.SubscriptionID)
	if err != nil {
		return nil, err
	}
	t, err := s.resolve(ctx, link, job, sub)
	if err != nil {
		return nil, err
	}
	return s.page(ctx, s.Store, t, token)
}

func (s *Service) resolve(ctx context.Context, link *subprov.BookingLink, job *subprov.InstallJob, sub *subprov.Subscription) (*linkTarget, error) {
	p, err := s.Store.Provider(ctx, link.ProviderID)
	if err != nil {
		return nil, err
	}
	b, err := s.Store.Building(ctx, sub.BuildingID)
	if err != nil {
		return nil, err
	}
	return &linkTarget{link: link, job: job, sub: sub, p: p, b: b}, nil
}

// page builds the page of a resolved link.
func (s *Service) page(ctx context.Context, r slotReader, t *linkTarget, token string) (*Page, error) {
	pg := &Page{State: t.pageState(), Token: token, ProviderName: t.p.Name, Language: t.p.DefaultLanguage, Location: t.p.Location()}
	if pg.State != PageOpen && pg.State != PageBooked {
		return pg, nil
	}
	var err error
	if pg.Address, err = s.addressOf(ctx, t.b, t.sub); err != nil {
		return nil, err
	}
	plan, err := s.Store.PlanVersion(ctx, t.p.ID, t.sub.PlanVersionID)
	if err != nil {
		return nil, err
	}
	pg.PlanName, pg.DownloadMbps, pg.UploadMbps = plan.PlanName, plan.DownloadMbps, plan.UploadMbps
	if pg.State == PageBooked {
		pg.Appointment = s.appointmentOf(ctx, t)
		return pg, nil
	}
	pg.Days, err = calendarFor(ctx, r, t.p, t.b, s.Clock.Now())
	return pg, err
}

// appointmentOf describes a booked job's slot.
func (s *Service) appointmentOf(ctx context.Context, t *linkTarget) *Slot {
	if t.job.AppointmentAt == nil {
		return nil
	}
	slot := &Slot{ID: SlotID(t.job.SlotWindowID, t.job.SlotDate), WindowID: t.job.SlotWindowID, Date: t.job.SlotDate, Start: *t.job.AppointmentAt, End: *t.job.AppointmentAt}
	windows, err := s.Store.InstallWindows(ctx, t.p.ID)
	if err != nil {
		return slot
	}
	for _, w := range windows {
		if w.ID == t.job.SlotWindowID {
			d, _ := time.ParseInLocation(time.DateOnly, t.job.SlotDate, t.p.Location())
			if end, ok := clockOn(d, w.Ends, t.p.Location()); ok {
				slot.End = end.UTC()
			}
		}
	}
	return slot
}

// BookingError is a refused booking the page shows next to the slots again.
func BookingError(err error) (*subprov.Error, bool) {
	e, ok := subprov.AsError(err)
	if !ok {
		return nil, false
	}
	switch e.Reason {
	case "slot_required", "slot_unavailable", "slot_full":
		return e, true
	}
	return nil, false
}

// Book books the customer's chosen slot through their link: the link is used up, the place
// taken, appointment_at set on the line and a confirmation mailed.
func (s *Service) Book(ctx context.Context, token, slotID string) (*Page, error) {
	if strings.TrimSpace(token) == "" {
		return nil, invalidLink()
	}
	hash := identity.HashSecret(token)
	var pg *Page
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		link, err := tx.LockBookingLink(ctx, hash)
		if err != nil {
			if errors.Is(err, subprov.ErrNotFound) {
				return invalidLink()
			}
			return err
		}
		job, err := tx.LockInstallJob(ctx, link.InstallJobID)
		if err != nil {
			return err
		}
		sub, err := tx.LockSubscription(ctx, link.ProviderID, job.SubscriptionID)
		if err != nil {
			return err
		}
		t, err := s.resolve(ctx, link, job, sub)
		if err != nil {
			return err
		}
		if state := t.pageState(); state != PageOpen {
			pg, err = s.page(ctx, tx, t, token)
			return err
		}
		if _, err := s.book(ctx, tx, t, slotID, BookingCustomer, "customer"); err != nil {
			return err
		}
		if err := tx.UseBookingLink(ctx, hash, s.Clock.Now()); err != nil {
			return err
		}
		pg, err = s.page(ctx, tx, t, token)
		return err
	})
	if err != nil {
		return nil, err
	}
	return pg, nil
}

// book takes a place in the chosen slot for a job (releasing the place it held before, when
// the operator moves a booked visit), records the appointment on the job and the line, and
// mails the confirmation. by is who booked: customer or operator.
func (s *Service) book(ctx context.Context, tx *store.Tx, t *linkTarget, slotID, by, actor string) (*Slot, error) {
	now := s.Clock.Now()
	if strings.TrimSpace(slotID) == "" {
		return nil, subprov.Errorf(subprov.EINVALID, "slot_required", "Choose an appointment.")
	}
	key, ok := ParseSlotID(slotID)
	if !ok {
		return nil, subprov.Errorf(subprov.EINVALID, "slot_unavailable", "That appointment cannot be booked. Choose another one.")
	}
	days, err := calendarFor(ctx, tx, t.p, t.b, now)
	if err != nil {
		return nil, err
	}
	slot, ok := findSlot(days, SlotID(key.WindowID, key.Date))
	if !ok {
		return nil, subprov.Errorf(subprov.EINVALID, "slot_unavailable", "That appointment cannot be booked. Choose another one.")
	}
	if t.job.State == StateBooked && t.job.SlotWindowID != "" {
		if err := tx.ReleaseSlotPlace(ctx, t.p.ID, subprov.InstallSlot{WindowID: t.job.SlotWindowID, Date: t.job.SlotDate}); err != nil {
			return nil, err
		}
	}
	taken, err := tx.TakeSlotPlace(ctx, t.p.ID, key)
	if err != nil {
		return nil, err
	}
	if !taken {
		return nil, subprov.Errorf(subprov.ECONFLICT, "slot_full", "That appointment was just taken. Choose another one.")
	}
	start := slot.Start
	t.job.State, t.job.SlotWindowID, t.job.SlotDate, t.job.AppointmentAt = StateBooked, key.WindowID, key.Date, &start
	if by == BookingOperator {
		t.job.Booking = BookingOperator
		if err := tx.MoveBookingLinks(ctx, t.job.ID, "live", "replaced"); err != nil {
			return nil, err
		}
	}
	if err := tx.SaveInstallJob(ctx, t.job, now); err != nil {
		return nil, err
	}
	if err := tx.SetSubscriptionAppointment(ctx, t.sub.ID, &start, now); err != nil {
		return nil, err
	}
	t.sub.AppointmentAt = &start
	if err := tx.InsertAudit(ctx, t.p.ID, actor, "install.booked", t.job.ID, fmt.Sprintf(`{"slot":%q}`, slot.ID), now); err != nil {
		return nil, err
	}
	return &slot, s.mailConfirmation(ctx, tx, t, slot)
}

// mailConfirmation tells the customer the booked visit, when there is an address to tell.
func (s *Service) mailConfirmation(ctx context.Context, tx *store.Tx, t *linkTarget, slot Slot) error {
	email, err := contactEmail(ctx, tx, t.sub)
	if err != nil || email == "" {
		return err
	}
	where, err := s.addressOf(ctx, t.b, t.sub)
	if err != nil {
		return err
	}
	body := locale.Texts{locale.Msg("mail.hello"), locale.Msg("booking.confirmed.body", SlotText(slot, t.p.Location()), where),
		locale.Msg("booking.confirmed.home"), locale.Verbatim(t.p.Name)}
	return s.Mail.QueueLocalized(ctx, tx, t.p.ID, email, locale.Mail{Subject: locale.Msg("booking.confirmed.subject"), Body: body, Account: t.sub.SubscriberID})
}

// FormatSlot writes a slot the way a person reads it: "Tuesday 2 March 2027, 08:00–12:00".
func FormatSlot(slot Slot, loc *time.Location) string { return SlotText(slot, loc).In(locale.EN) }

// SlotText is a slot in words in the reader's language: its day, then its window, in loc.
func SlotText(slot Slot, loc *time.Location) locale.Localized { return slotText{slot, loc} }

type slotText struct {
	slot Slot
	loc  *time.Location
}

func (s slotText) In(l locale.Lang) string {
	start, end := s.slot.Start.In(s.loc), s.slot.End.In(s.loc)
	return l.T("booking.slot", l.Day(start), l.Clock(start), l.Clock(end))
}
