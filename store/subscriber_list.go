package store

import (
	"context"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/internal/sqltext"
)

// SubscriberFilter narrows the operations surface's list of subscribers.
type SubscriberFilter struct {
	ProviderID string   // "" for every provider
	Status     string   // "": any; else subscribers with a line in this status
	IDs        []string // nil: any; else only these (a search's matches; empty matches none)
	// WorkflowState: "": any; else subscribers with a line in this workflow state.
	WorkflowState string
}

// Subscribers lists subscribers by id, page.Limit+1 after the page's position (an id, as
// SubscriberKey gives it).
func (s *Store) Subscribers(ctx context.Context, f SubscriberFilter, page subprov.Page) ([]subprov.SubscriberSummary, error) {
	if f.IDs != nil && len(f.IDs) == 0 {
		return nil, nil
	}
	where := []string{"1 = 1"}
	var args []any
	if f.ProviderID != "" {
		where = append(where, "b.provider_id = ?")
		args = append(args, f.ProviderID)
	}
	if f.Status != "" {
		where = append(where, "EXISTS (SELECT 1 FROM subscriptions s WHERE s.subscriber_id = b.id AND s.status = ?)")
		args = append(args, f.Status)
	}
	if f.WorkflowState != "" {
		where = append(where, "EXISTS (SELECT 1 FROM subscriptions s WHERE s.subscriber_id = b.id AND s.workflow_state = ?)")
		args = append(args, f.WorkflowState)
	}
	if f.IDs != nil {
		where = append(where, "b.id IN ("+sqltext.Placeholders(len(f.IDs))+")")
		for _, id := range f.IDs {
			args = append(args, id)
		}
	}
	if !page.First() {
		where = append(where, "b.id > ?")
		args = append(args, page.After[0])
	}
	args = append(args, page.Limit+1)
	return sqltext.QueryAll(ctx, s.R(), "subscribers", func(r interface{ Scan(...any) error }) (subprov.SubscriberSummary, error) {
		var x subprov.SubscriberSummary
		var first, last, email, phone *string
		err := r.Scan(&x.ID, &x.ProviderID, &x.CustomerNumber, &first, &last, &email, &phone)
		x.Holder = subprov.Contact{FirstName: subprov.Deref(first), LastName: subprov.Deref(last), Email: subprov.Deref(email), PhoneNumber: subprov.Deref(phone)}
		return x, err
	}, `SELECT b.id, b.provider_id, COALESCE(b.customer_number, ''), h.firstname, h.lastname, h.email, h.phonenumber
		FROM subscribers b LEFT JOIN contacts h ON h.subscriber_id = b.id AND h.role = 'holder'
		WHERE `+strings.Join(where, " AND ")+` ORDER BY b.id LIMIT ?`, args...)
}

// SubscriberKey is a subscriber's position in the list's order, for the next page's cursor.
func SubscriberKey(x subprov.SubscriberSummary) []string { return []string{x.ID} }

// LinesOf lists the lines of the subscribers named, newest first, with their plan's name,
// building, suite and port.
func (s *Store) LinesOf(ctx context.Context, subscriberIDs []string) ([]subprov.LineSummary, error) {
	return s.lineSummaries(ctx, "s.subscriber_id", subscriberIDs)
}

// LineSummaries is LinesOf for lines named by id.
func (s *Store) LineSummaries(ctx context.Context, subscriptionIDs []string) ([]subprov.LineSummary, error) {
	return s.lineSummaries(ctx, "s.id", subscriptionIDs)
}

func (s *Store) lineSummaries(ctx context.Context, column string, ids []string) ([]subprov.LineSummary, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return sqltext.QueryAll(ctx, s.R(), "line summaries", func(r interface{ Scan(...any) error }) (subprov.LineSummary, error) {
		var l subprov.LineSummary
		var status string
		a := &l.Address
		err := r.Scan(&l.SubscriptionID, &l.SubscriberID, &status, &l.PlanVersionID, &l.PlanName, &l.BuildingID, &l.UnitID, &l.UnitNumber,
			&a.Street, &a.City, &a.PostalCode, &a.Province, &a.Country, &l.Switch, &l.Port, &l.PortUnconverged)
		l.Status = subprov.Status(status)
		return l, err
	}, `SELECT s.id, COALESCE(s.subscriber_id, ''), s.status, s.plan_version_id, COALESCE(pl.name, ''), s.building_id, COALESCE(s.unit_id, ''),
			COALESCE(u.unit_number, ''), g.street, g.city, g.postal_code, g.province, g.country,
			COALESCE(pt.switch_name, ''), COALESCE(pt.port_name, ''), COALESCE(ps.unconverged, FALSE)
		FROM subscriptions s JOIN buildings g ON g.id = s.building_id LEFT JOIN units u ON u.id = s.unit_id
			LEFT JOIN plan_versions v ON v.id = s.plan_version_id LEFT JOIN plans pl ON pl.id = v.plan_id
			LEFT JOIN ports pt ON pt.id = s.port_id LEFT JOIN port_states ps ON ps.port_id = s.port_id
		WHERE `+column+` IN (`+sqltext.Placeholders(len(ids))+`) ORDER BY s.created_at DESC, s.id`, args...)
}

// TicketsOfSubscriber lists every ticket of a provider's subscriber, operator tickets
// included, newest first (at most 100).
func (s *Store) TicketsOfSubscriber(ctx context.Context, providerID, subscriberID string) ([]*subprov.Ticket, error) {
	return queryTickets(ctx, s.R(), `SELECT `+ticketColumns+` FROM tickets WHERE provider_id = ? AND subscriber_id = ?
		ORDER BY created_at DESC, number DESC LIMIT 100`, providerID, subscriberID)
}
