package riverui

import (
	"errors"
	"strconv"
	"strings"

	"github.com/tributary-go/tributary/schedule"
)

// A schedule's rule is a cron expression or an RFC 5545 recurrence rule
// (schedule.Params.Cron or RRule), never both. The API has a field for
// each, "cron" and "rrule", one of them "" (as the Go API's Schedule has);
// the forms offer a choice between the two. What the two share is here:
// the errors and the key conflicts that are about the rule, named after
// the field the rule is in.

// rruleExample is the RRULE the forms and errors show as an example.
const rruleExample = "DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=TU"

// errNoRule is the 400 of a create that sends neither rule.
var errNoRule = badField("cron", "a schedule needs cron or rrule and has neither; send cron, a cron expression such as \"0 9 * * 1-5\", or rrule, an RFC 5545 recurrence rule such as %q", rruleExample)

// bothRules is the 400 of a body that sends both rules.
func bothRules(cron string) error {
	return badField("rrule", "sent with cron %q; a schedule has one rule: send cron (a cron expression) or rrule (an RFC 5545 recurrence rule), and leave the other out or \"\"", cron)
}

// rruleError is err from a create or update whose rule is an RRULE, about
// the rule in the words of its field. The schedule package names the rule
// Cron when it has no slot between now (or the start) and the end; of an
// RRULE schedule, that is its RRule.
func rruleError(err error) error {
	var invalid *schedule.ValidationError
	if errors.As(err, &invalid) && invalid.Field == "Cron" && strings.Contains(invalid.Problem, "no occurrence") {
		return &schedule.ValidationError{Field: "RRule", Problem: "has no occurrence between now (or the start) and the end; widen the range, or change the rule's DTSTART, COUNT or UNTIL"}
	}
	return err
}

// ruleDiffs is diffs with a difference of the rule ("Cron", or "RRule"
// when either side is an RRULE: one column holds both) told apart as the
// API and the forms tell it: a Cron diff
// between two cron expressions, an RRule diff between two RRULEs, and
// both when a cron expression and an RRULE differ, each "" in the
// schedule that has the other.
func ruleDiffs(diffs []schedule.FieldDiff) []schedule.FieldDiff {
	out := make([]schedule.FieldDiff, 0, len(diffs))
	for _, d := range diffs {
		if d.Field != "Cron" && d.Field != "RRule" { // either names the one column of the rule
			out = append(out, d)
			continue
		}
		storedCron, storedRRule := splitRule(d.Stored)
		givenCron, givenRRule := splitRule(d.Given)
		if storedCron != givenCron {
			out = append(out, schedule.FieldDiff{Field: "Cron", Stored: strconv.Quote(storedCron), Given: strconv.Quote(givenCron)})
		}
		if storedRRule != givenRRule {
			out = append(out, schedule.FieldDiff{Field: "RRule", Stored: strconv.Quote(storedRRule), Given: strconv.Quote(givenRRule)})
		}
	}
	return out
}

// splitRule reads a rule as a FieldDiff quotes it into the cron
// expression and the RRULE it is, one of them "".
func splitRule(quoted string) (cron, rrule string) {
	rule, err := strconv.Unquote(quoted)
	if err != nil {
		rule = quoted
	}
	if strings.HasPrefix(rule, "DTSTART:") {
		return "", rule
	}
	return rule, ""
}

// rule is the form's rule, the chosen field's: a cron expression or an
// RRULE, the other "". An RRULE may be on one line, its RRULE joined to
// its DTSTART by ";RRULE:" as the CLI takes it. A form posted without the
// choice takes the field filled in. An empty rule is an error beside its
// field.
func (f *scheduleFields) rule() (cron, rrule string, err error) {
	switch {
	case f.Rule == "cron" || f.Rule == "" && f.RRule == "":
		if f.Cron == "" {
			return "", "", inField("cron", badRequest("the cron expression is empty; write one such as \"0 9 * * 1-5\", or choose an RRULE"))
		}
		return f.Cron, "", nil
	case f.Rule == "rrule" || f.Rule == "" && f.Cron == "":
		if f.RRule == "" {
			return "", "", inField("rrule", badRequest("the RRULE is empty; write a DTSTART line and an RRULE line, such as %q, or choose a cron expression", rruleExample))
		}
		return "", strings.Replace(f.RRule, ";RRULE:", "\nRRULE:", 1), nil
	case f.Rule == "":
		return "", "", inField("rrule", badRequest("both a cron expression and an RRULE are filled in; a schedule has one rule: empty one of the two"))
	}
	return "", "", inField("rule", badRequest("the rule %q is neither cron nor rrule; choose a cron expression or an RRULE", f.Rule))
}
