package api

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
	"strconv"
	"strings"

	"github.com/subprov/subprov"
)

// maxBody is the largest request body accepted; more is 413.
const maxBody = 1 << 20

// Validator is implemented by request types with rules beyond JSON types: it returns
// field -> problem for everything wrong, so one answer lists every offending field.
type Validator interface {
	Valid() map[string]string
}

// Decode reads a JSON object into a new T: a body over 1 MiB is 413; malformed JSON, unknown
// fields, fields named twice in one object and wrong types are 422 naming the fields; then T's
// own Valid rules run.
func Decode[T any](r *http.Request) (T, error) {
	body, err := ReadBody(r)
	if err != nil {
		return *new(T), err
	}
	return DecodeBytes[T](body)
}

// ReadForm parses a page's form (application/x-www-form-urlencoded, as a browser posts it) of
// at most limit bytes into r.PostForm: a larger body is 413, another content type or an
// unreadable body 400; the page surface answers both as pages.
func ReadForm(w http.ResponseWriter, r *http.Request, limit int64) error {
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

// ReadBody reads a request body of at most 1 MiB; more is 413.
func ReadBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, subprov.Errorf(subprov.EBADREQUEST, "bad_request", "Could not read the request body")
	}
	if len(body) > maxBody {
		return nil, subprov.Errorf(subprov.ETOOLARGE, "too_large", "Request body is larger than 1 MiB")
	}
	return body, nil
}

// DecodeBytes is Decode for a body already read (bulk items are decoded one by one). One 422
// lists every problem at once, each under its full path ("subscriber.extra", "orders.2"):
// unknown fields, duplicate fields and wrong types at any depth, and T's own rules for the fields that did
// decode (a field with a wrong type is reported as that, not also as missing).
func DecodeBytes[T any](body []byte) (T, error) {
	var v T
	if len(bytes.TrimSpace(body)) == 0 {
		body = []byte("{}")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		return v, subprov.Invalid(map[string]string{"body": "must be a JSON object"})
	}
	problems := map[string]string{}
	duplicateKeys(body, problems)
	shapeProblems(reflect.TypeOf(v), body, "", problems)
	if len(problems) == 0 {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil { // shapeProblems found nothing: not expected
			return v, subprov.Invalid(map[string]string{fieldOf(err): "invalid value"})
		}
	} else {
		// Decode what can be decoded (a wrong-typed field stays zero, an unknown one is
		// skipped) so that T's own rules still name the other fields' problems.
		_ = json.Unmarshal(body, &v)
	}
	for field, msg := range rulesOf(&v) {
		if !underProblem(field, problems) {
			problems[field] = msg
		}
	}
	if len(problems) > 0 {
		return v, subprov.Invalid(problems)
	}
	return v, nil
}

// rulesOf runs a request type's own rules (Validator), on a value or a pointer receiver.
func rulesOf[T any](v *T) map[string]string {
	if val, ok := any(v).(Validator); ok {
		return val.Valid()
	}
	if val, ok := any(*v).(Validator); ok {
		return val.Valid()
	}
	return nil
}

// underProblem reports whether field is, or lies inside, a field that already has a problem:
// "subscriber.firstname: required" says nothing more when "subscriber" is not an object.
func underProblem(field string, problems map[string]string) bool {
	for f := range problems {
		if field == f || strings.HasPrefix(field, f+".") {
			return true
		}
	}
	return false
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// shapeProblems records each field of raw that type t does not know ("unknown field") and each
// value of the wrong JSON type ("want …"), under its dotted path from the body: it walks nested
// objects and arrays, so a problem inside "subscriber" or in the third item of an array is
// named there. Field names match exactly (encoding/json alone would also accept another case).
func shapeProblems(t reflect.Type, raw json.RawMessage, path string, problems map[string]string) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if string(bytes.TrimSpace(raw)) == "null" {
		return // null leaves a field at its zero value, as encoding/json does
	}
	ownDecoding := t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType)
	switch {
	case ownDecoding: // json.RawMessage, Money, agent.Confirmation: the type decides
	case t.Kind() == reflect.Struct:
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			problems[path] = "want an object"
			return
		}
		fields := jsonFields(t)
		for name, value := range obj {
			ft, ok := fields[name]
			if !ok {
				problems[pathJoin(path, name)] = "unknown field"
				continue
			}
			shapeProblems(ft, value, pathJoin(path, name), problems)
		}
		return
	case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8:
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			problems[path] = "want an array"
			return
		}
		for i, item := range items {
			shapeProblems(t.Elem(), item, pathJoin(path, strconv.Itoa(i)), problems)
		}
		return
	}
	if err := json.Unmarshal(raw, reflect.New(t).Interface()); err != nil {
		problems[path] = "want " + typeName(t)
	}
}

func pathJoin(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// jsonFields maps the JSON names of a struct type's fields to their types.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" && f.IsExported() {
			out[name] = f.Type
		}
	}
	return out
}

func typeName(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n, ok := reflect.New(t).Interface().(interface{ JSONTypeName() string }); ok {
		return n.JSONTypeName() // a type that decodes itself names what it takes
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

// fieldOf is the dotted path of a decoding error's field (encoding/json gives it from the
// root), or "body".
func fieldOf(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return te.Field
	}
	return "body"
}

// Required adds "required" for each named field whose value is blank.
func Required(p map[string]string, fields map[string]string) {
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

// Errorf is a shorthand for a caller-safe coded error.
func Errorf(code subprov.Code, reason, format string, args ...any) error {
	return &subprov.Error{Code: code, Reason: reason, Message: fmt.Sprintf(format, args...)}
}
