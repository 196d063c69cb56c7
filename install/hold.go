package install

import (
	"context"
	"errors"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store"
)

// Hold puts a PENDING_INSTALL line on hold (subscription-status `suspend` before install): a
// booked visit is cancelled and its place released, the booking link stops (it now shows that
// the booking is paused) and the line is marked on_hold. Holding a held line changes nothing.
// The caller has locked sub inside tx.
func (s *Service) Hold(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription) error {
	now := s.Clock.Now()
	job, err := tx.LockLiveInstallJob(ctx, sub.ID)
	if err != nil && !errors.Is(err, subprov.ErrNotFound) {
		return err
	}
	if sub.OnHold && (job == nil || job.State == StateHeld) {
		return nil
	}
	if job != nil && job.State != StateHeld {
		if job.State == StateBooked {
			if err := tx.ReleaseSlotPlace(ctx, p.ID, subprov.InstallSlot{WindowID: job.SlotWindowID, Date: job.SlotDate}); err != nil {
				return err
			}
			if err := tx.SetSubscriptionAppointment(ctx, sub.ID, nil, now); err != nil {
				return err
			}
			sub.AppointmentAt = nil
		}
		job.State, job.SlotWindowID, job.SlotDate, job.AppointmentAt = StateHeld, "", "", nil
		if err := tx.SaveInstallJob(ctx, job, now); err != nil {
			return err
		}
		if err := tx.MoveBookingLinks(ctx, job.ID, "live", "paused"); err != nil {
			return err
		}
	}
	held, sent := true, false
	if err := tx.UpdateSubscription(ctx, sub.ID, subprov.SubscriptionChange{OnHold: &held, BookingLinkSent: &sent}, now); err != nil {
		return err
	}
	sub.OnHold, sub.BookingLinkSent = true, false
	return tx.InsertAudit(ctx, p.ID, "install", "install.held", sub.ID, "", now)
}

// Restore lifts the hold of a PENDING_INSTALL line (subscription-status `restore`) and leaves
// it bookable again: the job opens with the building's own booking (BookingFor), since the
// hold cancelled any visit, including one an operator booked on the customer's behalf, which
// had made the job operator-booked. A customer-booked job gets a fresh booking link, at once
// when the booking window is open and otherwise when it opens (or, with nobody to mail, the
// `No contact e-mail` flag for the operator); an operator-booked one is open in the
// operator's queue. A line that is not on hold answers 409 not_on_hold. The caller has locked
// sub inside tx.
func (s *Service) Restore(ctx context.Context, tx *store.Tx, p *subprov.Provider, sub *subprov.Subscription) error {
	if !sub.OnHold {
		return subprov.Errorf(subprov.ECONFLICT, "not_on_hold", "The subscription is not on hold")
	}
	now := s.Clock.Now()
	lifted := false
	if err := tx.UpdateSubscription(ctx, sub.ID, subprov.SubscriptionChange{OnHold: &lifted}, now); err != nil {
		return err
	}
	sub.OnHold = false
	if err := tx.InsertAudit(ctx, p.ID, "install", "install.restored", sub.ID, "", now); err != nil {
		return err
	}
	job, err := tx.LockLiveInstallJob(ctx, sub.ID)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil
		}
		return err
	}
	if job.State != StateHeld {
		return nil
	}
	b, err := s.Store.Building(ctx, sub.BuildingID)
	if err != nil {
		return err
	}
	email, err := makeBookable(ctx, tx, p, b, sub, job, now)
	if err != nil {
		return err
	}
	if err := tx.SaveInstallJob(ctx, job, now); err != nil {
		return err
	}
	return s.inviteIfDue(ctx, tx, p, job, sub, b, email, now)
}
