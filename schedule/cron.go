package schedule

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// nominalLayout is the layout of Occurrence.Nominal.
const nominalLayout = "2006-01-02T15:04:05"

// parser parses the standard 5 fields, an optional leading seconds field and
// descriptors.
var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Spec is a parsed cron expression in a time zone: when a schedule fires.
// It is immutable and safe for concurrent use. ParseSpec makes one.
type Spec struct {
	expr   string
	fields fields
	fixed  bool
	every  time.Duration // for @every; zero for a cron expression
	loc    *time.Location
	dst    DSTPolicy // for a fixed-time spec; complete (no zero field)

	// excluded are the dates the spec does not fire on (WithExclusions);
	// nil for none.
	excluded *exclusions

	// rule is what the spec matches wall times with: its cron fields, or
	// its RRULE (ParseRRule); nil for @every.
	rule rule
	// rrule is the spec's RRULE; nil for a cron expression.
	rrule *rrule
}

// rule matches wall times (see fields): a cron expression's fields or an
// RRULE.
type rule interface {
	// next returns the first wall time after after that matches, unless
	// it is later than limit.
	next(after, limit time.Time) (time.Time, bool)
	// matches reports whether the wall time w matches.
	matches(w time.Time) bool
}

// ParseSpec parses a cron expression for a time zone.
//
// expr is 5 fields (minute, hour, day of month, month, day of week), or 6
// with a leading seconds field, or a descriptor: @yearly (or @annually),
// @monthly, @weekly, @daily (or @midnight), @hourly, or @every followed by a
// Go duration of whole seconds, at least 1s, such as "@every 1h30m". Fields
// take numbers, ranges (1-5), lists (1,15), steps (*/15, 10-50/20), * and ?,
// and English names of months and days (JAN, mon-fri). Day of week runs from
// 0 (Sunday) to 7 (Sunday again). Whitespace around and between fields is
// ignored. A time zone prefix (CRON_TZ= or TZ=) is rejected: the zone is
// its own argument.
//
// The day fields also take calendar terms, alone or in comma lists beside
// plain values but not in ranges or steps:
//
//   - day of month: L, the last day ("0 0 L * *"); L-n, n days before it
//     ("0 0 L-2 * *", two days before the last); nW, the Monday-to-Friday
//     day nearest day n in the same month ("0 9 15W * *"); LW, the last
//     Monday-to-Friday day ("0 18 LW * *", the last business day);
//   - day of week: nL or FRIL, the last such weekday of the month
//     ("0 9 * * 5L", the last Friday); n#k or MON#2, its k-th, k from 1 to 5
//     ("0 9 * * MON#2", the second Monday).
//
// A term names no day in a month without it (L-30 in February, 31W in
// April, FRI#5 in most months), and the day fields combine as for plain
// values: with both restricted, a day matching either fires. See dayTerms
// for the exact rules of nW.
//
// zone is an IANA time zone name such as "Europe/Paris"; "" is UTC, never
// the server's zone, and "Local" is rejected, so that a schedule fires at
// the same instants on every machine.
//
// The error is a *CronError, a *ZoneError, or a *NoOccurrenceError when the
// expression names no date that exists (30 February); all of them match
// ErrInvalid.
func ParseSpec(expr string, zone string) (*Spec, error) {
	normalized := strings.Join(strings.Fields(expr), " ")
	if normalized == "" {
		return nil, &CronError{Expr: expr, Reason: "the expression is empty"}
	}
	if upper := strings.ToUpper(normalized); strings.HasPrefix(upper, "CRON_TZ=") || strings.HasPrefix(upper, "TZ=") {
		prefix, rest, _ := strings.Cut(normalized, " ")
		_, prefixZone, _ := strings.Cut(prefix, "=")
		hint := fmt.Sprintf("remove it and set the schedule's time zone to %q instead", prefixZone)
		if rest != "" {
			hint = fmt.Sprintf("write %q and set the schedule's time zone to %q instead", rest, prefixZone)
		}
		return nil, &CronError{
			Expr:   expr,
			Reason: fmt.Sprintf("a time zone prefix (%s) is not allowed in the expression", prefix),
			hint:   hint,
		}
	}

	plain, terms, clear := normalized, (*dayTerms)(nil), fields{}
	if !strings.HasPrefix(normalized, "@") {
		var err error
		if plain, terms, clear, err = takeTerms(normalized); err != nil {
			terr := err.(*termError)
			return nil, &CronError{Expr: expr, Field: terr.field, Term: terr.term, Reason: err.Error(), hint: termsHint}
		}
	}
	schedule, err := parse(plain)
	if err != nil {
		if ferr := fieldError(expr, plain); ferr != nil {
			return nil, ferr
		}
		return nil, &CronError{Expr: expr, Reason: err.Error()}
	}

	loc, err := LoadZone(zone)
	if err != nil {
		return nil, err
	}

	spec := &Spec{expr: normalized, loc: loc, dst: DSTPolicy{Gap: DSTGapJump, Fold: DSTFoldFirst}}
	switch schedule := schedule.(type) {
	case cron.ConstantDelaySchedule:
		// robfig/cron rounds @every up to 1s and drops fractions of a
		// second without a word; say so instead.
		every, _ := time.ParseDuration(strings.TrimPrefix(normalized, "@every "))
		switch {
		case every < time.Second:
			return nil, &CronError{Expr: expr, Reason: fmt.Sprintf("@every needs a duration of at least 1s, not %s", every), hint: everyHint}
		case every%time.Second != 0:
			return nil, &CronError{Expr: expr, Reason: fmt.Sprintf("@every takes whole seconds, not %s", every), hint: everyHint}
		}
		spec.every = every

	case *cron.SpecSchedule:
		spec.fields = fieldsOf(schedule)
		spec.fields.dom &^= clear.dom
		spec.fields.dow &^= clear.dow
		spec.fields.terms = terms
		spec.rule = &spec.fields
		if name := spec.fields.empty(); name != "" {
			return nil, &CronError{Expr: expr, Reason: "the " + name + " field has no values"}
		}
		spec.fixed = isFixedTime(normalized)

		// Whether a date matches does not depend on the zone. Plain fields
		// depend on the year only through leap years, so any 8 years will
		// do; calendar terms depend on the weekdays too, which repeat
		// every 400 years, so a spec that matches no date in 400 years
		// never does.
		from := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
		if _, ok := spec.fields.next(from.Add(-time.Second), from.AddDate(spec.horizon(), 0, 0)); !ok {
			if _, ok := spec.fields.next(from.Add(-time.Second), from.AddDate(400, 0, 0)); terms == nil || !ok {
				return nil, &NoOccurrenceError{Expr: expr}
			}
		}

	default:
		return nil, &CronError{Expr: expr, Reason: fmt.Sprintf("unsupported schedule type %T", schedule)}
	}
	return spec, nil
}

const everyHint = `use a Go duration of whole seconds, like "@every 1h30m" or "@every 90s"`

const termsHint = `write calendar terms alone or in comma lists, like "0 18 LW * *" (the last weekday of the month), "0 9 * * MON#2" or "0 9 1,15,L * *"`

// horizon is how many years Next looks ahead for an occurrence.
// Consecutive occurrences of a plain cron expression are less than 8 years
// apart (29 February 2096 and 2104 are the furthest); calendar terms can
// be further apart (a fifth Friday in February comes in a leap year whose
// February begins on a Friday: 2036, 2064, 2092, 2132), but never 100
// years, which TestTermsHorizon checks over the 400-year cycle.
func (s *Spec) horizon() int {
	if s.rrule != nil {
		return rruleHorizon
	}
	if s.fields.terms != nil {
		return termHorizon
	}
	return plainHorizon
}

const (
	plainHorizon = 9
	termHorizon  = 100
	// rruleHorizon bounds an RRULE's search: a rule that fires at all
	// fires within one cycle of its own (400 years times its INTERVAL,
	// which ParseRRule checks), and one whose COUNT or UNTIL has passed
	// ends at once.
	rruleHorizon = 400
)

// parse parses a normalized expression with robfig/cron, turning a panic of
// the parser into an error.
// cronFields names the fields of a 5-field expression, and says what
// each takes (the hint of a field's error).
var cronFields = []struct{ name, takes string }{
	{"minute", "minutes go from 0 to 59"},
	{"hour", "hours go from 0 to 23"},
	{"day-of-month", "days of the month go from 1 to 31, or L, L-n, nW, LW"},
	{"month", "months go from 1 to 12, or JAN to DEC"},
	{"day-of-week", "days of the week go from 0 to 7 (0 and 7 are Sunday), or SUN to SAT, nL, n#k"},
}

// fieldError finds the first field of a 5- or 6-field expression that
// does not parse on its own (plain: the expression with its calendar terms
// taken out), and returns an error that names it and says what it takes;
// nil when the expression has another number of fields, or no field fails
// alone.
func fieldError(expr, plain string) *CronError {
	given := strings.Fields(plain)
	names := cronFields
	if len(given) == 6 {
		names = append([]struct{ name, takes string }{{"second", "seconds go from 0 to 59 (a 6-field expression begins with seconds)"}}, cronFields...)
	}
	if len(given) != len(names) || strings.HasPrefix(plain, "@") {
		return nil
	}
	for i, field := range given {
		alone := slices.Repeat([]string{"*"}, len(given))
		alone[i] = field
		_, err := parse(strings.Join(alone, " "))
		if err == nil {
			continue
		}
		// robfig/cron ends its messages with the field again.
		reason := strings.TrimSuffix(err.Error(), ": "+field)
		return &CronError{
			Expr: expr, Field: names[i].name,
			Reason: fmt.Sprintf("the %s field %q is not valid: %s", names[i].name, field, reason),
			hint:   names[i].takes + ", with lists (1,15), ranges (1-5), steps (*/15) and *",
		}
	}
	return nil
}

func parse(expr string) (schedule cron.Schedule, err error) {
	defer func() {
		if recovered := recover(); recovered != nil {
			schedule, err = nil, fmt.Errorf("%v", recovered)
		}
	}()
	return parser.Parse(expr)
}

// isFixedTime reports whether a valid normalized cron expression is
// fixed-time: not a descriptor that repeats within a day (@hourly, @every),
// and with neither a wildcard (* or ?) nor a step (/) in its minute and hour
// fields. See the package documentation.
func isFixedTime(expr string) bool {
	switch {
	case expr == "@hourly" || strings.HasPrefix(expr, "@every "):
		return false
	case strings.HasPrefix(expr, "@"):
		return true
	}
	fields := strings.Fields(expr)
	if len(fields) == 6 {
		fields = fields[1:] // seconds
	}
	return !strings.ContainsAny(fields[0]+fields[1], "*?/")
}

// nominal formats a wall time as Occurrence.Nominal: nominalLayout, as
// Format writes it, four times faster (it is on the path of every slot).
func nominal(w time.Time) string {
	year, month, day := w.Date()
	hour, minute, second := w.Clock()
	if year < 0 || year > 9999 {
		return w.Format(nominalLayout)
	}
	var b [19]byte
	put := func(at, v, n int) {
		for i := at + n - 1; i >= at; i-- {
			b[i] = byte('0' + v%10)
			v /= 10
		}
	}
	put(0, year, 4)
	b[4] = '-'
	put(5, int(month), 2)
	b[7] = '-'
	put(8, day, 2)
	b[10] = 'T'
	put(11, hour, 2)
	b[13] = ':'
	put(14, minute, 2)
	b[16] = ':'
	put(17, second, 2)
	return string(b[:])
}

// Expr returns the cron expression, with runs of whitespace made single
// spaces.
func (s *Spec) Expr() string { return s.expr }

// Zone returns the time zone's IANA name; "UTC" when the zone given to
// ParseSpec was "".
func (s *Spec) Zone() string { return s.loc.String() }

// Location returns the time zone.
func (s *Spec) Location() *time.Location { return s.loc }

// FixedTime reports whether the spec is fixed-time, and so follows the
// wall clock through daylight saving time changes: once a day at each of its
// times, even on the day a time does not exist or occurs twice. A spec
// that is not fixed-time follows real elapsed time. See the package
// documentation.
func (s *Spec) FixedTime() bool { return s.fixed }

// Interval returns the duration of an @every spec, and 0 for a cron
// expression.
func (s *Spec) Interval() time.Duration { return s.every }

// Occurrence is one time a spec fires.
type Occurrence struct {
	// At is the instant to run, in the spec's zone, a whole second.
	At time.Time

	// Nominal is the local wall time the spec names for this occurrence,
	// such as "2026-03-08T02:30:00", without a UTC offset. It is At's wall
	// time, except for a shifted occurrence.
	Nominal string

	// Shifted is set when Nominal does not exist: the clocks jumped over
	// it (spring forward), and a fixed-time spec runs at another instant
	// instead, as its DST policy says (see the package documentation): the
	// first instant after the gap (jump), or Nominal moved on by the gap's
	// length (shift). Note says so.
	Shifted bool

	// Skipped is set when the slot does not run, and a schedule records
	// it as skipped in its ledger: Nominal does not exist and the spec's
	// DST policy is skip (At is then the instant the clocks jumped), or
	// Nominal's date is excluded and the spec skips excluded dates
	// (Excluded). Note says why.
	Skipped bool

	// Excluded names the excluded date of Nominal and its calendar, such
	// as "2026-12-25 (us-holidays)", when it is one (WithExclusions): the
	// slot is Skipped, or moved to At on the next business day. Empty
	// otherwise.
	Excluded string

	// Note explains in one sentence what daylight saving time did to this
	// occurrence, for a run ledger: "02:30 does not exist on 2026-03-08 in
	// America/New_York (clocks jump from 02:00 to 03:00); runs at 03:00,
	// right after the jump". Notes are written for shifted occurrences, for
	// wall times that occur twice (which of them this is), and for the
	// first occurrence after times a non-fixed-time spec skipped because
	// they did not exist. Empty when daylight saving time played no part.
	Note string
}

// Next returns the first occurrence strictly after after, however far
// ahead: years past 2100 too, and a rare rule's next occurrence years away
// ("0 0 29 2 *" after 2097 is in 2104) is found without walking the years
// between second by second. It returns false only when there is none
// within 9 years (100 for an expression with calendar terms), which
// ParseSpec rules out except in exotic zones where every matching time
// falls in a gap.
//
// Occurrences are whole seconds, so Next(o.At) of an occurrence o is the
// occurrence after o, and successive calls never return the same instant
// twice. An @every spec fires its interval after after, with after's
// fraction of a second dropped: the schedule anchors it to its start by
// passing the previous occurrence.
func (s *Spec) Next(after time.Time) (Occurrence, bool) {
	after = time.Unix(after.Unix(), 0) // the whole second at or before after
	if s.rrule != nil && wallOf(after.In(s.loc)).Unix() > s.rrule.end+int64(maxOffset/time.Second) {
		return Occurrence{}, false // COUNT or UNTIL has passed
	}
	if s.excluded != nil {
		return s.nextExcluding(after)
	}
	return s.nextIncluding(after)
}

// nextIncluding is Next without the spec's excluded dates.
func (s *Spec) nextIncluding(after time.Time) (Occurrence, bool) {
	switch {
	case s.every != 0:
		at := after.Add(s.every).In(s.loc)
		return Occurrence{At: at, Nominal: nominal(wallOf(at))}, true
	case s.fixed:
		return s.nextFixedTime(after)
	default:
		return s.nextElapsed(after)
	}
}

// NextN returns the first n occurrences after after, in order: fewer only
// when Next runs out.
func (s *Spec) NextN(after time.Time, n int) []Occurrence {
	occurrences := make([]Occurrence, 0, max(n, 0))
	for range n {
		occurrence, ok := s.Next(after)
		if !ok {
			break
		}
		occurrences = append(occurrences, occurrence)
		after = occurrence.At
	}
	return occurrences
}
