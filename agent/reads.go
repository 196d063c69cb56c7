package agent

import (
	"context"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/cpe"
	"github.com/subprov/subprov/monitoring"
	"github.com/subprov/subprov/switches"
)

// ContactView is a contact as the agent sees it after verification.
type ContactView struct {
	FirstName   string `json:"firstname"`
	LastName    string `json:"lastname"`
	Email       string `json:"email"`
	PhoneNumber string `json:"phonenumber"`
	Company     string `json:"company"`
}

func contactView(c subprov.Contact) ContactView {
	return ContactView{FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, PhoneNumber: c.PhoneNumber, Company: c.Company}
}

// AddressView is a postal address.
type AddressView struct {
	Street     string `json:"street"`
	City       string `json:"city"`
	Province   string `json:"province"`
	PostalCode string `json:"postal_code"`
	Country    string `json:"country"`
}

// PlanView is a plan version.
type PlanView struct {
	PlanVersionID string        `json:"plan_version_id"`
	Name          string        `json:"name"`
	MonthlyPrice  subprov.Money `json:"monthly_price"`
	DownloadMbps  int           `json:"download_mbps"`
	UploadMbps    int           `json:"upload_mbps"`
}

func planView(v *subprov.PlanVersion) PlanView {
	return PlanView{PlanVersionID: v.ID, Name: v.PlanName, MonthlyPrice: v.MonthlyPrice, DownloadMbps: v.DownloadMbps, UploadMbps: v.UploadMbps}
}

// SubscriptionView is a line in the slim profile.
type SubscriptionView struct {
	SubscriptionID  string          `json:"subscription_id"`
	Status          subprov.Status  `json:"status"`
	Plan            PlanView        `json:"plan"`
	ServiceLocation LocationSummary `json:"service_location"`
	BillingOwner    string          `json:"billing_owner"`
	StartedAt       *string         `json:"started_at"`
	CanceledAt      *string         `json:"canceled_at"`
	EndedAt         *string         `json:"ended_at"`
}

// Profile is the slim CustomerProfile: contacts, invoice address, service locations and
// subscriptions. It never carries processor ids, operator notes, MAC addresses or user ids.
type Profile struct {
	CustomerID            string             `json:"customer_id"`
	CustomerNumber        *string            `json:"customer_number"`
	ContractContact       ContactView        `json:"contract_contact"`
	InvoiceContact        ContactView        `json:"invoice_contact"`
	BillingContactDiffers bool               `json:"billing_contact_differs"`
	InvoiceAddress        *AddressView       `json:"invoice_address"`
	ServiceLocations      []LocationSummary  `json:"service_locations"`
	Subscriptions         []SubscriptionView `json:"subscriptions"`
}

// line is a subscription with its plan and location, read once for profile and health.
type line struct {
	sub  *subprov.Subscription
	plan *subprov.PlanVersion
	loc  subprov.ServiceLocation
}

func (s *Service) lines(ctx context.Context, providerID, subscriberID string) ([]line, error) {
	subs, err := s.Store.SubscriptionsOfSubscriber(ctx, providerID, subscriberID)
	if err != nil {
		return nil, err
	}
	locs, err := s.Store.ServiceLocations(ctx, providerID, []string{subscriberID})
	if err != nil {
		return nil, err
	}
	bySub := map[string]subprov.ServiceLocation{}
	for _, l := range locs {
		bySub[l.SubscriptionID] = l
	}
	out := make([]line, 0, len(subs))
	for _, sub := range subs {
		pv, err := s.Store.PlanVersion(ctx, providerID, sub.PlanVersionID)
		if err != nil {
			return nil, err
		}
		out = append(out, line{sub: sub, plan: pv, loc: bySub[sub.ID]})
	}
	return out, nil
}

func timeString(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(time.RFC3339)
	return &s
}

// Profile reads the slim customer profile (verified session required).
func (s *Service) Profile(ctx context.Context, c Caller, customerID string) (*Profile, error) {
	rec, err := s.customer(ctx, c, customerID, true)
	if err != nil {
		return nil, err
	}
	lines, err := s.lines(ctx, c.Provider.ID, rec.ID)
	if err != nil {
		return nil, err
	}
	inv := rec.BillingContact()
	p := &Profile{CustomerID: rec.ID, CustomerNumber: nullable(rec.CustomerNumber), ContractContact: contactView(rec.Holder),
		InvoiceContact: contactView(inv), BillingContactDiffers: contactView(inv) != contactView(rec.Holder),
		ServiceLocations: []LocationSummary{}, Subscriptions: []SubscriptionView{}}
	seen := map[LocationSummary]bool{}
	for _, l := range lines {
		loc := summaryOf(l.loc)
		if !seen[loc] {
			seen[loc] = true
			p.ServiceLocations = append(p.ServiceLocations, loc)
		}
		p.Subscriptions = append(p.Subscriptions, SubscriptionView{SubscriptionID: l.sub.ID, Status: l.sub.Status, Plan: planView(l.plan),
			ServiceLocation: loc, BillingOwner: string(l.sub.BillingOwner), StartedAt: nullable(l.sub.StartedAt),
			CanceledAt: timeString(l.sub.CanceledAt), EndedAt: timeString(l.sub.EndedAt)})
	}
	p.InvoiceAddress, err = s.invoiceAddress(ctx, rec.ID, lines)
	return p, err
}

// invoiceAddress is the address kept on the billing contact, else the service address of the
// newest line that is not cancelled (invoices go to where the service is).
func (s *Service) invoiceAddress(ctx context.Context, subscriberID string, lines []line) (*AddressView, error) {
	a, err := s.Store.InvoiceAddress(ctx, subscriberID)
	if err != nil {
		return nil, err
	}
	if a.Street != "" {
		return &AddressView{Street: a.Street, City: a.City, Province: a.Province, PostalCode: a.PostalCode, Country: a.Country}, nil
	}
	for _, l := range lines {
		if l.sub.Status != subprov.StatusCancelled && l.loc.Street != "" {
			street := l.loc.Street
			if l.loc.UnitNumber != "" {
				street = l.loc.UnitNumber + "-" + street
			}
			return &AddressView{Street: street, City: l.loc.City, Province: l.loc.Province, PostalCode: l.loc.PostalCode, Country: l.loc.Country}, nil
		}
	}
	return nil, nil
}

// InvoiceView is an invoice in the billing summary.
type InvoiceView struct {
	InvoiceID   string        `json:"invoice_id"`
	Number      string        `json:"number"`
	InvoiceDate string        `json:"invoice_date"`
	Period      string        `json:"period"`
	Status      string        `json:"status"`
	Total       subprov.Money `json:"total"`
	PaidAt      *string       `json:"paid_at"`
}

func invoiceView(inv *subprov.Invoice) InvoiceView {
	return InvoiceView{InvoiceID: inv.ID, Number: inv.Number, InvoiceDate: inv.InvoiceDate, Period: inv.Period, Status: inv.Status,
		Total: inv.Total, PaidAt: timeString(inv.PaidAt)}
}

// BillingSummary is what the customer owes and pays.
type BillingSummary struct {
	CustomerID       string        `json:"customer_id"`
	Currency         string        `json:"currency"`
	BalanceDue       subprov.Money `json:"balance_due"`
	OpenInvoices     int           `json:"open_invoices"`
	MonthlyRecurring subprov.Money `json:"monthly_recurring"`
	LastInvoice      *InvoiceView  `json:"last_invoice"`
	RecentInvoices   []InvoiceView `json:"recent_invoices"`
}

const recentInvoices = 12

// BillingSummary reads balance and open invoices, the monthly price of the live
// lines, and the recent invoices (verified session required).
func (s *Service) BillingSummary(ctx context.Context, c Caller, customerID string) (*BillingSummary, error) {
	rec, err := s.customer(ctx, c, customerID, true)
	if err != nil {
		return nil, err
	}
	invs, err := s.Billing.Invoices(ctx, c.Provider, rec.ID)
	if err != nil {
		return nil, err
	}
	lines, err := s.lines(ctx, c.Provider.ID, rec.ID)
	if err != nil {
		return nil, err
	}
	out := &BillingSummary{CustomerID: rec.ID, Currency: c.Provider.Currency, RecentInvoices: []InvoiceView{}}
	for i, inv := range invs {
		if inv.Status == "open" {
			out.OpenInvoices++
			out.BalanceDue += inv.Total
		}
		if i < recentInvoices {
			out.RecentInvoices = append(out.RecentInvoices, invoiceView(inv))
		}
	}
	if len(out.RecentInvoices) > 0 {
		out.LastInvoice = &out.RecentInvoices[0]
	}
	for _, l := range lines {
		if l.sub.Status == subprov.StatusActive || l.sub.Status == subprov.StatusSuspended {
			out.MonthlyRecurring += l.plan.MonthlyPrice
		}
	}
	return out, nil
}

// Payment is a paid invoice: there is no payments table, the paid invoice with its payment
// intent is the payment record.
type Payment struct {
	InvoiceID     string        `json:"invoice_id"`
	InvoiceNumber string        `json:"invoice_number"`
	Amount        subprov.Money `json:"amount"`
	Currency      string        `json:"currency"`
	PaidAt        *string       `json:"paid_at"`
	PaymentIntent *string       `json:"payment_intent"`
}

// Payments lists the customer's payments, newest first (verified session required).
func (s *Service) Payments(ctx context.Context, c Caller, customerID string) (map[string][]Payment, error) {
	rec, err := s.customer(ctx, c, customerID, true)
	if err != nil {
		return nil, err
	}
	invs, err := s.Billing.Invoices(ctx, c.Provider, rec.ID)
	if err != nil {
		return nil, err
	}
	out := []Payment{}
	for _, inv := range invs {
		if inv.Status == "paid" {
			out = append(out, Payment{InvoiceID: inv.ID, InvoiceNumber: inv.Number, Amount: inv.Total, Currency: inv.Currency,
				PaidAt: timeString(inv.PaidAt), PaymentIntent: nullable(inv.PaymentIntent)})
		}
	}
	return map[string][]Payment{"payments": out}, nil
}

// ModemView is the CPE status of a line.
type ModemView struct {
	Status     string  `json:"status"`
	LastInform *string `json:"last_inform,omitempty"`
}

// LineHealth is one line's provisioning and modem status.
type LineHealth struct {
	SubscriptionID  string          `json:"subscription_id"`
	Status          subprov.Status  `json:"status"`
	WorkflowState   string          `json:"workflow_state"`
	OnHold          bool            `json:"on_hold"`
	Plan            PlanView        `json:"plan"`
	ServiceLocation LocationSummary `json:"service_location"`
	Modem           ModemView       `json:"modem"`
	Link            LinkView        `json:"link"`
	Outages         []OutageView    `json:"outages"`
}

// LinkView is the line's switch port link state as last sampled: up, down or unknown (no
// port, or never sampled). The switch is never queried for it.
type LinkView struct {
	State     string  `json:"state"`
	SampledAt *string `json:"sampled_at"`
}

// OutageView is a period the line's port link was down.
type OutageView struct {
	ID         string  `json:"id"`
	StartedAt  string  `json:"started_at"`
	ResolvedAt *string `json:"resolved_at"`
	Ongoing    bool    `json:"ongoing"`
}

// outageDays is how far back the network health lists a line's outages.
const outageDays = 30

// NetworkHealth is the read-only health of every line.
type NetworkHealth struct {
	CustomerID    string       `json:"customer_id"`
	CheckedAt     string       `json:"checked_at"`
	Subscriptions []LineHealth `json:"subscriptions"`
}

// NetworkHealth reads each line's provisioning state and, from the CPE management server
// when there is one, its modem status. An unconfigured or failing server gives modem status
// unknown, never an error; the switch is never queried (verified session required).
func (s *Service) NetworkHealth(ctx context.Context, c Caller, customerID string) (*NetworkHealth, error) {
	rec, err := s.customer(ctx, c, customerID, true)
	if err != nil {
		return nil, err
	}
	lines, err := s.lines(ctx, c.Provider.ID, rec.ID)
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	out := &NetworkHealth{CustomerID: rec.ID, CheckedAt: now.UTC().Format(time.RFC3339), Subscriptions: []LineHealth{}}
	for _, l := range lines {
		h := LineHealth{SubscriptionID: l.sub.ID, Status: l.sub.Status, WorkflowState: l.sub.WorkflowState,
			OnHold: l.sub.OnHold, Plan: planView(l.plan), ServiceLocation: summaryOf(l.loc), Modem: s.modem(ctx, l.sub, now)}
		h.Link, h.Outages = s.link(ctx, l.sub, now)
		out.Subscriptions = append(out.Subscriptions, h)
	}
	return out, nil
}

// link reads the line's port link state and its outages of the last 30 days, newest first,
// from what monitoring recorded. A line without a port, or a monitoring failure, reads
// unknown with no outages, never an error.
func (s *Service) link(ctx context.Context, sub *subprov.Subscription, now time.Time) (LinkView, []OutageView) {
	unknown := LinkView{State: monitoring.LinkUnknown}
	if s.Monitoring == nil || sub.PortID == "" {
		return unknown, []OutageView{}
	}
	p, err := s.Store.PortByID(ctx, sub.PortID)
	if err != nil {
		s.Log.Warn("agent: port unreadable", "subscription_id", sub.ID, "err", err)
		return unknown, []OutageView{}
	}
	port := switches.Port{Switch: p.Switch, Name: p.Name}
	l, err := s.Monitoring.Link(ctx, port, now)
	if err != nil {
		s.Log.Warn("agent: link state unavailable", "subscription_id", sub.ID, "err", err)
		return unknown, []OutageView{}
	}
	evs, err := s.Monitoring.Events(ctx, port, now.AddDate(0, 0, -outageDays), now)
	if err != nil {
		s.Log.Warn("agent: outages unavailable", "subscription_id", sub.ID, "err", err)
		evs = nil
	}
	outages := make([]OutageView, 0, len(evs))
	for i := len(evs) - 1; i >= 0; i-- { // the sources list oldest first
		e := evs[i]
		outages = append(outages, OutageView{ID: e.ID, StartedAt: e.StartedAt.UTC().Format(time.RFC3339),
			ResolvedAt: timeString(e.ResolvedAt), Ongoing: e.ResolvedAt == nil})
	}
	return LinkView{State: l.State, SampledAt: timeString(l.SampledAt)}, outages
}

func (s *Service) modem(ctx context.Context, sub *subprov.Subscription, now time.Time) ModemView {
	if s.CPE == nil || s.Faults.Is("cpe", "down") || sub.Status == subprov.StatusCancelled {
		return ModemView{Status: cpe.Unknown}
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	st, err := s.CPE.Lookup(ctx, sub.ID, sub.MACAddress, now)
	if err != nil {
		s.Log.Warn("agent: cpe status unavailable", "subscription_id", sub.ID, "err", err)
		return ModemView{Status: cpe.Unknown}
	}
	return ModemView{Status: st.State, LastInform: timeString(st.LastInform)}
}

// TicketView is a support ticket as the customer may hear about it.
type TicketView struct {
	TicketID  string `json:"ticket_id"`
	Number    string `json:"number"`
	Subject   string `json:"subject"`
	Status    string `json:"status"`
	Priority  string `json:"priority"`
	Group     string `json:"group"`
	CreatedAt string `json:"created_at"`
}

// Tickets lists the customer's tickets, found by the e-mails on file (verified session
// required: docs/agent.md). Operator tickets are internal and never listed.
func (s *Service) Tickets(ctx context.Context, c Caller, customerID string) (map[string][]TicketView, error) {
	rec, err := s.customer(ctx, c, customerID, true)
	if err != nil {
		return nil, err
	}
	emails := []string{rec.Holder.Email}
	if rec.Invoice != nil && rec.Invoice.Email != "" {
		emails = append(emails, rec.Invoice.Email)
	}
	ts, err := s.Store.TicketsByEmail(ctx, c.Provider.ID, rec.ID, emails)
	if err != nil {
		return nil, err
	}
	out := []TicketView{}
	for _, t := range ts {
		out = append(out, TicketView{TicketID: t.ID, Number: t.Number, Subject: t.Subject, Status: t.Status, Priority: t.Priority,
			Group: t.Group, CreatedAt: t.CreatedAt.UTC().Format(time.RFC3339)})
	}
	return map[string][]TicketView{"tickets": out}, nil
}
