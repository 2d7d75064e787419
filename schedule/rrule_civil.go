package schedule

import (
	"math/bits"
	"time"
)

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
