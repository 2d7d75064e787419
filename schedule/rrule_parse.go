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
