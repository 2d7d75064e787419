package riverui

import (
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/schedule"
)

// The API's representations of runs, schedules, grants, calendars and
// tenants are internal/wire's, which the CLI's --json prints too: the Go
// API's types with the Go field names in snake case, durations as Go
// duration strings, times in RFC 3339 (UTC), and every field always
// present. What a GET answers, a PATCH (or, without its read-only fields,
// a POST) accepts. openapi.json describes them. This file holds the one
// shape that is the API's own: the answer of a key conflict.

// keyConflictJSON is the 409 answer of POST /api/schedules whose key names
// a schedule with another spec: schedule.KeyConflictError on the wire, with
// an error message as every error has.
type keyConflictJSON struct {
	Error string `json:"error"`
	// ID is the schedule that has the key; Owner and Key are the key.
	ID    uuid.UUID `json:"id"`
	Owner string    `json:"owner"`
	Key   string    `json:"key"`
	// DeclaredBy is the service that declared that schedule, or "".
	DeclaredBy string `json:"declared_by"`
	// Diffs are the fields that differ, named as the API names them, with
	// the stored and the given value as schedule.FieldDiff formats them.
	Diffs []schedule.FieldDiff `json:"diffs"`
}

// keyConflictWire is e on the wire. Its message says how to change the
// schedule that has the key: a PATCH of its URL, which a declared
// schedule's service undoes when it next declares it.
func (h *Handler) keyConflictWire(e *schedule.KeyConflictError) *keyConflictJSON {
	rule := ruleDiffs(e.Diffs)
	out := &keyConflictJSON{ID: e.ID, Owner: e.Owner, Key: e.Key, DeclaredBy: e.DeclaredBy, Diffs: make([]schedule.FieldDiff, len(rule))}
	diffs := make([]string, len(rule))
	for i, d := range rule {
		d.Field = apiName(d.Field)
		out.Diffs[i], diffs[i] = d, d.String()
	}
	ref := schedule.ByKey(e.Owner, e.Key)
	patch := "PATCH " + h.prefix + "/api" + refPath(ref, "")
	what := fmt.Sprintf("key %q of owner %q names schedule %s", e.Key, e.Owner, e.ID)
	todo := "to change that schedule, " + patch + " with the fields to change; or give this one another key"
	if e.DeclaredBy != "" {
		what += ", declared by service " + e.DeclaredBy
		todo = fmt.Sprintf("its spec is service %s's code, so change it there (a %s lasts only until the service declares it again); or give this one another key", e.DeclaredBy, patch)
	}
	out.Error = fmt.Sprintf("%s, whose spec differs (stored → given): %s; nothing was written; %s", what, strings.Join(diffs, "; "), todo)
	return out
}
