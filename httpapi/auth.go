package httpapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
)

// credential is the kind of credential a route requires.
type credential int

const (
	credNone               credential = iota // no credential
	credAPIKey                               // X-API-Key
	credAgentKey                             // X-API-Key with the agent_api_access feature
	credWebhookSecret                        // X-Webhook-Secret
	credSubscriber                           // Authorization: Bearer <subscriber JWT>
	credHolder                               // subscriber JWT of the account holder (authorized users get 403 holder_only)
	credOperator                             // Authorization: Bearer <dashboard JWT>
	credOptionalSubscriber                   // a subscriber JWT if one is sent (checkout session creation)
	credDevice                               // X-Device-Secret: the provider's CPE secret (configuration pull)
	credSessionSecret                        // X-Webhook-Secret, checked by the checkout package after the session's age check
	credSubscriberView                       // subscriber JWT, checked as credSubscriber in the same query that reads the account record (GET /me)
)

func (c credential) String() string {
	return [...]string{"none", "api_key", "agent_key", "webhook_secret", "subscriber", "holder", "operator", "optional_subscriber", "device_secret", "webhook_secret", "subscriber"}[c]
}

// caller is who is calling, as the route's credential established it.
type caller struct {
	Provider *subprov.Provider
	APIKey   *subprov.APIKey
	Account  *subprov.AccountLogin
	Operator *subprov.Operator
	View     *subprov.AccountView // credSubscriberView: the account record read with the login
}

func callerOf(r *http.Request) *caller {
	c, _ := r.Context().Value(keyCaller).(*caller)
	if c == nil {
		return &caller{}
	}
	return c
}

func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "Bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

func missingBearer() error {
	return subprov.Errorf(subprov.EUNAUTHORIZED, "unauthorized", "Missing bearer token")
}

// authenticate establishes the caller for a route's credential, or returns the error to send.
func (s *server) authenticate(r *http.Request, cred credential) (*caller, error) {
	ctx := r.Context()
	c := &caller{}
	switch cred {
	case credNone, credSessionSecret:
	case credAPIKey, credAgentKey:
		k, p, err := s.apiKey(r)
		if err != nil {
			return nil, err
		}
		if cred == credAgentKey {
			if err := auth.AgentAccess(k); err != nil {
				return nil, err
			}
		}
		c.APIKey, c.Provider = k, p
	case credWebhookSecret:
		p, err := s.Auth.WebhookSecret(ctx, r.Header.Get("X-Webhook-Secret"))
		if err != nil {
			return nil, err
		}
		c.Provider = p
	case credSubscriber, credHolder, credOptionalSubscriber:
		tok := bearer(r)
		if tok == "" && cred == credOptionalSubscriber {
			return c, nil
		}
		if tok == "" {
			return nil, missingBearer()
		}
		acc, err := s.Auth.Subscriber(ctx, tok)
		if err != nil {
			return nil, err
		}
		// The capabilities check the holder rule themselves; checking it here as well refuses
		// an authorized user before the request body is read.
		if cred == credHolder {
			if err := acc.CheckHolder(); err != nil {
				return nil, err
			}
		}
		c.Account = acc
	case credSubscriberView:
		tok := bearer(r)
		if tok == "" {
			return nil, missingBearer()
		}
		v, err := s.Auth.SubscriberView(ctx, tok)
		if err != nil {
			return nil, err
		}
		c.Account, c.View = v.Account, v
	case credDevice:
		p, err := s.Auth.DeviceSecret(ctx, r.Header.Get("X-Device-Secret"))
		if err != nil {
			return nil, err
		}
		c.Provider = p
	case credOperator:
		tok := bearer(r)
		if tok == "" {
			return nil, missingBearer()
		}
		op, err := s.Auth.Operator(ctx, tok)
		if err != nil {
			return nil, err
		}
		c.Operator = op
	}
	return c, nil
}

// apiKey resolves the request's X-API-Key, reusing the rate limiter's lookup of it.
func (s *server) apiKey(r *http.Request) (*subprov.APIKey, *subprov.Provider, error) {
	raw := r.Header.Get("X-API-Key")
	if info := infoOf(r); info != nil && info.apiKey != nil && info.apiKey.raw == raw {
		return info.apiKey.key, info.apiKey.provider, info.apiKey.err
	}
	return s.Auth.APIKey(r.Context(), raw)
}

func withCaller(ctx context.Context, c *caller) context.Context {
	return context.WithValue(ctx, keyCaller, c)
}
