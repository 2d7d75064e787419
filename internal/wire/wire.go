// Package wire is Tributary's JSON: the shapes of runs, schedules, grants,
// calendars, tenants and the answers about them, as riverui's API answers
// them and the CLI's --json prints them. Each shape is defined here once;
// riverui/openapi.json describes them.
//
// The shapes are the Go API's types (workflow.Run, schedule.Schedule, …)
// with the Go field names in snake case, durations as Go duration strings
// ("1h30m0s"), times in RFC 3339 (UTC), and every field always present:
// null for an absent time, id or output, never a missing key. The json tags
// of the Go types themselves are not this format (workflow.Run says
// "workflow_type" where the wire says "type", schedule.Schedule writes a
// catch-up window in nanoseconds): they stay as they are for the programs
// that marshal those types themselves, and Tributary prints only these.
package wire

import (
	"encoding/json"
	"fmt"
	"time"
)

// Duration is a time.Duration written and read as a Go duration string
// ("1h30m0s"; reads anything time.ParseDuration reads, such as "90m", and
// refuses a negative one).
type Duration time.Duration

// MarshalJSON writes d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a Go duration string; an error about the value is a
// *ValueError.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err // read answers: … is not a Go duration
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return &ValueError{Msg: fmt.Sprintf("%q is not a Go duration such as \"90s\", \"15m\" or \"1h30m\"", s)}
	}
	if v < 0 {
		return &ValueError{Msg: fmt.Sprintf("%q is negative; use 0s or more", s)}
	}
	*d = Duration(v)
	return nil
}

// ValueError is a field's own error about its value, such as a duration
// that does not parse: its message is what to tell the sender as it is.
type ValueError struct{ Msg string }

func (e *ValueError) Error() string { return e.Msg }

// JSONOrNull is b, or the JSON null for none.
func JSONOrNull(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("null")
	}
	return b
}

// utcPtr is *t in UTC, or nil.
func utcPtr(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}
