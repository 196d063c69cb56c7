// Package privacy handles a subscriber's request that its personal data be deleted: the
// request (pending, with a ticket to the provider's staff), and an operator's approval, which
// erases the data in one transaction while the lines, invoices and credit notes stay for the
// retention tax law requires, or rejection.
package privacy

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/store"
	"github.com/subprov/subprov/tickets"
)

// Statuses lists every state of a request.
var Statuses = []string{subprov.PrivacyPending, subprov.PrivacyApproved, subprov.PrivacyRejected}

// Service keeps privacy requests.
type Service struct {
	Store *store.Store
	Clock subprov.Clock
	Desk  tickets.Desk // opens the ticket that tells the provider's staff; nil for none
	// Links mails the single-use link to a person's export.
	Links interface {
		MailToken(ctx context.Context, tx *store.Tx, subjectID, to, providerID string, kind auth.TokenKind) error
	}
}

// Request records a subscriber's deletion request of provider providerID, pending an
// operator's decision, with a ticket to the provider's support group, and audits it as
// privacy_request.created. A subscriber with a request pending gets that one back.
func (s *Service) Request(ctx context.Context, providerID, subscriberID string) (*subprov.PrivacyRequest, error) {
	var req *subprov.PrivacyRequest
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		req, err = s.Open(ctx, tx, providerID, subscriberID)
		return err
	})
	return req, err
}

// Open is Request inside the caller's transaction.
func (s *Service) Open(ctx context.Context, tx *store.Tx, providerID, subscriberID string) (*subprov.PrivacyRequest, error) {
	owner, number, err := tx.SubscriberNumber(ctx, subscriberID)
	if errors.Is(err, subprov.ErrNotFound) || (err == nil && owner != providerID) {
		return nil, subprov.NotFound("Subscriber")
	}
	if err != nil {
		return nil, err
	}
	if pending, err := tx.PendingPrivacyRequest(ctx, subscriberID); err == nil {
		return pending, nil
	} else if !errors.Is(err, subprov.ErrNotFound) {
		return nil, err
	}
	now := s.Clock.Now()
	req := &subprov.PrivacyRequest{ID: store.NewID(), ProviderID: providerID, SubscriberID: subscriberID, Status: subprov.PrivacyPending, CreatedAt: now}
	if s.Desk != nil {
		// The ticket names the account by its customer number only: it holds nothing personal.
		subject := "Privacy deletion request"
		if number != "" {
			subject += " for customer " + number
		}
		t := &subprov.Ticket{ProviderID: providerID, SubscriberID: subscriberID, Kind: tickets.KindOperator, Subject: subject,
			InternalNote: "The account holder asked that the account's personal data be deleted. Approve or reject privacy request " + req.ID +
				"; approval is refused while a line is live."}
		if err := s.Desk.Open(ctx, tx, t); err != nil {
			return nil, err
		}
		req.TicketID = t.ID
	}
	if err := tx.InsertPrivacyRequest(ctx, req); err != nil {
		return nil, err
	}
	e := subprov.NewAudit(ctx, providerID, "privacy_request.created", "privacy_request", req.ID)
	e.Changes.Set("status", nil, req.Status)
	return req, tx.RecordAudit(ctx, e, now)
}

// List lists the privacy requests of the providers in the operator's scope, newest first, one
// page at a time; status ("" for any) narrows it.
func (s *Service) List(ctx context.Context, op *subprov.Operator, status string, page subprov.Page) ([]*subprov.PrivacyRequest, string, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, "", err
	}
	if status != "" && !slices.Contains(Statuses, status) {
		return nil, "", subprov.Invalid(map[string]string{"status": "must be one of " + strings.Join(Statuses, ", ")})
	}
	rs, err := s.Store.PrivacyRequests(ctx, store.PrivacyFilter{ProviderID: op.ProviderID, Status: status}, page)
	if err != nil {
		return nil, "", err
	}
	rs, next := subprov.Cut(page, rs, store.PrivacyKey)
	return rs, next, nil
}

// LinesLive refuses an approval while one of the account's lines still serves or bills.
func LinesLive() *subprov.Error { return subprov.Errorf(subprov.ECONFLICT, "lines_live", "lines_live") }

// Live reports whether a line still serves or bills at now, which keeps its account's personal
// data: active, suspended, waiting for its install, or cancelled with its end still ahead.
func Live(l *subprov.Subscription, now time.Time) bool {
	switch l.Status {
	case subprov.StatusActive, subprov.StatusSuspended, subprov.StatusPendingInstall:
		return true
	case subprov.StatusCancelled:
		return l.EndedAt != nil && l.EndedAt.After(now)
	}
	return false
}

// Approve executes a pending request in the operator's scope, in one transaction: the
// account's logins are removed and its personal data replaced with placeholders
// (store.Tx.EraseSubscriber), its invoices and credit notes kept. While a line of the account
// is active, suspended, waiting for its install, or cancelled with its end still ahead, it is
// refused (409 lines_live) and nothing changes. The audit entry names the request only.
func (s *Service) Approve(ctx context.Context, op *subprov.Operator, id string) (*subprov.PrivacyRequest, error) {
	return s.decide(ctx, op, id, func(tx *store.Tx, req *subprov.PrivacyRequest) error {
		// The subscriber's row stays locked until the erasure commits, so a change to the
		// account that locks it too (adding an authorized user) waits rather than slipping in
		// between the check of the lines and the erasure.
		if _, _, err := tx.SubscriberNumber(ctx, req.SubscriberID); err != nil {
			return err
		}
		lines, err := tx.LinesOfSubscriberTx(ctx, req.SubscriberID)
		if err != nil {
			return err
		}
		now := s.Clock.Now()
		for _, l := range lines {
			if Live(l, now) {
				return LinesLive()
			}
		}
		req.Status = subprov.PrivacyApproved
		return tx.EraseSubscriber(ctx, req.SubscriberID, ServiceReasons, now)
	})
}

// Reject refuses a pending request in the operator's scope, for a reason (audited, and
// recorded on the request).
func (s *Service) Reject(ctx context.Context, op *subprov.Operator, id, reason string) (*subprov.PrivacyRequest, error) {
	reason = strings.TrimSpace(reason)
	return s.decide(ctx, op, id, func(tx *store.Tx, req *subprov.PrivacyRequest) error {
		switch {
		case reason == "":
			return subprov.Invalid(map[string]string{"reason": "required"})
		case len(reason) > 500:
			return subprov.Invalid(map[string]string{"reason": "at most 500 characters"})
		}
		req.Status, req.Reason = subprov.PrivacyRejected, reason
		return nil
	})
}

// decide locks a pending request in the operator's scope, applies the decision and records it
// with its audit entry, all in one transaction.
func (s *Service) decide(ctx context.Context, op *subprov.Operator, id string, apply func(tx *store.Tx, req *subprov.PrivacyRequest) error) (*subprov.PrivacyRequest, error) {
	if err := op.Authorize(subprov.PermLineActions); err != nil {
		return nil, err
	}
	var req *subprov.PrivacyRequest
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		req, err = tx.LockPrivacyRequest(ctx, id)
		if errors.Is(err, subprov.ErrNotFound) || (err == nil && !op.Scope().Allows(req.ProviderID)) {
			return subprov.NotFound("Privacy request")
		}
		if err != nil {
			return err
		}
		if req.Status != subprov.PrivacyPending {
			return subprov.Errorf(subprov.ECONFLICT, "decided", "The privacy request is already %s", req.Status)
		}
		if err := apply(tx, req); err != nil {
			return err
		}
		now := s.Clock.Now()
		if err := tx.DecidePrivacyRequest(ctx, req, now); err != nil {
			return err
		}
		e := subprov.NewAudit(ctx, req.ProviderID, "privacy_request."+req.Status, "privacy_request", req.ID)
		e.Changes.Set("status", subprov.PrivacyPending, req.Status)
		e.Reason = req.Reason
		return tx.RecordAudit(ctx, e, now)
	})
	if err != nil {
		return nil, err
	}
	return req, nil
}

// ServiceReasons are the reasons the service itself gives a line's status change in its
// history (the partner's and dunning's suspensions, an operator's, a reinstatement and its
// undoing, a port that did not reopen): they say nothing personal, so a deletion keeps them
// and erases every other reason, the words a person wrote.
var ServiceReasons = []string{"", "partner", "dunning", "operator", "reinstated", "reinstatement_undone", "port_not_reopened"}
