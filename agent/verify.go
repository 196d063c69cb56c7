package agent

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/store"
)

// One-time code rules (docs/agent.md, Verification).
const (
	codeLifetime = 10 * time.Minute
	maxChecks    = 5
	// Codes are limited in a sliding window: per customer (a caller cannot flood one person's
	// inbox or phone) and per API key (one agent cannot flood everybody). Only codes that
	// never verified a session count: the limits are against codes nobody reads out, so an
	// agent who verifies the same customer on several calls, or many customers, is never
	// refused. Five unverified codes a customer leaves room for a call that needs a resend or
	// two (a slow mail, a spam folder), a switch to SMS and a code spent on wrong checks, and
	// still bounds a flood to 30 messages an hour; sixty a key is an agent's resends over many
	// calls at once.
	issueWindow    = 10 * time.Minute
	maxPerCustomer = 5
	maxPerKey      = 60
)

// Channels of a one-time code.
const (
	ChannelEmail = "email"
	ChannelSMS   = "sms"
)

// Issued is the answer to issuing a code: never the code itself.
type Issued struct {
	Channel     string `json:"channel"`
	Destination string `json:"destination"`
	ExpiresIn   int    `json:"expires_in"`
}

// Session is a verified session bound to one (provider, customer) pair.
type Session struct {
	Token      string `json:"verified_session_token"`
	CustomerID string `json:"customer_id"`
	ExpiresAt  string `json:"expires_at"`
}

func verificationFailed() error {
	return subprov.Errorf(subprov.EUNAUTHORIZED, "verification_failed", "The code is wrong, expired or used up; issue a new one")
}

// rateLimited is the issue limit's 429; retry_after (Retry-After) is the whole seconds until a
// code leaves the window and the limit lets the next one through.
func rateLimited(wait time.Duration) error {
	secs := max(int((wait+time.Second-1)/time.Second), 1)
	return &subprov.Error{Code: subprov.ERATELIMITED, Reason: "rate_limited", Message: "Too many codes issued; wait before resending",
		Extra: map[string]any{"retry_after": secs}}
}

// issueWait is how long until each limit the counts reach lets a code through: until enough
// of the oldest codes in the window leave it that one fewer than the limit remain.
func (s *Service) issueWait(ctx context.Context, c Caller, customerID string, perCustomer, perKey int, now time.Time) (time.Duration, error) {
	since := now.Add(-issueWindow)
	var wait time.Duration
	for _, l := range []struct {
		count, max              int
		provider, customer, key string
	}{
		{perCustomer, maxPerCustomer, c.Provider.ID, customerID, ""},
		{perKey, maxPerKey, "", "", c.Key.ID},
	} {
		if l.count < l.max {
			continue
		}
		at, err := s.Store.UnverifiedCodeIssuedAt(ctx, l.provider, l.customer, l.key, since, l.count-l.max)
		if err != nil {
			return 0, err
		}
		wait = max(wait, at.Add(issueWindow).Sub(now))
	}
	return wait, nil
}

// IssueCode sends a 6-digit one-time code to the customer by e-mail (default) or SMS. Only a
// hash of the code is stored; a new code retires the customer's earlier ones.
func (s *Service) IssueCode(ctx context.Context, c Caller, customerID, channel string) (*Issued, error) {
	problems := map[string]string{}
	channel = strings.TrimSpace(channel)
	if channel == "" {
		channel = ChannelEmail
	}
	if channel != ChannelEmail && channel != ChannelSMS {
		problems["channel"] = "must be email or sms"
	}
	rec, err := s.namedCustomer(ctx, c, customerID, problems)
	if err != nil {
		return nil, err
	}
	if channel == ChannelSMS && (!c.Provider.SMSConfigured || s.SMS == nil) {
		return nil, subprov.Errorf(subprov.EUNCONFIGURED, "dependency_unconfigured", "SMS verification is not configured for this provider")
	}
	to := rec.Holder.Email
	dest := MaskEmail(to)
	if channel == ChannelSMS {
		to, dest = rec.Holder.PhoneNumber, MaskPhone(rec.Holder.PhoneNumber)
	}
	if dest == "" {
		return nil, subprov.Invalid(map[string]string{"channel": "the customer has no " + map[string]string{ChannelEmail: "e-mail", ChannelSMS: "phone number"}[channel] + " on file"})
	}
	now := s.Clock.Now()
	perCustomer, perKey, err := s.Store.UnverifiedCodesSince(ctx, c.Provider.ID, rec.ID, c.Key.ID, now.Add(-issueWindow))
	if err != nil {
		return nil, err
	}
	if perCustomer >= maxPerCustomer || perKey >= maxPerKey {
		wait, err := s.issueWait(ctx, c, rec.ID, perCustomer, perKey, now)
		if err != nil {
			return nil, err
		}
		return nil, rateLimited(wait)
	}
	code, err := newCode()
	if err != nil {
		return nil, err
	}
	vc := &subprov.VerificationCode{ID: store.NewID(), ProviderID: c.Provider.ID, SubscriberID: rec.ID, APIKeyID: c.Key.ID, Channel: channel,
		ExpiresAt: now.Add(codeLifetime), CreatedAt: now}
	vc.CodeHash = codeHash(vc.ID, code)
	var smsLang locale.Lang // the holder's language, for a code sent by SMS
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		if err := tx.InsertVerificationCode(ctx, vc); err != nil {
			return err
		}
		if channel == ChannelEmail {
			return s.Mail.QueueLocalized(ctx, tx, c.Provider.ID, to, locale.Mail{Subject: locale.Msg("agent.code.subject"), Body: codeMail(c.Provider.Name, code), Account: rec.ID})
		}
		smsLang, err = s.Mail.LanguageOf(ctx, tx, c.Provider.ID, rec.ID, rec.Holder.Email)
		return err
	})
	if err != nil {
		return nil, err
	}
	if channel == ChannelSMS {
		if err := s.sendSMS(ctx, to, smsLang.T("agent.code.sms", c.Provider.Name, code)); err != nil {
			if derr := s.Store.DeleteVerificationCode(context.WithoutCancel(ctx), vc.ID); derr != nil {
				s.Log.Error("agent: remove unsent code", "err", derr)
			}
			return nil, err
		}
	}
	return &Issued{Channel: channel, Destination: dest, ExpiresIn: int(codeLifetime.Seconds())}, nil
}

// namedCustomer resolves the customer a verification body names, given the body's other
// problems. Without a customer_id the body is invalid: 422 listing it with the others.
// Otherwise scoping comes first (another provider's customer is 404 whatever else is wrong),
// then the other problems (422).
func (s *Service) namedCustomer(ctx context.Context, c Caller, customerID string, problems map[string]string) (*subprov.SubscriberContacts, error) {
	if strings.TrimSpace(customerID) == "" {
		problems["customer_id"] = "required"
		return nil, subprov.Invalid(problems)
	}
	rec, err := s.customer(ctx, c, customerID, false)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, subprov.Invalid(problems)
	}
	return rec, nil
}

func (s *Service) sendSMS(ctx context.Context, to, body string) error {
	unavailable := subprov.Errorf(subprov.EUNAVAILABLE, "upstream_unavailable", "The SMS gateway did not accept the message; try e-mail")
	if s.Faults.Is("sms", "down") {
		return unavailable
	}
	if err := s.SMS.Send(ctx, to, body); err != nil {
		s.Log.Warn("agent: sms not sent", "err", err)
		return unavailable
	}
	return nil
}

// codeMail carries the code as a standalone 6-digit line, so a reader or a mail client picks it out.
func codeMail(provider, code string) locale.Localized {
	return locale.Texts{locale.Msg("mail.hello"), locale.Msg("agent.code.body", provider, code, provider)}
}

// CheckCode checks a code. The right code yields a verified session bound to (provider,
// customer) for 15 minutes and ends the code; each wrong try counts, and the fifth ends it.
func (s *Service) CheckCode(ctx context.Context, c Caller, customerID, code string) (*Session, error) {
	problems := map[string]string{}
	code = strings.TrimSpace(code)
	if code == "" {
		problems["code"] = "required"
	}
	rec, err := s.namedCustomer(ctx, c, customerID, problems)
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	ok := false
	err = s.Store.InTx(ctx, func(tx *store.Tx) error {
		vc, err := tx.LockLiveCode(ctx, c.Provider.ID, rec.ID, now)
		if errors.Is(err, subprov.ErrNotFound) || (err == nil && vc.Checks >= maxChecks) {
			return nil
		}
		if err != nil {
			return err
		}
		ok = identity.EqualHash(vc.CodeHash, codeHash(vc.ID, code))
		return tx.RecordCodeCheck(ctx, vc.ID, ok, vc.Checks+1 >= maxChecks, now)
	})
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, verificationFailed()
	}
	tok, exp, err := s.Auth.IssueVerifiedSession(c.Provider.ID, rec.ID)
	if err != nil {
		return nil, err
	}
	return &Session{Token: tok, CustomerID: rec.ID, ExpiresAt: exp.UTC().Format(time.RFC3339)}, nil
}

func newCode() (string, error) {
	n, err := rand.Int(rand.Reader, big.NewInt(1_000_000))
	if err != nil {
		return "", fmt.Errorf("generate code: %w", err)
	}
	return fmt.Sprintf("%06d", n.Int64()), nil
}

// codeHash salts the code with its row id, so equal codes never hash alike.
func codeHash(id, code string) string { return identity.HashSecret(id + ":" + code) }
