package subprov

import (
	"errors"
	"fmt"
)

// Code is a stable, machine-readable error class. Each surface maps codes to its own status and
// envelope at the HTTP edge; nothing below HTTP knows about status codes.
type Code string

const (
	ECONFLICT       Code = "conflict"           // 409: the state does not allow it
	EINTERNAL       Code = "internal"           // 500: a bug or an unexpected failure; never shown in detail
	EINVALID        Code = "invalid"            // 422: validation failed
	ENOTFOUND       Code = "not_found"          // 404: does not exist or is not the caller's
	EUNAUTHORIZED   Code = "unauthorized"       // 401: no or bad credential
	EFORBIDDEN      Code = "forbidden"          // 403: credential lacks the right
	EUNAVAILABLE    Code = "unavailable"        // 502: an upstream system failed
	EUNCONFIGURED   Code = "unconfigured"       // 503: a dependency is not configured
	EGONE           Code = "gone"               // 410: expired or cancelled
	EBADREQUEST     Code = "bad_request"        // 400
	ETOOLARGE       Code = "too_large"          // 413
	ERATELIMITED    Code = "rate_limited"       // 429
	ENOTIMPLEMENTED Code = "not_implemented"    // 501
	EMETHOD         Code = "method_not_allowed" // 405
)

// ErrNotFound and ErrDuplicate are what the store's reads and writes carry (test with
// errors.Is) when no row matched or a unique key was already taken. They are no coded error:
// an absent row becomes a caller's 404 or 409 only where a capability says so, and one it
// does not expect stays an internal failure.
var (
	ErrNotFound  = errors.New("not found")
	ErrDuplicate = errors.New("duplicate")
)

// Error is the service's coded error. Code picks the HTTP status; Reason is the stable code a
// client branches on (e.g. "holder_only", "limit_reached"); Message is safe to show a caller.
type Error struct {
	Code    Code
	Reason  string
	Message string
	// Fields lists offending input fields for validation errors: path -> problem.
	Fields map[string]string
	// Extra carries surface-specific fields placed beside the message (e.g. expired_at).
	Extra map[string]any
}

func (e *Error) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("%s (%s): %s", e.Code, e.Reason, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf builds a coded error with a caller-safe message.
func Errorf(code Code, reason, format string, args ...any) *Error {
	return &Error{Code: code, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Invalid builds a validation error listing the offending fields.
func Invalid(fields map[string]string) *Error {
	return &Error{Code: EINVALID, Reason: "validation_error", Message: "Request validation failed", Fields: fields}
}

// NotFound is the one answer for "missing" and "not yours": the same body either way, so ids of
// another provider cannot be told apart from ids that do not exist.
func NotFound(what string) *Error {
	return &Error{Code: ENOTFOUND, Reason: "not_found", Message: what + " not found"}
}

// ErrorCode returns the code of a coded error, or EINTERNAL for anything else.
func ErrorCode(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorReason returns the stable reason of a coded error, or "" for anything else.
func ErrorReason(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

// AsError returns the coded error inside err, if any.
func AsError(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
