// Package auth authenticates callers: it resolves each credential (API key, webhook secret,
// subscriber and dashboard bearer tokens, the agent's verified session) to who is calling, and
// runs the login and password-reset flows. HTTP middleware calls it; it holds the rules.
package auth

import (
	"context"
	"errors"
	"log/slog"
	"net/mail"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/identity"
	"github.com/subprov/subprov/jobs"
	"github.com/subprov/subprov/locale"
	"github.com/subprov/subprov/ratelimit"
	"github.com/subprov/subprov/store"
)

// Mailer queues a message inside a transaction (the outbox).
type Mailer interface {
	QueueLocalized(ctx context.Context, tx *store.Tx, providerID, to string, m locale.Mail) error
}

// Service authenticates callers for one store.
type Service struct {
	Store     *store.Store
	Clock     subprov.Clock
	Signer    *identity.Signer
	Mail      Mailer
	Jobs      jobs.Enqueuer // the password-reset job
	PublicURL string
	// PasswordCost is what hashing a new password costs; the zero value is the production cost.
	PasswordCost identity.PasswordCost
	// Limiter counts the failed password attempts of one client on one login (throttle.go),
	// in-process or shared through Redis; nil counts none (the login's throttle still holds).
	Limiter ratelimit.Limiter
	// Log takes the warning when the limiter is unavailable.
	Log *slog.Logger
	// KeyUsage is told of every request an API key authenticates (nil: none is kept); it
	// records the key's last use without a database write per request (providers.Usage).
	KeyUsage interface {
		Touch(keyID string, at time.Time)
	}
	// Sealer opens the operators' second-factor keys, sealed at rest.
	Sealer *identity.Sealer

	// consoleSweep is when SweepConsoleSessions last removed the ended sessions.
	consoleSweep struct {
		sync.Mutex
		at time.Time
	}
}

func invalidCredentials() error {
	return subprov.Errorf(subprov.EUNAUTHORIZED, "invalid_credentials", "Invalid e-mail or password")
}

func unauthorized(msg string) error {
	return subprov.Errorf(subprov.EUNAUTHORIZED, "unauthorized", "%s", msg)
}

// ValidEmail reports whether s is a plain e-mail address.
func ValidEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && strings.Contains(s, "@")
}

// Token is an issued access token.
type Token struct {
	AccessToken string
	ExpiresIn   int
}

// LoginSubscriber checks a portal login from client (its address) and issues a one-hour
// access token. A wrong e-mail and a wrong password answer alike and take the same time, and
// both count as failures under the limits on guessing (throttle.go), which answer alike too.
// A login with its second factor on must also send a code of it (or one of its unused
// recovery codes) as secondFactor: checked only after the password is right, a missing or
// wrong one is a failure like a wrong password, with the same answer.
func (s *Service) LoginSubscriber(ctx context.Context, email, password, secondFactor, client string) (*Token, error) {
	email = subprov.NormalizeEmail(email)
	a, err := s.begin(ctx, loginSubscriber, client, email)
	if err != nil {
		return nil, err
	}
	acc, err := s.Store.AccountByEmail(ctx, email)
	if err != nil && !errors.Is(err, subprov.ErrNotFound) {
		return nil, errors.Join(err, a.abandon(ctx))
	}
	ok := false
	if acc != nil && acc.PasswordHash != "" { // no password set yet: no password matches
		ok = identity.CheckPassword(acc.PasswordHash, password)
	} else {
		s.PasswordCost.BurnCheck(password)
	}
	if ok && acc.TOTPEnabled {
		// The authenticator app names the key by the provider; the owner's name is not needed
		// to check a code.
		if ok, err = s.secondFactorAtLogin(ctx, AccountSecondFactor(acc, ""), secondFactor); err != nil {
			return nil, errors.Join(err, a.abandon(ctx))
		}
	}
	if err := a.end(ctx, ok); err != nil {
		return nil, err
	}
	if !ok {
		return nil, invalidCredentials()
	}
	now := s.Clock.Now()
	tok, err := s.Signer.IssueGeneration(identity.AudienceSubscriber, acc.ID, acc.ProviderID, acc.ID, acc.TokenGeneration, now, subprov.SubscriberTokenLifetime)
	if err != nil {
		return nil, err
	}
	return &Token{AccessToken: tok, ExpiresIn: int(subprov.SubscriberTokenLifetime.Seconds())}, nil
}

// secondFactorAtLogin uses code of owner's second factor, in a transaction of its own.
func (s *Service) secondFactorAtLogin(ctx context.Context, owner SecondFactorOwner, code string) (bool, error) {
	var ok bool
	err := s.Store.InTx(ctx, func(tx *store.Tx) error {
		var err error
		ok, err = s.UseSecondFactor(ctx, tx, owner, code)
		return err
	})
	return ok, err
}

// checkAccountPassword checks a signed-in account's password from client under the limits on
// guessing, as the login does: a wrong one is a failure of the account's login, a right one
// ends its run of failures. A stolen access token therefore guesses no faster than the login
// form.
func (s *Service) checkAccountPassword(ctx context.Context, acc *subprov.AccountLogin, password, client string) (bool, error) {
	a, err := s.begin(ctx, loginSubscriber, client, acc.Email)
	if err != nil {
		return false, err
	}
	ok := identity.CheckPassword(acc.PasswordHash, password)
	return ok, a.end(ctx, ok)
}

// bearerSubject verifies a bearer token for audience and loads what its subject names; a
// bad token, a subject that no longer exists and, for a subscriber, a token of an earlier
// generation of its login (issued before a password change or reset) are the same 401. The
// generation is read with the login, on every request, so a token ended on one process is
// refused on every other as soon as the change commits.
func bearerSubject[T any](s *Service, ctx context.Context, bearer, audience string, load func(context.Context, string) (T, error), generation func(T) int64) (T, error) {
	var zero T
	c, err := s.Signer.Verify(bearer, audience, s.Clock.Now())
	if err != nil {
		return zero, unauthorized("Invalid or expired token")
	}
	v, err := load(ctx, c.Subject)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return zero, unauthorized("Invalid or expired token")
		}
		return zero, err
	}
	if generation != nil && generation(v) != c.Generation {
		return zero, unauthorized("Invalid or expired token")
	}
	return v, nil
}

// Subscriber resolves a subscriber bearer token to its account.
func (s *Service) Subscriber(ctx context.Context, bearer string) (*subprov.AccountLogin, error) {
	return bearerSubject(s, ctx, bearer, identity.AudienceSubscriber, s.Store.Account,
		func(a *subprov.AccountLogin) int64 { return a.TokenGeneration })
}

// SubscriberView resolves a subscriber bearer token as Subscriber does (signature, algorithm,
// audience, expiry, and a login that still exists) and reads the login's account record in the
// same query, so GET /partner/subscriber/me costs one database round trip.
func (s *Service) SubscriberView(ctx context.Context, bearer string) (*subprov.AccountView, error) {
	return bearerSubject(s, ctx, bearer, identity.AudienceSubscriber, s.Store.AccountView,
		func(v *subprov.AccountView) int64 { return v.Account.TokenGeneration })
}

// Operator resolves a dashboard bearer token to its operator. A disabled operator's tokens,
// and those issued before its password or second factor last changed, are refused on every
// process as soon as the change commits: the operator is read on every request.
func (s *Service) Operator(ctx context.Context, bearer string) (*subprov.Operator, error) {
	return bearerSubject(s, ctx, bearer, identity.AudienceOperator, s.Store.Operator,
		func(o *subprov.Operator) int64 {
			if o.DisabledAt != nil {
				return -1 // no token's generation
			}
			return o.TokenGeneration
		})
}

// APIKey resolves an X-API-Key to its key and provider.
func (s *Service) APIKey(ctx context.Context, raw string) (*subprov.APIKey, *subprov.Provider, error) {
	if raw == "" {
		return nil, nil, unauthorized("Missing X-API-Key")
	}
	k, p, err := s.Store.APIKeyByHash(ctx, identity.HashSecret(raw))
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, nil, unauthorized("Invalid API key")
		}
		return nil, nil, err
	}
	if s.KeyUsage != nil {
		s.KeyUsage.Touch(k.ID, s.Clock.Now())
	}
	return k, p, nil
}

// AgentAccess refuses a key without the agent_api_access feature the support-agent surface
// requires, over HTTP and over MCP alike.
func AgentAccess(k *subprov.APIKey) error {
	if !k.HasFeature(subprov.FeatureAgentAPI) {
		return subprov.Errorf(subprov.EFORBIDDEN, "forbidden", "This API key does not have the agent_api_access feature")
	}
	return nil
}

// WebhookSecret resolves an X-Webhook-Secret to its provider: its current secret, or the one
// before a rotation until that one's expiry on the service clock. The lookup is by hash and the
// hash is compared again in constant time, so timing reveals nothing about stored secrets.
func (s *Service) WebhookSecret(ctx context.Context, raw string) (*subprov.Provider, error) {
	if raw == "" {
		return nil, unauthorized("Missing X-Webhook-Secret")
	}
	h := identity.HashSecret(raw)
	p, matched, err := s.Store.ProviderByWebhookSecretHash(ctx, h, s.Clock.Now())
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, unauthorized("Invalid webhook secret")
		}
		return nil, err
	}
	if !identity.EqualHash(matched, h) {
		return nil, unauthorized("Invalid webhook secret")
	}
	return p, nil
}

// DeviceSecret resolves a CPE's X-Device-Secret to its provider.
func (s *Service) DeviceSecret(ctx context.Context, raw string) (*subprov.Provider, error) {
	if raw == "" {
		return nil, unauthorized("Missing X-Device-Secret")
	}
	p, err := s.Store.ProviderByDeviceSecretHash(ctx, identity.HashSecret(raw))
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil, unauthorized("Invalid device secret")
		}
		return nil, err
	}
	return p, nil
}

// IssueVerifiedSession returns the agent's verified-session token for one (provider,
// customer) pair, valid 15 minutes.
func (s *Service) IssueVerifiedSession(providerID, customerID string) (string, time.Time, error) {
	now := s.Clock.Now()
	tok, err := s.Signer.Issue(identity.AudienceVerified, customerID, providerID, "", now, subprov.VerifiedSessionLifetime)
	return tok, now.Add(subprov.VerifiedSessionLifetime), err
}

// CheckVerifiedSession accepts a verified-session token only for the same provider and
// customer it was issued for, within its lifetime.
func (s *Service) CheckVerifiedSession(token, providerID, customerID string) error {
	fail := subprov.Errorf(subprov.EUNAUTHORIZED, "verification_required", "A verified session for this customer is required")
	if token == "" {
		return fail
	}
	c, err := s.Signer.Verify(token, identity.AudienceVerified, s.Clock.Now())
	if err != nil || c.ProviderID != providerID || c.Subject != customerID {
		return fail
	}
	return nil
}

// RequestPasswordReset asks for a 15-minute single-use reset link for email. It only enqueues
// the job that looks the address up and mails the link (SendPasswordReset), and does so for
// every address, so the request writes the same and takes the same time whether or not the
// e-mail has a login; the caller always answers the same (no account enumeration).
func (s *Service) RequestPasswordReset(ctx context.Context, email string) error {
	job := jobs.SendPasswordReset{Email: subprov.NormalizeEmail(email), RequestedAt: s.Clock.Now()}
	return s.Store.InTx(ctx, func(tx *store.Tx) error { return s.Jobs.Enqueue(ctx, tx, job) })
}

// SendPasswordReset is the auth.password_reset job: it mails a reset link when the e-mail has
// a login, and does nothing otherwise. A link issued since the request answers it already, so
// a run repeated after a crash mails no second one.
func (s *Service) SendPasswordReset(ctx context.Context, args jobs.SendPasswordReset) error {
	acc, err := s.Store.AccountByEmail(ctx, args.Email)
	if err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return nil
		}
		return err
	}
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		done, err := tx.TokenIssuedSince(ctx, acc.ID, TokenPasswordReset.Name, args.RequestedAt)
		if err != nil || done {
			return err
		}
		return s.MailToken(ctx, tx, acc.ID, acc.Email, acc.ProviderID, TokenPasswordReset)
	})
}

// Kinds of mailed single-use tokens, with their lifetimes, link paths and wording.
type TokenKind struct {
	Name     string
	Lifetime time.Duration
	Path     string
	Subject  string // catalogue keys
	Intro    string
}

var (
	TokenPasswordReset = TokenKind{"password_reset", subprov.PasswordResetLifetime, "/portal/reset-password",
		"token.password_reset.subject", "token.password_reset.intro"}
	TokenSetup = TokenKind{"setup", subprov.SetupLinkLifetime, "/portal/activate",
		"token.setup.subject", "token.setup.intro"}
	TokenActivation = TokenKind{"activation", subprov.ActivationLinkLifetime, "/portal/activate",
		"token.activation.subject", "token.activation.intro"}
)

// MailToken stores a new single-use token of kind for subject and queues the mail with its
// link, inside tx.
func (s *Service) MailToken(ctx context.Context, tx *store.Tx, subjectID, to, providerID string, kind TokenKind) error {
	raw := identity.NewToken(32)
	now := s.Clock.Now()
	if err := tx.InsertToken(ctx, identity.HashSecret(raw), subprov.MailedToken{Kind: kind.Name, ProviderID: providerID, SubjectID: subjectID,
		ExpiresAt: now.Add(kind.Lifetime)}, now); err != nil {
		return err
	}
	link := s.PublicURL + kind.Path + "?token=" + raw
	body := locale.Texts{locale.Msg("mail.hello"), locale.Msg(kind.Intro), locale.Verbatim(link), locale.Msg("mail.ignore")}
	return s.Mail.QueueLocalized(ctx, tx, providerID, to, locale.Mail{Subject: locale.Msg(kind.Subject), Body: body, Links: []string{link}})
}

// hashNewPassword is the hash of a password chosen by its owner, or a 422 naming field when
// the password is not acceptable.
func (s *Service) hashNewPassword(field, password string) (string, error) {
	if p := subprov.PasswordProblem(password); p != "" {
		return "", subprov.Invalid(map[string]string{field: p})
	}
	return s.PasswordCost.Hash(password)
}

// ChangePassword changes a signed-in person's own password. The current password is checked
// first: a wrong one is 400 "Current password is incorrect" whatever the new one is
// (docs/http.md, subscriber portal), so only a caller who knows it learns what is wrong with the new
// one. It is checked from client under the limits on guessing, as at the login
// (checkAccountPassword). Without a current password there is nothing to check: 422 names it,
// and the new password too if that is wrong as well. The change ends every access token of the
// login issued before it, the caller's included (SetPassword).
func (s *Service) ChangePassword(ctx context.Context, acc *subprov.AccountLogin, current, next, client string) error {
	if current == "" {
		problems := map[string]string{"current_password": "required"}
		if p := subprov.PasswordProblem(next); p != "" {
			problems["new_password"] = p
		}
		return subprov.Invalid(problems)
	}
	ok, err := s.checkAccountPassword(ctx, acc, current, client)
	if err != nil {
		return err
	}
	if !ok {
		return subprov.Errorf(subprov.EBADREQUEST, "incorrect_password", "Current password is incorrect")
	}
	hash, err := s.hashNewPassword("new_password", next)
	if err != nil {
		return err
	}
	return s.Store.InTx(ctx, func(tx *store.Tx) error { return SetPassword(ctx, tx, acc.ID, hash, s.Clock.Now()) })
}

// Links that set a password: the reset link, and the set-up or activation link.
var (
	ResetLinks      = []TokenKind{TokenPasswordReset}
	ActivationLinks = []TokenKind{TokenSetup, TokenActivation}
)

// ConfirmPasswordReset sets a new password with a reset token (single use).
func (s *Service) ConfirmPasswordReset(ctx context.Context, token, newPassword string) error {
	return s.SetPasswordWithLink(ctx, token, newPassword, ResetLinks...)
}

// Activate sets the first password with a set-up or activation token (single use).
func (s *Service) Activate(ctx context.Context, token, password string) error {
	return s.SetPasswordWithLink(ctx, token, password, ActivationLinks...)
}

// SetPasswordWithLink sets the password of the account a live link of one of kinds belongs
// to, and uses the link: an invalid password is 422 naming it, a dead link invalid_token.
func (s *Service) SetPasswordWithLink(ctx context.Context, token, password string, kinds ...TokenKind) error {
	hash, err := s.hashNewPassword("password", password)
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	return s.Store.InTx(ctx, func(tx *store.Tx) error {
		t, err := tx.ConsumeToken(ctx, identity.HashSecret(token), kindNames(kinds), now)
		if err != nil {
			if errors.Is(err, subprov.ErrNotFound) {
				return errInvalidLink()
			}
			return err
		}
		return SetPassword(ctx, tx, t.SubjectID, hash, now)
	})
}

// errInvalidLink answers a link that is unknown, used or expired: which of them is not told.
func errInvalidLink() error {
	return subprov.Errorf(subprov.EBADREQUEST, "invalid_token", "The link is invalid, used or expired")
}

// IsInvalidLink reports whether err is errInvalidLink's answer.
func IsInvalidLink(err error) bool { return subprov.ErrorReason(err) == "invalid_token" }

func kindNames(kinds []TokenKind) []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.Name
	}
	return names
}

// CheckLink tells, without using it, whether token is a live link of one of kinds: nil if
// so, the invalid_token error of ConfirmPasswordReset and Activate if not.
func (s *Service) CheckLink(ctx context.Context, token string, kinds ...TokenKind) error {
	if _, err := s.Store.LiveToken(ctx, identity.HashSecret(token), kindNames(kinds), s.Clock.Now()); err != nil {
		if errors.Is(err, subprov.ErrNotFound) {
			return errInvalidLink()
		}
		return err
	}
	return nil
}

// passwordLinks are the kinds of mailed token that set an account's password: the activation
// links and the reset link.
var passwordLinks = kindNames(slices.Concat(ActivationLinks, ResetLinks))

// SetPassword stores an account's new password hash in tx, ends every access token of the
// login issued before (its token generation moves on), and retires every outstanding link
// that would set it again (set-up, activation, reset): links are single use (docs/security.md),
// and once the account has a password of its choosing, from a link or a change in the portal,
// an older link must not take it over.
func SetPassword(ctx context.Context, tx *store.Tx, accountID, hash string, now time.Time) error {
	if err := tx.SetPassword(ctx, accountID, hash, now); err != nil {
		return err
	}
	return tx.RetireTokens(ctx, accountID, passwordLinks, now)
}
