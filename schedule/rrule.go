package schedule

import (
	"fmt"
	"maps"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file implements RFC 5545 recurrence rules (RRULE) on wall times.
//
// A rule is expanded period by period, as RFC 5545 section 3.3.10 describes:
// the periods are the years, months, weeks (starting on WKST), days, hours,
// minutes or seconds of FREQ, every INTERVAL-th one counted from the one
// holding DTSTART. Within a period, the candidates are every wall time whose
// date passes all the date parts (BYMONTH, BYWEEKNO, BYYEARDAY, BYMONTHDAY,
// BYDAY) and whose time of day is in BYHOUR × BYMINUTE × BYSECOND.
// Filtering every day of the period by every date part gives the same set as
// the RFC's table of "expand" and "limit" parts, once the parts DTSTART
// supplies by default are filled in (see parseRRule). BYSETPOS then picks
// positions in the period's sorted candidates.
//
// Because the periods are aligned to DTSTART arithmetically, next finds the
// period holding its argument directly instead of walking from DTSTART, so
// its cost does not grow with the rule's age. COUNT is turned into a last
// occurrence once, when the rule is parsed.

// Names in this file that are not about rules in general start with rr, to
// keep clear of the cron code of the package.

// Limits of a rule.
const (
	// maxRRuleCount is the largest COUNT accepted: parseRRule expands that
	// many occurrences to find the last one.
	maxRRuleCount = 100_000

	// maxRRuleInterval is the largest INTERVAL accepted.
	maxRRuleInterval = 1_000_000
)

const rrSecondsPerDay = 24 * 60 * 60

// rrMaxWall is the last wall time a rule expands to, in Unix seconds: the last
// second of year 9999, the last one DTSTART and UNTIL can write.
var rrMaxWall = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()

// rrFreq is a rule's FREQ, finest first.
type rrFreq int

const (
	rrSecondly rrFreq = iota
	rrMinutely
	rrHourly
	rrDaily
	rrWeekly
	rrMonthly
	rrYearly
)

var rrFreqNames = [...]string{"SECONDLY", "MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY"}

// unit is the length of a period of a FREQ finer than DAILY, in seconds.
func (f rrFreq) unit() int64 {
	switch f {
	case rrHourly:
		return 3600
	case rrMinutely:
		return 60
	}
	return 1
}

// rrule is a parsed RFC 5545 recurrence rule with its DTSTART, evaluated on
// wall times: time.Time values in UTC whose clock reads the local time (see
// fields). It knows nothing of time zones. It is immutable and safe for
// concurrent use.
//
// DTSTART anchors the rule: the periods are counted from the one holding
// it, and it supplies the parts the rule leaves out (the time of day when
// BYHOUR, BYMINUTE or BYSECOND are missing, the weekday of a WEEKLY rule
// without BYDAY, the day of the month of a MONTHLY or YEARLY rule, the month
// of a YEARLY one). DTSTART is an occurrence only if it matches the rule, as
// in python-dateutil and rrule-go: RFC 5545 leaves the recurrence set of a
// DTSTART that does not match undefined, and a schedule should not fire at a
// time its rule does not name. COUNT counts the occurrences the rule
// generates, DTSTART among them only if it matches. No occurrence is earlier
// than DTSTART.
//
// The expansion agrees with rrule-go (a port of python-dateutil) on the RFC
// 5545 examples and on thousands of random rules, except in three corners
// where it follows the RFC instead: the first period of a WEEKLY rule is
// the whole week holding DTSTART, so BYSETPOS counts the days of that week
// before DTSTART too (dateutil starts the week at DTSTART); a BYDAY that
// mixes weekdays with and without ordinals (MO,1TU) matches either; and a
// negative BYWEEKNO counts in the week-numbering year the day belongs to, as
// a positive one does.
type rrule struct {
	text string // the normalized text, as String returns it

	start int64 // DTSTART, Unix seconds of the wall time
	end   int64 // the last possible occurrence: UNTIL, COUNT's last, or rrMaxWall

	freq     rrFreq
	interval int64
	wkst     time.Weekday

	// Date parts, as bit sets; an empty set does not filter.
	months                 uint64     // bit m for month m
	weekNos, negWeekNos    uint64     // bit n for week n, or week -n
	yearDays, negYearDays  rrYearBits // bit n for day n of the year, or day -n
	monthDays, negMonthDay uint64     // bit n for day n of the month, or day -n
	byDay                  bool       // weekdays or nth filter
	weekdays               uint64     // bit d for weekday d (BYDAY without ordinal)
	nth, negNth            [7]uint64  // per weekday, bit n for the nth (or -nth) one
	nthInMonth             bool       // ordinals count within the month, else the year

	times  rrTimeBox // the times of day of an occurrence
	setPos []int     // BYSETPOS

	// Where period 0 starts: the day number of DTSTART's week's WKST day
	// (WEEKLY), its month index year*12+month-1 (MONTHLY), its year (YEARLY),
	// its day number (DAILY), or DTSTART truncated to the unit (finer).
	origin int64
}

// parseRRule parses text: a "DTSTART:YYYYMMDDTHHMMSS" line (the wall time of
// the first occurrence, local to the schedule's zone, so without Z or TZID)
// and an RRULE value, optionally prefixed "RRULE:", one per line in either
// order. Whitespace around lines is trimmed, and blank lines are skipped.
// Names and values are case-insensitive.
//
// Supported parts: FREQ (SECONDLY to YEARLY), INTERVAL, COUNT (at most
// 100000), UNTIL (local: YYYYMMDD, which includes that whole day, or
// YYYYMMDDTHHMMSS), BYMONTH, BYWEEKNO, BYYEARDAY, BYMONTHDAY, BYDAY (with
// ordinals such as 1MO or -1FR in MONTHLY and YEARLY rules), BYHOUR,
// BYMINUTE, BYSECOND, BYSETPOS and WKST, with the restrictions of RFC 5545
// section 3.3.10 (BYWEEKNO only in YEARLY rules, no BYMONTHDAY in WEEKLY
// ones, and so on).
//
// The error is an *RRuleError, which matches ErrInvalid: for malformed text,
// and for a rule with no occurrence at all (before year 10000 and before
// UNTIL).
func parseRRule(text string) (*rrule, error) {
	p := rruleParser{text: text}
	r, err := p.parse()
	if err != nil {
		return nil, err
	}
	return r, nil
}

// rruleParser holds what parseRRule has read so far.
type rruleParser struct {
	text string

	start     time.Time
	haveStart bool
	rule      string // the RRULE value as given
	parts     map[string]string
	written   map[string]string // the parts as written, for errors
}

func (p *rruleParser) fail(part, reason string, hint ...string) *RRuleError {
	err := &RRuleError{Rule: p.text, Part: part, Reason: reason}
	if len(hint) > 0 {
		err.hint = hint[0]
	}
	return err
}

// failPart reports a problem with the part name.
func (p *rruleParser) failPart(name, reason string, hint ...string) *RRuleError {
	return p.fail(p.written[name], reason, hint...)
}

func (p *rruleParser) parse() (*rrule, error) {
	haveRule := false
	for line := range strings.Lines(p.text) {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		name, value, isProperty := strings.Cut(line, ":")
		if !isProperty { // a bare RRULE value never holds a colon
			name, value = "RRULE", line
		}
		name = strings.TrimSpace(name)
		upper := strings.ToUpper(name)
		base, params, hasParams := strings.Cut(upper, ";")
		switch base {
		case "DTSTART":
			if p.haveStart {
				return nil, p.fail(line, "DTSTART is given twice")
			}
			if hasParams {
				return nil, p.fail(name, fmt.Sprintf("DTSTART takes no parameters, not %q: its time is local to the schedule's time zone", params),
					"write the local date and time alone, such as DTSTART:20270105T090000, and set the schedule's time zone")
			}
			start, err := p.parseStart(line, strings.TrimSpace(value))
			if err != nil {
				return nil, err
			}
			p.start, p.haveStart = start, true
		case "RRULE":
			if haveRule {
				return nil, p.fail(line, "only one RRULE is allowed")
			}
			if hasParams {
				return nil, p.fail(name, "RRULE takes no parameters")
			}
			p.rule, haveRule = strings.TrimSpace(value), true
		default:
			return nil, p.fail(name, "only DTSTART and RRULE lines are supported (no EXDATE, RDATE or other properties)")
		}
	}
	if !haveRule {
		return nil, p.fail("RRULE", "there is no RRULE value")
	}
	if !p.haveStart {
		return nil, p.fail("DTSTART", "an RRULE needs a DTSTART line: the first occurrence's local date and time, such as DTSTART:20270105T090000")
	}
	if err := p.splitParts(); err != nil {
		return nil, err
	}
	return p.build()
}

// parseStart parses the value of a DTSTART line.
func (p *rruleParser) parseStart(line, value string) (time.Time, error) {
	const hint = "write the local date and time of the first occurrence, such as DTSTART:20270105T090000"
	if strings.HasSuffix(strings.ToUpper(value), "Z") {
		return time.Time{}, p.fail(line, "a UTC time (ending in Z) is not allowed: the time is local to the schedule's time zone", hint)
	}
	if len(value) != len(rrWallLayout) {
		return time.Time{}, p.fail(line, "expected a local date and time YYYYMMDDTHHMMSS", hint)
	}
	start, err := time.ParseInLocation(rrWallLayout, strings.ToUpper(value), time.UTC)
	if err != nil {
		return time.Time{}, p.fail(line, "expected a local date and time YYYYMMDDTHHMMSS", hint)
	}
	return start, nil
}

// rrWallLayout is the layout of DTSTART and of UNTIL with a time.
const rrWallLayout = "20060102T150405"

// rrPartOrder lists the rule parts in the order String writes them.
var rrPartOrder = []string{"FREQ", "INTERVAL", "COUNT", "UNTIL", "BYMONTH", "BYWEEKNO", "BYYEARDAY", "BYMONTHDAY", "BYDAY", "BYHOUR", "BYMINUTE", "BYSECOND", "BYSETPOS", "WKST"}

// splitParts splits the RRULE value into its parts, by upper-case name.
func (p *rruleParser) splitParts() error {
	p.parts, p.written = map[string]string{}, map[string]string{}
	for part := range strings.SplitSeq(p.rule, ";") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue // such as after a trailing semicolon
		}
		name, value, ok := strings.Cut(part, "=")
		name, value = strings.ToUpper(strings.TrimSpace(name)), strings.ToUpper(strings.TrimSpace(value))
		switch {
		case !ok:
			return p.fail(part, "expected NAME=VALUE")
		case !slices.Contains(rrPartOrder, name):
			return p.fail(part, "unknown rule part; the parts are "+strings.Join(rrPartOrder, ", "))
		case p.written[name] != "":
			return p.fail(part, name+" is given twice")
		case value == "":
			return p.fail(part, "the value is empty")
		}
		p.parts[name], p.written[name] = value, part
	}
	return nil
}

// build checks the parts and makes the rule.
func (p *rruleParser) build() (*rrule, error) {
	r := &rrule{start: p.start.Unix(), end: rrMaxWall, interval: 1, wkst: time.Monday}
	has := func(name string) bool { _, ok := p.parts[name]; return ok }

	freq, ok := p.parts["FREQ"]
	if !ok {
		return nil, p.fail("FREQ", "the rule has no FREQ", `start the rule with FREQ=SECONDLY, MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY or YEARLY, such as "FREQ=WEEKLY;BYDAY=MO"`)
	}
	if i := slices.Index(rrFreqNames[:], freq); i >= 0 {
		r.freq = rrFreq(i)
	} else {
		return nil, p.failPart("FREQ", "FREQ must be SECONDLY, MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY or YEARLY")
	}

	if v, ok := p.parts["INTERVAL"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxRRuleInterval || v[0] == '+' || v[0] == '-' {
			return nil, p.failPart("INTERVAL", fmt.Sprintf("INTERVAL must be a whole number from 1 to %d", maxRRuleInterval))
		}
		r.interval = int64(n)
	}

	if has("COUNT") && has("UNTIL") {
		return nil, p.failPart("UNTIL", "COUNT and UNTIL can't both be given", "keep one of them: COUNT for a number of occurrences, UNTIL for a last date")
	}
	count := 0
	if v, ok := p.parts["COUNT"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxRRuleCount || v[0] == '+' || v[0] == '-' {
			return nil, p.failPart("COUNT", fmt.Sprintf("COUNT must be a whole number from 1 to %d", maxRRuleCount),
				"for more occurrences, give UNTIL, the local date of the last one, instead")
		}
		count = n
	}
	if v, ok := p.parts["UNTIL"]; ok {
		until, err := p.parseUntil(v)
		if err != nil {
			return nil, err
		}
		if until < r.start {
			return nil, p.failPart("UNTIL", "UNTIL is before DTSTART, so the rule never fires")
		}
		r.end = until
	}

	if v, ok := p.parts["WKST"]; ok {
		d, ok := rrWeekdayCodes[v]
		if !ok {
			return nil, p.failPart("WKST", "WKST must be a weekday: MO, TU, WE, TH, FR, SA or SU")
		}
		r.wkst = d
	}

	// Parts RFC 5545 forbids with some frequencies.
	for _, rule := range []struct {
		name    string
		allowed bool
		reason  string
	}{
		{"BYWEEKNO", r.freq == rrYearly, "BYWEEKNO is only allowed in a YEARLY rule"},
		{"BYYEARDAY", r.freq == rrYearly || r.freq < rrDaily, "BYYEARDAY is not allowed in a DAILY, WEEKLY or MONTHLY rule"},
		{"BYMONTHDAY", r.freq != rrWeekly, "BYMONTHDAY is not allowed in a WEEKLY rule"},
	} {
		if has(rule.name) && !rule.allowed {
			return nil, p.failPart(rule.name, rule.reason)
		}
	}

	var err error
	if r.months, err = p.parseBits("BYMONTH", 1, 12, false); err != nil {
		return nil, err
	}
	if r.weekNos, r.negWeekNos, err = p.parseSigned("BYWEEKNO", 53); err != nil {
		return nil, err
	}
	if err := p.parseYearDays(r); err != nil {
		return nil, err
	}
	if r.monthDays, r.negMonthDay, err = p.parseSigned("BYMONTHDAY", 31); err != nil {
		return nil, err
	}
	if err := p.parseByDay(r); err != nil {
		return nil, err
	}
	if r.times.hours, err = p.parseBits("BYHOUR", 0, 23, true); err != nil {
		return nil, err
	}
	if r.times.minutes, err = p.parseBits("BYMINUTE", 0, 59, true); err != nil {
		return nil, err
	}
	if r.times.seconds, err = p.parseBits("BYSECOND", 0, 59, true); err != nil {
		return nil, err
	}
	if v, ok := p.parts["BYSETPOS"]; ok {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(p.parts)), func(name string) bool {
			return strings.HasPrefix(name, "BY") && name != "BYSETPOS"
		}) {
			return nil, p.failPart("BYSETPOS", "BYSETPOS needs another BY part (such as BYDAY) to pick from", `such as "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1" for the last weekday of the month`)
		}
		for item := range strings.SplitSeq(v, ",") {
			n, err := strconv.Atoi(item)
			if err != nil || n == 0 || n < -366 || n > 366 {
				return nil, p.failPart("BYSETPOS", fmt.Sprintf("%s: each BYSETPOS value must be 1 to 366 or -366 to -1", item))
			}
			r.setPos = append(r.setPos, n)
		}
	}

	p.fillDefaults(r)
	r.origin = r.periodOrigin()
	if err := p.checkSetPos(r); err != nil {
		return nil, err
	}
	r.text = p.normalized()

	if err := p.checkReachable(r); err != nil {
		return nil, err
	}
	first, ok := r.search(r.start, r.cycleEnd())
	if !ok {
		reason := "the rule has no occurrence"
		if has("UNTIL") {
			reason += " between DTSTART and UNTIL"
		}
		return nil, p.fail(p.rule, reason,
			"check that the BY parts name dates that exist (such as BYMONTH=2 with BYMONTHDAY=30) and agree with each other")
	}
	if count > 0 {
		last := first
		for range count - 1 {
			t, ok := r.search(last+1, r.end)
			if !ok {
				break
			}
			last = t
		}
		r.end = last
	}
	return r, nil
}

// parseUntil parses UNTIL: a local date, which includes the whole day, or a
// local date and time.
func (p *rruleParser) parseUntil(v string) (int64, error) {
	const hint = "write the local date or date and time of the last occurrence, such as UNTIL=20271231 or UNTIL=20271231T235959"
	if strings.HasSuffix(v, "Z") {
		return 0, p.failPart("UNTIL", "a UTC time (ending in Z) is not supported: the rule's times are local to the schedule's time zone", hint)
	}
	if len(v) == len(time.DateOnly)-2 {
		day, err := time.ParseInLocation("20060102", v, time.UTC)
		if err != nil {
			return 0, p.failPart("UNTIL", "expected a local date YYYYMMDD or date and time YYYYMMDDTHHMMSS", hint)
		}
		return day.Unix() + rrSecondsPerDay - 1, nil
	}
	until, err := time.ParseInLocation(rrWallLayout, v, time.UTC)
	if err != nil || len(v) != len(rrWallLayout) {
		return 0, p.failPart("UNTIL", "expected a local date YYYYMMDD or date and time YYYYMMDDTHHMMSS", hint)
	}
	return until.Unix(), nil
}

// parseBits parses the list of numbers from lo to hi of part name into a bit
// set. A missing part is an empty set.
func (p *rruleParser) parseBits(name string, lo, hi int, timeOfDay bool) (uint64, error) {
	v, ok := p.parts[name]
	if !ok {
		return 0, nil
	}
	var set uint64
	for item := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(item)
		if err != nil || n < lo || n > hi || item[0] == '+' || item[0] == '-' {
			reason := fmt.Sprintf("%s: each %s value must be a number from %d to %d", item, name, lo, hi)
			if timeOfDay && n == 60 {
				reason += " (wall times have no leap seconds)"
			}
			return 0, p.failPart(name, reason)
		}
		set |= 1 << n
	}
	return set, nil
}

// parseSigned parses the list of numbers from 1 to hi or -hi to -1 of part
// name into bit sets of the positive ones and of the negated negative ones.
func (p *rruleParser) parseSigned(name string, hi int) (pos, neg uint64, err error) {
	v, ok := p.parts[name]
	if !ok {
		return 0, 0, nil
	}
	for item := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(item)
		switch {
		case err != nil || n == 0 || n < -hi || n > hi:
			return 0, 0, p.failPart(name, fmt.Sprintf("%s: each %s value must be 1 to %d or -%d to -1", item, name, hi, hi))
		case n > 0:
			pos |= 1 << n
		default:
			neg |= 1 << -n
		}
	}
	return pos, neg, nil
}

func (p *rruleParser) parseYearDays(r *rrule) error {
	v, ok := p.parts["BYYEARDAY"]
	if !ok {
		return nil
	}
	for item := range strings.SplitSeq(v, ",") {
		n, err := strconv.Atoi(item)
		switch {
		case err != nil || n == 0 || n < -366 || n > 366:
			return p.failPart("BYYEARDAY", fmt.Sprintf("%s: each BYYEARDAY value must be 1 to 366 or -366 to -1", item))
		case n > 0:
			r.yearDays.set(n)
		default:
			r.negYearDays.set(-n)
		}
	}
	return nil
}

var rrWeekdayCodes = map[string]time.Weekday{
	"SU": time.Sunday, "MO": time.Monday, "TU": time.Tuesday, "WE": time.Wednesday,
	"TH": time.Thursday, "FR": time.Friday, "SA": time.Saturday,
}

// parseByDay parses BYDAY: weekdays, each with an optional ordinal.
func (p *rruleParser) parseByDay(r *rrule) error {
	v, ok := p.parts["BYDAY"]
	if !ok {
		return nil
	}
	r.byDay = true
	_, byMonth := p.parts["BYMONTH"]
	r.nthInMonth = r.freq == rrMonthly || byMonth
	for item := range strings.SplitSeq(v, ",") {
		if len(item) < 2 {
			return p.failPart("BYDAY", item+": expected a weekday (MO, TU, WE, TH, FR, SA or SU), with an ordinal such as 1MO or -1FR in a MONTHLY or YEARLY rule")
		}
		day, ok := rrWeekdayCodes[item[len(item)-2:]]
		if !ok {
			return p.failPart("BYDAY", item+": expected a weekday (MO, TU, WE, TH, FR, SA or SU), with an ordinal such as 1MO or -1FR in a MONTHLY or YEARLY rule")
		}
		ordinal := item[:len(item)-2]
		if ordinal == "" {
			r.weekdays |= 1 << day
			continue
		}
		n, err := strconv.Atoi(ordinal)
		hi, within := 53, "year"
		if r.nthInMonth {
			hi, within = 5, "month"
		}
		switch {
		case r.freq != rrMonthly && r.freq != rrYearly:
			return p.failPart("BYDAY", item+": an ordinal (such as 1MO) is only allowed in a MONTHLY or YEARLY rule")
		case r.freq == rrYearly && p.parts["BYWEEKNO"] != "":
			return p.failPart("BYDAY", item+": an ordinal (such as 1MO) is not allowed with BYWEEKNO")
		case err != nil || n == 0 || n < -hi || n > hi:
			return p.failPart("BYDAY", fmt.Sprintf("%s: the ordinal must be 1 to %d or -%d to -1 (the nth such weekday of the %s)", item, hi, hi, within))
		case n > 0:
			r.nth[day] |= 1 << n
		default:
			r.negNth[day] |= 1 << -n
		}
	}
	return nil
}

// fillDefaults fills in the parts DTSTART supplies, per RFC 5545 section
// 3.3.10 and as python-dateutil does: the time of day; the weekday of a
// WEEKLY rule without BYDAY; the day of the month of a MONTHLY rule without
// BYDAY or BYMONTHDAY; the day and month of a YEARLY rule without BYWEEKNO,
// BYYEARDAY, BYMONTHDAY or BYDAY (the day alone when it has BYMONTH).
func (p *rruleParser) fillDefaults(r *rrule) {
	start := p.start
	h, m, s := start.Clock()
	all := func(n int) uint64 { return 1<<n - 1 }
	defaults := [...]struct {
		set   *uint64
		value int
		unit  rrFreq // the part limits, and so defaults to all, at this FREQ and finer
		all   uint64
	}{
		{&r.times.hours, h, rrHourly, all(24)},
		{&r.times.minutes, m, rrMinutely, all(60)},
		{&r.times.seconds, s, rrSecondly, all(60)},
	}
	for _, d := range defaults {
		switch {
		case *d.set != 0:
		case r.freq <= d.unit:
			*d.set = d.all
		default:
			*d.set = 1 << d.value
		}
	}

	noDay := !r.byDay && r.monthDays == 0 && r.negMonthDay == 0
	switch {
	case r.freq == rrWeekly && !r.byDay:
		r.byDay, r.weekdays = true, 1<<start.Weekday()
	case r.freq == rrMonthly && noDay:
		r.monthDays = 1 << start.Day()
	case r.freq == rrYearly && noDay && r.weekNos == 0 && r.negWeekNos == 0 && r.yearDays.empty() && r.negYearDays.empty():
		r.monthDays = 1 << start.Day()
		if r.months == 0 {
			r.months = 1 << start.Month()
		}
	}
}

// normalized returns the rule's text as String returns it.
func (p *rruleParser) normalized() string {
	var b strings.Builder
	b.WriteString("DTSTART:" + p.start.Format(rrWallLayout) + "\nRRULE:")
	first := true
	for _, name := range rrPartOrder {
		v, ok := p.parts[name]
		if !ok {
			continue
		}
		if !first {
			b.WriteByte(';')
		}
		first = false
		b.WriteString(name + "=" + rrNormalizeValue(name, v))
	}
	return b.String()
}

// rrNormalizeValue writes the numbers in a valid value without signs or
// leading zeros they don't need.
func rrNormalizeValue(name, v string) string {
	switch name {
	case "FREQ", "UNTIL", "WKST":
		return v
	}
	items := strings.Split(v, ",")
	for i, item := range items {
		suffix := ""
		if name == "BYDAY" {
			item, suffix = item[:len(item)-2], item[len(item)-2:]
			if item == "" {
				items[i] = suffix
				continue
			}
		}
		n, _ := strconv.Atoi(item)
		items[i] = strconv.Itoa(n) + suffix
	}
	return strings.Join(items, ",")
}

// checkSetPos refuses a BYSETPOS none of whose positions a period can
// reach, such as BYSETPOS=2 in a SECONDLY rule, whose periods have one
// candidate at most: the rule would never fire, and looking for its first
// occurrence would walk every period to year 9999.
func (p *rruleParser) checkSetPos(r *rrule) error {
	if len(r.setPos) == 0 {
		return nil
	}
	perDay := r.times.count()
	largest := map[rrFreq]int64{
		rrSecondly: 1,
		rrMinutely: int64(bits.OnesCount64(r.times.seconds)),
		rrHourly:   int64(bits.OnesCount64(r.times.minutes) * bits.OnesCount64(r.times.seconds)),
		rrDaily:    perDay,
		rrWeekly:   7 * perDay,
		rrMonthly:  31 * perDay,
		rrYearly:   366 * perDay,
	}[r.freq]
	for _, pos := range r.setPos {
		if int64(max(pos, -pos)) <= largest {
			return nil
		}
	}
	return p.failPart("BYSETPOS", fmt.Sprintf("the rule never fires: a %s period has at most %d candidates, fewer than any position",
		strings.ToLower(rrFreqNames[r.freq]), largest))
}

// checkReachable refuses a rule finer than DAILY whose periods all start at
// times of day its BYHOUR, BYMINUTE and BYSECOND exclude, such as
// FREQ=HOURLY;INTERVAL=24;BYHOUR=5 with DTSTART at 09:00: it would never
// fire, and looking for its first occurrence would walk every day to year
// 9999. The times of day periods start at repeat with the greatest common
// divisor of the period step and a day.
func (p *rruleParser) checkReachable(r *rrule) error {
	if r.freq >= rrDaily {
		return nil
	}
	step := r.interval * r.freq.unit()
	g := rrGCD(step, rrSecondsPerDay)
	for tod := rrFloorMod(r.origin, rrSecondsPerDay) % g; tod < rrSecondsPerDay; tod += g {
		if r.periodBox(tod).count() > 0 {
			return nil
		}
	}
	return p.fail(p.rule, fmt.Sprintf("the rule never fires: with INTERVAL=%d, its %s periods start at times of day that BYHOUR, BYMINUTE and BYSECOND exclude",
		r.interval, strings.ToLower(rrFreqNames[r.freq])))
}

func rrGCD(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func rrFloorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func rrFloorMod(a, b int64) int64 { return a - rrFloorDiv(a, b)*b }

// cycleEnd returns a wall time by which a rule that ever fires has fired:
// the start of the period one past a whole cycle of the rule. The Gregorian
// calendar repeats every 400 years, which are a whole number of months,
// weeks (20871), days (146097) and so of hours, minutes and seconds; the
// rule's periods repeat every INTERVAL of them; so the rule repeats every
// least common multiple of the two, counted in periods from DTSTART. The
// extra period covers candidates of the first period before DTSTART.
func (r *rrule) cycleEnd() int64 {
	const days = 146097 // in 400 years
	units := map[rrFreq]int64{
		rrSecondly: days * rrSecondsPerDay, rrMinutely: days * 24 * 60, rrHourly: days * 24,
		rrDaily: days, rrWeekly: days / 7, rrMonthly: 400 * 12, rrYearly: 400,
	}[r.freq]
	periods := units / rrGCD(units, r.interval) // the cycle, in periods of INTERVAL units
	start, _ := r.periodBounds(periods + 1)
	return start
}

// periodOrigin returns where period 0 starts; see rrule.origin.
func (r *rrule) periodOrigin() int64 {
	day := rrFloorDiv(r.start, rrSecondsPerDay)
	switch r.freq {
	case rrYearly:
		return int64(rrCivilOf(day).year)
	case rrMonthly:
		c := rrCivilOf(day)
		return int64(c.year)*12 + int64(c.month) - 1
	case rrWeekly:
		return day - int64((7+rrWeekdayOf(day)-r.wkst)%7)
	case rrDaily:
		return day
	}
	return r.start - rrFloorMod(r.start, r.freq.unit())
}

// periodOf returns the index of the period whose slot holds the wall time t:
// the last one that starts at or before t. Periods are INTERVAL slots apart;
// a period of a FREQ finer than DAILY spans only its unit of its slot.
func (r *rrule) periodOf(t int64) int64 {
	day := rrFloorDiv(t, rrSecondsPerDay)
	switch r.freq {
	case rrYearly:
		return rrFloorDiv(int64(rrCivilOf(day).year)-r.origin, r.interval)
	case rrMonthly:
		c := rrCivilOf(day)
		return rrFloorDiv(int64(c.year)*12+int64(c.month)-1-r.origin, r.interval)
	case rrWeekly:
		return rrFloorDiv(day-r.origin, 7*r.interval)
	case rrDaily:
		return rrFloorDiv(day-r.origin, r.interval)
	}
	return rrFloorDiv(t-r.origin, r.interval*r.freq.unit())
}

// periodBounds returns the wall times period k spans, [start, end), in Unix
// seconds.
func (r *rrule) periodBounds(k int64) (start, end int64) {
	switch r.freq {
	case rrYearly:
		y := r.origin + k*r.interval
		if y > 9999 {
			return rrMaxWall + 1, rrMaxWall + 1
		}
		return rrDaysFromCivil(int(y), 1, 1) * rrSecondsPerDay, rrDaysFromCivil(int(y)+1, 1, 1) * rrSecondsPerDay
	case rrMonthly:
		i := r.origin + k*r.interval
		if i > 9999*12+11 {
			return rrMaxWall + 1, rrMaxWall + 1
		}
		y, m := int(i/12), int(i%12)+1
		return rrDaysFromCivil(y, m, 1) * rrSecondsPerDay, rrDaysFromCivil(y, m+1, 1) * rrSecondsPerDay
	case rrWeekly:
		start = (r.origin + k*7*r.interval) * rrSecondsPerDay
		return start, start + 7*rrSecondsPerDay
	case rrDaily:
		start = (r.origin + k*r.interval) * rrSecondsPerDay
		return start, start + rrSecondsPerDay
	}
	start = r.origin + k*r.interval*r.freq.unit()
	return start, start + r.freq.unit()
}

// search returns the first occurrence at or after from and at or before to,
// in Unix seconds of wall times, ignoring COUNT unless r.end holds it. It
// looks at each period from the one holding from, skipping stretches that
// can't match (a month BYMONTH excludes, the rest of a day), until a period
// starts after to, so it ends even for a rule that never fires again.
func (r *rrule) search(from, to int64) (int64, bool) {
	from, to = max(from, r.start), min(to, r.end)
	if from > to {
		return 0, false
	}
	for k := r.periodOf(from); ; {
		start, end := r.periodBounds(k)
		if start > to {
			return 0, false
		}
		t, ok, resume := r.scan(start, end, from, to)
		if ok {
			return t, t <= to
		}
		if resume > to {
			return 0, false
		}
		// Go on with the first period that may hold a time at or after
		// resume: the one whose slot holds it, unless its span ends before.
		next := r.periodOf(resume)
		if _, nextEnd := r.periodBounds(next); nextEnd <= resume {
			next++
		}
		k = max(next, k+1)
	}
}

// scan returns the first occurrence in the period [start, end) at or after
// from, or else a wall time before which no later period has one.
func (r *rrule) scan(start, end, from, to int64) (t int64, ok bool, resume int64) {
	if r.freq < rrDaily {
		return r.scanWithinDay(start, end, from)
	}
	if len(r.setPos) > 0 {
		return r.scanSetPos(start, end, from)
	}
	fromDay := rrFloorDiv(from, rrSecondsPerDay)
	lastDay := rrFloorDiv(end, rrSecondsPerDay)
	c := rrCivilOf(max(rrFloorDiv(start, rrSecondsPerDay), fromDay))
	for c.n < lastDay {
		if c.n*rrSecondsPerDay > to {
			return 0, false, c.n * rrSecondsPerDay
		}
		if !r.monthMatches(c) {
			c = rrCivilOf(c.n + int64(rrDaysIn(c.year, c.month)-c.day+1))
			continue
		}
		if r.dayMatches(c) {
			lo := int64(0)
			if c.n == fromDay {
				lo = from - c.n*rrSecondsPerDay
			}
			if tod, ok := r.times.first(lo); ok {
				return c.n*rrSecondsPerDay + tod, true, 0
			}
		}
		c = c.next()
	}
	return 0, false, max(end, c.n*rrSecondsPerDay) // past a month BYMONTH excludes
}

// scanSetPos is scan for a rule with BYSETPOS and a FREQ of DAILY or more:
// the positions count within all the period's candidates, including any
// before from or DTSTART.
func (r *rrule) scanSetPos(start, end, from int64) (int64, bool, int64) {
	var buf [366]int64
	days := buf[:0]
	lastDay := rrFloorDiv(end, rrSecondsPerDay)
	for c := rrCivilOf(rrFloorDiv(start, rrSecondsPerDay)); c.n < lastDay; {
		if !r.monthMatches(c) {
			c = rrCivilOf(c.n + int64(rrDaysIn(c.year, c.month)-c.day+1))
			continue
		}
		if r.dayMatches(c) {
			days = append(days, c.n)
		}
		c = c.next()
	}
	perDay := r.times.count()
	t, ok := r.pick(int64(len(days))*perDay, from, func(i int64) int64 {
		return days[i/perDay]*rrSecondsPerDay + r.times.nth(i%perDay)
	})
	return t, ok, end
}

// scanWithinDay is scan for a FREQ finer than DAILY: the period is one hour,
// minute or second of a day.
func (r *rrule) scanWithinDay(start, end, from int64) (int64, bool, int64) {
	c := rrCivilOf(rrFloorDiv(start, rrSecondsPerDay))
	midnight := c.n * rrSecondsPerDay
	if !r.monthMatches(c) {
		return 0, false, midnight + int64(rrDaysIn(c.year, c.month)-c.day+1)*rrSecondsPerDay
	}
	if !r.dayMatches(c) {
		return 0, false, midnight + rrSecondsPerDay
	}
	box := r.periodBox(start - midnight)
	if len(r.setPos) > 0 {
		if t, ok := r.pick(box.count(), from, func(i int64) int64 { return midnight + box.nth(i) }); ok {
			return t, true, 0
		}
	} else if tod, ok := box.first(max(from, start) - midnight); ok {
		return midnight + tod, true, 0
	}
	// The next period that can hold an occurrence starts at or before
	// the next time of day that matches, or the next day.
	if tod, ok := r.times.first(end - midnight); ok {
		return 0, false, midnight + tod
	}
	return 0, false, midnight + rrSecondsPerDay
}

// periodBox returns the times of day in the period of a FREQ finer than
// DAILY that starts at time of day tod: BYHOUR, BYMINUTE and BYSECOND limit
// the units FREQ and coarser, and expand the finer ones.
func (r *rrule) periodBox(tod int64) rrTimeBox {
	box := r.times
	box.hours &= 1 << (tod / 3600)
	if r.freq <= rrMinutely {
		box.minutes &= 1 << (tod / 60 % 60)
	}
	if r.freq == rrSecondly {
		box.seconds &= 1 << (tod % 60)
	}
	return box
}

// pick applies BYSETPOS to a period's n sorted candidates, the ith of which
// is at(i), and returns the first of those picked at or after from.
func (r *rrule) pick(n, from int64, at func(i int64) int64) (int64, bool) {
	best, found := int64(0), false
	for _, pos := range r.setPos {
		i := int64(pos) - 1
		if pos < 0 {
			i = n + int64(pos)
		}
		if i < 0 || i >= n {
			continue
		}
		if t := at(i); t >= from && (!found || t < best) {
			best, found = t, true
		}
	}
	return best, found
}

// monthMatches reports whether BYMONTH allows c's month.
func (r *rrule) monthMatches(c rrCivil) bool {
	return r.months == 0 || r.months&(1<<c.month) != 0
}

// dayMatches reports whether the date parts other than BYMONTH allow c.
func (r *rrule) dayMatches(c rrCivil) bool {
	if r.monthDays|r.negMonthDay != 0 {
		if r.monthDays&(1<<c.day) == 0 && r.negMonthDay&(1<<(rrDaysIn(c.year, c.month)-c.day+1)) == 0 {
			return false
		}
	}
	if !r.yearDays.empty() || !r.negYearDays.empty() {
		if !r.yearDays.has(c.yday) && !r.negYearDays.has(rrYearLen(c.year)-c.yday+1) {
			return false
		}
	}
	if r.weekNos|r.negWeekNos != 0 {
		week, weeks := r.weekNo(c)
		if r.weekNos&(1<<week) == 0 && r.negWeekNos&(1<<(weeks-week+1)) == 0 {
			return false
		}
	}
	if r.byDay && r.weekdays&(1<<c.weekday) == 0 {
		// The nth such weekday of the month or year, from its start
		// and from its end.
		i, n := c.yday, rrYearLen(c.year)
		if r.nthInMonth {
			i, n = c.day, rrDaysIn(c.year, c.month)
		}
		if r.nth[c.weekday]&(1<<((i-1)/7+1)) == 0 && r.negNth[c.weekday]&(1<<((n-i)/7+1)) == 0 {
			return false
		}
	}
	return true
}

// weekNo returns the week number of c, 1 to weeks, and the number of weeks
// in its year, as RFC 5545 numbers weeks: they start on WKST, and week 1 is
// the first with at least 4 days of the year (ISO 8601, when WKST is MO). A
// week belongs to the year its fourth day is in, so the first days of
// January can be in the last week of the year before and the last days of
// December in week 1 of the next year.
func (r *rrule) weekNo(c rrCivil) (week, weeks int) {
	weekStart := c.n - int64((7+c.weekday-r.wkst)%7)
	year := rrCivilOf(weekStart + 3).year
	first := r.firstWeekStart(year)
	return int((weekStart-first)/7) + 1, int((r.firstWeekStart(year+1) - first) / 7)
}

// firstWeekStart returns the day number of the first day of week 1 of year:
// the week that holds 4 January.
func (r *rrule) firstWeekStart(year int) int64 {
	jan4 := rrDaysFromCivil(year, 1, 4)
	return jan4 - int64((7+rrWeekdayOf(jan4)-r.wkst)%7)
}

// next returns the first occurrence after the wall time after (dropping its
// fraction of a second), unless it is later than limit. It returns false
// quickly when the rule has no occurrence left, its COUNT spent or its
// UNTIL passed, and after looking at most at the periods up to limit
// otherwise; it never runs past year 9999.
func (r *rrule) next(after, limit time.Time) (time.Time, bool) {
	t, ok := r.search(after.Unix()+1, limit.Unix())
	if !ok {
		return time.Time{}, false
	}
	return time.Unix(t, 0).UTC(), true
}

// matches reports whether the wall time w is an occurrence.
func (r *rrule) matches(w time.Time) bool {
	if w.Nanosecond() != 0 {
		return false
	}
	t, ok := r.search(w.Unix(), w.Unix())
	return ok && t == w.Unix()
}

// dtstart returns the DTSTART wall time.
func (r *rrule) dtstart() time.Time { return time.Unix(r.start, 0).UTC() }

// String returns the normalized text: "DTSTART:...\nRRULE:..." with the
// rule's parts in the order of RFC 5545 section 3.3.10, upper case, and
// numbers without signs or leading zeros they don't need. parseRRule parses
// it back to the same rule.
func (r *rrule) String() string { return r.text }

// rrTimeBox is a set of times of day: every combination of its hours, minutes
// and seconds, as bit sets.
type rrTimeBox struct {
	hours, minutes, seconds uint64
}

// count returns the number of times in the box.
func (b rrTimeBox) count() int64 {
	return int64(bits.OnesCount64(b.hours) * bits.OnesCount64(b.minutes) * bits.OnesCount64(b.seconds))
}

// nth returns the ith time of the box, in seconds since midnight, in order.
func (b rrTimeBox) nth(i int64) int64 {
	minutes, seconds := int64(bits.OnesCount64(b.minutes)), int64(bits.OnesCount64(b.seconds))
	h := rrNthBit(b.hours, i/(minutes*seconds))
	m := rrNthBit(b.minutes, i/seconds%minutes)
	s := rrNthBit(b.seconds, i%seconds)
	return h*3600 + m*60 + s
}

// first returns the first time of the box at or after tod, in seconds since
// midnight.
func (b rrTimeBox) first(tod int64) (int64, bool) {
	if tod >= rrSecondsPerDay {
		return 0, false
	}
	h, m, sec, ok := firstTimeOfDay(b.hours, b.minutes, b.seconds, int(tod/3600), int(tod/60%60), int(tod%60))
	return int64(h)*3600 + int64(m)*60 + int64(sec), ok
}

// rrNthBit returns the ith lowest set bit of set, from 0.
func rrNthBit(set uint64, i int64) int64 {
	for ; i > 0; i-- {
		set &= set - 1 // clears the lowest set bit
	}
	return int64(bits.TrailingZeros64(set))
}

// rrYearBits is a set of days of the year, 1 to 366.
type rrYearBits [6]uint64

func (b *rrYearBits) set(n int)      { b[n/64] |= 1 << (n % 64) }
func (b *rrYearBits) has(n int) bool { return b[n/64]&(1<<(n%64)) != 0 }
func (b *rrYearBits) empty() bool    { return *b == rrYearBits{} }

// rrCivil is a date of the proleptic Gregorian calendar.
type rrCivil struct {
	n       int64 // days since 1970-01-01
	year    int
	month   time.Month
	day     int
	yday    int // day of the year, from 1
	weekday time.Weekday
}

// rrCivilOf returns the date of day number n, days since 1970-01-01.
func rrCivilOf(n int64) rrCivil {
	t := time.Unix(n*rrSecondsPerDay, 0).UTC()
	year, month, day := t.Date()
	return rrCivil{n: n, year: year, month: month, day: day, yday: t.YearDay(), weekday: t.Weekday()}
}

// next returns the next day.
func (c rrCivil) next() rrCivil {
	c.n++
	c.day++
	c.yday++
	c.weekday = (c.weekday + 1) % 7
	if c.day > rrDaysIn(c.year, c.month) {
		c.day = 1
		c.month++
		if c.month > time.December {
			c.year, c.month, c.yday = c.year+1, time.January, 1
		}
	}
	return c
}

// rrDaysFromCivil returns the day number, days since 1970-01-01, of a date;
// time.Date normalizes a month of 13 to January of the next year.
func rrDaysFromCivil(year, month, day int) int64 {
	return rrFloorDiv(time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC).Unix(), rrSecondsPerDay)
}

// rrWeekdayOf returns the weekday of day number n; 1970-01-01 was a Thursday.
func rrWeekdayOf(n int64) time.Weekday {
	return time.Weekday(rrFloorMod(n+int64(time.Thursday), 7))
}

var rrMonthLengths = [...]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func rrIsLeap(year int) bool { return year%4 == 0 && (year%100 != 0 || year%400 == 0) }

// rrDaysIn returns the number of days in a month.
func rrDaysIn(year int, month time.Month) int {
	if month == time.February && rrIsLeap(year) {
		return 29
	}
	return rrMonthLengths[month]
}

func rrYearLen(year int) int {
	if rrIsLeap(year) {
		return 366
	}
	return 365
}

// RRuleError reports a recurrence rule that can't be parsed.
type RRuleError struct {
	// Rule is the text as given.
	Rule string

	// Part is the offending part as written, such as "BYDAY=8MO", or the
	// line or the name of what is missing, such as "DTSTART".
	Part string

	// Reason says what is wrong with it.
	Reason string

	// hint says what to do; defaultRRuleHint when empty.
	hint string
}

// defaultRRuleHint is what an *RRuleError tells the user to do unless the
// problem calls for something more specific.
const defaultRRuleHint = `write a DTSTART line and an RRULE, such as "DTSTART:20270105T090000\nRRULE:FREQ=WEEKLY;BYDAY=MO,WE,FR" (RFC 5545 section 3.3.10)`

func (e *RRuleError) Error() string {
	hint := e.hint
	if hint == "" {
		hint = defaultRRuleHint
	}
	return fmt.Sprintf("schedule: bad RRULE %q: %s: %s; %s", e.Rule, e.Part, e.Reason, hint)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *RRuleError) Is(target error) bool { return target == ErrInvalid }
