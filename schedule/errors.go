package schedule

import (
	"errors"
	"fmt"
)

var (
	// ErrInvalid is matched by every error that rejects a schedule's cron
	// expression or time zone: *CronError, *ZoneError and
	// *NoOccurrenceError.
	ErrInvalid = errors.New("schedule: invalid schedule")

	// ErrNoOccurrence is matched by *NoOccurrenceError: a cron expression
	// that is well formed but names no date that exists, such as 30 February.
	ErrNoOccurrence = errors.New("schedule: cron expression never fires")
)

// defaultCronHint is what a *CronError tells the user to do unless the
// problem calls for something more specific.
const defaultCronHint = `use 5 fields like "0 9 * * 1-5" or a descriptor like @daily`

// CronError reports a cron expression that can't be parsed.
type CronError struct {
	// Expr is the expression as given.
	Expr string

	// Reason says what is wrong with it, such as robfig/cron's "expected 5
	// to 6 fields, found 4: [0 9 * *]".
	Reason string

	// Field and Term name a malformed calendar term and its field, such as
	// "day-of-week" and "MON#6"; empty for other errors.
	Field, Term string

	// hint says what to do; defaultCronHint when empty.
	hint string
}

func (e *CronError) Error() string {
	hint := e.hint
	if hint == "" {
		hint = defaultCronHint
	}
	return fmt.Sprintf("schedule: bad cron expression %q: %s; %s", e.Expr, e.Reason, hint)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *CronError) Is(target error) bool { return target == ErrInvalid }

// ZoneError reports a time zone that is not an IANA time zone name known to
// this machine's time zone database, or one that is not allowed ("Local").
type ZoneError struct {
	// Zone is the zone as given.
	Zone string

	// Reason says what is wrong with it. Empty means the zone is unknown.
	Reason string
}

func (e *ZoneError) Error() string {
	reason := e.Reason
	if reason == "" {
		reason = "unknown time zone"
	}
	return fmt.Sprintf(`schedule: bad time zone %q: %s; use an IANA name like "Europe/Paris" or "America/New_York", or "" for UTC`, e.Zone, reason)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ZoneError) Is(target error) bool { return target == ErrInvalid }

// NoOccurrenceError reports a cron expression whose day-of-month, month and
// day-of-week fields match no date at all, such as "0 0 30 2 *": a schedule
// of it would never fire. ParseSpec looks 9 years ahead, which always
// includes a 29 February, and for an expression with calendar terms 400
// years, the calendar's whole cycle of leap years and weekdays.
type NoOccurrenceError struct {
	// Expr is the expression as given.
	Expr string
}

func (e *NoOccurrenceError) Error() string {
	return fmt.Sprintf("schedule: cron expression %q never fires: no date matches its day-of-month, month and day-of-week fields; "+
		"fix the day of month (February has 28 or 29 days; April, June, September and November have 30) or the month", e.Expr)
}

// Is makes errors.Is(err, ErrNoOccurrence) and errors.Is(err, ErrInvalid)
// true.
func (e *NoOccurrenceError) Is(target error) bool {
	return target == ErrNoOccurrence || target == ErrInvalid
}
