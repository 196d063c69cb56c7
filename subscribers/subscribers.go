// Package subscribers is the operations surface's view of subscribers and their lines: the
// list (searched with agent search's matcher, unmasked), one subscriber's whole account, and
// the line actions an operator takes (suspend, restore, plan change, reprovision, notes),
// each checked against the operator's role first and scope second. The line actions' rules
// are package provisioning's, the same as the partner surfaces'.
package subscribers

import (
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/provisioning"
	"github.com/subprov/subprov/search"
	"github.com/subprov/subprov/store"
)

// Service reads subscribers and acts on their lines for operators.
type Service struct {
	Store        *store.Store
	Clock        subprov.Clock
	Provisioning *provisioning.Service
}

// MaxMatches is how many customers a search (q) lists at most, of one provider or over every
// provider: past that the operator narrows the query, as an agent must.
const MaxMatches = 1000

// Filter narrows the list; "" matches anything.
type Filter struct {
	Q          string // agent search's query: name, e-mail, phone, customer number, address, id
	ProviderID string
	Status     string // subscribers with a line in this status
	// WorkflowState: subscribers with a line in this workflow state (provisioning_failed:
	// the lines whose switch did not confirm their port, which the overview counts).
	WorkflowState string
}

// Listed is a subscriber with its lines, as the list shows it.
type Listed struct {
	subprov.SubscriberSummary
	Lines []subprov.LineSummary
}

var statuses = []subprov.Status{subprov.StatusPendingInstall, subprov.StatusActive, subprov.StatusSuspended, subprov.StatusCancelled}

// WorkflowStates are the workflow states the list filters by, in the order a form offers them.
var WorkflowStates = []string{provisioning.WorkflowProvisioning, provisioning.WorkflowProvisioned, provisioning.WorkflowProvisioningFailed,
	provisioning.WorkflowAwaitingInstall, provisioning.WorkflowInstalled, provisioning.WorkflowCancelled, provisioning.WorkflowDeprovisioned}

// List lists the subscribers in the operator's scope by id, one page at a time. A provider
// operator asking for another provider's subscribers gets an empty list. With q, only the
// customers agent search finds for it are listed (at most MaxMatches).
func (s *Service) List(ctx context.Context, op *subprov.Operator, f Filter, page subprov.Page) ([]Listed, string, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, "", err
	}
	q := strings.TrimSpace(f.Q)
	problems := map[string]string{}
	if f.Q != "" && utf8.RuneCountInString(q) < 2 {
		problems["q"] = "at least 2 characters"
	}
	if f.Status != "" && !slices.Contains(statuses, subprov.Status(f.Status)) {
		problems["status"] = "want PENDING_INSTALL, ACTIVE, SUSPENDED or CANCELLED"
	}
	if f.WorkflowState != "" && !slices.Contains(WorkflowStates, f.WorkflowState) {
		problems["workflow_state"] = "want one of " + strings.Join(WorkflowStates, ", ")
	}
	if len(problems) > 0 {
		return nil, "", subprov.Invalid(problems)
	}
	providerID := f.ProviderID
	if !op.Platform() {
		if providerID != "" && providerID != op.ProviderID {
			return []Listed{}, "", nil
		}
		providerID = op.ProviderID
	}
	filter := store.SubscriberFilter{ProviderID: providerID, Status: f.Status, WorkflowState: f.WorkflowState}
	if q != "" {
		ids, err := s.match(ctx, providerID, q)
		if err != nil {
			return nil, "", err
		}
		filter.IDs = ids
	}
	rows, err := s.Store.Subscribers(ctx, filter, page)
	if err != nil {
		return nil, "", err
	}
	rows, next := subprov.Cut(page, rows, store.SubscriberKey)
	ids := make([]string, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	lines, err := s.Store.LinesOf(ctx, ids)
	if err != nil {
		return nil, "", err
	}
	out := make([]Listed, len(rows))
	for i, r := range rows {
		out[i] = Listed{SubscriberSummary: r, Lines: []subprov.LineSummary{}}
		for _, l := range lines {
			if l.SubscriberID == r.ID {
				out[i].Lines = append(out[i].Lines, l)
			}
		}
	}
	return out, next, nil
}

// match runs agent search's matcher on one provider's customers, or on every provider's at
// once for a platform operator that named none.
func (s *Service) match(ctx context.Context, providerID, q string) ([]string, error) {
	providers := []string{providerID}
	if providerID == "" {
		ps, err := s.Store.Providers(ctx)
		if err != nil {
			return nil, err
		}
		providers = providers[:0]
		for _, p := range ps {
			providers = append(providers, p.ID)
		}
	}
	ids, err := search.Match(ctx, s.Store.SearchR(), providers, q, MaxMatches)
	if err != nil {
		return nil, err
	}
	if ids == nil {
		ids = []string{} // no match lists nothing (a nil filter lists everyone)
	}
	return ids, nil
}

// Account is one subscriber's whole account as an operator sees it.
type Account struct {
	subprov.SubscriberContacts
	AuthorizedUsers []*subprov.AuthorizedUser
	Lines           []Line
	Invoices        []*subprov.Invoice
	CreditNotes     []*subprov.CreditNote
	Tickets         []*subprov.Ticket
	Notes           []subprov.CustomerNote
}

// Line is a line with its place, port and status history, and its port's desired setting and
// how far the switch has caught up with it (nil: the line has no port, or nothing was ever
// decided for it).
type Line struct {
	*subprov.Subscription
	subprov.LineSummary
	History []subprov.StatusChange
	Port    *subprov.PortConvergence
}

// Get reads a subscriber in the operator's scope with its contacts, authorized users, lines,
// invoices, credit notes, tickets and notes. Another provider's subscriber is not found.
func (s *Service) Get(ctx context.Context, op *subprov.Operator, subscriberID string) (*Account, error) {
	if err := op.Authorize(subprov.PermRead); err != nil {
		return nil, err
	}
	id := strings.TrimSpace(subscriberID)
	found, err := s.Store.Subscribers(ctx, store.SubscriberFilter{ProviderID: op.ProviderID, IDs: []string{id}}, subprov.Page{Limit: 1})
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		return nil, subprov.NotFound("Subscriber")
	}
	pid := found[0].ProviderID
	rec, err := s.Store.SubscriberRecordOf(ctx, pid, id)
	if err != nil {
		return nil, err
	}
	a := &Account{SubscriberContacts: *rec}
	if a.AuthorizedUsers, err = s.Store.AuthorizedUsers(ctx, id); err != nil {
		return nil, err
	}
	subs, err := s.Store.SubscriptionsOfSubscriber(ctx, pid, id)
	if err != nil {
		return nil, err
	}
	if a.Lines, err = s.lines(ctx, subs, []string{id}); err != nil {
		return nil, err
	}
	if a.Invoices, err = s.Store.InvoicesOfSubscriber(ctx, pid, id); err != nil {
		return nil, err
	}
	if a.CreditNotes, err = s.Store.ListedCredits(ctx, pid, id); err != nil {
		return nil, err
	}
	if a.Tickets, err = s.Store.TicketsOfSubscriber(ctx, pid, id); err != nil {
		return nil, err
	}
	if a.Notes, err = s.Store.NotesOf(ctx, pid, id); err != nil {
		return nil, err
	}
	return a, nil
}

// lines completes subs (of the subscribers named) with their place, port and history.
func (s *Service) lines(ctx context.Context, subs []*subprov.Subscription, subscriberIDs []string) ([]Line, error) {
	summaries, err := s.Store.LinesWithPortsOf(ctx, subscriberIDs)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(subs))
	for i, sub := range subs {
		ids[i] = sub.ID
	}
	history, err := s.Store.StatusHistory(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]Line, 0, len(subs))
	for _, sub := range subs {
		l := Line{Subscription: sub, History: history[sub.ID]}
		for _, sm := range summaries {
			if sm.SubscriptionID == sub.ID {
				l.LineSummary = sm
			}
		}
		if len(l.History) == 0 { // a line loaded in bulk: its status since it was created
			l.History = []subprov.StatusChange{{Status: sub.Status, At: sub.CreatedAt}}
		}
		if l.Port, err = s.portState(ctx, sub.PortID); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, nil
}

// line reads one line in scope as the account shows it.
func (s *Service) line(ctx context.Context, scope subprov.Scope, subscriptionID string) (*Line, error) {
	sub, _, err := s.Provisioning.ScopedLine(ctx, scope, subscriptionID)
	if err != nil {
		return nil, err
	}
	summaries, err := s.Store.LineSummaries(ctx, []string{sub.ID})
	if err != nil {
		return nil, err
	}
	history, err := s.Store.StatusHistory(ctx, []string{sub.ID})
	if err != nil {
		return nil, err
	}
	l := &Line{Subscription: sub, History: history[sub.ID]}
	if len(summaries) == 1 {
		l.LineSummary = summaries[0]
	}
	if len(l.History) == 0 {
		l.History = []subprov.StatusChange{{Status: sub.Status, At: sub.CreatedAt}}
	}
	if l.Port, err = s.portState(ctx, sub.PortID); err != nil {
		return nil, err
	}
	return l, nil
}

// portState is a port's desired setting and convergence, nil for no port or none decided.
func (s *Service) portState(ctx context.Context, portID string) (*subprov.PortConvergence, error) {
	if portID == "" {
		return nil, nil
	}
	c, err := s.Store.PortConvergence(ctx, portID)
	if errors.Is(err, subprov.ErrNotFound) {
		return nil, nil
	}
	return c, err
}

// notFound maps a line missing in the store to the surface's not found.
func notFound(err error) error {
	if errors.Is(err, subprov.ErrNotFound) {
		return subprov.NotFound("Subscription")
	}
	return err
}
