package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/subprov/subprov"
)

// NextCustomerNumber allocates the provider's next free NNNN-NNN number. Numbers come from a
// per-provider counter and are never reused; numbers a fixture set by hand are skipped.
//
// On SQLite the counter is advanced in tx: its single writer already serialises transactions.
// On PostgreSQL that UPDATE would lock the provider row until tx commits, and every order of
// the provider would wait for the one before; there the store reserves blocks of numbers in
// short transactions of their own and hands them out in order. A number whose transaction
// rolls back is not handed out again (a gap, as a database sequence leaves).
func (tx *Tx) NextCustomerNumber(ctx context.Context, providerID string) (string, error) {
	var free string
	err := tx.takeCustomerNumber(ctx, providerID, func(num string) (bool, error) {
		var n int
		if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM subscribers WHERE provider_id = ? AND customer_number = ?`, providerID, num).Scan(&n); err != nil {
			return false, fmt.Errorf("check customer number: %w", err)
		}
		free = num
		return n == 0, nil
	})
	if err != nil {
		return "", err
	}
	return free, nil
}

// takeCustomerNumber offers the provider's next numbers to take, in order, until take
// accepts one (a number set by hand is taken already) or fails.
func (tx *Tx) takeCustomerNumber(ctx context.Context, providerID string, take func(num string) (bool, error)) error {
	for i := 0; i < 1000; i++ {
		seq, err := tx.nextCustomerSeq(ctx, providerID)
		if err != nil {
			return fmt.Errorf("allocate customer number: %w", err)
		}
		if ok, err := take(subprov.FormatCustomerNumber(seq)); ok || err != nil {
			return err
		}
	}
	return fmt.Errorf("allocate customer number: no free number after 1000 tries")
}

func (tx *Tx) nextCustomerSeq(ctx context.Context, providerID string) (int64, error) {
	if tx.s != nil && tx.s.counters != nil {
		seq, err := tx.s.counters.next(ctx, providerID)
		if !errors.Is(err, errCounterHere) {
			return seq, err
		}
		// The provider row is not committed yet (created in tx) or is locked for long (by tx
		// itself, say): take the number in tx, as SQLite does.
	}
	var seq int64
	err := tx.QueryRow(ctx, `UPDATE providers SET customer_seq = customer_seq + 1 WHERE id = ? RETURNING customer_seq`, providerID).Scan(&seq)
	return seq, err
}

// UpsertSubscriber writes a subscriber by id with its holder contact and, when given, a
// separate invoice contact (removing a stale one when not).
func (tx *Tx) UpsertSubscriber(ctx context.Context, sub *subprov.Subscriber, now time.Time) error {
	holder := sub.Holder
	_, err := tx.Exec(ctx, `INSERT INTO subscribers (id, provider_id, email, customer_number, legacy_customer_number,
			processor_customer_id, payment_method_id, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET email = excluded.email, customer_number = excluded.customer_number,
			legacy_customer_number = excluded.legacy_customer_number, updated_at = excluded.updated_at`,
		sub.ID, sub.ProviderID, subprov.NormalizeEmail(holder.Email), nullStr(sub.CustomerNumber), nullStr(sub.LegacyCustomerNumber),
		nullStr(sub.ProcessorCustomerID), nullStr(sub.PaymentMethodID), now.UTC(), now.UTC())
	if err != nil {
		return fmt.Errorf("upsert subscriber %s: %w", sub.ID, err)
	}
	if err := tx.upsertContact(ctx, sub.ID, "holder", holder, now); err != nil {
		return err
	}
	if sub.InvoiceContact != nil {
		if err := tx.upsertContact(ctx, sub.ID, "invoice", *sub.InvoiceContact, now); err != nil {
			return err
		}
	} else if _, err := tx.Exec(ctx, `DELETE FROM contacts WHERE subscriber_id = ? AND role = 'invoice'`, sub.ID); err != nil {
		return fmt.Errorf("remove invoice contact: %w", err)
	}
	return tx.ReindexSubscriber(ctx, sub.ID)
}

func (tx *Tx) upsertContact(ctx context.Context, subscriberID, role string, c subprov.Contact, now time.Time) error {
	id := c.ID
	if id == "" {
		id = NewID()
	}
	_, err := tx.Exec(ctx, `INSERT INTO contacts (id, subscriber_id, role, firstname, lastname, email, phonenumber, company, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (subscriber_id, role) DO UPDATE SET firstname = excluded.firstname, lastname = excluded.lastname,
			email = excluded.email, phonenumber = excluded.phonenumber, company = excluded.company, updated_at = excluded.updated_at`,
		id, subscriberID, role, c.FirstName, c.LastName, c.Email, c.PhoneNumber, c.Company, now.UTC())
	if err != nil {
		return fmt.Errorf("upsert %s contact: %w", role, err)
	}
	return nil
}

// UpsertSubscription writes a subscription by id (fixture and tests); order flows insert
// through their own methods so idempotency constraints decide races.
func (tx *Tx) UpsertSubscription(ctx context.Context, s *subprov.Subscription, now time.Time) error {
	// A fixture knows no cancellation dates: a CANCELLED line is one that ended long ago, its
	// port reset, so it holds no place (holdsPlace); loading it again keeps the first mark.
	var deprovisioned *time.Time
	if s.Status == subprov.StatusCancelled {
		deprovisioned = &now
	}
	_, err := tx.Exec(ctx, `INSERT INTO subscriptions (id, provider_id, subscriber_id, plan_version_id, building_id, unit_id, port_id,
			location_key, status, delivery_mode, mac_address, billing_owner, billing_day, processor_customer_id, payment_method_id,
			external_subscription_id, anonymous, source, started_at, activated_at, workflow_state, vlan, deprovisioned_at, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET plan_version_id = excluded.plan_version_id, unit_id = excluded.unit_id,
			port_id = excluded.port_id, location_key = excluded.location_key, status = excluded.status,
			billing_owner = excluded.billing_owner, billing_day = excluded.billing_day,
			external_subscription_id = excluded.external_subscription_id, started_at = excluded.started_at,
			workflow_state = excluded.workflow_state, vlan = excluded.vlan,
			deprovisioned_at = CASE WHEN excluded.status = 'CANCELLED' THEN COALESCE(subscriptions.deprovisioned_at, excluded.deprovisioned_at) END,
			updated_at = excluded.updated_at`,
		s.ID, s.ProviderID, nullStr(s.SubscriberID), s.PlanVersionID, s.BuildingID, nullStr(s.UnitID), nullStr(s.PortID),
		subprov.LocationKey(s.UnitID, s.PortID), string(s.Status), string(s.DeliveryMode), s.MACAddress, string(s.BillingOwner), s.BillingDay,
		nullStr(s.ProcessorCustomerID), nullStr(s.PaymentMethodID), nullStr(s.ExternalSubscriptionID), s.Anonymous, s.Source,
		nullStr(s.StartedAt), nullTime(s.ActivatedAt), s.WorkflowState, s.VLAN, nullTime(deprovisioned), now.UTC(), now.UTC())
	if err != nil {
		return fmt.Errorf("upsert subscription %s: %w", s.ID, err)
	}
	return tx.ReindexSubscriber(ctx, s.SubscriberID)
}

// PortOfUnit returns the port wired to a suite, if any.
func (tx *Tx) PortOfUnit(ctx context.Context, unitID string) (string, error) {
	var id string
	err := tx.QueryRow(ctx, `SELECT id FROM ports WHERE unit_id = ? ORDER BY id LIMIT 1`, unitID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("port of unit %s: %w", unitID, err)
	}
	return id, nil
}

// Contacts returns a subscriber's holder contact and, when one is split off, the invoice contact.
func (tx *Tx) Contacts(ctx context.Context, subscriberID string) (holder subprov.Contact, invoice *subprov.Contact, err error) {
	return readContacts(ctx, tx, subscriberID)
}

func readContacts(ctx context.Context, q Querier, subscriberID string) (holder subprov.Contact, invoice *subprov.Contact, err error) {
	rows, err := q.Query(ctx, `SELECT id, role, firstname, lastname, email, phonenumber, company FROM contacts WHERE subscriber_id = ?`, subscriberID)
	if err != nil {
		return holder, nil, fmt.Errorf("contacts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c subprov.Contact
		var role string
		if err := rows.Scan(&c.ID, &role, &c.FirstName, &c.LastName, &c.Email, &c.PhoneNumber, &c.Company); err != nil {
			return holder, nil, fmt.Errorf("scan contact: %w", err)
		}
		if role == "holder" {
			holder = c
		} else if role == "invoice" {
			cc := c
			invoice = &cc
		}
	}
	return holder, invoice, rows.Err()
}

// PutInvoiceContact stores the separate billing contact.
func (tx *Tx) PutInvoiceContact(ctx context.Context, subscriberID string, c subprov.Contact, now time.Time) error {
	if err := tx.upsertContact(ctx, subscriberID, "invoice", c, now); err != nil {
		return err
	}
	return tx.ReindexSubscriber(ctx, subscriberID)
}

// DeleteInvoiceContact removes the separate billing contact: invoices go to the holder again.
func (tx *Tx) DeleteInvoiceContact(ctx context.Context, subscriberID string) error {
	if _, err := tx.Exec(ctx, `DELETE FROM contacts WHERE subscriber_id = ? AND role = 'invoice'`, subscriberID); err != nil {
		return fmt.Errorf("delete invoice contact: %w", err)
	}
	return tx.ReindexSubscriber(ctx, subscriberID)
}

// SubscriberRecordOf reads a subscriber and its contacts.
func (s *Store) SubscriberRecordOf(ctx context.Context, providerID, id string) (*subprov.SubscriberContacts, error) {
	var r subprov.SubscriberContacts
	var num *string
	err := s.R().QueryRow(ctx, `SELECT id, provider_id, customer_number FROM subscribers WHERE provider_id = ? AND id = ?`, providerID, id).
		Scan(&r.ID, &r.ProviderID, &num)
	if err != nil {
		return nil, fmt.Errorf("subscriber %s: %w", id, err)
	}
	if num != nil {
		r.CustomerNumber = *num
	}
	r.Holder, r.Invoice, err = readContacts(ctx, s.R(), id)
	return &r, err
}

// SubscriptionsOfSubscriber lists a subscriber's lines, newest first.
func (s *Store) SubscriptionsOfSubscriber(ctx context.Context, providerID, subscriberID string) ([]*subprov.Subscription, error) {
	return listSubscriptions(ctx, s.R(), "subscriptions of subscriber", `WHERE s.provider_id = ? AND s.subscriber_id = ?
		ORDER BY s.created_at DESC, s.id`, providerID, subscriberID)
}

// UpdateHolderContact stores the holder's contract contact (not the e-mail, which is the login).
func (tx *Tx) UpdateHolderContact(ctx context.Context, subscriberID string, c subprov.Contact, now time.Time) error {
	if err := tx.upsertContact(ctx, subscriberID, "holder", c, now); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE subscribers SET updated_at = ? WHERE id = ?`, now.UTC(), subscriberID); err != nil {
		return fmt.Errorf("update subscriber: %w", err)
	}
	return tx.ReindexSubscriber(ctx, subscriberID)
}

// SubscriberProcessor returns the processor customer and card a subscriber pays with: its own,
// else those of its newest platform-billed line.
func (s *Store) SubscriberProcessor(ctx context.Context, subscriberID string) (customerID, methodID string, err error) {
	err = s.R().QueryRow(ctx, `SELECT COALESCE(b.processor_customer_id, l.processor_customer_id, ''), COALESCE(b.payment_method_id, l.payment_method_id, '')
		FROM subscribers b LEFT JOIN (SELECT subscriber_id, processor_customer_id, payment_method_id FROM subscriptions
			WHERE subscriber_id = ? AND billing_owner = 'platform' AND processor_customer_id IS NOT NULL ORDER BY created_at DESC LIMIT 1) l
			ON l.subscriber_id = b.id
		WHERE b.id = ?`, subscriberID, subscriberID).Scan(&customerID, &methodID)
	if err != nil {
		return "", "", fmt.Errorf("subscriber processor: %w", err)
	}
	return customerID, methodID, nil
}

// SetSubscriberPaymentMethod saves the card a subscriber pays with, on the subscriber and on
// every one of its platform-billed lines, cancelled ones included (AutoPay charges the line's
// card: a cancelled line may still owe an invoice, or come back).
func (tx *Tx) SetSubscriberPaymentMethod(ctx context.Context, subscriberID, customerID, methodID string, now time.Time) error {
	if _, err := tx.Exec(ctx, `UPDATE subscribers SET processor_customer_id = ?, payment_method_id = ?, updated_at = ? WHERE id = ?`,
		customerID, methodID, now.UTC(), subscriberID); err != nil {
		return fmt.Errorf("save payment method: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE subscriptions SET processor_customer_id = ?, payment_method_id = ?, updated_at = ?
		WHERE subscriber_id = ? AND billing_owner = 'platform'`, customerID, methodID, now.UTC(), subscriberID); err != nil {
		return fmt.Errorf("save payment method on lines: %w", err)
	}
	return nil
}

// SetSubscriberProcessorCustomer records the processor customer created for a subscriber.
func (tx *Tx) SetSubscriberProcessorCustomer(ctx context.Context, subscriberID, customerID string) error {
	if _, err := tx.Exec(ctx, `UPDATE subscribers SET processor_customer_id = ? WHERE id = ?`, customerID, subscriberID); err != nil {
		return fmt.Errorf("save processor customer: %w", err)
	}
	return nil
}

// OpenInvoiceIDsOfSubscriber lists a subscriber's unpaid invoices dated on or before datedBy
// (YYYY-MM-DD), leaving out those of lines with AutoPay off: their holder pays them.
func (tx *Tx) OpenInvoiceIDsOfSubscriber(ctx context.Context, subscriberID, datedBy string) ([]string, error) {
	return QueryStrings(ctx, tx, "open invoices", `SELECT i.id FROM invoices i JOIN subscriptions s ON s.id = i.subscription_id
		WHERE i.subscriber_id = ? AND i.status = 'open' AND i.invoice_date <= ? AND NOT s.autopay_off`, subscriberID, datedBy)
}

// InvoiceAddress reads the postal address kept on a subscriber's billing contact (the
// separate one if any, else the holder's); empty when none was recorded.
func (s *Store) InvoiceAddress(ctx context.Context, subscriberID string) (subprov.Address, error) {
	var a subprov.Address
	err := s.R().QueryRow(ctx, `SELECT street, city, postal_code, province, country FROM contacts
		WHERE subscriber_id = ? AND street <> '' ORDER BY CASE role WHEN 'invoice' THEN 0 ELSE 1 END LIMIT 1`, subscriberID).
		Scan(&a.Street, &a.City, &a.PostalCode, &a.Province, &a.Country)
	if errors.Is(err, sql.ErrNoRows) {
		return subprov.Address{}, nil
	}
	if err != nil {
		return a, fmt.Errorf("invoice address: %w", err)
	}
	return a, nil
}
