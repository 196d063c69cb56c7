package httpapi

import (
	"cmp"
	"context"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/subprov/subprov"
	"github.com/subprov/subprov/agent"
	"github.com/subprov/subprov/httpapi/api"
	"github.com/subprov/subprov/locale"
)

// surface is a group of routes that shares an error envelope (docs/http.md).
type surface int

const (
	surfacePartner    surface = iota // {"detail": "message"} or a list of field problems
	surfaceSubscriber                // {"detail": {"code", "message"}}
	surfaceAgent                     // {"error": {"code", "message", "request_id"}}
	surfacePage                      // an HTML page for a person (web/), never JSON
)

func (sf surface) String() string {
	return [...]string{"partner", "subscriber", "agent", "page"}[sf]
}

// surfaceOf picks the envelope for a path no route serves (404) by its prefix: the prefixes of
// the subscriber routes answer in the subscriber envelope. A path some route serves answers in
// that route's (server.methodsAt, server.surfaceAt).
func surfaceOf(path string) surface {
	for _, p := range []string{"/partner/subscriber/", "/api/v1/subscriber/", "/api/v1/credit-notes/", "/api/v1/invoices/"} { // subscriber-session routes
		if strings.HasPrefix(path, p) {
			return surfaceSubscriber
		}
	}
	if strings.HasPrefix(path, "/partner/agent/") || strings.HasPrefix(path, "/api/v1/agent/") {
		return surfaceAgent
	}
	return surfacePartner
}

// writeError renders err in the surface's envelope. Anything that is not a coded error (on the
// agent surface, anything without an agent code) is an internal error: logged with the request
// id, and answered without detail.
func writeError(w http.ResponseWriter, r *http.Request, sf surface, err error) {
	e, ok := subprov.AsError(err)
	if sf == surfaceAgent {
		// Only the agent codes reach an agent (docs/agent.md); anything else is internal.
		var unlisted bool
		e, unlisted = agent.Public(err)
		ok = !unlisted
	}
	if !ok {
		logOf(r).ErrorContext(r.Context(), "internal error", "request_id", api.RequestID(r), "method", r.Method, "path", r.URL.Path, "err", err)
		e = &subprov.Error{Code: subprov.EINTERNAL, Reason: "internal", Message: "Internal server error"}
	}
	status := api.Status(e.Code)
	if secs, ok := e.Extra["retry_after"].(int); ok && e.Code == subprov.ERATELIMITED && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", strconv.Itoa(secs)) // a capability's limit (auth's limits on guessing)
	}
	if sf == surfacePage {
		if e.Code == subprov.ERATELIMITED {
			e = &subprov.Error{Code: e.Code, Message: "Too many attempts from your network in a short time. Please wait a minute, then try again."}
		}
		writePageError(w, r, status, e)
		return
	}
	if e.Code == subprov.ERATELIMITED {
		api.JSON(w, status, partnerError{Detail: "Rate limit exceeded"})
		return
	}
	reason := e.Reason
	if reason == "" {
		reason = string(e.Code)
	}
	switch sf {
	case surfaceAgent:
		api.JSON(w, status, agentError{Error: agentErrorBody{Code: reason, Fields: e.Fields, Message: e.Message, RequestID: api.RequestID(r)}})
	case surfaceSubscriber:
		// A map, not a struct: a coded error may add keys of its own (Extra).
		body := map[string]any{"code": reason, "message": readerOf(r).Refusal(reason, e.Message)}
		if len(e.Fields) > 0 {
			body["fields"] = e.Fields
		}
		for k, v := range e.Extra {
			body[k] = v
		}
		api.JSON(w, status, map[string]any{"detail": body})
	default:
		if len(e.Fields) > 0 {
			api.JSON(w, status, validationError{Detail: fieldList(e.Fields)})
			return
		}
		if e.Code == subprov.EGONE {
			// 410 for an expired or cancelled session nests the object (docs/checkout.md), with
			// the keys the error adds (Extra: expired_at).
			inner := map[string]any{"detail": e.Message}
			for k, v := range e.Extra {
				inner[k] = v
			}
			api.JSON(w, status, map[string]any{"detail": inner})
			return
		}
		api.JSON(w, status, partnerError{Detail: e.Message})
	}
}

// readerKey carries, on a subscriber route's request, the language of the person it answers.
type readerKey struct{}

// inReaderLanguage is r carrying the language a subscriber route answers its caller in (the
// portal's rule: the signed-in person's, else the browser's); other surfaces answer in English.
// It is read only when a refusal is written, so a request that succeeds reads nothing more.
func (s *server) inReaderLanguage(r *http.Request, sf surface) *http.Request {
	if sf != surfaceSubscriber {
		return r
	}
	lang, err := s.portal.Language(r)
	if err != nil {
		logOf(r).WarnContext(r.Context(), "choose the reader's language", "request_id", api.RequestID(r), "err", err)
		return r
	}
	return r.WithContext(context.WithValue(r.Context(), readerKey{}, lang))
}

// readerOf is the language of r's reader: the one inReaderLanguage chose, else the browser's
// best supported language, else English (a refusal before sign-in: a bad token, a login).
func readerOf(r *http.Request) locale.Lang {
	if l, ok := r.Context().Value(readerKey{}).(locale.Lang); ok {
		return l
	}
	return locale.Choose("", r.Header.Get("Accept-Language"), "")
}

// partnerError is the partner envelope: a message for a person.
type partnerError struct {
	Detail string `json:"detail"`
}

// validationError is the partner envelope of a 422: every offending field.
type validationError struct {
	Detail []fieldProblem `json:"detail"`
}

// agentError is the agent envelope; Fields only when the error names fields.
type agentError struct {
	Error agentErrorBody `json:"error"`
}

type agentErrorBody struct {
	Code      string            `json:"code"`
	Fields    map[string]string `json:"fields,omitempty"`
	Message   string            `json:"message"`
	RequestID string            `json:"request_id"`
}

// pageTitles are the headings of error pages, by status; the message under it is the coded
// error's own (never an internal detail: uncoded errors arrive here as "Internal server error").
var pageTitles = map[int]string{
	http.StatusBadRequest: "page.error.400", http.StatusNotFound: "page.error.404",
	http.StatusConflict: "page.error.409", http.StatusGone: "page.error.410",
	http.StatusUnprocessableEntity: "page.error.422", http.StatusBadGateway: "page.error.502",
	http.StatusTooManyRequests: "page.error.429",
}

func writePageError(w http.ResponseWriter, r *http.Request, status int, e *subprov.Error) {
	l := locale.Choose("", r.Header.Get("Accept-Language"), "")
	title := l.T(cmp.Or(pageTitles[status], "page.error.other"))
	if err := api.Pages.Message(w, status, l, title, e.Message); err != nil {
		logOf(r).Warn("write error page", "err", err)
	}
}

// fieldProblem is one offending field in a partner-surface 422.
type fieldProblem struct {
	Loc  []string `json:"loc"`
	Msg  string   `json:"msg"`
	Type string   `json:"type"`
}

func fieldList(fields map[string]string) []fieldProblem {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]fieldProblem, 0, len(keys))
	for _, k := range keys {
		loc := append([]string{"body"}, strings.Split(k, ".")...)
		if strings.HasPrefix(k, "query:") {
			loc = []string{"query", strings.TrimPrefix(k, "query:")}
		}
		out = append(out, fieldProblem{Loc: loc, Msg: fields[k], Type: "value_error"})
	}
	return out
}

// retryAfter formats a wait as whole seconds, at least 1.
func retryAfter(secs float64) string {
	n := int(secs + 0.999)
	if n < 1 {
		n = 1
	}
	return strconv.Itoa(n)
}
