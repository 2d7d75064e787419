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
}

func fieldsOf(s *cron.SpecSchedule) fields {
	return fields{second: s.Second, minute: s.Minute, hour: s.Hour, dom: s.Dom, month: s.Month, dow: s.Dow}
}

// matches reports whether the wall time w matches the fields.
func (f *fields) matches(w time.Time) bool {
	h, m, s := w.Clock()
	return has(f.month, int(w.Month())) && f.matchesDay(w) && has(f.hour, h) && has(f.minute, m) && has(f.second, s)
}

// matchesDay applies cron's day rule, as robfig/cron does: when
// day-of-month or day-of-week is a bare *, the day must match both;
// otherwise either ("0 0 13 * 5" is every 13th and every Friday).
func (f *fields) matchesDay(w time.Time) bool {
	domMatch := has(f.dom, w.Day())
	dowMatch := has(f.dow, int(w.Weekday()))
	if f.dom&starBit != 0 || f.dow&starBit != 0 {
		return domMatch && dowMatch
	}
	return domMatch || dowMatch
}

// next returns the first wall time after the wall time after that matches
// the fields, unless it is later than limit.
func (f *fields) next(after, limit time.Time) (time.Time, bool) {
	t := after.Truncate(time.Second).Add(time.Second)
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	h, m, s := t.Clock()

	for !day.After(limit) {
		switch {
		case !has(f.month, int(day.Month())):
			day = time.Date(day.Year(), day.Month()+1, 1, 0, 0, 0, 0, time.UTC)
			h, m, s = 0, 0, 0
			continue
		case f.matchesDay(day):
			if hh, mm, ss, ok := f.timeOfDay(h, m, s); ok {
				w := day.Add(time.Duration(hh)*time.Hour + time.Duration(mm)*time.Minute + time.Duration(ss)*time.Second)
				return w, !w.After(limit)
			}
		}
		day = day.AddDate(0, 0, 1)
		h, m, s = 0, 0, 0
	}
	return time.Time{}, false
}

// timeOfDay returns the first time of day at or after h:m:s that matches the
// hour, minute and second fields.
func (f *fields) timeOfDay(h, m, s int) (int, int, int, bool) {
	for {
		hh, ok := nextBit(f.hour, h)
		if !ok {
			return 0, 0, 0, false
		}
		if hh != h {
			h, m, s = hh, 0, 0
		}
		mm, ok := nextBit(f.minute, m)
		if !ok {
			h, m, s = h+1, 0, 0
			continue
		}
		if mm != m {
			m, s = mm, 0
		}
		if ss, ok := nextBit(f.second, s); ok {
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
		if field.bits&^starBit == 0 {
			return field.name
		}
	}
	return ""
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
