// Package api is what every surface's handlers share: decoding and validating request bodies,
// writing JSON answers and pages, and the caller the route's credential established. The
// route table in package httpapi imports the surfaces; the surfaces import only this.
package api

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/auth"
	"github.com/subprov/subprov/web"
)

// Pages renders the server-rendered pages (sandbox payment, booking, password links).
var Pages = web.MustRenderer()

// JSON writes v with status. Encoding errors are logged; the status is already sent.
func JSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if v == nil {
		return
	}
	if err := json.NewEncoder(w).Encode(v); err != nil {
		slog.Warn("write response", "err", err)
	}
}

// PDF writes a rendered PDF document with 200, shown in the browser and saved as name.pdf.
func PDF(w http.ResponseWriter, name string, body *bytes.Buffer) error {
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `inline; filename="`+name+`.pdf"`)
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(body.Bytes())
	return err
}

var statusOf = map[subprov.Code]int{
	subprov.EBADREQUEST:     http.StatusBadRequest,
	subprov.EUNAUTHORIZED:   http.StatusUnauthorized,
	subprov.EFORBIDDEN:      http.StatusForbidden,
	subprov.ENOTFOUND:       http.StatusNotFound,
	subprov.ECONFLICT:       http.StatusConflict,
	subprov.EGONE:           http.StatusGone,
	subprov.ETOOLARGE:       http.StatusRequestEntityTooLarge,
	subprov.EINVALID:        http.StatusUnprocessableEntity,
	subprov.ERATELIMITED:    http.StatusTooManyRequests,
	subprov.EINTERNAL:       http.StatusInternalServerError,
	subprov.ENOTIMPLEMENTED: http.StatusNotImplemented,
	subprov.EUNAVAILABLE:    http.StatusBadGateway,
	subprov.EUNCONFIGURED:   http.StatusServiceUnavailable,
	subprov.EMETHOD:         http.StatusMethodNotAllowed,
}

// Status is the HTTP status of an error code, 500 for a code without one.
func Status(code subprov.Code) int {
	if s := statusOf[code]; s != 0 {
		return s
	}
	return http.StatusInternalServerError
}

// Caller is who is calling, as the route's credential established it.
type Caller struct {
	Provider *subprov.Provider
	APIKey   *subprov.APIKey
	Account  *subprov.AccountLogin
	Operator *subprov.Operator
	View     *subprov.AccountView // a subscriber view route: the account record read with the login
	// Client is the calling client's address: the peer's, or behind a trusted proxy the one it
	// forwarded (SUBPROV_TRUSTED_PROXIES). The limits on guessing passwords count by it.
	Client string
}

// Actor is who the caller is, as the audit log records it.
func (c *Caller) Actor() subprov.Actor {
	switch {
	case c.Operator != nil:
		return subprov.OperatorActor(c.Operator)
	case c.Account != nil:
		return subprov.Actor{Type: subprov.ActorSubscriber, ID: c.Account.ID}
	case c.APIKey != nil && c.APIKey.HasFeature(subprov.FeatureAgentAPI):
		return subprov.Actor{Type: subprov.ActorAgent, ID: c.APIKey.ID}
	case c.APIKey != nil:
		return subprov.Actor{Type: subprov.ActorAPIKey, ID: c.APIKey.ID}
	}
	return subprov.Actor{}
}

type ctxKey int

const (
	keyCaller ctxKey = iota
	keyRequest
)

// CallerOf is the caller of r; empty on a route that takes no credential.
func CallerOf(r *http.Request) *Caller {
	c, _ := r.Context().Value(keyCaller).(*Caller)
	if c == nil {
		return &Caller{}
	}
	return c
}

// WithCaller is ctx carrying the caller the route's credential established.
func WithCaller(ctx context.Context, c *Caller) context.Context {
	return context.WithValue(ctx, keyCaller, c)
}

// request is what the handlers and the middleware tell each other about one request. It rides
// in the context as a pointer, so a handler can add to it without handing the middleware a
// copy of the request.
type request struct {
	id string
	// failed is set by a handler that answered a failed attempt itself (a password page's
	// dead link), for the route's limit on failures.
	failed bool
}

// WithRequestID is ctx carrying the request's id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, keyRequest, &request{id: id})
}

// RequestID is r's X-Request-Id, as the middleware kept or chose it.
func RequestID(r *http.Request) string {
	if q, _ := r.Context().Value(keyRequest).(*request); q != nil {
		return q.id
	}
	return ""
}

// AttemptFailed tells the route's limit on failures that the handler answered a failed attempt
// itself.
func AttemptFailed(r *http.Request) {
	if q, _ := r.Context().Value(keyRequest).(*request); q != nil {
		q.failed = true
	}
}

// Failed reports whether the handler answered a failed attempt itself (AttemptFailed).
func Failed(r *http.Request) bool {
	q, _ := r.Context().Value(keyRequest).(*request)
	return q != nil && q.failed
}

// LoginRequest is the body of every login, the subscriber's and the operator's: the e-mail,
// the password, and the second factor's code (or a recovery code) for a login that has one on.
type LoginRequest struct {
	Email    string `json:"email"`
	Password string `json:"password"`
	TOTP     string `json:"totp"`
}

func (q LoginRequest) Valid() map[string]string {
	p := map[string]string{}
	Required(p, map[string]string{"email": q.Email, "password": q.Password})
	return p
}

type tokenResponse struct {
	AccessToken string `json:"access_token"`
	TokenType   string `json:"token_type"`
	ExpiresIn   int    `json:"expires_in"`
}

// Token answers a login with its bearer token.
func Token(w http.ResponseWriter, t *auth.Token) {
	JSON(w, http.StatusOK, tokenResponse{AccessToken: t.AccessToken, TokenType: "Bearer", ExpiresIn: t.ExpiresIn})
}
