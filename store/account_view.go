package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/store/internal/engine"
)

// accountViewQuery is one statement of two branches. The first reads the login with its
// provider, subscriber, holder contact and lines (a row per line, at least one); the second
// reads the login's checkout sessions. Columns 17 to 22 (id, status, plan version, building,
// unit, created) are shared by lines and sessions. SQLite takes a compound query's declared
// column types from its first SELECT, so the session-only instants (the last four columns, NULL
// in the first branch) reach Go as the stored text and are scanned with textTime. Scoping:
// the subscriber, its lines and their plan versions must belong to the login's provider.
const accountViewQuery = `SELECT 1, a.id, a.email, a.provider_id, a.subscriber_id, a.authorized_user_id, a.password_hash, a.token_generation,
		p.name, p.brand_color, p.support_group,
		b.id, b.customer_number, h.firstname, h.lastname, h.email,
		s.id, s.status, s.plan_version_id, s.building_id, s.unit_id, s.created_at,
		s.billing_owner, s.billing_day, s.started_at, s.canceled_at, s.ended_at,
		v.id, pl.name, v.monthly_price_minor, v.download_mbps, v.upload_mbps,
		NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL
	FROM accounts a
	JOIN providers p ON p.id = a.provider_id
	LEFT JOIN subscribers b ON b.provider_id = a.provider_id AND b.id = a.subscriber_id
	LEFT JOIN contacts h ON h.subscriber_id = b.id AND h.role = 'holder'
	LEFT JOIN subscriptions s ON s.provider_id = b.provider_id AND s.subscriber_id = b.id
	LEFT JOIN plan_versions v ON v.provider_id = s.provider_id AND v.id = s.plan_version_id
	LEFT JOIN plans pl ON pl.id = v.plan_id
	WHERE a.id = ?
UNION ALL
	SELECT 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
		NULL, NULL, NULL,
		NULL, NULL, NULL, NULL, NULL,
		c.id, c.status, c.plan_version_id, c.building_id, c.unit_id, c.created_at,
		NULL, NULL, NULL, NULL, NULL,
		NULL, NULL, NULL, NULL, NULL,
		c.provider_id, c.delivery_mode, c.account_id, c.subscription_id, c.location_hash, c.mac_address, c.partner_reference_id,
		c.redirected_at, c.expired_at, c.completed_at, c.cancelled_at
	FROM checkout_sessions c
	WHERE c.account_id = ?
ORDER BY 1, 22 DESC, 17`

// AccountView reads a portal login and everything its account record shows. It returns
// subprov.ErrNotFound (wrapped) only when no login has that id, so a deleted login's token stops working
// at once; a login whose subscriber record or plan version is missing is an internal error.
//
// Views are remembered until the change log names the login, its subscriber or its provider
// (cache_invalidations.go): a commit through this store forgets what it changed at once, a
// write by another process within the change feed's staleAfter (0.1 s). The view returned may
// be shared with other callers, so it must not be modified.
func (s *Store) AccountView(ctx context.Context, accountID string) (*subprov.AccountView, error) {
	return engine.Remembered(s.changes, &s.views, accountID, func() (*subprov.AccountView, error) { return s.readAccountView(ctx, accountID) },
		accountViewSubjects)
}

// accountViewSubjects are the change log's subjects an account view shows: its login (with
// its checkout sessions), its subscriber (customer number, holder, lines) and its provider
// (the provider's name and colours, the lines' plans).
func accountViewSubjects(v *subprov.AccountView) []engine.Subject {
	subjects := []engine.Subject{{Kind: subjectAccount, ID: v.Account.ID}, {Kind: subjectProvider, ID: v.Account.ProviderID}}
	if v.Account.SubscriberID != "" {
		subjects = append(subjects, engine.Subject{Kind: subjectSubscriber, ID: v.Account.SubscriberID})
	}
	return subjects
}

func (s *Store) readAccountView(ctx context.Context, accountID string) (*subprov.AccountView, error) {
	rows, err := s.R().Query(ctx, accountViewQuery, accountID, accountID)
	if err != nil {
		return nil, fmt.Errorf("account view %s: %w", accountID, err)
	}
	defer rows.Close()
	v := &subprov.AccountView{Subscriptions: []*subprov.Subscription{}, Plans: map[string]*subprov.PlanVersion{}, Sessions: []*subprov.CheckoutSession{}}
	for rows.Next() {
		if err := scanAccountView(v, rows); err != nil {
			return nil, fmt.Errorf("account view %s: %w", accountID, err)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("account view %s: %w", accountID, err)
	}
	if v.Account == nil {
		return nil, fmt.Errorf("account %s: %w", accountID, errNoRows)
	}
	if v.Account.SubscriberID != "" && v.Subscriber == nil {
		return nil, fmt.Errorf("account view %s: subscriber %s is missing", accountID, v.Account.SubscriberID)
	}
	return v, nil
}

// scanAccountView reads one row of accountViewQuery into v.
func scanAccountView(v *subprov.AccountView, rows *sql.Rows) error {
	var kind int
	var a subprov.AccountLogin
	var accID, email, providerID, sub, au, hash sql.NullString
	var generation sql.NullInt64
	var pName, pColor, pGroup sql.NullString
	var bID, bNumber, hFirst, hLast, hEmail sql.NullString
	var id, status, planID, buildingID, unitID sql.NullString
	var created sql.NullTime
	var owner, started sql.NullString
	var billingDay sql.NullInt64
	var canceled, ended sql.NullTime
	var vID, vName sql.NullString
	var price, down, up sql.NullInt64
	var cProvider, cMode, cAccount, cSubscription, cHash, cMAC, cRef sql.NullString
	var redirected, expired, completed, cancelled textTime
	if err := rows.Scan(&kind, &accID, &email, &providerID, &sub, &au, &hash, &generation,
		&pName, &pColor, &pGroup,
		&bID, &bNumber, &hFirst, &hLast, &hEmail,
		&id, &status, &planID, &buildingID, &unitID, &created,
		&owner, &billingDay, &started, &canceled, &ended,
		&vID, &vName, &price, &down, &up,
		&cProvider, &cMode, &cAccount, &cSubscription, &cHash, &cMAC, &cRef,
		&redirected, &expired, &completed, &cancelled); err != nil {
		return err
	}
	if kind == 2 {
		v.Sessions = append(v.Sessions, &subprov.CheckoutSession{ID: id.String, ProviderID: cProvider.String, PlanVersionID: planID.String,
			BuildingID: buildingID.String, UnitID: unitID.String, LocationHash: cHash.String, MACAddress: cMAC.String,
			DeliveryMode: subprov.DeliveryMode(cMode.String), Status: status.String, AccountID: cAccount.String,
			PartnerReferenceID: cRef.String, SubscriptionID: cSubscription.String, CreatedAt: created.Time.UTC(),
			RedirectedAt: redirected.t, ExpiredAt: expired.t, CompletedAt: completed.t, CancelledAt: cancelled.t})
		return nil
	}
	if v.Account == nil {
		a.ID, a.Email, a.ProviderID = accID.String, email.String, providerID.String
		a.SubscriberID, a.AuthorizedUserID, a.PasswordHash = sub.String, au.String, hash.String
		a.PasswordSet = hash.Valid && hash.String != ""
		a.TokenGeneration = generation.Int64
		v.Account = &a
		v.Provider = subprov.Provider{ID: providerID.String, Name: pName.String, BrandColor: pColor.String, SupportGroup: pGroup.String}
		if bID.Valid {
			v.Subscriber = &subprov.SubscriberContacts{ID: bID.String, ProviderID: providerID.String, CustomerNumber: bNumber.String,
				Holder: subprov.Contact{FirstName: hFirst.String, LastName: hLast.String, Email: hEmail.String}}
		}
	}
	if !id.Valid { // no lines
		return nil
	}
	if !vID.Valid {
		return fmt.Errorf("plan version %s of line %s is missing", planID.String, id.String)
	}
	v.Subscriptions = append(v.Subscriptions, &subprov.Subscription{ID: id.String, ProviderID: providerID.String, SubscriberID: bID.String,
		PlanVersionID: planID.String, BuildingID: buildingID.String, UnitID: unitID.String, Status: subprov.Status(status.String),
		BillingOwner: subprov.BillingOwner(owner.String), BillingDay: int(billingDay.Int64), StartedAt: started.String,
		CanceledAt: timePtr(canceled), EndedAt: timePtr(ended), CreatedAt: created.Time.UTC()})
	if v.Plans[vID.String] == nil {
		v.Plans[vID.String] = &subprov.PlanVersion{ID: vID.String, ProviderID: providerID.String, PlanName: vName.String,
			MonthlyPrice: subprov.Money(price.Int64), DownloadMbps: int(down.Int64), UploadMbps: int(up.Int64)}
	}
	return nil
}

// textTime scans a nullable instant that SQLite may hand over as its stored text (see
// accountViewQuery); PostgreSQL hands over a time.Time.
type textTime struct{ t *time.Time }

// sqliteTimeLayouts are the layouts the SQLite driver writes and reads instants in
// (_time_format=sqlite writes the first).
var sqliteTimeLayouts = []string{"2006-01-02 15:04:05.999999999-07:00", "2006-01-02T15:04:05.999999999-07:00",
	"2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999"}

func (x *textTime) Scan(v any) error {
	var s string
	switch v := v.(type) {
	case nil:
		x.t = nil
		return nil
	case time.Time:
		t := v.UTC()
		x.t = &t
		return nil
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("instant: unsupported %T", v)
	}
	s = strings.TrimSuffix(s, "Z")
	for _, layout := range sqliteTimeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			t = t.UTC()
			x.t = &t
			return nil
		}
	}
	return fmt.Errorf("instant: cannot parse %q", s)
}
