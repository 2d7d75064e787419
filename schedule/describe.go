package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxListed is how many times, minutes or runs of days a description lists
// before it gives up and returns the expression instead.
const maxListed = 6

var (
	monthNames = [...]string{1: "January", 2: "February", 3: "March", 4: "April", 5: "May", 6: "June",
		7: "July", 8: "August", 9: "September", 10: "October", 11: "November", 12: "December"}

	// weekOrder lists the days of the week Monday first, so that "Friday
	// through Sunday" reads as one run.
	weekOrder = [...]int{1, 2, 3, 4, 5, 6, 0}
)

// Describe says in English when the spec fires, such as "every 10 seconds",
// "at 09:00 on Monday through Friday" or "every 15 minutes from 09:00 to
// 17:45". Times are wall times in the spec's zone, which the description
// does not name. An expression it cannot describe both simply and exactly
// (an uneven step such as "*/7", a long list) comes back as Expr: the
// description never says something the spec does not do.
func (s *Spec) Describe() string {
	if s.every != 0 {
		return "every " + describeDuration(s.every)
	}
	if s.rrule != nil {
		return s.expr // the rule, normalized: RFC 5545 is its own description
	}
	when, daily, ok := s.fields.describeTimes()
	if !ok {
		return s.expr
	}
	days, ok := s.fields.describeDays()
	if !ok {
		return s.expr
	}
	switch {
	case days == "" && daily:
		return when + " every day"
	case days == "":
		return when
	case daily && strings.HasPrefix(days, "in "):
		return when + " every day " + days // "at 09:00 every day in January"
	default:
		return when + " " + days
	}
}

// describeTimes describes the time-of-day fields. daily is set for a list
// of times ("at 09:00 and 17:00"), which needs "every day" when no day
// field is restricted.
func (f *fields) describeTimes() (when string, daily, ok bool) {
	secs, mins, hours := values(f.second, 0, 59), values(f.minute, 0, 59), values(f.hour, 0, 23)
	secStep, secEven := evenStep(secs, 0, 59)
	minStep, minEven := evenStep(mins, 0, 59)
	hourStep, hourEven := evenStep(hours, 0, 23)
	onTheMinute := len(secs) == 1 && secs[0] == 0

	switch {
	case hourStep == 1 && minStep == 1 && secEven:
		return every(secStep, "second", "seconds"), false, true
	case hourStep == 1 && minStep == 1 && len(secs) == 1:
		if secs[0] == 0 {
			return "every minute", false, true
		}
		return fmt.Sprintf("every minute at second %d", secs[0]), false, true
	case hourStep == 1 && minEven && onTheMinute:
		return every(minStep, "minute", "minutes"), false, true
	case hourStep == 1 && onTheMinute && len(mins) == 1 && mins[0] == 0:
		return "every hour", false, true
	case hourStep == 1 && onTheMinute && len(mins) <= maxListed:
		noun := "minute"
		if len(mins) > 1 {
			noun = "minutes"
		}
		return fmt.Sprintf("every hour at %s %s", noun, joinList(itoaAll(mins))), false, true
	case hourEven && onTheMinute && len(mins) == 1:
		when := every(hourStep, "hour", "hours")
		if mins[0] != 0 {
			when += fmt.Sprintf(" at minute %d", mins[0])
		}
		return when, false, true
	}

	// A contiguous range of hours, such as 9-17, with a minute pattern
	// repeated in each: say where it starts and ends.
	if first, last := hours[0], hours[len(hours)-1]; len(hours) > 1 && last-first == len(hours)-1 && onTheMinute {
		from, to := hhmm(first, mins[0], 0), hhmm(last, mins[len(mins)-1], 0)
		switch {
		case minStep == 1:
			return fmt.Sprintf("every minute from %s to %s", from, to), false, true
		case minEven:
			return fmt.Sprintf("every %d minutes from %s to %s", minStep, from, to), false, true
		case len(mins) == 1:
			return fmt.Sprintf("every hour from %s to %s", from, to), false, true
		}
	}

	// A few fixed times of day.
	if len(hours)*len(mins)*len(secs) > maxListed {
		return "", false, false
	}
	var times []string
	for _, h := range hours {
		for _, m := range mins {
			for _, s := range secs {
				times = append(times, hhmm(h, m, s))
			}
		}
	}
	return "at " + joinList(times), true, true
}

// describeDays describes the day-of-month, month and day-of-week fields:
// "" when the spec fires every day, else a phrase such as "on Monday
// through Friday", "on day 1 of the month" or "in January".
func (f *fields) describeDays() (string, bool) {
	if f.terms != nil {
		return f.describeTermDays()
	}
	doms, dows, months := values(f.dom, 1, 31), values(f.dow, 0, 6), values(f.month, 1, 12)
	allDoms, allDows := len(doms) == 31, len(dows) == 7

	// cron's day rule: with day of month or day of week a bare *, a day
	// must match both (and the * matches every day); with both restricted,
	// either.
	either := f.dom&starBit == 0 && f.dow&starBit == 0
	if either && (allDoms || allDows) {
		allDoms, allDows = true, true
	}

	var inMonths string
	if len(months) < 12 {
		runs := runsOf(months, nil)
		if len(runs) > maxListed {
			return "", false
		}
		inMonths = "in " + joinList(namedRuns(runs, monthNames[:]))
	}

	var dayOfMonth string
	if !allDoms {
		runs := runsOf(doms, nil)
		if len(runs) > maxListed {
			return "", false
		}
		noun := "day "
		if len(doms) > 1 {
			noun = "days "
		}
		of := "of the month"
		if inMonths != "" {
			if len(doms) == 1 && len(months) == 1 && allDows {
				return fmt.Sprintf("on %d %s", doms[0], monthNames[months[0]]), true
			}
			of, inMonths = "of "+strings.TrimPrefix(inMonths, "in "), ""
		}
		dayOfMonth = "on " + noun + joinList(numberedRuns(runs)) + " " + of
	}

	var dayOfWeek string
	if !allDows {
		runs := runsOf(dows, weekOrder[:])
		if len(runs) > maxListed {
			return "", false
		}
		dayOfWeek = "on " + joinList(namedRuns(runs, weekdayNames()))
	}

	var phrase string
	switch {
	case dayOfMonth != "" && dayOfWeek != "":
		if inMonths != "" || !strings.HasSuffix(dayOfMonth, "of the month") {
			return "", false // "day 13 of January or Friday" is ambiguous
		}
		phrase = dayOfMonth + " or " + dayOfWeek
	case dayOfMonth != "":
		phrase = dayOfMonth
	default:
		phrase = dayOfWeek
	}
	if inMonths != "" {
		if phrase == "" {
			return inMonths, true
		}
		phrase += " " + inMonths
	}
	return phrase, true
}

// values lists the values from lo to hi set in a field.
func values(bits uint64, lo, hi int) []int {
	var out []int
	for i := lo; i <= hi; i++ {
		if has(bits, i) {
			out = append(out, i)
		}
	}
	return out
}

// evenStep reports whether vals are lo, lo+k, lo+2k, … up to hi and k
// divides the field's span, so that the field fires every k units without
// a shorter gap where it wraps around ("*/7" minutes does not: 56 to 0 is
// 4). Every value (k = 1) counts.
func evenStep(vals []int, lo, hi int) (int, bool) {
	span := hi - lo + 1
	if len(vals) < 2 || vals[0] != lo || span%len(vals) != 0 {
		return 0, false
	}
	k := span / len(vals)
	for i, v := range vals {
		if v != lo+i*k {
			return 0, false
		}
	}
	return k, true
}

// every says "every minute" or "every 5 minutes".
func every(n int, one, many string) string {
	if n == 1 {
		return "every " + one
	}
	return fmt.Sprintf("every %d %s", n, many)
}

// hhmm formats a time of day as "09:30", or "09:30:15" with seconds.
func hhmm(h, m, s int) string {
	if s != 0 {
		return fmt.Sprintf("%02d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%02d:%02d", h, m)
}

// run is a stretch of consecutive values, in a field's reading order.
type run struct{ first, last, n int }

// runsOf groups vals into runs of consecutive values. order, when set, is
// the reading order of the field's values (Monday first for days of the
// week); vals are then taken in that order.
func runsOf(vals []int, order []int) []run {
	if order != nil {
		set := make(map[int]bool, len(vals))
		for _, v := range vals {
			set[v] = true
		}
		var sorted []int
		for _, v := range order {
			if set[v] {
				sorted = append(sorted, v)
			}
		}
		vals = sorted
	}
	position := func(v int) int {
		for i, o := range order {
			if o == v {
				return i
			}
		}
		return v
	}
	var runs []run
	for _, v := range vals {
		if n := len(runs); n > 0 && position(v) == position(runs[n-1].last)+1 {
			runs[n-1].last = v
			runs[n-1].n++
			continue
		}
		runs = append(runs, run{first: v, last: v, n: 1})
	}
	// Two consecutive values read better as a list: "Saturday and Sunday".
	var out []run
	for _, r := range runs {
		if r.n == 2 {
			out = append(out, run{first: r.first, last: r.first, n: 1}, run{first: r.last, last: r.last, n: 1})
			continue
		}
		out = append(out, r)
	}
	return out
}

// namedRuns names runs: "Monday through Friday", "Sunday".
func namedRuns(runs []run, names []string) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = names[r.first]
		if r.n > 1 {
			out[i] += " through " + names[r.last]
		}
	}
	return out
}

// numberedRuns numbers runs: "1 through 7", "15".
func numberedRuns(runs []run) []string {
	out := make([]string, len(runs))
	for i, r := range runs {
		out[i] = strconv.Itoa(r.first)
		if r.n > 1 {
			out[i] += " through " + strconv.Itoa(r.last)
		}
	}
	return out
}

func weekdayNames() []string {
	names := make([]string, 7)
	for d := time.Sunday; d <= time.Saturday; d++ {
		names[d] = d.String()
	}
	return names
}

func itoaAll(vals []int) []string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = strconv.Itoa(v)
	}
	return out
}

// joinList joins items as English does: "a", "a and b", "a, b and c".
func joinList(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	}
	return strings.Join(items[:len(items)-1], ", ") + " and " + items[len(items)-1]
}

// describeDuration says a duration of whole seconds in words: "hour",
// "90 minutes" is "1 hour 30 minutes", "45 seconds".
func describeDuration(d time.Duration) string {
	parts := []struct {
		unit      time.Duration
		one, many string
	}{{time.Hour, "hour", "hours"}, {time.Minute, "minute", "minutes"}, {time.Second, "second", "seconds"}}
	var words []string
	for _, p := range parts {
		n := int(d / p.unit)
		d -= time.Duration(n) * p.unit
		switch {
		case n == 1:
			words = append(words, "1 "+p.one)
		case n > 1:
			words = append(words, fmt.Sprintf("%d %s", n, p.many))
		}
	}
	if len(words) == 1 && strings.HasPrefix(words[0], "1 ") {
		return strings.TrimPrefix(words[0], "1 ") // "every hour"
	}
	return strings.Join(words, " ")
}

// ordinals name the k-th weekday of a month, for n#k.
var ordinals = [...]string{1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}

// describeTermDays describes day fields with calendar terms: "on the last
// business day of the month", "on the second Monday of January", "on day 1
// and the last day of the month or on the last Friday of the month". The
// plain values of a field are listed before its terms. A business day here
// is Monday to Friday: holidays are the calendars' business.
func (f *fields) describeTermDays() (string, bool) {
	doms, dows, months := values(f.dom, 1, 31), values(f.dow, 0, 6), values(f.month, 1, 12)
	t := f.terms
	domStar, dowStar := f.dom&starBit != 0, f.dow&starBit != 0

	of := "of the month"
	if len(months) < 12 {
		runs := runsOf(months, nil)
		if len(runs) > maxListed {
			return "", false
		}
		of = "of " + joinList(namedRuns(runs, monthNames[:]))
	}

	var domItems []string
	if !domStar {
		for _, v := range doms {
			domItems = append(domItems, "day "+strconv.Itoa(v))
		}
		for _, n := range t.beforeLast {
			if n == 0 {
				domItems = append(domItems, "the last day")
			} else {
				domItems = append(domItems, "the "+ordinal(n+1)+"-to-last day")
			}
		}
		for _, n := range t.nearest {
			domItems = append(domItems, fmt.Sprintf("the business day nearest day %d", n))
		}
		if t.lastWeekday {
			domItems = append(domItems, "the last business day")
		}
	}
	var dowItems []string
	if !dowStar {
		names := weekdayNames()
		for _, v := range dows {
			dowItems = append(dowItems, names[v])
		}
		for _, d := range weekOrder {
			if t.lastOf&(1<<d) != 0 {
				dowItems = append(dowItems, "the last "+names[d]+" "+of)
			}
		}
		for k := 1; k <= 5; k++ {
			for _, d := range weekOrder {
				if t.nth[k]&(1<<d) != 0 {
					dowItems = append(dowItems, "the "+ordinals[k]+" "+names[d]+" "+of)
				}
			}
		}
	}
	if len(domItems)+len(dowItems) > maxListed {
		return "", false
	}

	var phrases []string
	if len(domItems) > 0 {
		phrases = append(phrases, "on "+joinList(domItems)+" "+of)
	}
	if len(dowItems) > 0 {
		phrases = append(phrases, "on "+joinList(dowItems))
	}
	if len(months) < 12 && len(dows) > 0 && !dowStar {
		return "", false // "on Monday and the last Friday of May" does not say that Mondays are only May's
	}
	return strings.Join(phrases, " or "), true
}

// ordinal writes n as "2nd", "3rd", "11th", "21st".
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return strconv.Itoa(n) + suffix
}
