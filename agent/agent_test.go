package agent_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/subprov/subprov/agent"
	"github.com/subprov/subprov/internal/servicetest"
)

const (
	northwindAgentKey = "nwf_live_agent_demo_key_000000000001"
	mapleAgentKey     = "mpl_live_agent_demo_key_000000000001"
)

// caller is an agent of the provider of key, with a verified session for customerID when
// it is not "".
func caller(t *testing.T, e *servicetest.Env, key, customerID string) agent.Caller {
	t.Helper()
	k, p, err := e.Auth.APIKey(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	c := agent.Caller{Provider: p, Key: k}
	if customerID != "" {
		if c.Session, _, err = e.Auth.IssueVerifiedSession(p.ID, customerID); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

var sixDigits = regexp.MustCompile(`\b\d{6}\b`)

// lastCode is the code in the newest verification mail to addr (the outbox lists newest first).
func lastCode(t *testing.T, e *servicetest.Env, addr string) string {
	t.Helper()
	for _, mail := range e.Mails(t, addr) {
		if mail.Subject == "Your verification code" {
			if code := sixDigits.FindString(mail.Body); code != "" {
				return code
			}
		}
	}
	t.Fatalf("no verification code mailed to %s", addr)
	return ""
}

// wrong is a six-digit code other than code.
func wrong(code string) string {
	if code == "000000" {
		return "000001"
	}
	return "000000"
}

func issueCode(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	c := caller(t, e, northwindAgentKey, "")
	tests := []struct {
		name, customer, channel, code, dest string
	}{
		{"no customer", "", agent.ChannelEmail, "invalid/validation_error", ""},
		{"another provider's customer", servicetest.SubscriberLiam, agent.ChannelEmail, "not_found/not_found", ""},
		{"another provider's customer, whatever the channel", servicetest.SubscriberLiam, "pigeon", "not_found/not_found", ""},
		{"an unknown channel", servicetest.SubscriberMarie, "pigeon", "invalid/validation_error", ""},
		{"SMS where the provider has none", servicetest.SubscriberMarie, agent.ChannelSMS, "unconfigured/dependency_unconfigured", ""},
		{"e-mail is the default", servicetest.SubscriberMarie, "", "", "m***@e***.ca"},
	}
	for _, tt := range tests {
		got, err := e.Agent.IssueCode(ctx, c, tt.customer, tt.channel)
		if servicetest.Code(err) != tt.code || (err == nil && (got.Destination != tt.dest || got.Channel != agent.ChannelEmail || got.ExpiresIn != 600)) {
			t.Errorf("%s: %+v %v, want %q to %q", tt.name, got, err, tt.code, tt.dest)
		}
	}
	// Five codes per customer in ten minutes; the sixth waits.
	for i := 2; i <= 5; i++ {
		if _, err := e.Agent.IssueCode(ctx, c, servicetest.SubscriberMarie, ""); err != nil {
			t.Fatalf("code %d: %v", i, err)
		}
	}
	if _, err := e.Agent.IssueCode(ctx, c, servicetest.SubscriberMarie, ""); servicetest.Code(err) != "rate_limited/rate_limited" {
		t.Fatalf("a sixth code: %v", err)
	}
	if _, err := e.Agent.IssueCode(ctx, c, servicetest.SubscriberPriya, ""); err != nil {
		t.Fatalf("another customer's code under the same key: %v", err)
	}
	e.Clock.Advance(10*time.Minute + time.Second)
	if _, err := e.Agent.IssueCode(ctx, c, servicetest.SubscriberMarie, ""); err != nil {
		t.Fatalf("a code once the ten minutes passed: %v", err)
	}
}

func checkCode(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	c := caller(t, e, northwindAgentKey, "")
	issue := func(customer, addr string) string {
		t.Helper()
		if _, err := e.Agent.IssueCode(ctx, c, customer, ""); err != nil {
			t.Fatal(err)
		}
		return lastCode(t, e, addr)
	}
	code := issue(servicetest.SubscriberMarie, servicetest.EmailMarie)
	checks := []struct {
		name, customer, code, want string
	}{
		{"no code", servicetest.SubscriberMarie, " ", "invalid/validation_error"},
		{"another provider's customer", servicetest.SubscriberLiam, code, "not_found/not_found"},
		{"another customer's code", servicetest.SubscriberPriya, code, "unauthorized/verification_failed"},
		{"a wrong code", servicetest.SubscriberMarie, wrong(code), "unauthorized/verification_failed"},
		{"the right code", servicetest.SubscriberMarie, code, ""},
		{"a code is used once", servicetest.SubscriberMarie, code, "unauthorized/verification_failed"},
	}
	for _, tt := range checks {
		s, err := e.Agent.CheckCode(ctx, c, tt.customer, tt.code)
		if servicetest.Code(err) != tt.want {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
			continue
		}
		if err == nil {
			if s.CustomerID != tt.customer || e.Auth.CheckVerifiedSession(s.Token, servicetest.Northwind, tt.customer) != nil {
				t.Errorf("%s: session %+v does not verify its customer", tt.name, s)
			}
			if e.Auth.CheckVerifiedSession(s.Token, servicetest.Northwind, servicetest.SubscriberPriya) == nil {
				t.Errorf("%s: the session verifies another customer", tt.name)
			}
		}
	}
	// Five wrong tries use a code up: the right one still works after four, not after five.
	for _, tt := range []struct {
		tries int
		want  string
	}{{4, ""}, {5, "unauthorized/verification_failed"}} {
		code = issue(servicetest.SubscriberMarie, servicetest.EmailMarie)
		for range tt.tries {
			_, _ = e.Agent.CheckCode(ctx, c, servicetest.SubscriberMarie, wrong(code))
		}
		if _, err := e.Agent.CheckCode(ctx, c, servicetest.SubscriberMarie, code); servicetest.Code(err) != tt.want {
			t.Errorf("the right code after %d wrong tries: %v, want %q", tt.tries, err, tt.want)
		}
	}
	// A code lives ten minutes.
	code = issue(servicetest.SubscriberPriya, servicetest.EmailPriya)
	e.Clock.Advance(10 * time.Minute)
	if _, err := e.Agent.CheckCode(ctx, c, servicetest.SubscriberPriya, code); servicetest.Code(err) != "unauthorized/verification_failed" {
		t.Errorf("a code ten minutes old: %v", err)
	}
}

// scopingComesBeforeVerification: another provider's customer is not found whatever the
// session; the provider's own customer needs a session verified for that very customer.
func scopingComesBeforeVerification(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	none := caller(t, e, northwindAgentKey, "")
	forMarie := caller(t, e, northwindAgentKey, servicetest.SubscriberMarie)
	mapleForLiam := caller(t, e, mapleAgentKey, servicetest.SubscriberLiam)
	first := "Marie"
	ops := map[string]func(c agent.Caller, id string) error{
		"profile":  func(c agent.Caller, id string) error { _, err := e.Agent.Profile(ctx, c, id); return err },
		"billing":  func(c agent.Caller, id string) error { _, err := e.Agent.BillingSummary(ctx, c, id); return err },
		"payments": func(c agent.Caller, id string) error { _, err := e.Agent.Payments(ctx, c, id); return err },
		"network":  func(c agent.Caller, id string) error { _, err := e.Agent.NetworkHealth(ctx, c, id); return err },
		"tickets":  func(c agent.Caller, id string) error { _, err := e.Agent.Tickets(ctx, c, id); return err },
		"note": func(c agent.Caller, id string) error {
			_, err := e.Agent.AddNote(ctx, c, id, "called about the bill")
			return err
		},
		"contact": func(c agent.Caller, id string) error {
			_, err := e.Agent.PatchContact(ctx, c, id, agent.ContactPatch{FirstName: &first})
			return err
		},
		"link": func(c agent.Caller, id string) error { _, err := e.Agent.SendAccountLink(ctx, c, id, ""); return err },
		"invoice": func(c agent.Caller, id string) error {
			_, err := e.Agent.ResendInvoice(ctx, c, id, "no-such-invoice")
			return err
		},
	}
	rows := []struct {
		name     string
		c        agent.Caller
		customer string
		want     string
	}{
		{"another provider's customer, with its own session", forMarie, servicetest.SubscriberLiam, "not_found/not_found"},
		{"a customer of the provider, with no session", none, servicetest.SubscriberMarie, "unauthorized/verification_required"},
		{"a customer of the provider, with another customer's session", forMarie, servicetest.SubscriberPriya, "unauthorized/verification_required"},
		{"a blank customer id", forMarie, " ", "not_found/not_found"},
		{"a session of the same customer id at another provider", mapleForLiam, servicetest.SubscriberMarie, "not_found/not_found"},
	}
	for name, op := range ops {
		for _, tt := range rows {
			if err := op(tt.c, tt.customer); servicetest.Code(err) != tt.want {
				t.Errorf("%s, %s: %v, want %q", name, tt.name, err, tt.want)
			}
		}
		if err := op(forMarie, servicetest.SubscriberMarie); err != nil && servicetest.Code(err) != "not_found/not_found" {
			t.Errorf("%s with Marie's session: %v", name, err)
		}
	}
}

// writes: what the writes refuse, and what they write.
func writes(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	c := caller(t, e, northwindAgentKey, servicetest.SubscriberMarie)
	s := func(v string) *string { return &v }
	if _, err := e.Agent.AddNote(ctx, c, servicetest.SubscriberMarie, " "); servicetest.Code(err) != "invalid/validation_error" {
		t.Errorf("an empty note: %v", err)
	}
	if _, err := e.Agent.AddNote(ctx, c, servicetest.SubscriberMarie, strings.Repeat("é", 10_001)); servicetest.Code(err) != "invalid/validation_error" {
		t.Errorf("a note over 10000 characters: %v", err)
	}
	if n, err := e.Agent.AddNote(ctx, c, servicetest.SubscriberMarie, strings.Repeat("é", 10_000)); err != nil || n.Author != agent.AuthorAI {
		t.Errorf("a note of 10000 characters: %+v %v", n, err)
	}
	// A contract e-mail change moves the login; one another account uses is refused.
	if _, err := e.Agent.PatchContact(ctx, c, servicetest.SubscriberMarie, agent.ContactPatch{Email: s(servicetest.EmailPriya)}); servicetest.Code(err) != "invalid/validation_error" {
		t.Errorf("another account's e-mail: %v", err)
	}
	got, err := e.Agent.PatchContact(ctx, c, servicetest.SubscriberMarie, agent.ContactPatch{Email: s(" Marie.T@Example.ca ")})
	if err != nil || got.ContactType != agent.ContactContract {
		t.Fatalf("contract e-mail change: %+v %v", got, err)
	}
	if acc := e.Login(t, "marie.t@example.ca"); acc.SubscriberID != servicetest.SubscriberMarie {
		t.Fatalf("the login did not move with the contract e-mail: %+v", acc)
	}
	if _, err := e.Agent.SendAccountLink(ctx, c, servicetest.SubscriberMarie, "unlock"); servicetest.Code(err) != "invalid/validation_error" {
		t.Errorf("an unknown account-link action: %v", err)
	}
	if _, err := e.Agent.SendAccountLink(ctx, c, servicetest.SubscriberMarie, agent.ActionResendActivation); servicetest.Code(err) != "conflict/already_activated" {
		t.Errorf("activation link for a holder with a password: %v", err)
	}
	if l, err := e.Agent.SendAccountLink(ctx, c, servicetest.SubscriberMarie, ""); err != nil || l.Action != agent.ActionPasswordReset || l.ExpiresIn != 900 {
		t.Errorf("the default link: %+v %v", l, err)
	}
}

// openTicket: scoping first, then every problem at once; the ticket is routed to the
// provider's support group with the holder's e-mail when none is given.
func openTicket(t *testing.T, e *servicetest.Env) {
	ctx := context.Background()
	c := caller(t, e, northwindAgentKey, "")
	tests := []struct {
		name string
		in   agent.TicketInput
		code string
	}{
		{"another provider's customer, whatever else is wrong", agent.TicketInput{CustomerID: servicetest.SubscriberLiam}, "not_found/not_found"},
		{"nobody to answer", agent.TicketInput{Priority: "normal", AISummary: "x"}, "invalid/validation_error"},
		{"a priority not listed", agent.TicketInput{CustomerID: servicetest.SubscriberMarie, Priority: "urgent", AISummary: "x"}, "invalid/validation_error"},
		{"a contact e-mail that is not one", agent.TicketInput{ContactEmail: "nope", Priority: "low", AISummary: "x"}, "invalid/validation_error"},
	}
	for _, tt := range tests {
		if _, err := e.Agent.OpenTicket(ctx, c, tt.in); servicetest.Code(err) != tt.code {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.code)
		}
	}
	since := e.Clock.Now()
	summary := "Modem offline since the storm\nThe customer restarted it twice."
	r, err := e.Agent.OpenTicket(ctx, c, agent.TicketInput{CustomerID: servicetest.SubscriberMarie, Priority: "high", AISummary: summary, Transcript: " hello "})
	if err != nil || r.Group != "Northwind Tier 1" || r.Status != "open" {
		t.Fatalf("open: %+v %v", r, err)
	}
	got, err := e.Store.TicketsSince(ctx, servicetest.Northwind, since)
	if err != nil || len(got) != 1 {
		t.Fatalf("tickets %v %v", got, err)
	}
	if tk := got[0]; tk.ContactEmail != servicetest.EmailMarie || tk.Subject != "Modem offline since the storm" || tk.Kind != "support" ||
		tk.InternalNote != "hello" || tk.SubscriberID != servicetest.SubscriberMarie {
		t.Fatalf("ticket %+v", tk)
	}
}

func TestTicketInputProblems(t *testing.T) {
	long := strings.Repeat("x", 10_001)
	tests := []struct {
		name   string
		in     agent.TicketInput
		fields string
	}{
		{"a customer and a summary", agent.TicketInput{CustomerID: "c", Priority: "normal", AISummary: "s"}, ""},
		{"a contact e-mail stands for the customer", agent.TicketInput{ContactEmail: "a@example.ca", Priority: "low", AISummary: "s"}, ""},
		{"everything missing", agent.TicketInput{}, "ai_summary customer_id priority"},
		{"texts too long", agent.TicketInput{CustomerID: "c", Priority: "high", AISummary: long, Subject: long, AIDiagnosis: long,
			Transcript: strings.Repeat("x", 200_001)}, "ai_diagnosis ai_summary subject transcript"},
	}
	for _, tt := range tests {
		if got := fieldsOf(tt.in.Problems()); got != tt.fields {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.fields)
		}
	}
}

func TestContactPatchProblems(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := []struct {
		name   string
		p      agent.ContactPatch
		fields string
	}{
		{"one field", agent.ContactPatch{FirstName: s("Marie")}, ""},
		{"nothing sent", agent.ContactPatch{}, "body"},
		{"an unknown contact type", agent.ContactPatch{ContactType: "billing", FirstName: s("x")}, "contact_type"},
		{"names and e-mail may not be emptied", agent.ContactPatch{FirstName: s(" "), LastName: s(""), Email: s("")}, "email firstname lastname"},
		{"the invoice contact's e-mail may be emptied", agent.ContactPatch{ContactType: agent.ContactInvoice, Email: s("")}, ""},
		{"a company may be emptied", agent.ContactPatch{Company: s("")}, ""},
		{"an e-mail that is not one", agent.ContactPatch{Email: s("nope")}, "email"},
		{"over 200 characters", agent.ContactPatch{PhoneNumber: s(strings.Repeat("1", 201))}, "phonenumber"},
	}
	for _, tt := range tests {
		if got := fieldsOf(tt.p.Problems()); got != tt.fields {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.fields)
		}
	}
}

func TestMasks(t *testing.T) {
	tests := []struct{ in, email, phone string }{
		{"marie.tremblay@example.ca", "m***@e***.ca", ""},
		{"élodie@courriel.québec", "é***@c***.québec", ""},
		{"no-at-sign", "", ""},
		{"+1 514-555-0142", "", "***-***-0142"},
		{"123", "", ""},
	}
	for _, tt := range tests {
		if got := agent.MaskEmail(tt.in); got != tt.email {
			t.Errorf("MaskEmail(%q) = %q, want %q", tt.in, got, tt.email)
		}
		if got := agent.MaskPhone(tt.in); got != tt.phone {
			t.Errorf("MaskPhone(%q) = %q, want %q", tt.in, got, tt.phone)
		}
	}
}

// fieldsOf is the sorted, space-separated names of a problem map.
func fieldsOf(problems map[string]string) string {
	names := make([]string, 0, len(problems))
	for f := range problems {
		names = append(names, f)
	}
	slices.Sort(names)
	return strings.Join(names, " ")
}

// TestIssueAndScoping runs issuing codes, scoping and tickets on one store per engine.
func TestIssueAndScoping(t *testing.T) {
	servicetest.EachRules(t,
		servicetest.Rule{Name: "IssueCode", Test: issueCode},
		servicetest.Rule{Name: "ScopingComesBeforeVerification", Test: scopingComesBeforeVerification},
		servicetest.Rule{Name: "OpenTicket", Test: openTicket},
	)
}

// TestCheckAndWrite runs checking codes and the writes on one store per engine (the store is
// the costly part); the writes change the holder's e-mail, so they come last.
func TestCheckAndWrite(t *testing.T) {
	servicetest.EachRules(t,
		servicetest.Rule{Name: "CheckCode", Test: checkCode},
		servicetest.Rule{Name: "Writes", Test: writes},
	)
}
