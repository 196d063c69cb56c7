package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"sort"
	"strings"

	"github.com/subprov/subprov"
)

// maxBody is the largest request body accepted; more is 413.
const maxBody = 1 << 20

// validator is implemented by request types with rules beyond JSON types: it returns
// field -> problem for everything wrong, so one answer lists every offending field.
type validator interface {
	Valid() map[string]string
}

// decode reads a JSON object into a new T: a body over 1 MiB is 413; malformed JSON, unknown
// fields and wrong types are 422 naming the fields; then T's own Valid rules run.
func decode[T any](r *http.Request) (T, error) {
	body, err := readBody(r)
	if err != nil {
		return *new(T), err
	}
	return decodeBytes[T](body)
}

// readForm parses a page's form (application/x-www-form-urlencoded, as a browser posts it) of
// at most limit bytes into r.PostForm: a larger body is 413, another content type or an
// unreadable body 400; the page surface answers both as pages.
func readForm(w http.ResponseWriter, r *http.Request, limit int64) error {
	unreadable := subprov.Errorf(subprov.EBADREQUEST, "bad_form", "The form could not be read. Please go back and try again.")
	if ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); ct != "application/x-www-form-urlencoded" {
		return unreadable
	}
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	if err := r.ParseForm(); err != nil {
		if tooBig := new(http.MaxBytesError); errors.As(err, &tooBig) {
			return subprov.Errorf(subprov.ETOOLARGE, "too_large", "The form is larger than this page ever sends. Please go back and try again.")
		}
		return unreadable
	}
	return nil
}

// readBody reads a request body of at most 1 MiB; more is 413.
func readBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, subprov.Errorf(subprov.EBADREQUEST, "bad_request", "Could not read the request body")
	}
	if len(body) > maxBody {
		return nil, subprov.Errorf(subprov.ETOOLARGE, "too_large", "Request body is larger than 1 MiB")
	}
	return body, nil
}

// decodeBytes is decode for a body already read (bulk items are decoded one by one).
func decodeBytes[T any](body []byte) (T, error) {
	var v T
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil {
		return v, subprov.Invalid(map[string]string{"body": "must be a JSON object"})
	}
	problems := map[string]string{}
	if t := reflect.TypeOf(v); t.Kind() == reflect.Struct {
		known := jsonFields(t)
		for k := range raw {
			if !known[k] {
				problems[k] = "unknown field"
			}
		}
	}
	for name, msg := range typeProblems(reflect.TypeOf(v), raw) {
		problems[name] = msg
	}
	if len(problems) > 0 {
		return v, subprov.Invalid(problems)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return v, subprov.Invalid(map[string]string{fieldOf(err): "invalid value"})
	}
	if val, ok := any(&v).(validator); ok {
		if p := val.Valid(); len(p) > 0 {
			return v, subprov.Invalid(p)
		}
	} else if val, ok := any(v).(validator); ok {
		if p := val.Valid(); len(p) > 0 {
			return v, subprov.Invalid(p)
		}
	}
	return v, nil
}

// jsonFields lists the JSON names of a struct type's fields.
func jsonFields(t reflect.Type) map[string]bool {
	out := map[string]bool{}
	if t.Kind() != reflect.Struct {
		return out
	}
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out[name] = true
		}
	}
	return out
}

// typeProblems decodes each known top-level field on its own so every wrong type is named.
func typeProblems(t reflect.Type, raw map[string]json.RawMessage) map[string]string {
	out := map[string]string{}
	if t.Kind() != reflect.Struct {
		return out
	}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		msg, ok := raw[name]
		if !ok {
			continue
		}
		p := reflect.New(f.Type)
		if err := json.Unmarshal(msg, p.Interface()); err != nil {
			out[name] = "want " + typeName(f.Type)
		}
	}
	return out
}

func typeName(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32:
		if t == reflect.TypeOf(subprov.Money(0)) {
			return "an amount"
		}
		return "a whole number"
	case reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "a different type"
}

func fieldOf(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return te.Field
	}
	if s := err.Error(); strings.HasPrefix(s, "json: unknown field ") {
		return strings.Trim(strings.TrimPrefix(s, "json: unknown field "), `"`)
	}
	return "body"
}

// required adds "required" for each named field whose value is blank.
func required(p map[string]string, fields map[string]string) {
	names := make([]string, 0, len(fields))
	for k := range fields {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if strings.TrimSpace(fields[k]) == "" {
			p[k] = "required"
		}
	}
}

// errorsf is a shorthand for a caller-safe coded error.
func errorsf(code subprov.Code, reason, format string, args ...any) error {
	return &subprov.Error{Code: code, Reason: reason, Message: fmt.Sprintf(format, args...)}
}
