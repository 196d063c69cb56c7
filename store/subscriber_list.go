package store

import (
	"context"
	"slices"
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
// SubscriberKey gives it). What a page reads is bounded by the page, not by the number of
// subscribers: a provider's subscribers are read in id order through their own index
// (subscribers_provider), a status's through its lines' (subscriptions_provider_status), the
// lines being provisioned or whose provisioning failed through their partial indexes
// (indexedWorkflowStates), every provider's with a line pending installation or suspended
// through theirs (indexedStatuses), a search's matches a page's worth at a time in id order.
// Of these, a status's and an indexed workflow state's, each alone, are one statement: the page
// of its lines' subscribers joined with the subscribers and their holders (subscribersOfLines).
// A platform-wide list filtered by another status (ACTIVE or CANCELLED, common), and a list
// filtered by another workflow state (a common one on a running platform), read past the
// subscribers without such a line, in proportion to how rare it is.
func (s *Store) Subscribers(ctx context.Context, f SubscriberFilter, page subprov.Page) ([]subprov.SubscriberSummary, error) {
	after := ""
	if !page.First() {
		after = page.After[0]
	}
	want := page.Limit + 1
	switch {
	case f.IDs != nil:
		ids := slices.Clone(f.IDs)
		slices.Sort(ids)
		ids = slices.Compact(ids)
		if after != "" {
			i, found := slices.BinarySearch(ids, after)
			if found {
				i++
			}
			ids = ids[i:]
		}
		return s.subscribersAmong(ctx, f, want, func(n int) ([]string, error) {
			chunk := ids[:min(n, len(ids))]
			ids = ids[len(chunk):]
			return chunk, nil
		})
	case slices.Contains(indexedWorkflowStates, f.WorkflowState):
		return s.subscribersOfLines(ctx, f, "subscribers by workflow state", after, want, func(after string, n int) (string, []any) {
			return subscribersInWorkflowState(f.WorkflowState, f.ProviderID, after, n)
		})
	case f.Status != "" && f.ProviderID != "":
		return s.subscribersOfLines(ctx, f, "subscribers by status", after, want, func(after string, n int) (string, []any) {
			return subscribersWithStatus, []any{f.ProviderID, f.Status, after, n}
		})
	case slices.Contains(indexedStatuses, f.Status):
		return s.subscribersOfLines(ctx, f, "subscribers by rare status", after, want, func(after string, n int) (string, []any) {
			return subscribersWithRareStatus(f.Status, after, n)
		})
	}
	where, args := f.where()
	if after != "" {
		where = append(where, "b.id > ?")
		args = append(args, after)
	}
	return s.subscriberSummaries(ctx, subscriberPage(where), append(args, want))
}

// Provisioning and ProvisioningFailed are the workflow states of a line whose port is being
// written, and of one whose switch did not confirm it (package provisioning's
// WorkflowProvisioning and WorkflowProvisioningFailed). Each has a partial index of its lines
// (subscriptions_provisioning, subscriptions_provisioning_failed), few at any time on a
// healthy network: a statement reaches one by naming its state as a literal (workflowIs), as
// the engines use a partial index only where the statement's condition is the index's own.
const (
	Provisioning       = "provisioning"
	ProvisioningFailed = "provisioning_failed"
)

// indexedWorkflowStates are the workflow states with a partial index of their lines.
var indexedWorkflowStates = []string{Provisioning, ProvisioningFailed}

// workflowIs is the condition that a line (its columns unqualified, or qualified by prefix) is
// in a workflow state, and its argument: a state with a partial index as a literal, for it.
func workflowIs(prefix, state string) (string, []any) {
	if i := slices.Index(indexedWorkflowStates, state); i >= 0 {
		return equals(prefix+"workflow_state", state, indexedWorkflowStates[i])
	}
	return prefix + "workflow_state = ?", []any{state}
}

// equals is the condition column = value and its argument; when value is the one a partial
// index holds (indexed, a constant of this package), value is written as a literal and there is
// no argument.
func equals(column, value, indexed string) (string, []any) {
	if value == indexed {
		return column + " = '" + indexed + "'", nil
	}
	return column + " = ?", []any{value}
}

// subscribersInWorkflowState is a slice of at most n ids of subscribers with a line in state
// (one of indexedWorkflowStates; the provider's, or every provider's for ""), in order, after
// an id.
func subscribersInWorkflowState(state, providerID, after string, n int) (string, []any) {
	cond, args := linesInWorkflowState(state, providerID)
	return `SELECT DISTINCT subscriber_id FROM subscriptions WHERE ` + cond + ` AND subscriber_id > ? ORDER BY subscriber_id LIMIT ?`,
		append(args, after, n)
}

// linesInWorkflowState is the condition that a line is in state (one of
// indexedWorkflowStates) and of the provider ("": any), and its arguments. The provider is
// checked on each line of the state's partial index, which holds it, not through the
// provider's range of another index: the state's lines are few, the provider's many.
func linesInWorkflowState(state, providerID string) (string, []any) {
	cond, args := workflowIs("", state)
	if providerID != "" {
		cond += " AND " + sqltext.Unindexed("provider_id") + " = ?"
		args = append(args, providerID)
	}
	return cond, args
}

// indexedStatuses are the statuses a line holds for a while only (until its installation,
// while it is cut off), a few lines in a hundred on a running platform: each has a partial
// index of its lines (subscriptions_pending_install, subscriptions_suspended), which the list
// of every provider's subscribers with a line in it reads. A provider's reads its lines by
// status (subscriptions_provider_status), as for any status.
var indexedStatuses = []string{string(subprov.StatusPendingInstall), string(subprov.StatusSuspended)}

// subscribersWithRareStatus is a slice of at most n ids of subscribers with a line in status
// (one of indexedStatuses: the caller checks), of any provider, in order, after an id. Its
// condition is its partial index's own, rareStatusIs with the status as a literal.
func subscribersWithRareStatus(status, after string, n int) (string, []any) {
	return `SELECT DISTINCT subscriber_id FROM subscriptions WHERE ` + rareStatusIs + ` = '` + indexedStatuses[slices.Index(indexedStatuses, status)] + `'
		AND subscriber_id > ? ORDER BY subscriber_id LIMIT ?`, []any{after, n}
}

// rareStatusIs is the status as the partial indexes of indexedStatuses hold it (migration
// 0056): an expression of the column that only subscribersWithRareStatus writes. A provider's
// statement by status (status = ?, its value bound, which a custom plan sees) would otherwise
// meet the indexes' condition too, and with a new deployment's statistics PostgreSQL read every
// provider's lines in the status through one of them, checking the provider on each, instead
// of the provider's own range of subscriptions_provider_status.
const rareStatusIs = "status || ''"

// subscribersWithStatus is a slice of the ids of a provider's subscribers with a line in a
// status, in order, after an id. Arguments: the provider, the status, the id, the limit.
const subscribersWithStatus = `SELECT DISTINCT subscriber_id FROM subscriptions
	WHERE provider_id = ? AND status = ? AND subscriber_id > ? ORDER BY subscriber_id LIMIT ?`

// idsAfter is subscribersAmong's next for a query of ids in order after an id (query gives it
// and its arguments for the id and a limit): each slice starts after the last one's last id.
func (s *Store) idsAfter(ctx context.Context, what, after string, query func(after string, n int) (string, []any)) func(n int) ([]string, error) {
	return func(n int) ([]string, error) {
		q, args := query(after, n)
		ids, err := sqltext.Strings(ctx, s.R(), what, q, args...)
		if len(ids) > 0 {
			after = ids[len(ids)-1]
		}
		return ids, err
	}
}

// subscribersOfLines lists f's subscribers among those of the lines a query of subscriber ids
// selects (ids gives it and its arguments for an id to start after and a limit; its column is
// subscriber_id; what names it). The query reads the lines of f's status or of its workflow
// state, of f's provider if any (the lines' provider). When f has no other condition, the page
// is that query joined with the subscribers and their holders, one statement; a filter by
// both a status and a workflow state reads the query's ids a slice at a time and checks each
// subscriber against f (subscribersAmong).
func (s *Store) subscribersOfLines(ctx context.Context, f SubscriberFilter, what, after string, want int,
	ids func(after string, n int) (string, []any)) ([]subprov.SubscriberSummary, error) {
	if f.Status != "" && f.WorkflowState != "" {
		return s.subscribersAmong(ctx, f, want, s.idsAfter(ctx, what, after, ids))
	}
	q, args := ids(after, want)
	return s.subscriberSummaries(ctx, subscribersIn(q), args)
}

// subscribersIn is the read of the subscribers a query of their ids in order (its column
// subscriber_id, distinct) selects, with their holders, by id; its arguments are the query's.
func subscribersIn(ids string) string {
	return withHolders(`(` + ids + `) x JOIN subscribers b ON b.id = x.subscriber_id`)
}

// minSlice is the fewest candidate ids subscribersAmong asks for at a time.
const minSlice = 50

// subscribersAmong reads the subscribers of f among the ids next gives, in id order, a slice
// of at most n ids a call ([] when there are no more), until it has want of them: it asks for
// as many as it still wants (at least minSlice): a search's matches mostly meet the filter;
// the lines of a status also in a workflow state (or the reverse) may not, and it asks again.
func (s *Store) subscribersAmong(ctx context.Context, f SubscriberFilter, want int, next func(n int) ([]string, error)) ([]subprov.SubscriberSummary, error) {
	var out []subprov.SubscriberSummary
	for len(out) < want {
		ids, err := next(max(want-len(out), minSlice))
		if err != nil || len(ids) == 0 {
			return out, err
		}
		where, args := f.where()
		where = append(where, "b.id IN ("+sqltext.Placeholders(len(ids))+")")
		for _, id := range ids {
			args = append(args, id)
		}
		rows, err := s.subscriberSummaries(ctx, subscriberPage(where), append(args, want-len(out)))
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// where is the filter's conditions on the subscribers (b), but its ids.
func (f SubscriberFilter) where() ([]string, []any) {
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
		cond, arg := workflowIs("s.", f.WorkflowState)
		where = append(where, "EXISTS (SELECT 1 FROM subscriptions s WHERE s.subscriber_id = b.id AND "+cond+")")
		args = append(args, arg...)
	}
	return where, args
}

// subscriberPage is the read of the subscribers meeting where, by id, with their holders; its
// last argument is the limit. The page is chosen before the holders are joined: joined in one
// query, PostgreSQL merges the page with the holders' index read from its start, every holder
// before the page's first subscriber included.
func subscriberPage(where []string) string {
	return withHolders(`(SELECT b.id, b.provider_id, b.customer_number FROM subscribers b WHERE ` + strings.Join(where, " AND ") + ` ORDER BY b.id LIMIT ?) b`)
}

// withHolders is the read of a page of subscribers (from: its rows as b) with their holders,
// by id, as subscriberSummaries scans it.
func withHolders(from string) string {
	return `SELECT b.id, b.provider_id, COALESCE(b.customer_number, ''), h.firstname, h.lastname, h.email, h.phonenumber
		FROM ` + from + `
			LEFT JOIN contacts h ON h.subscriber_id = b.id AND h.role = 'holder'
		ORDER BY b.id`
}

// subscriberSummaries runs a subscriberPage or subscribersIn query.
func (s *Store) subscriberSummaries(ctx context.Context, query string, args []any) ([]subprov.SubscriberSummary, error) {
	return sqltext.QueryAll(ctx, s.R(), "subscribers", func(r interface{ Scan(...any) error }) (subprov.SubscriberSummary, error) {
		var x subprov.SubscriberSummary
		var first, last, email, phone *string
		err := r.Scan(&x.ID, &x.ProviderID, &x.CustomerNumber, &first, &last, &email, &phone)
		x.Holder = subprov.Contact{FirstName: subprov.Deref(first), LastName: subprov.Deref(last), Email: subprov.Deref(email), PhoneNumber: subprov.Deref(phone)}
		return x, err
	}, query, args...)
}

// SubscriberKey is a subscriber's position in the list's order, for the next page's cursor.
func SubscriberKey(x subprov.SubscriberSummary) []string { return []string{x.ID} }

// LinesOf lists the lines of the subscribers named, newest first, as the list of subscribers
// shows them: with their plan's name, building and suite, but not their port (Switch, Port and
// PortUnconverged are left empty), whose two joins cost a tenth of a page's CPU.
func (s *Store) LinesOf(ctx context.Context, subscriberIDs []string) ([]subprov.LineSummary, error) {
	return s.lineSummaries(ctx, "s.subscriber_id", subscriberIDs, false)
}

// LinesWithPortsOf is LinesOf with each line's port, as an account shows its lines.
func (s *Store) LinesWithPortsOf(ctx context.Context, subscriberIDs []string) ([]subprov.LineSummary, error) {
	return s.lineSummaries(ctx, "s.subscriber_id", subscriberIDs, true)
}

// LineSummaries is LinesWithPortsOf for lines named by id.
func (s *Store) LineSummaries(ctx context.Context, subscriptionIDs []string) ([]subprov.LineSummary, error) {
	return s.lineSummaries(ctx, "s.id", subscriptionIDs, true)
}

// The port's columns of a line summary, and the joins that read them.
const (
	linePortColumns = `COALESCE(pt.switch_name, ''), COALESCE(pt.port_name, ''), COALESCE(ps.unconverged, FALSE)`
	linePortJoins   = ` LEFT JOIN ports pt ON pt.id = s.port_id LEFT JOIN port_states ps ON ps.port_id = s.port_id`
)

func (s *Store) lineSummaries(ctx context.Context, column string, ids []string, ports bool) ([]subprov.LineSummary, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	portColumns, portJoins := `'', '', FALSE`, ""
	if ports {
		portColumns, portJoins = linePortColumns, linePortJoins
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
			COALESCE(u.unit_number, ''), g.street, g.city, g.postal_code, g.province, g.country, `+portColumns+`
		FROM subscriptions s JOIN buildings g ON g.id = s.building_id LEFT JOIN units u ON u.id = s.unit_id
			LEFT JOIN plan_versions v ON v.id = s.plan_version_id LEFT JOIN plans pl ON pl.id = v.plan_id`+portJoins+`
		WHERE `+column+` IN (`+sqltext.Placeholders(len(ids))+`) ORDER BY s.created_at DESC, s.id`, args...)
}

// TicketsOfSubscriber lists every ticket of a provider's subscriber, operator tickets
// included, newest first (at most 100).
func (s *Store) TicketsOfSubscriber(ctx context.Context, providerID, subscriberID string) ([]*subprov.Ticket, error) {
	return queryTickets(ctx, s.R(), `SELECT `+ticketColumns+` FROM tickets WHERE provider_id = ? AND subscriber_id = ?
		ORDER BY created_at DESC, number DESC LIMIT 100`, providerID, subscriberID)
}
