package schedule

import (
	"math/bits"
	"time"

	"github.com/robfig/cron/v3"
)

// starBit is set in a field by robfig/cron when the field was a bare * or ?
// (also */1), which switches day-of-month and day-of-week from OR to AND.
const starBit = 1 << 63

// fields are a cron expression's fields as robfig/cron parsed them: bit i is
// set when value i is allowed. They match wall-clock times, which this
// package represents as time.Time values in UTC: 02:30 on 8 March 2026
// is time.Date(2026, 3, 8, 2, 30, 0, 0, time.UTC), whatever the zone.
type fields struct {
	second, minute, hour, dom, month, dow uint64

	// terms are the calendar terms of the day fields (L, nW, 5L, MON#2);
	// nil when they have none, as for most expressions.
	terms *dayTerms
}

func fieldsOf(s *cron.SpecSchedule) fields {
	return fields{second: s.Second, minute: s.Minute, hour: s.Hour, dom: s.Dom, month: s.Month, dow: s.Dow}
}

// matches reports whether the wall time w matches the fields.
func (f *fields) matches(w time.Time) bool {
	h, m, s := w.Clock()
	return has(f.month, int(w.Month())) && f.matchesDay(w) && has(f.hour, h) && has(f.minute, m) && has(f.second, s)
}

// matchesDay reports whether the wall date of w matches the day fields
// (dayMatches).
func (f *fields) matchesDay(w time.Time) bool {
	year, month, d := w.Date()
	return f.dayMatches(d, int(w.Weekday()), daysIn(year, month))
}

// dayMatches applies cron's day rule, as robfig/cron does, to day d of a
// month of last days, a weekday wd: when day-of-month or day-of-week is a
// bare *, the day must match both; otherwise either ("0 0 13 * 5" is every
// 13th and every Friday). A field's calendar terms count as its values
// ("0 0 L * 5" is every last day of the month and every Friday).
func (f *fields) dayMatches(d, wd, last int) bool {
	domMatch := has(f.dom, d)
	dowMatch := has(f.dow, wd)
	if f.terms != nil {
		domMatch = domMatch || f.terms.matchesDom(d, wd, last)
		dowMatch = dowMatch || f.terms.matchesDow(d, wd, last)
	}
	if f.dom&starBit != 0 || f.dow&starBit != 0 {
		return domMatch && dowMatch
	}
	return domMatch || dowMatch
}

// daysOf returns the days of month in year that match the day fields: bit
// d for day d.
func (f *fields) daysOf(year int, month time.Month) uint32 {
	last := daysIn(year, month)
	if f.dom&starBit != 0 && f.dow&starBit != 0 {
		return 1<<(last+1) - 2 // every day, as most expressions
	}
	wd := int(time.Date(year, month, 1, 0, 0, 0, 0, time.UTC).Weekday())
	var days uint32
	for d := 1; d <= last; d++ {
		if f.dayMatches(d, wd, last) {
			days |= 1 << d
		}
		if wd++; wd == 7 {
			wd = 0
		}
	}
	return days
}

// next returns the first wall time after the wall time after that matches
// the fields, unless it is later than limit. It walks months, and in each
// month whose field matches, the month's matching days: a rule whose next
// slot is years away costs a few calls per year.
func (f *fields) next(after, limit time.Time) (time.Time, bool) {
	t := after.Truncate(time.Second).Add(time.Second)
	year, month, day := t.Date()
	h, m, s := t.Clock()
	limitYear, limitMonth, _ := limit.Date()

	for year < limitYear || (year == limitYear && month <= limitMonth) {
		if has(f.month, int(month)) {
			days := f.daysOf(year, month) >> day << day
			for days != 0 {
				d := bits.TrailingZeros32(days)
				if d != day {
					h, m, s = 0, 0, 0
				}
				if hh, mm, ss, ok := f.timeOfDay(h, m, s); ok {
					w := time.Date(year, month, d, hh, mm, ss, 0, time.UTC)
					return w, !w.After(limit)
				}
				days &^= 1 << d
				day, h, m, s = d+1, 0, 0, 0
			}
		}
		if month++; month > time.December {
			year, month = year+1, time.January
		}
		day, h, m, s = 1, 0, 0, 0
	}
	return time.Time{}, false
}

// timeOfDay returns the first time of day at or after h:m:s that matches the
// hour, minute and second fields.
func (f *fields) timeOfDay(h, m, s int) (int, int, int, bool) {
	return firstTimeOfDay(f.hour, f.minute, f.second, h, m, s)
}

// firstTimeOfDay returns the first time of day at or after h:m:s whose
// hour, minute and second are in the sets hours, minutes and seconds (bit
// i for value i): the search of a cron expression's fields and of an
// RRULE's times of day alike.
func firstTimeOfDay(hours, minutes, seconds uint64, h, m, s int) (int, int, int, bool) {
	for {
		hh, ok := nextBit(hours, h)
		if !ok {
			return 0, 0, 0, false
		}
		if hh != h {
			h, m, s = hh, 0, 0
		}
		mm, ok := nextBit(minutes, m)
		if !ok {
			h, m, s = h+1, 0, 0
			continue
		}
		if mm != m {
			m, s = mm, 0
		}
		if ss, ok := nextBit(seconds, s); ok {
			return h, m, ss, true
		}
		m, s = m+1, 0 // no second left in this minute
	}
}

// empty returns the name of a field that allows no value, which robfig/cron
// accepts for a field such as ",".
func (f *fields) empty() string {
	for _, field := range []struct {
		name string
		bits uint64
	}{
		{"second", f.second}, {"minute", f.minute}, {"hour", f.hour},
		{"day-of-month", f.dom}, {"month", f.month}, {"day-of-week", f.dow},
	} {
		if field.bits&^starBit == 0 && !f.termsOf(field.name) {
			return field.name
		}
	}
	return ""
}

// termsOf reports whether the day field named name has calendar terms.
func (f *fields) termsOf(name string) bool {
	switch {
	case f.terms == nil:
		return false
	case name == "day-of-month":
		return f.terms.hasDom()
	case name == "day-of-week":
		return f.terms.hasDow()
	}
	return false
}

// has reports whether bit i is set.
func has(bits uint64, i int) bool { return bits&^starBit&(1<<i) != 0 }

// nextBit returns the lowest set bit at or above from.
func nextBit(set uint64, from int) (int, bool) {
	if from > 62 {
		return 0, false
	}
	above := (set &^ starBit) >> from << from
	if above == 0 {
		return 0, false
	}
	return bits.TrailingZeros64(above), true
}
