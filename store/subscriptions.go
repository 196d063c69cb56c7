package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
	"github.com/subprov/subprov/search"
)

// lineInServiceOnPortQuery goes through subscriptions_port, as the other reads of a port's lines.
const lineInServiceOnPortQuery = `SELECT id FROM subscriptions WHERE port_id = ? AND id <> ? AND status IN ('ACTIVE', 'SUSPENDED')
	ORDER BY created_at, id LIMIT 1`

const subscriptionColumns = `s.id, s.provider_id, COALESCE(s.subscriber_id, ''), s.plan_version_id, s.building_id, COALESCE(s.unit_id, ''),
	COALESCE(s.port_id, ''), s.status, s.workflow_state, s.delivery_mode, s.mac_address, s.billing_owner, s.billing_day,
	COALESCE(s.processor_customer_id, ''), COALESCE(s.payment_method_id, ''), COALESCE(s.external_subscription_id, ''), s.anonymous,
	s.contact_email, s.on_hold, s.appointment_at, s.booking_link_sent, s.source, COALESCE(s.checkout_session_id, ''),
	COALESCE(s.started_at, ''), s.activated_at, s.canceled_at, s.ended_at, s.cancel_reason, s.status_before_cancel,
	COALESCE(s.requested_start_date, ''), s.vlan, s.created_at, s.updated_at, s.autopay_off`

func scanSubscription(row interface{ Scan(...any) error }) (*subprov.Subscription, error) {
	var r subscriptionRow
	if err := row.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.value(), nil
}

// subscriptionRow receives subscriptionColumns, alone (scanSubscription) or beside other
// tables' columns in one row (LineToProvision).
type subscriptionRow struct {
	s                                subprov.Subscription
	status, mode, owner, before      string
	appt, activated, canceled, ended sql.NullTime
}

func (r *subscriptionRow) dest() []any {
	s := &r.s
	return []any{&s.ID, &s.ProviderID, &s.SubscriberID, &s.PlanVersionID, &s.BuildingID, &s.UnitID, &s.PortID, &r.status,
		&s.WorkflowState, &r.mode, &s.MACAddress, &r.owner, &s.BillingDay, &s.ProcessorCustomerID, &s.PaymentMethodID,
		&s.ExternalSubscriptionID, &s.Anonymous, &s.ContactEmail, &s.OnHold, &r.appt, &s.BookingLinkSent, &s.Source,
		&s.CheckoutSessionID, &s.StartedAt, &r.activated, &r.canceled, &r.ended, &s.CancelReason, &r.before, &s.RequestedStartDate,
		&s.VLAN, &s.CreatedAt, &s.UpdatedAt, &s.AutoPayOff}
}

func (r *subscriptionRow) value() *subprov.Subscription {
	s := r.s
	s.Status, s.DeliveryMode, s.BillingOwner = subprov.Status(r.status), subprov.DeliveryMode(r.mode), subprov.BillingOwner(r.owner)
	s.StatusBeforeCancel = subprov.Status(r.before)
	s.AppointmentAt, s.ActivatedAt, s.CanceledAt, s.EndedAt = timePtr(r.appt), timePtr(r.activated), timePtr(r.canceled), timePtr(r.ended)
	return &s
}

// listSubscriptions runs a subscription query (the part after FROM subscriptions s).
func listSubscriptions(ctx context.Context, q Querier, what, rest string, args ...any) ([]*subprov.Subscription, error) {
	return sqltext.QueryAll(ctx, q, what, scanSubscription, `SELECT `+subscriptionColumns+` FROM subscriptions s `+rest, args...)
}

// Subscription returns one of a provider's subscriptions.
func (s *Store) Subscription(ctx context.Context, providerID, id string) (*subprov.Subscription, error) {
	sub, err := scanSubscription(s.R().QueryRow(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions s WHERE s.provider_id = ? AND s.id = ?`, providerID, id))
	if err != nil {
		return nil, fmt.Errorf("subscription %s: %w", id, err)
	}
	return sub, nil
}

// SubscriptionByID returns a subscription whatever its provider: for the operator dashboard,
// whose users act across providers.
func (s *Store) SubscriptionByID(ctx context.Context, id string) (*subprov.Subscription, error) {
	sub, err := scanSubscription(s.R().QueryRow(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions s WHERE s.id = ?`, id))
	if err != nil {
		return nil, fmt.Errorf("subscription %s: %w", id, err)
	}
	return sub, nil
}

// LockSubscription reads a subscription for update inside tx, scoped to its provider ("" for
// the operator). On SQLite the single writer connection already serialises writers.
func (tx *Tx) LockSubscription(ctx context.Context, providerID, id string) (*subprov.Subscription, error) {
	q := `SELECT ` + subscriptionColumns + ` FROM subscriptions s WHERE s.id = ?`
	args := []any{id}
	if providerID != "" {
		q += ` AND s.provider_id = ?`
		args = append(args, providerID)
	}
	sub, err := scanSubscription(tx.QueryRow(ctx, q+tx.d.ForUpdate(), args...))
	if err != nil {
		return nil, fmt.Errorf("lock subscription %s: %w", id, err)
	}
	return sub, nil
}

// holdsPlace is subprov.HoldsPlace in SQL, for reads and counts by place. It is the predicate
// of the unique index subscriptions_location_holder (migration 0022), written the same way so
// that reads by location use that index; TestHoldsPlaceInSQLIsTheRule keeps it the rule.
const holdsPlace = `(s.status IN ('PENDING_INSTALL', 'ACTIVE', 'SUSPENDED') OR (s.status = 'CANCELLED' AND s.deprovisioned_at IS NULL))`

// lineHolding reads the line that holds a place, through subscriptions_location_holder.
const lineHolding = `SELECT ` + subscriptionColumns + ` FROM subscriptions s WHERE s.location_key = ? AND ` + holdsPlace

// LineHolding returns the line that holds a place (subprov.LocationKey), if any.
func (tx *Tx) LineHolding(ctx context.Context, locationKey string) (*subprov.Subscription, error) {
	return scanSubscription(tx.QueryRow(ctx, lineHolding, locationKey))
}

// SubscriptionByExternalID returns a provider's line by the partner's own id.
func (tx *Tx) SubscriptionByExternalID(ctx context.Context, providerID, externalID string) (*subprov.Subscription, error) {
	return scanSubscription(tx.QueryRow(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions s
		WHERE s.provider_id = ? AND s.external_subscription_id = ?`, providerID, externalID))
}

// InsertSubscription inserts a new line at its place (subprov.LocationKey of its suite and port)
// unless a unique constraint already holds one: a line holding the place, a line with the
// external id, a line of the checkout session. inserted reports which. ON CONFLICT DO NOTHING
// keeps a PostgreSQL transaction usable after losing the race, so the caller can read the
// winner.
func (tx *Tx) InsertSubscription(ctx context.Context, s *subprov.Subscription, now time.Time) (bool, error) {
	var id string
	locationKey := subprov.LocationKey(s.UnitID, s.PortID)
	err := tx.QueryRow(ctx, `INSERT INTO subscriptions (id, provider_id, subscriber_id, plan_version_id, building_id, unit_id, port_id,
			location_key, status, workflow_state, delivery_mode, mac_address, billing_owner, billing_day, processor_customer_id,
			payment_method_id, external_subscription_id, anonymous, contact_email, source, checkout_session_id, requested_start_date,
			vlan, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT DO NOTHING RETURNING id`,
		s.ID, s.ProviderID, nullStr(s.SubscriberID), s.PlanVersionID, s.BuildingID, nullStr(s.UnitID), nullStr(s.PortID), locationKey,
		string(s.Status), s.WorkflowState, string(s.DeliveryMode), s.MACAddress, string(s.BillingOwner), s.BillingDay,
		nullStr(s.ProcessorCustomerID), nullStr(s.PaymentMethodID), nullStr(s.ExternalSubscriptionID), s.Anonymous, s.ContactEmail,
		s.Source, nullStr(s.CheckoutSessionID), nullStr(s.RequestedStartDate), s.VLAN, now.UTC(), now.UTC()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("insert subscription: %w", err)
	}
	s.CreatedAt, s.UpdatedAt = now.UTC(), now.UTC()
	tx.reindexAtCommit(s.SubscriberID) // the line's building and suite are search terms
	return true, tx.recordStatus(ctx, s.ID, s.Status, "", now)
}

// UpdateSubscription applies a partial update.
func (tx *Tx) UpdateSubscription(ctx context.Context, id string, c subprov.SubscriptionChange, now time.Time) error {
	sets := []string{"updated_at = ?"}
	args := []any{now.UTC()}
	add := func(col string, v any) {
		sets = append(sets, col+" = ?")
		args = append(args, v)
	}
	if c.Status != nil {
		add("status", string(*c.Status))
	}
	if c.WorkflowState != nil {
		add("workflow_state", *c.WorkflowState)
	}
	if c.PlanVersionID != nil {
		add("plan_version_id", *c.PlanVersionID)
	}
	if c.MACAddress != nil {
		add("mac_address", *c.MACAddress)
	}
	if c.StartedAt != nil {
		add("started_at", *c.StartedAt)
	}
	if c.ActivatedAt != nil {
		add("activated_at", c.ActivatedAt.UTC())
	}
	if c.CanceledAt != nil {
		add("canceled_at", c.CanceledAt.UTC())
	}
	if c.EndedAt != nil {
		add("ended_at", c.EndedAt.UTC())
	}
	if c.CancelReason != nil {
		add("cancel_reason", *c.CancelReason)
	}
	if c.StatusBeforeCancel != nil {
		add("status_before_cancel", string(*c.StatusBeforeCancel))
	}
	if c.OnHold != nil {
		add("on_hold", *c.OnHold)
	}
	if c.BookingLinkSent != nil {
		add("booking_link_sent", *c.BookingLinkSent)
	}
	if c.VLAN != nil {
		add("vlan", *c.VLAN)
	}
	if c.BillingDay != nil {
		add("billing_day", *c.BillingDay)
	}
	args = append(args, id)
	if c.Status != nil {
		if err := tx.startHistory(ctx, id); err != nil {
			return err
		}
	}
	if _, err := tx.Exec(ctx, `UPDATE subscriptions SET `+strings.Join(sets, ", ")+` WHERE id = ?`, args...); err != nil {
		return fmt.Errorf("update subscription %s: %w", id, err)
	}
	if c.Status != nil {
		return tx.recordStatus(ctx, id, *c.Status, c.StatusReason, now)
	}
	return nil
}

// EnsureSubscriber returns the provider's subscriber with this holder e-mail, creating it
// (with a new customer number) when there is none. Concurrent calls for one e-mail agree on
// one subscriber: the insert does nothing on conflict and the winner is read back. The insert
// is also what tells a number set by hand: when it does nothing and no subscriber has the
// e-mail, the number was taken and the next is tried.
func (tx *Tx) EnsureSubscriber(ctx context.Context, providerID string, holder subprov.Contact, now time.Time) (*subprov.Subscriber, bool, error) {
	email := subprov.NormalizeEmail(holder.Email)
	if sub, err := tx.subscriberByEmail(ctx, providerID, email); err == nil {
		return sub, false, nil
	} else if !errors.Is(err, sql.ErrNoRows) {
		return nil, false, err
	}
	sub := &subprov.Subscriber{ID: NewID(), ProviderID: providerID, Holder: holder}
	sub.Holder.Email = email
	var existing *subprov.Subscriber
	err := tx.takeCustomerNumber(ctx, providerID, func(num string) (bool, error) {
		sub.CustomerNumber = num
		var id string
		err := tx.QueryRow(ctx, `INSERT INTO subscribers (id, provider_id, email, customer_number, created_at, updated_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
			sub.ID, providerID, email, num, now.UTC(), now.UTC()).Scan(&id)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return false, fmt.Errorf("insert subscriber: %w", err)
		}
		existing, err = tx.subscriberByEmail(ctx, providerID, email)
		if errors.Is(err, sql.ErrNoRows) {
			return false, nil // the number is taken
		}
		return err == nil, err
	})
	if err != nil || existing != nil {
		return existing, false, err
	}
	if err := tx.upsertContact(ctx, sub.ID, "holder", sub.Holder, now); err != nil {
		return nil, false, err
	}
	tx.reindexAtCommit(sub.ID)
	return sub, true, nil
}

func (tx *Tx) subscriberByEmail(ctx context.Context, providerID, email string) (*subprov.Subscriber, error) {
	var sub subprov.Subscriber
	var num sql.NullString
	err := tx.QueryRow(ctx, `SELECT id, provider_id, customer_number FROM subscribers WHERE provider_id = ? AND email = ?`, providerID, email).
		Scan(&sub.ID, &sub.ProviderID, &num)
	if err != nil {
		return nil, err
	}
	sub.CustomerNumber = num.String
	sub.Holder.Email = email
	return &sub, nil
}

// ProcessorCustomerInUse reports whether another subscriber's live line of the provider
// already bills this processor customer.
func (tx *Tx) ProcessorCustomerInUse(ctx context.Context, providerID, customerID, subscriberEmail string) (bool, error) {
	var n int
	err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM subscriptions s JOIN subscribers b ON b.id = s.subscriber_id
		WHERE s.provider_id = ? AND s.processor_customer_id = ? AND s.status <> 'CANCELLED' AND b.email <> ?`,
		providerID, customerID, subprov.NormalizeEmail(subscriberEmail)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("processor customer in use: %w", err)
	}
	return n > 0, nil
}

// InsertInstallJob opens an install job.
func (tx *Tx) InsertInstallJob(ctx context.Context, j *subprov.InstallJob, now time.Time) error {
	_, err := tx.Exec(ctx, `INSERT INTO install_jobs (id, provider_id, subscription_id, kind, booking, state, flags, invitation_due_on, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, j.ID, j.ProviderID, j.SubscriptionID, j.Kind, nullStr(j.Booking), j.State, j.Flags,
		nullStr(j.InvitationDueOn), now.UTC(), now.UTC())
	if err != nil {
		return fmt.Errorf("insert install job: %w", err)
	}
	return nil
}

// CloseInstallJobs marks a line's open install jobs done (or cancelled); a cancelled booked
// visit gives its slot's place back.
func (tx *Tx) CloseInstallJobs(ctx context.Context, subscriptionID, state string, now time.Time) error {
	if state != "done" {
		if err := tx.releaseSlotsOfBookedJobs(ctx, subscriptionID); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, `UPDATE install_jobs SET state = ?, updated_at = ? WHERE subscription_id = ? AND state IN ('open', 'booked', 'held')`,
		state, now.UTC(), subscriptionID)
	if err != nil {
		return fmt.Errorf("close install jobs: %w", err)
	}
	return nil
}

// OpenReinstall returns the id of a line's live reinstall job (a reactivated line waiting for
// its technician), or "" when its live install job, if any, is not a reinstall.
func (tx *Tx) OpenReinstall(ctx context.Context, subscriptionID string) (string, error) {
	var id string
	err := tx.QueryRow(ctx, `SELECT id FROM install_jobs WHERE subscription_id = ? AND kind = 'reinstall'
		AND state IN ('open', 'booked', 'held') ORDER BY created_at DESC, id LIMIT 1`, subscriptionID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("open reinstall: %w", err)
	}
	return id, nil
}

// InstallDone reports whether a line's install job was completed.
func (tx *Tx) InstallDone(ctx context.Context, subscriptionID string) (bool, error) {
	var n int
	if err := tx.QueryRow(ctx, `SELECT COUNT(*) FROM install_jobs WHERE subscription_id = ? AND state = 'done'`, subscriptionID).Scan(&n); err != nil {
		return false, fmt.Errorf("install done: %w", err)
	}
	return n > 0, nil
}

// HadInstallJob reports whether a line has had an install job, in any state: it took the
// install route (a replay answers with the route the line took). q is the store's reader or
// a transaction.
func (s *Store) HadInstallJob(ctx context.Context, q Querier, subscriptionID string) (bool, error) {
	var n int
	if err := q.QueryRow(ctx, `SELECT COUNT(*) FROM install_jobs WHERE subscription_id = ?`, subscriptionID).Scan(&n); err != nil {
		return false, fmt.Errorf("had install job: %w", err)
	}
	return n > 0, nil
}

// InstallJobsOf lists a line's install jobs, oldest first.
func (s *Store) InstallJobsOf(ctx context.Context, subscriptionID string) ([]subprov.InstallJob, error) {
	rows, err := s.R().Query(ctx, `SELECT id, provider_id, subscription_id, kind, COALESCE(booking, ''), state, flags FROM install_jobs
		WHERE subscription_id = ? ORDER BY created_at, id`, subscriptionID)
	if err != nil {
		return nil, fmt.Errorf("install jobs: %w", err)
	}
	defer rows.Close()
	var out []subprov.InstallJob
	for rows.Next() {
		var j subprov.InstallJob
		if err := rows.Scan(&j.ID, &j.ProviderID, &j.SubscriptionID, &j.Kind, &j.Booking, &j.State, &j.Flags); err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// InsertPlanChange records a plan change; false when the line already changed plan on that
// day of that calendar (the unique index behind the caller's check under the row lock).
func (tx *Tx) InsertPlanChange(ctx context.Context, c subprov.PlanChange, now time.Time) (bool, error) {
	var id string
	err := tx.QueryRow(ctx, `INSERT INTO plan_changes (id, subscription_id, from_plan_version_id, to_plan_version_id, changed_on, time_zone, actor, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id`,
		NewID(), c.SubscriptionID, c.From, c.To, c.Day, c.TimeZone, c.Actor, now.UTC()).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("insert plan change: %w", err)
	}
	return true, nil
}

// PlanChangedBetween reports whether a line changed plan at an instant in [from, to), through
// any surface: a caller's calendar day, whatever calendar the change was counted in. q is the
// store's reader or a transaction (under the subscription's lock).
func (s *Store) PlanChangedBetween(ctx context.Context, q Querier, subscriptionID string, from, to time.Time) (bool, error) {
	var n int
	err := q.QueryRow(ctx, `SELECT COUNT(*) FROM plan_changes WHERE subscription_id = ? AND created_at >= ? AND created_at < ?`,
		subscriptionID, from.UTC(), to.UTC()).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("plan changed between: %w", err)
	}
	return n > 0, nil
}

// DueDeprovisions lists ended lines whose port has not been reset yet and are not queued.
func (s *Store) DueDeprovisions(ctx context.Context, now time.Time, limit int) ([]string, error) {
	return QueryStrings(ctx, s.R(), "due deprovisions", `SELECT id FROM subscriptions WHERE status = 'CANCELLED' AND ended_at <= ?
		AND deprovisioned_at IS NULL AND deprovision_queued_at IS NULL ORDER BY ended_at LIMIT ?`, now.UTC(), limit)
}

// ClaimDeprovision marks an ended line queued for deprovisioning; false if someone else did.
func (tx *Tx) ClaimDeprovision(ctx context.Context, id string, now time.Time) (bool, error) {
	res, err := tx.Exec(ctx, `UPDATE subscriptions SET deprovision_queued_at = ? WHERE id = ? AND deprovision_queued_at IS NULL`, now.UTC(), id)
	if err != nil {
		return false, fmt.Errorf("claim deprovision: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// LineInServiceOnPort returns the id of a line other than line whose service runs on line's
// port (ACTIVE or SUSPENDED); subprov.ErrNotFound when there is none.
func (s *Store) LineInServiceOnPort(ctx context.Context, line *subprov.Subscription) (string, error) {
	var id string
	err := s.R().QueryRow(ctx, lineInServiceOnPortQuery, line.PortID, line.ID).Scan(&id)
	return id, err
}

// MarkDeprovisioned records that an ended line's port was reset.
func (tx *Tx) MarkDeprovisioned(ctx context.Context, id string, now time.Time) error {
	_, err := tx.Exec(ctx, `UPDATE subscriptions SET deprovisioned_at = ?, workflow_state = 'deprovisioned', updated_at = ? WHERE id = ?`,
		now.UTC(), now.UTC(), id)
	if err != nil {
		return fmt.Errorf("mark deprovisioned: %w", err)
	}
	return nil
}

// PortByID returns a port.
func (s *Store) PortByID(ctx context.Context, id string) (*subprov.Port, error) {
	return portByID(ctx, s.R(), id)
}

// PortByID returns a port as tx sees it: a transaction never waits for a second connection.
func (tx *Tx) PortByID(ctx context.Context, id string) (*subprov.Port, error) {
	return portByID(ctx, tx, id)
}

func portByID(ctx context.Context, q Querier, id string) (*subprov.Port, error) {
	var r portRow
	err := q.QueryRow(ctx, `SELECT `+portColumns+` FROM ports pt WHERE pt.id = ?`, id).Scan(r.dest()...)
	if err != nil {
		return nil, fmt.Errorf("port %s: %w", id, err)
	}
	return r.value(), nil
}

const portColumns = `pt.id, pt.building_id, pt.unit_id, pt.switch_name, pt.port_name, pt.location_hash, pt.location_identifier`

// portRow receives portColumns, which are all NULL when a line has no port (LineToProvision).
type portRow struct {
	id, building, unit, switchName, name, hash, identifier sql.NullString
}

func (r *portRow) dest() []any {
	return []any{&r.id, &r.building, &r.unit, &r.switchName, &r.name, &r.hash, &r.identifier}
}

// value is the port, or nil when the row had none.
func (r *portRow) value() *subprov.Port {
	if !r.id.Valid {
		return nil
	}
	return &subprov.Port{ID: r.id.String, BuildingID: r.building.String, UnitID: r.unit.String, Switch: r.switchName.String,
		Name: r.name.String, LocationHash: r.hash.String, LocationIdentifier: r.identifier.String}
}

// LineToProvision reads a line, its provider, port and plan version in one round trip (the
// provisioning job's read: four reads before, each a round trip on PostgreSQL). The plan
// version is the line's provider's, as PlanVersion scopes it.
func (s *Store) LineToProvision(ctx context.Context, subscriptionID string) (*subprov.LineToProvision, error) {
	var sub subscriptionRow
	var plan planVersionRow
	var port portRow
	p, err := scanProviderAnd(s.R().QueryRow(ctx, `SELECT `+providerColumnsOf("pr")+`, `+subscriptionColumns+`, `+planVersionColumns+`, `+portColumns+`
		FROM subscriptions s JOIN providers pr ON pr.id = s.provider_id
			JOIN plan_versions v ON v.id = s.plan_version_id AND v.provider_id = s.provider_id JOIN plans p ON p.id = v.plan_id
			LEFT JOIN ports pt ON pt.id = s.port_id
		WHERE s.id = ?`, subscriptionID), append(append(sub.dest(), plan.dest()...), port.dest()...)...)
	if err != nil {
		return nil, fmt.Errorf("line %s to provision: %w", subscriptionID, err)
	}
	return &subprov.LineToProvision{Line: sub.value(), Provider: p, Port: port.value(), Plan: plan.value()}, nil
}

// ProviderByDeviceSecretHash finds the provider whose CPEs use this device secret.
func (s *Store) ProviderByDeviceSecretHash(ctx context.Context, h string) (*subprov.Provider, error) {
	p, err := scanProvider(s.R().QueryRow(ctx, `SELECT `+providerColumns+` FROM providers WHERE device_secret_hash = ? AND device_secret_hash <> ''`, h))
	if err != nil {
		return nil, fmt.Errorf("provider by device secret: %w", err)
	}
	return p, nil
}

// SubscriptionByMAC returns a provider's live line bound to a device MAC.
func (s *Store) SubscriptionByMAC(ctx context.Context, providerID, mac string) (*subprov.Subscription, error) {
	sub, err := scanSubscription(s.R().QueryRow(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions s
		WHERE s.provider_id = ? AND s.mac_address = ? AND s.status IN ('PENDING_INSTALL', 'ACTIVE') ORDER BY s.created_at DESC LIMIT 1`, providerID, mac))
	if err != nil {
		return nil, fmt.Errorf("subscription by mac: %w", err)
	}
	return sub, nil
}

// serviceLocationsOf reads the lines of n of a provider's subscribers, named by id, newest
// first, through the subscriber index (unindexed). Arguments: the provider, then the
// ids.
func serviceLocationsOf(n int) string {
	return `SELECT s.subscriber_id, ` + search.LocationColumns + `
		FROM subscriptions s JOIN buildings g ON g.id = s.building_id LEFT JOIN units u ON u.id = s.unit_id
		WHERE ` + sqltext.ProvidersKeys("s.provider_id", "s.subscriber_id", n) + `
		ORDER BY s.created_at DESC, s.id`
}

// ServiceLocations reads where each line of a provider's subscribers in ids is, newest first.
func (s *Store) ServiceLocations(ctx context.Context, providerID string, ids []string) ([]subprov.ServiceLocation, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.R().Query(ctx, serviceLocationsOf(len(ids)), sqltext.Args(providerID, ids)...)
	if err != nil {
		return nil, fmt.Errorf("service locations: %w", err)
	}
	defer rows.Close()
	var out []subprov.ServiceLocation
	for rows.Next() {
		var l subprov.ServiceLocation
		if err := rows.Scan(append([]any{&l.SubscriberID}, search.LocationFields(&l)...)...); err != nil {
			return nil, fmt.Errorf("service locations: %w", err)
		}
		out = append(out, l)
	}
	return out, rows.Err()
}

// ServiceAddress reads where one of a provider's lines is: its building's address and the
// suite as the postal address writes it (the postal label where the suite has one, else its
// number; "" without a suite).
func (s *Store) ServiceAddress(ctx context.Context, providerID, subscriptionID string) (subprov.Address, string, error) {
	var a subprov.Address
	var suite string
	err := s.R().QueryRow(ctx, `SELECT g.street, g.city, g.postal_code, g.province, g.country,
			COALESCE(NULLIF(u.postal_unit, ''), u.unit_number, '')
		FROM subscriptions s JOIN buildings g ON g.id = s.building_id LEFT JOIN units u ON u.id = s.unit_id
		WHERE s.provider_id = ? AND s.id = ?`, providerID, subscriptionID).
		Scan(&a.Street, &a.City, &a.PostalCode, &a.Province, &a.Country, &suite)
	if err != nil {
		return a, "", fmt.Errorf("service address of %s: %w", subscriptionID, err)
	}
	return a, suite, nil
}

// LatestCancelled returns a subscriber's most recently cancelled line.
func (s *Store) LatestCancelled(ctx context.Context, providerID, subscriberID string) (*subprov.Subscription, error) {
	sub, err := scanSubscription(s.R().QueryRow(ctx, `SELECT `+subscriptionColumns+` FROM subscriptions s
		WHERE s.provider_id = ? AND s.subscriber_id = ? AND s.status = 'CANCELLED' ORDER BY s.canceled_at DESC, s.id LIMIT 1`,
		providerID, subscriberID))
	if err != nil {
		return nil, fmt.Errorf("latest cancelled line: %w", err)
	}
	return sub, nil
}

// ReinstateSubscription undoes a line's cancellation: canceled_at, ended_at, the reason and
// the deprovisioner's marks are cleared, so a later cancellation runs from scratch.
func (tx *Tx) ReinstateSubscription(ctx context.Context, id string, r subprov.Reinstatement, now time.Time) error {
	if err := tx.startHistory(ctx, id); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `UPDATE subscriptions SET status = ?, workflow_state = ?, canceled_at = NULL, ended_at = NULL,
			cancel_reason = '', status_before_cancel = '', deprovision_queued_at = NULL, deprovisioned_at = NULL,
			port_id = COALESCE(?, port_id), vlan = COALESCE(?, vlan), activated_at = COALESCE(?, activated_at),
			started_at = COALESCE(?, started_at), requested_start_date = COALESCE(?, requested_start_date), updated_at = ?
		WHERE id = ? AND status = 'CANCELLED'`,
		string(r.Status), r.WorkflowState, ptrArg(r.PortID), ptrArg(r.VLAN), nullTime(r.ActivatedAt), ptrArg(r.StartedAt),
		ptrArg(r.RequestedStartDate), now.UTC(), id)
	if err != nil {
		return fmt.Errorf("reinstate subscription %s: %w", id, err)
	}
	return tx.recordStatus(ctx, id, r.Status, "reinstated", now)
}

func ptrArg[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// SetActivation records that a new line is live from now (a portal order charged at once).
func (tx *Tx) SetActivation(ctx context.Context, id string, activatedAt time.Time, startedOn string) error {
	if _, err := tx.Exec(ctx, `UPDATE subscriptions SET activated_at = ?, started_at = ? WHERE id = ?`, activatedAt.UTC(), startedOn, id); err != nil {
		return fmt.Errorf("activate subscription %s: %w", id, err)
	}
	return nil
}

// CancellationOf reads a cancelled line's cancellation inside tx, so that a reinstatement that
// does not stand can be undone with RestoreCancellation.
func (tx *Tx) CancellationOf(ctx context.Context, id string) (*subprov.Cancellation, error) {
	var c subprov.Cancellation
	var status, before string
	var port sql.NullString
	var canceled, ended, queued, deprovisioned sql.NullTime
	err := tx.QueryRow(ctx, `SELECT status, status_before_cancel, workflow_state, cancel_reason, port_id, vlan, canceled_at, ended_at,
		deprovision_queued_at, deprovisioned_at FROM subscriptions WHERE id = ?`, id).
		Scan(&status, &before, &c.WorkflowState, &c.CancelReason, &port, &c.VLAN, &canceled, &ended, &queued, &deprovisioned)
	if err != nil {
		return nil, fmt.Errorf("cancellation of %s: %w", id, err)
	}
	c.Status, c.StatusBeforeCancel, c.PortID = subprov.Status(status), subprov.Status(before), port.String
	c.CanceledAt, c.EndedAt, c.DeprovisionQueuedAt, c.Deprovisioned = timePtr(canceled), timePtr(ended), timePtr(queued), timePtr(deprovisioned)
	return &c, nil
}

// RestoreCancellation puts a line back as c describes (undoing a reinstatement).
func (tx *Tx) RestoreCancellation(ctx context.Context, id string, c *subprov.Cancellation, now time.Time) error {
	if err := tx.startHistory(ctx, id); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `UPDATE subscriptions SET status = ?, status_before_cancel = ?, workflow_state = ?, cancel_reason = ?,
			port_id = ?, vlan = ?, canceled_at = ?, ended_at = ?, deprovision_queued_at = ?, deprovisioned_at = ?, updated_at = ?
		WHERE id = ?`, string(c.Status), string(c.StatusBeforeCancel), c.WorkflowState, c.CancelReason, nullStr(c.PortID), c.VLAN,
		nullTime(c.CanceledAt), nullTime(c.EndedAt), nullTime(c.DeprovisionQueuedAt), nullTime(c.Deprovisioned), now.UTC(), id)
	if err != nil {
		return fmt.Errorf("restore cancellation of %s: %w", id, err)
	}
	return tx.recordStatus(ctx, id, c.Status, "reinstatement_undone", now)
}
