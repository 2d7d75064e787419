package schedule

import (
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
