package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/internal/engine"
)

// MaxKeyBytes bounds Params.Key.
const MaxKeyBytes = 200

// ErrKeyConflict matches a *KeyConflictError.
var ErrKeyConflict = errors.New("schedule: the key names a schedule with another spec")

// Ref names the one schedule a call acts on: ByID(id), or ByKey(owner, key)
// for a schedule created with a Key. Give one or the other: a Ref with
// both an ID and a Key, or with neither, is refused with a
// *ValidationError.
type Ref struct {
	// ID is the schedule's id.
	ID uuid.UUID
	// Owner and Key name the schedule by its key within its owner; Owner
	// "" is an owner like any other (a service's own schedules).
	Owner string
	Key   string
}

// ByID names the schedule with id.
func ByID(id uuid.UUID) Ref { return Ref{ID: id} }

// ByKey names owner's schedule with key (Params.Key).
func ByKey(owner, key string) Ref { return Ref{Owner: owner, Key: key} }

// String is the id, or `key "k" of owner "o"`, for messages.
func (r Ref) String() string {
	if r.Key == "" {
		return r.ID.String()
	}
	if r.Owner == "" {
		return fmt.Sprintf("key %q", r.Key)
	}
	return fmt.Sprintf("key %q of owner %q", r.Key, r.Owner)
}

// check refuses a Ref that names no schedule, or names it twice.
func (r Ref) check() error {
	switch {
	case r.Key == "" && r.ID == uuid.Nil:
		return &ValidationError{Field: "Ref", Problem: "names no schedule; use ByID(id) or ByKey(owner, key)"}
	case r.Key != "" && r.ID != uuid.Nil:
		return &ValidationError{Field: "Ref", Problem: "has both an ID and a Key; name the schedule by one of them"}
	case r.ID != uuid.Nil && r.Owner != "":
		return &ValidationError{Field: "Ref", Problem: "has an ID and an Owner; an id names the schedule alone, give Owner only with Key"}
	}
	if r.Key != "" {
		return checkKey("Ref.Key", r.Key)
	}
	return nil
}

// id resolves ref to the schedule's id: at once for ByID, with one indexed
// read on db for ByKey. ErrNotFound when the owner has no such key.
func (c *Client) id(ctx context.Context, db engine.DBTX, ref Ref) (uuid.UUID, error) {
	if err := ref.check(); err != nil {
		return uuid.Nil, err
	}
	if ref.Key == "" {
		return ref.ID, nil
	}
	id, err := c.q.ScheduleIDByKey(ctx, db, ref.Owner, ref.Key)
	if errors.Is(err, engine.ErrNotFound) {
		return uuid.Nil, notFoundByKey(ref)
	}
	return id, err
}

// notFoundByKey is ErrNotFound for a Ref by key, saying which.
func notFoundByKey(ref Ref) error {
	return fmt.Errorf("%w: no schedule has %s", ErrNotFound, ref)
}

// checkKey refuses, as a *ValidationError of field, a key that is
// whitespace, too long, not printable UTF-8, holds a space or "/", or
// looks like a schedule id. "" is no key and passes.
func checkKey(field, key string) error {
	switch {
	case key == "":
		return nil
	case len(key) > MaxKeyBytes:
		return &ValidationError{Field: field, Problem: fmt.Sprintf("is %d bytes, the limit is %d", len(key), MaxKeyBytes)}
	case !utf8.ValidString(key):
		return &ValidationError{Field: field, Problem: "is not valid UTF-8"}
	}
	if i := strings.IndexFunc(key, func(r rune) bool { return r == '/' || unicode.IsSpace(r) || !unicode.IsPrint(r) }); i >= 0 {
		r, _ := utf8.DecodeRuneInString(key[i:])
		return &ValidationError{Field: field, Problem: fmt.Sprintf("%q holds %q; use letters, digits and punctuation other than / (such as nightly-report or digest:user-42)", key, r)}
	}
	if _, err := uuid.Parse(key); err == nil {
		return &ValidationError{Field: field, Problem: fmt.Sprintf("%q looks like a schedule id; the CLI, the API and the dashboard take an id or a key in one place, so give the key a prefix (user-%s)", key, key)}
	}
	return nil
}

// FieldDiff is one field in which a schedule as stored differs from the
// one given (Create's, Declare's): Stored and Given are the two values,
// formatted as Go would quote them ("0 8 * * *", 1m0s, {"to":"ops"}).
type FieldDiff struct {
	// Field is the Params field, such as "Cron" or "TimeZone".
	Field  string `json:"field"`
	Stored string `json:"stored"`
	Given  string `json:"given"`
}

// String is `Cron "0 8 * * *" → "0 9 * * *"`.
func (d FieldDiff) String() string { return fmt.Sprintf("%s %s → %s", d.Field, d.Stored, d.Given) }

// KeyConflictError is returned by Create (and CreateMany, as an
// *ItemError) when the owner has a schedule with the key already and its
// spec differs from the one given. Nothing was written. It matches
// ErrKeyConflict.
type KeyConflictError struct {
	// Owner and Key are the key given.
	Owner string
	Key   string
	// ID is the schedule that has the key.
	ID uuid.UUID
	// DeclaredBy is its declaring service; "" when it was made by Create.
	DeclaredBy string
	// Diffs are the fields that differ, in Params order.
	Diffs []FieldDiff
}

func (e *KeyConflictError) Error() string {
	diffs := make([]string, len(e.Diffs))
	for i, d := range e.Diffs {
		diffs[i] = d.String()
	}
	return fmt.Sprintf("schedule: %s is schedule %s, whose spec differs (stored → given): %s; to change that schedule, call Update with ByKey(%q, %q) (tributary schedule update %s …), or give this one another key",
		ByKey(e.Owner, e.Key), e.ID, strings.Join(diffs, "; "), e.Owner, e.Key, keyArgs(e.Owner, e.Key))
}

// Is makes errors.Is(err, ErrKeyConflict) true.
func (e *KeyConflictError) Is(target error) bool { return target == ErrKeyConflict }

// specDiff lists the fields in which stored differs from given, the row
// Create would insert: every field of Params that is stored, but Paused
// and PauseNote (a pause is an operator's, not a spec) and Owner and Key
// (equal by construction).
func specDiff(stored *engine.Schedule, given *engine.InsertScheduleParams) []FieldDiff {
	var out []FieldDiff
	add := func(field string, a, b any) {
		if !reflect.DeepEqual(a, b) {
			out = append(out, FieldDiff{Field: field, Stored: diffValue(a), Given: diffValue(b)})
		}
	}
	add("Name", stored.Name, given.Name)
	add("Description", stored.Description, given.Description)
	add("Workflow", stored.Type, given.Type)
	if !sameJSON(stored.Input, given.Input) {
		out = append(out, FieldDiff{Field: "Input", Stored: string(compactJSON(stored.Input)), Given: string(compactJSON(given.Input))})
	}
	rule := "Cron"
	if strings.HasPrefix(stored.Cron, rrulePrefix) || strings.HasPrefix(given.Cron, rrulePrefix) {
		rule = "RRule" // one column holds either
	}
	add(rule, stored.Cron, given.Cron)
	add("TimeZone", stored.TimeZone, given.TimeZone)
	add("StartAt", microTime(stored.StartAt), microTime(given.StartAt))
	add("EndAt", microTime(stored.EndAt), microTime(given.EndAt))
	add("Overlap", OverlapPolicy(stored.OverlapPolicy), OverlapPolicy(given.OverlapPolicy))
	add("CatchUpWindow", ms(stored.CatchUpWindowMS), ms(given.CatchUpWindowMS))
	add("CatchUp", CatchUpPolicy(stored.CatchUpPolicy), CatchUpPolicy(given.CatchUpPolicy))
	add("DSTGap", DSTGap(stored.DSTGap), DSTGap(given.DSTGap))
	add("DSTFold", DSTFold(stored.DSTFold), DSTFold(given.DSTFold))
	add("Calendars", plain(strings.Join(stored.Calendars, ",")), plain(strings.Join(given.Calendars, ",")))
	add("OnExcluded", OnExcluded(stored.OnExcluded), OnExcluded(given.OnExcluded))
	add("MaxAttempts", stored.MaxAttempts, given.MaxAttempts)
	add("Priority", stored.Priority, given.Priority)
	add("Queue", stored.Queue, given.Queue)
	add("Timeout", ms(stored.TimeoutMS), ms(given.TimeoutMS))
	add("GrantID", grantString(stored.GrantID), grantString(given.GrantID))
	add("KeepRuns", stored.KeepRuns, given.KeepRuns)
	add("Tenant", stored.RunTenant, given.RunTenant)
	if a, b := retryOf(stored.Retry), retryOf(given.Retry); !reflect.DeepEqual(a, b) {
		out = append(out, FieldDiff{Field: "Retry", Stored: diffValue(plain(retryText(a))), Given: diffValue(plain(retryText(b)))})
	}
	return out
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// plain is a value a FieldDiff shows unquoted.
type plain string

func (p plain) String() string { return string(p) }

// microTime is t as Postgres stores it (to the microsecond, in UTC), or
// (none).
func microTime(t *time.Time) plain {
	if t == nil {
		return "(none)"
	}
	return plain(t.UTC().Truncate(time.Microsecond).Format(time.RFC3339Nano))
}

func grantString(id *uuid.UUID) plain {
	if id == nil {
		return "(none)"
	}
	return plain(id.String())
}

// diffValue formats one value of a FieldDiff: strings quoted, the rest as
// they print.
func diffValue(v any) string {
	switch v := v.(type) {
	case string:
		return fmt.Sprintf("%q", v)
	case fmt.Stringer:
		return v.String()
	}
	return fmt.Sprint(v)
}

// sameJSON reports whether a and b encode the same JSON value (jsonb
// reorders keys and drops spaces).
func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(va, vb)
}

// compactJSON is b re-encoded with sorted keys and no spaces.
func compactJSON(b []byte) []byte {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return b
	}
	out, err := json.Marshal(v)
	if err != nil {
		return b
	}
	return out
}
