package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Calendar terms in the day fields.
//
// Beside numbers, ranges, lists and steps, the day-of-month field takes
// L (the last day of the month), L-n (n days before the last: L-1 is the
// day before it; no slot in a month where that is before the 1st), nW
// (the Monday-to-Friday day nearest day n, in the same month: a Saturday
// goes to Friday n-1, but the 1st to Monday the 3rd; a Sunday goes to
// Monday n+1, but past the month's end to Friday n-2; no slot in a month
// shorter than n) and LW (the last Monday-to-Friday day of the month). The
// day-of-week field takes nL or FRIL (the last such weekday of the month)
// and n#k or MON#2 (the k-th such weekday, k from 1 to 5; no slot in a
// month without a fifth). A term stands alone or in a comma list beside
// plain values ("1,15,L", "1#1,5L"), never in a range or a step.
//
// robfig/cron knows none of them: ParseSpec takes them out of their
// fields before robfig/cron parses the rest, and fields matches them
// itself (dayTerms).

// dayTerms are the calendar terms of a spec's day-of-month and day-of-week
// fields. A day matches the day-of-month field when it is one of the
// field's plain values or matches one of its terms, and likewise for the
// day-of-week field; cron's day rule then combines the two as for plain
// fields.
type dayTerms struct {
	// Day of month.
	beforeLast  []int // L-n: n days before the last day (0 for L)
	nearest     []int // nW: the weekday nearest day n
	lastWeekday bool  // LW

	// Day of week, each a set of weekdays (bit d for time.Weekday d).
	lastOf uint8    // nL: the last such weekday of the month
	nth    [6]uint8 // n#k: nth[k], the k-th such weekday of the month
}

// hasDom reports whether the day-of-month field has a term.
func (t *dayTerms) hasDom() bool { return len(t.beforeLast) > 0 || len(t.nearest) > 0 || t.lastWeekday }

// hasDow reports whether the day-of-week field has a term.
func (t *dayTerms) hasDow() bool {
	if t.lastOf != 0 {
		return true
	}
	for _, set := range t.nth {
		if set != 0 {
			return true
		}
	}
	return false
}

// matchesDom reports whether day d of a month of last days, a weekday wd,
// matches a day-of-month term.
func (t *dayTerms) matchesDom(d, wd, last int) bool {
	for _, n := range t.beforeLast {
		if d == last-n {
			return true
		}
	}
	for _, n := range t.nearest {
		if d == nearestWeekday(d, wd, n, last) {
			return true
		}
	}
	return t.lastWeekday && d == nearestWeekday(d, wd, last, last)
}

// matchesDow reports whether day d of a month of last days, a weekday wd,
// matches a day-of-week term.
func (t *dayTerms) matchesDow(d, wd, last int) bool {
	bit := uint8(1) << wd
	if t.lastOf&bit != 0 && d+7 > last {
		return true
	}
	return t.nth[(d-1)/7+1]&bit != 0
}

// nearestWeekday returns the day that nW names in a month of last days, in
// which day d is a weekday wd: day n, or the Monday-to-Friday day nearest
// it in the same month; 0 when the month is shorter than n.
func nearestWeekday(d, wd, n, last int) int {
	if n > last {
		return 0
	}
	// The weekday of day n, from day d's.
	switch ((wd+n-d)%7 + 7) % 7 {
	case int(time.Saturday):
		if n == 1 {
			return 3
		}
		return n - 1
	case int(time.Sunday):
		if n == last {
			return n - 2
		}
		return n + 1
	}
	return n
}

// daysIn returns the number of days of month in year.
func daysIn(year int, month time.Month) int {
	switch month {
	case time.April, time.June, time.September, time.November:
		return 30
	case time.February:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 31
}

// weekdayNumbers are the day-of-week names cron takes.
var weekdayNumbers = map[string]int{"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6}

// termError is a malformed term: the field, the term and what is wrong.
type termError struct{ field, term, reason string }

func (e *termError) Error() string {
	return fmt.Sprintf("the %s field's %q %s", e.field, e.term, e.reason)
}

// takeTerms takes the calendar terms out of the day fields of a
// normalized cron expression that is not a descriptor. It returns the
// expression for robfig/cron (the plain values only, with a placeholder
// where a field held only terms: day 1 or Sunday, which the caller clears
// with clear), and the terms, nil when there are none. It also writes a
// day of week 7 as 0 (both are Sunday; robfig/cron knows only 0).
func takeTerms(expr string) (plain string, terms *dayTerms, clear fields, err error) {
	parts := strings.Fields(expr)
	if len(parts) != 5 && len(parts) != 6 {
		return expr, nil, fields{}, nil // robfig/cron says what is wrong
	}
	domAt, dowAt := len(parts)-3, len(parts)-1
	terms = &dayTerms{}

	var domPlain []string
	for _, item := range strings.Split(parts[domAt], ",") {
		upper := strings.ToUpper(item)
		if !strings.ContainsAny(upper, "LW") {
			domPlain = append(domPlain, item)
			continue
		}
		if err := terms.addDom(upper); err != nil {
			return "", nil, fields{}, &termError{field: "day-of-month", term: item, reason: err.Error()}
		}
	}
	var dowPlain []string
	for _, item := range strings.Split(parts[dowAt], ",") {
		upper := strings.ToUpper(item)
		if !strings.Contains(upper, "#") && !strings.HasSuffix(upper, "L") {
			dowPlain = append(dowPlain, sundaySeven(item)...)
			continue
		}
		if err := terms.addDow(upper); err != nil {
			return "", nil, fields{}, &termError{field: "day-of-week", term: item, reason: err.Error()}
		}
	}

	if len(domPlain) == 0 {
		domPlain, clear.dom = []string{"1"}, 1<<1
	}
	if len(dowPlain) == 0 {
		dowPlain, clear.dow = []string{"0"}, 1<<0
	}
	parts[domAt], parts[dowAt] = strings.Join(domPlain, ","), strings.Join(dowPlain, ",")
	if !terms.hasDom() && !terms.hasDow() {
		terms = nil
	}
	return strings.Join(parts, " "), terms, clear, nil
}

// addDom adds a day-of-month term, upper-cased.
func (t *dayTerms) addDom(term string) error {
	switch {
	case term == "L":
		t.beforeLast = append(t.beforeLast, 0)
	case term == "LW":
		t.lastWeekday = true
	case strings.HasPrefix(term, "L-"):
		n, err := strconv.Atoi(term[2:])
		if err != nil || n < 1 || n > 30 {
			return fmt.Errorf("is not a term: L-n takes n from 1 to 30 (L-1 is the day before the last day of the month)")
		}
		t.beforeLast = append(t.beforeLast, n)
	case strings.HasSuffix(term, "W"):
		n, err := strconv.Atoi(strings.TrimSuffix(term, "W"))
		if err != nil || n < 1 || n > 31 {
			return fmt.Errorf("is not a term: nW takes a day n from 1 to 31 (15W is the Monday-to-Friday day nearest the 15th), or write LW")
		}
		t.nearest = append(t.nearest, n)
	default:
		return fmt.Errorf("is not a term: the day-of-month field takes L, L-n, nW and LW, alone or in a comma list, not in a range or a step")
	}
	return nil
}

// addDow adds a day-of-week term, upper-cased.
func (t *dayTerms) addDow(term string) error {
	day, k, nth := strings.Cut(term, "#")
	if !nth {
		day = strings.TrimSuffix(term, "L")
	}
	wd, ok := weekdayNumbers[day]
	if !ok {
		n, err := strconv.Atoi(day)
		if err != nil || n < 0 || n > 7 {
			if !nth && day == "" {
				return fmt.Errorf("is not a term: L in the day-of-week field needs its day, such as 5L or FRIL for the last Friday of the month")
			}
			return fmt.Errorf("is not a term: a day of week is 0 to 7 (0 and 7 are Sunday) or SUN to SAT, as in 5L, FRIL, 1#2 or MON#2; terms do not stand in ranges or steps")
		}
		wd = n % 7
	}
	if !nth {
		t.lastOf |= 1 << wd
		return nil
	}
	n, err := strconv.Atoi(k)
	if err != nil || n < 1 || n > 5 {
		return fmt.Errorf("is not a term: n#k takes k from 1 to 5 (MON#2 is the second Monday of the month)")
	}
	t.nth[n] |= 1 << wd
	return nil
}

// sundaySeven writes a plain day-of-week item that names 7 (Sunday, as 0
// does) as robfig/cron, which knows only 0 to 6, takes it: "7" as "0",
// "5-7" as "5-6" and "0", "1-7/2" as its values. Any other item is left
// as it is.
func sundaySeven(item string) []string {
	rng, step, stepped := strings.Cut(item, "/")
	lo, hi, ranged := strings.Cut(rng, "-")
	if !ranged {
		if item == "7" {
			return []string{"0"}
		}
		return []string{item}
	}
	if hi != "7" {
		return []string{item}
	}
	from, err := strconv.Atoi(lo)
	if err != nil {
		if wd, ok := weekdayNumbers[strings.ToUpper(lo)]; ok {
			from, err = wd, nil
		}
	}
	by := 1
	if stepped {
		if n, serr := strconv.Atoi(step); serr == nil && n > 0 {
			by = n
		} else {
			return []string{item} // robfig/cron says what is wrong
		}
	}
	if err != nil || from < 0 || from > 7 {
		return []string{item}
	}
	var out []string
	for d := from; d <= 7; d += by {
		out = append(out, strconv.Itoa(d%7))
	}
	return out
}
