package portal

import (
	"context"
	"errors"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/payments"
	"github.com/subprov/subprov/store"
)

// processorError turns a processor failure into the portal's answer.
func processorError(err error) error {
	switch {
	case errors.Is(err, payments.ErrNotConnected):
		return subprov.Errorf(subprov.ECONFLICT, "no_processor_connection", "The provider has no payment-processor connection")
	case errors.Is(err, payments.ErrCardDeclined):
		return subprov.Errorf(subprov.ECONFLICT, "card_declined", "The card was declined")
	case errors.Is(err, payments.ErrSetupIntentNotFound):
		return subprov.NotFound("Setup intent")
	case errors.Is(err, payments.ErrInvalidRequest), errors.Is(err, payments.ErrCustomerNotFound):
		return subprov.Errorf(subprov.EINVALID, "validation_error", "The setup is no longer valid")
	case errors.Is(err, payments.ErrUnavailable):
		return subprov.Errorf(subprov.EUNAVAILABLE, "processor_unavailable", "The payment processor did not answer; try again")
	}
	return err
}

// connected resolves the provider for the payment-method operations, which are the holder's
// alone: the card pays for every line of the account.
func (s *Service) connected(ctx context.Context, acc *subprov.AccountLogin) (*subprov.Provider, error) {
	p, err := s.holderAccount(ctx, acc)
	if err != nil {
		return nil, err
	}
	if p.PaymentProcessor == "none" {
		return nil, processorError(payments.ErrNotConnected)
	}
	return p, nil
}

// PaymentMethod returns the saved card, or nil when there is none.
func (s *Service) PaymentMethod(ctx context.Context, acc *subprov.AccountLogin) (*payments.Method, error) {
	p, err := s.connected(ctx, acc)
	if err != nil {
		return nil, err
	}
	customer, method, err := s.Store.SubscriberProcessor(ctx, acc.SubscriberID)
	if err != nil || customer == "" {
		return nil, err
	}
	c, err := s.Processor.Customer(ctx, p, customer)
	if err != nil {
		return nil, processorError(err)
	}
	if method == "" {
		method = c.AdoptableMethod()
	}
	for _, m := range c.Methods {
		if m.ID == method {
			return &m, nil
		}
	}
	return nil, nil
}

// StartCardSetup opens a setup for saving a card off-session, creating the subscriber's
// processor customer first when there is none.
func (s *Service) StartCardSetup(ctx context.Context, acc *subprov.AccountLogin) (*payments.SetupIntent, error) {
	p, err := s.connected(ctx, acc)
	if err != nil {
		return nil, err
	}
	customer, _, err := s.Store.SubscriberProcessor(ctx, acc.SubscriberID)
	if err != nil {
		return nil, err
	}
	if customer == "" {
		if customer, err = s.Processor.CreateCustomer(ctx, p, acc.Email); err != nil {
			return nil, processorError(err)
		}
		err := s.Store.InTx(ctx, func(tx *store.Tx) error { return tx.SetSubscriberProcessorCustomer(ctx, acc.SubscriberID, customer) })
		if err != nil {
			return nil, err
		}
	}
	si, err := s.Processor.CreateSetupIntent(ctx, p, customer)
	if err != nil {
		return nil, processorError(err)
	}
	return si, nil
}

// ConfirmCardSetup completes one of the account's own setups and makes the new card the one
// AutoPay charges for every platform-billed line of the account; unpaid invoices are retried
// with it at once, but one dated later (a cancellation's final invoice, dated on its end date)
// still waits for its date: AutoPay charges nothing before its date. A setup opened for another account's processor customer answers 404, as an
// unknown one does, and nothing is confirmed: the processor attaches a card to the setup's own
// customer, whoever confirms it.
func (s *Service) ConfirmCardSetup(ctx context.Context, acc *subprov.AccountLogin, setupIntentID, testCard string) (*payments.Method, error) {
	p, err := s.connected(ctx, acc)
	if err != nil {
		return nil, err
	}
	customer, _, err := s.Store.SubscriberProcessor(ctx, acc.SubscriberID)
	if err != nil {
		return nil, err
	}
	if customer == "" { // no setup was ever opened for this account
		return nil, processorError(payments.ErrSetupIntentNotFound)
	}
	m, err := s.Processor.ConfirmSetupIntent(ctx, p, customer, setupIntentID, testCard)
	if err != nil {
		return nil, processorError(err)
	}
	now := s.Clock.Now()
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.SetSubscriberPaymentMethod(ctx, acc.SubscriberID, customer, m.ID, now); err != nil {
			return err
		}
		open, err := tx.OpenInvoiceIDsOfSubscriber(ctx, acc.SubscriberID, now.In(p.Location()).Format(time.DateOnly))
		if err != nil {
			return err
		}
		for _, id := range open {
			if err := tx.ScheduleCharge(ctx, id, now); err != nil {
				return err
			}
		}
		return tx.InsertAudit(ctx, p.ID, "subscriber:"+acc.ID, "payment_method.saved", acc.SubscriberID, `{"payment_method":"`+m.ID+`"}`, now)
	})
	return m, err
}
