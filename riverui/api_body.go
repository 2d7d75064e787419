package riverui

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/internal/wire"
)

// The API reads a request body field by field, so that every error names
// the field it is about (in the answer's "field" too) and says what the
// field takes; a field the route does not take is refused by name.

// opt is a field of a request body: whether it was sent, whether as null,
// and its value otherwise.
type opt[T any] struct {
	set, null bool
	v         T
}

// fieldValue is an opt of any type.
type fieldValue interface {
	decode(raw json.RawMessage) error
	want() string
}

func (o *opt[T]) decode(raw json.RawMessage) error {
	o.set = true
	if string(raw) == "null" {
		o.null = true
		return nil
	}
	return json.Unmarshal(raw, &o.v)
}

// want says what the field takes, for an error about a value it does not.
func (o *opt[T]) want() string {
	switch any(&o.v).(type) {
	case *int:
		return "a whole number"
	case *float64:
		return "a number"
	case *bool:
		return "true or false"
	case *time.Time:
		return `an RFC 3339 time such as "2026-11-01T09:00:00Z"`
	case *wire.Duration:
		return `a Go duration such as "90s", "15m" or "1h30m"`
	case *uuid.UUID:
		return "an id such as 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e"
	case *json.RawMessage:
		return "a JSON value"
	case *[]string:
		return "an array of strings"
	case *map[string]any:
		return "a JSON object"
	case *debounceBody:
		return debounceWant
	case *retryBody:
		return retryWant
	case *calendarDateList:
		return calendarDateListWant
	}
	return "a string"
}

// value is the field's value, or the zero value when it was not sent or
// was null.
func (o *opt[T]) value() T { return o.v }

// ptr is the field's value, or nil when it was not sent.
func (o *opt[T]) ptr() *T {
	if !o.set {
		return nil
	}
	return &o.v
}

// member is a field a route's body takes.
type member struct {
	name string
	dst  fieldValue
	// nullable fields take null (none, or the JSON value null for an
	// input); the others refuse it.
	nullable bool
}

// bodySpec describes what a route's JSON body holds.
type bodySpec struct {
	// what names the body in errors: "a schedule", "a signal".
	what    string
	members []member
	// readOnly are the fields of the resource that the answers hold but
	// the route does not set: a PATCH takes and ignores them (so that a
	// GET's body can be sent back), a POST refuses them (ignoreReadOnly
	// false).
	readOnly       []string
	ignoreReadOnly bool
	// renamed maps a field's former name to its name: the former name is
	// still accepted (deprecated, see the package documentation).
	renamed map[string]string
	// required says the body may not be empty.
	required bool
}

// formerNames are names earlier releases answered with, which the API no
// longer takes: an error naming one says what it is called now.
var formerNames = map[string]string{
	"workflow_type":  "the workflow type is now \"workflow\" on a schedule and \"type\" on a run",
	"overlap_policy": "it is now \"overlap\"",
	"catchup_window": "it is now \"catch_up_window\", a Go duration such as \"1h\"",
	"catchup_policy": "it is now \"catch_up\"",
	"parent_run_id":  "it is now \"parent_id\"",
}

// read decodes r's body into spec's members. An empty body is allowed
// unless spec.required. It returns the read-only fields that were sent
// (and ignored), by name, with their raw values.
func (spec *bodySpec) read(r *http.Request) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(r.Body)
	var obj map[string]json.RawMessage
	err := dec.Decode(&obj)
	if errors.Is(err, io.EOF) {
		if spec.required {
			return nil, badRequest("request body is empty; send %s as a JSON object", spec.what)
		}
		return nil, nil
	}
	if err != nil {
		if tooLarge := tooLargeError(err); tooLarge != nil {
			return nil, tooLarge
		}
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			return nil, badRequest("request body is a JSON %s; send %s as a JSON object", typeErr.Value, spec.what)
		}
		return nil, badRequest("request body is not valid JSON: %v", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return nil, badRequest("request body has more than one JSON value; send one JSON object")
	}
	if obj == nil {
		return nil, badRequest("request body is null; send %s as a JSON object", spec.what)
	}

	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names) // the first error is the same on every request
	var ignored map[string]json.RawMessage
	for _, name := range names {
		raw := bytes.TrimSpace(obj[name])
		key := name
		if to, ok := spec.renamed[name]; ok {
			if _, both := obj[to]; both {
				return nil, badField(to, "sent both as %q and under its former name %q; send %q only", to, name, to)
			}
			key = to
		}
		i := slices.IndexFunc(spec.members, func(m member) bool { return m.name == key })
		if i < 0 {
			if slices.Contains(spec.readOnly, name) {
				if spec.ignoreReadOnly {
					if ignored == nil {
						ignored = map[string]json.RawMessage{}
					}
					ignored[name] = raw
					continue
				}
				return nil, badField(name, "is read-only; remove it from %s (a create takes %s)", spec.what, spec.names())
			}
			if hint, ok := formerNames[name]; ok {
				return nil, badField(name, "unknown field: %s", hint)
			}
			return nil, badField(name, "unknown field in %s; the fields are %s", spec.what, spec.names())
		}
		m := spec.members[i]
		if string(raw) == "null" && !m.nullable {
			return nil, badField(key, "cannot be null; send %s, or leave the field out", m.dst.want())
		}
		if err := m.dst.decode(raw); err != nil {
			var ve *wire.ValueError
			var me *memberError
			if errors.As(err, &me) {
				name := key + "." + me.member
				if strings.HasPrefix(me.member, "[") { // an item of an array
					name = key + me.member
				}
				return nil, badField(name, "%s", me.msg)
			}
			if errors.As(err, &ve) {
				return nil, badField(key, "%s", ve.Msg)
			}
			return nil, badField(key, "%s is not %s", clip(raw), m.dst.want())
		}
	}
	return ignored, nil
}

// memberError is what a field that is an object (a start's "debounce")
// says about its member: the API names the field field.member.
type memberError struct{ member, msg string }

func (e *memberError) Error() string { return e.member + ": " + e.msg }

// names lists the members' names for an error.
func (spec *bodySpec) names() string {
	names := make([]string, len(spec.members))
	for i, m := range spec.members {
		names[i] = m.name
	}
	return strings.Join(names, ", ")
}

// clip is raw for an error message, shortened past 60 bytes.
func clip(raw json.RawMessage) string {
	if len(raw) > 60 {
		return string(raw[:57]) + "…"
	}
	return string(raw)
}

// tooLargeError is the 413 of a body larger than maxBodyBytes, or nil.
func tooLargeError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return &apiError{status: http.StatusRequestEntityTooLarge, msg: fmt.Sprintf("request body is larger than %d bytes; send a smaller input or payload", tooLarge.Limit)}
	}
	return nil
}

// readObject reads raw, a field's value that is a JSON object (want says
// what it takes; what names it in errors, fields lists its members), into
// members as a body's fields are read: an unknown or null member, or a
// value of the wrong kind, is a *memberError naming it. done is called
// once every member is read.
func readObject(raw []byte, want, what, fields string, members []member, done func()) error {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return &wire.ValueError{Msg: fmt.Sprintf("%s is not %s", clip(raw), want)}
	}
	names := make([]string, 0, len(obj))
	for name := range obj {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		raw := bytes.TrimSpace(obj[name])
		i := slices.IndexFunc(members, func(m member) bool { return m.name == name })
		if i < 0 {
			return &memberError{name, fmt.Sprintf("unknown field in %s; the fields are %s", what, fields)}
		}
		m := members[i]
		if string(raw) == "null" {
			return &memberError{name, fmt.Sprintf("cannot be null; send %s, or leave the field out", m.dst.want())}
		}
		if err := m.dst.decode(raw); err != nil {
			var ve *wire.ValueError
			if errors.As(err, &ve) {
				return &memberError{name, ve.Msg}
			}
			return &memberError{name, fmt.Sprintf("%s is not %s", clip(raw), m.dst.want())}
		}
	}
	done()
	return nil
}
