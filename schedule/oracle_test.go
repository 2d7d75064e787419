package schedule

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The oracle: when a 5-field cron expression fires in a zone under a DST
// policy, computed by brute force over civil time and written apart from
// the implementation: its own parser of the fields and the calendar terms,
// dates walked one by one with the time package's calendar, and each
// wall time placed by trying every UTC offset the zone has near it.

// oracleSpec is an expression as the oracle reads it.
type oracleSpec struct {
	minutes, hours, doms, months, dows [60]bool
	domStar, dowStar                   bool
	domTerms, dowTerms                 []string
	fixed                              bool
}

var oracleNames = map[string]int{"SUN": 0, "MON": 1, "TUE": 2, "WED": 3, "THU": 4, "FRI": 5, "SAT": 6,
	"JAN": 1, "FEB": 2, "MAR": 3, "APR": 4, "MAY": 5, "JUN": 6, "JUL": 7, "AUG": 8, "SEP": 9, "OCT": 10, "NOV": 11, "DEC": 12}

func oracleParse(t *testing.T, expr string) *oracleSpec {
	parts := strings.Fields(expr)
	require.Len(t, parts, 5, expr)
	o := &oracleSpec{fixed: !strings.ContainsAny(parts[0]+parts[1], "*?/")}
	o.minutes, _ = oracleSet(t, parts[0], 0, 59)
	o.hours, _ = oracleSet(t, parts[1], 0, 23)
	o.months, _ = oracleSet(t, parts[3], 1, 12)

	var plain []string
	for _, item := range strings.Split(parts[2], ",") {
		if strings.ContainsAny(item, "LW") {
			o.domTerms = append(o.domTerms, item)
		} else {
			plain = append(plain, item)
		}
	}
	if len(plain) > 0 {
		o.doms, o.domStar = oracleSet(t, strings.Join(plain, ","), 1, 31)
	}
	plain = nil
	for _, item := range strings.Split(parts[4], ",") {
		if strings.ContainsAny(item, "#") || strings.HasSuffix(item, "L") {
			o.dowTerms = append(o.dowTerms, item)
		} else {
			plain = append(plain, item)
		}
	}
	if len(plain) > 0 {
		o.dows, o.dowStar = oracleSet(t, strings.Join(plain, ","), 0, 7)
		if o.dows[7] {
			o.dows[0] = true
		}
	}
	return o
}

// oracleSet reads a plain field: values, names, ranges, steps, * and ?.
func oracleSet(t *testing.T, field string, lo, hi int) (set [60]bool, star bool) {
	value := func(s string) int {
		if n, ok := oracleNames[strings.ToUpper(s)]; ok {
			return n
		}
		n, err := strconv.Atoi(s)
		require.NoError(t, err, field)
		return n
	}
	for _, item := range strings.Split(field, ",") {
		rng, stepText, stepped := strings.Cut(item, "/")
		step := 1
		if stepped {
			step = value(stepText)
		}
		from, to := lo, hi
		switch {
		case rng == "*" || rng == "?":
			star = star || step == 1
		case strings.Contains(rng, "-"):
			a, b, _ := strings.Cut(rng, "-")
			from, to = value(a), value(b)
		default:
			from = value(rng)
			if !stepped {
				to = from
			}
		}
		for v := from; v <= to; v += step {
			set[v] = true
		}
	}
	return set, star
}

// matchesDate reports whether the oracle's day fields match date.
func (o *oracleSpec) matchesDate(t *testing.T, date time.Time) bool {
	if !o.months[date.Month()] {
		return false
	}
	dom := o.doms[date.Day()]
	for _, term := range o.domTerms {
		dom = dom || oracleDomTerm(t, term, date)
	}
	dow := o.dows[date.Weekday()]
	for _, term := range o.dowTerms {
		dow = dow || oracleDowTerm(t, term, date)
	}
	if o.domStar || o.dowStar {
		return dom && dow
	}
	return dom || dow
}

func sameMonth(a, b time.Time) bool { return a.Year() == b.Year() && a.Month() == b.Month() }

func oracleDomTerm(t *testing.T, term string, date time.Time) bool {
	y, m, _ := date.Date()
	switch {
	case term == "L" || strings.HasPrefix(term, "L-"):
		n := 0
		if term != "L" {
			n, _ = strconv.Atoi(term[2:])
		}
		return sameMonth(date.AddDate(0, 0, n), date) && !sameMonth(date.AddDate(0, 0, n+1), date)
	case term == "LW":
		last := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC)
		for last.Weekday() == time.Saturday || last.Weekday() == time.Sunday {
			last = last.AddDate(0, 0, -1)
		}
		return last.Day() == date.Day()
	case strings.HasSuffix(term, "W"):
		n, err := strconv.Atoi(strings.TrimSuffix(term, "W"))
		require.NoError(t, err)
		target := time.Date(y, m, n, 0, 0, 0, 0, time.UTC)
		if !sameMonth(target, date) {
			return false // the month is shorter than n
		}
		switch target.Weekday() {
		case time.Saturday:
			if n == 1 {
				target = target.AddDate(0, 0, 2)
			} else {
				target = target.AddDate(0, 0, -1)
			}
		case time.Sunday:
			if sameMonth(target.AddDate(0, 0, 1), target) {
				target = target.AddDate(0, 0, 1)
			} else {
				target = target.AddDate(0, 0, -2)
			}
		}
		return target.Day() == date.Day()
	}
	t.Fatalf("oracle: unknown term %q", term)
	return false
}

func oracleDowTerm(t *testing.T, term string, date time.Time) bool {
	day, k, nth := strings.Cut(term, "#")
	if !nth {
		day = strings.TrimSuffix(term, "L")
	}
	wd, ok := oracleNames[strings.ToUpper(day)]
	if !ok {
		var err error
		wd, err = strconv.Atoi(day)
		require.NoError(t, err)
	}
	if date.Weekday() != time.Weekday(wd%7) {
		return false
	}
	if !nth {
		return !sameMonth(date.AddDate(0, 0, 7), date)
	}
	count := 0
	for d := time.Date(date.Year(), date.Month(), 1, 0, 0, 0, 0, time.UTC); !d.After(date); d = d.AddDate(0, 0, 1) {
		if d.Weekday() == date.Weekday() {
			count++
		}
	}
	want, _ := strconv.Atoi(k)
	return count == want
}

// oracleFire is one fire the oracle found.
type oracleFire struct {
	at      time.Time
	nominal string
	skipped bool
	merged  bool // more than one wall time fell on this instant
}

// oracleExclusions are excluded dates ("2006-01-02") and what their
// slots do.
type oracleExclusions struct {
	dates map[string]bool
	on    OnExcluded
}

// oracleFires returns the fires in [from, to) of expr in loc under policy
// and the exclusions ex (nil for none).
func oracleFires(t *testing.T, expr string, loc *time.Location, policy DSTPolicy, ex *oracleExclusions, from, to time.Time) []oracleFire {
	o := oracleParse(t, expr)
	policy, err := policy.withDefaults()
	require.NoError(t, err)

	byInstant := map[int64]*oracleFire{}
	add := func(at time.Time, wall time.Time, skipped bool) {
		f := byInstant[at.Unix()]
		if f == nil {
			byInstant[at.Unix()] = &oracleFire{at: at, nominal: wall.Format(nominalLayout), skipped: skipped}
			return
		}
		f.merged = true
		f.skipped = f.skipped && skipped // a time that runs wins over a skipped one
	}

	// offsetsNear are the UTC offsets loc has around date.
	offsetsNear := func(date time.Time) []int {
		var offsets []int
		for i := date.Add(-36 * time.Hour); i.Before(date.Add(60 * time.Hour)); i = i.Add(30 * time.Minute) {
			if _, off := i.In(loc).Zone(); !slices.Contains(offsets, off) {
				offsets = append(offsets, off)
			}
		}
		return offsets
	}
	// placed are the instants wall fires at, by the policy: skipped ones
	// (a gap skipped) flagged.
	type placedFire struct {
		at      time.Time
		skipped bool
	}
	placed := func(wall time.Time, offsets []int) []placedFire {
		var instants []time.Time
		for _, off := range offsets {
			i := time.Unix(wall.Unix()-int64(off), 0).In(loc)
			if _, o := i.Zone(); time.Unix(i.Unix()+int64(o), 0).UTC().Equal(wall) && !slices.ContainsFunc(instants, i.Equal) {
				instants = append(instants, i)
			}
		}
		slices.SortFunc(instants, func(a, b time.Time) int { return a.Compare(b) })
		var out []placedFire
		switch {
		case !o.fixed:
			for _, i := range instants {
				out = append(out, placedFire{at: i})
			}
		case len(instants) == 2 && policy.Fold == DSTFoldFirst:
			out = append(out, placedFire{at: instants[0]})
		case len(instants) == 2 && policy.Fold == DSTFoldLast:
			out = append(out, placedFire{at: instants[1]})
		case len(instants) > 0:
			for _, i := range instants {
				out = append(out, placedFire{at: i})
			}
		default:
			// The clocks jumped over wall: find the jump, the first
			// instant whose wall time is later, a minute at a time.
			lo, hi := offsets[0], offsets[0]
			for _, off := range offsets {
				lo, hi = min(lo, off), max(hi, off)
			}
			var jump time.Time
			for i := time.Unix(wall.Unix()-int64(hi), 0).Add(-time.Hour); i.Before(time.Unix(wall.Unix()-int64(lo), 0).Add(time.Hour)); i = i.Add(time.Minute) {
				if wallOfOracle(i, loc).After(wall) {
					jump = i
					break
				}
			}
			require.False(t, jump.IsZero(), "oracle: no jump found for %s in %s", wall, loc)
			_, before := jump.Add(-time.Second).In(loc).Zone()
			switch policy.Gap {
			case DSTGapJump:
				out = append(out, placedFire{at: jump.In(loc)})
			case DSTGapShift:
				out = append(out, placedFire{at: time.Unix(wall.Unix()-int64(before), 0).In(loc)})
			case DSTGapSkip:
				out = append(out, placedFire{at: jump.In(loc), skipped: true})
			}
		}
		return out
	}
	excluded := func(date time.Time) bool { return ex != nil && ex.dates[date.Format(time.DateOnly)] }

	first := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, -12)
	last := to.UTC().AddDate(0, 0, 3)
	for date := first; date.Before(last); date = date.AddDate(0, 0, 1) {
		if !o.matchesDate(t, date) {
			continue
		}
		offsets := offsetsNear(date)
		// Where a slot of an excluded date moves: the next Monday to
		// Friday that is not excluded.
		var movedTo time.Time
		if excluded(date) && ex.on == ExcludedNextBusinessDay {
			for movedTo = date.AddDate(0, 0, 1); movedTo.Weekday() == time.Saturday || movedTo.Weekday() == time.Sunday || excluded(movedTo); {
				movedTo = movedTo.AddDate(0, 0, 1)
			}
		}
		for h := range 24 {
			for m := range 60 {
				if !o.hours[h] || !o.minutes[m] {
					continue
				}
				wall := date.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
				switch {
				case !excluded(date):
					for _, f := range placed(wall, offsets) {
						add(f.at, wall, f.skipped)
					}
				case ex.on == ExcludedSkip:
					for _, f := range placed(wall, offsets) {
						add(f.at, wall, true)
					}
				default:
					moved := movedTo.Add(wall.Sub(date))
					for _, f := range placed(moved, offsetsNear(movedTo)) {
						add(f.at, wall, f.skipped)
					}
				}
			}
		}
	}

	var fires []oracleFire
	for _, f := range byInstant {
		if !f.at.Before(from) && f.at.Before(to) {
			fires = append(fires, *f)
		}
	}
	slices.SortFunc(fires, func(a, b oracleFire) int { return a.at.Compare(b.at) })
	return fires
}

func wallOfOracle(i time.Time, loc *time.Location) time.Time {
	_, off := i.In(loc).Zone()
	return time.Unix(i.Unix()+int64(off), 0).UTC()
}

// oracleZones: no DST, both hemispheres, half-hour and 45-minute offsets
// and changes, changes at midnight, negative DST (Dublin), DST suspended
// for Ramadan (Casablanca), and zones whose DST ended.
var oracleZones = []string{
	"UTC", "America/New_York", "America/Los_Angeles", "America/St_Johns", "America/Santiago", "America/Sao_Paulo",
	"America/Havana", "Europe/London", "Europe/Berlin", "Europe/Dublin", "Africa/Casablanca", "Asia/Tehran",
	"Asia/Jerusalem", "Australia/Sydney", "Australia/Lord_Howe", "Australia/Adelaide", "Pacific/Auckland", "Pacific/Chatham",
}

// oracleParts are the pieces random expressions are made of: times near
// the hours clocks change at, and every calendar term.
var oracleParts = [5][]string{
	{"0", "30", "15,45", "0-59/20", "*/30", "59", "0,30"},
	{"2", "1,2", "0-3", "*/6", "*", "23", "0", "1", "3", "2,3"},
	{"*", "L", "L-2", "15W", "1W", "LW", "1,15,L", "31W", "13", "?", "L-6", "28-31"},
	{"*", "*", "2", "3,10,11", "*/2", "4-9", "9-11", "3,4"},
	{"*", "5L", "MON#2", "1#1,5L", "0", "1-5", "?", "7", "SUN#1", "6L", "0#5"},
}

// TestNextMatchesOracle compares Next with the oracle on thousands of
// random expressions mixing calendar terms, DST policies and excluded
// dates (skipped or moved to the next business day), over five
// weeks around a clock change of each of 18 zones, half of them firing
// every day so that the clock changes' days are among their slots.
func TestNextMatchesOracle(t *testing.T) {
	t.Parallel()

	const perZone = 200
	gaps := []DSTGap{DSTGapJump, DSTGapShift, DSTGapSkip}
	folds := []DSTFold{DSTFoldFirst, DSTFoldLast, DSTFoldBoth}
	for zi, zone := range oracleZones {
		t.Run(strings.ReplaceAll(zone, "/", "_"), func(t *testing.T) {
			t.Parallel()

			var cases, fires, skipped, shifted, twice, moved int
			defer func() {
				t.Logf("%d expressions, %d fires (%d skipped, %d shifted, %d wall times run twice, %d moved to the next business day)",
					cases, fires, skipped, shifted, twice, moved)
			}()
			rng := rand.New(rand.NewPCG(uint64(zi), 27))
			loc, err := time.LoadLocation(zone)
			require.NoError(t, err)
			for range perZone {
				var fields []string
				for _, parts := range oracleParts {
					fields = append(fields, parts[rng.IntN(len(parts))])
				}
				if rng.IntN(2) == 0 {
					fields[2], fields[3], fields[4] = "*", "*", "*" // every day, the clock change's too
				}
				expr := strings.Join(fields, " ")
				policy := DSTPolicy{Gap: gaps[rng.IntN(len(gaps))], Fold: folds[rng.IntN(len(folds))]}

				spec, err := ParseSpec(expr, zone)
				if err != nil {
					require.ErrorIs(t, err, ErrNoOccurrence, expr)
					continue
				}
				spec, err = spec.WithDST(policy)
				require.NoError(t, err)

				// Five weeks from three days before a clock change (or any
				// five weeks, for a zone without one).
				start := time.Date(2001+rng.IntN(60), time.Month(1+rng.IntN(12)), 1+rng.IntN(28), 0, 0, 0, 0, loc)
				if _, end := zoneBounds(start); !end.IsZero() && end.Before(start.AddDate(1, 0, 0)) {
					start = end.Add(-3 * 24 * time.Hour)
				}
				from, to := start, start.Add(35*24*time.Hour)

				// Half of the cases exclude dates: runs of one to four days
				// around the window, the clock change's day among them at
				// times, skipped or moved to the next business day.
				var ex *oracleExclusions
				if rng.IntN(2) == 0 {
					ex = &oracleExclusions{dates: map[string]bool{}, on: []OnExcluded{ExcludedSkip, ExcludedNextBusinessDay}[rng.IntN(2)]}
					var dates []ExcludedDate
					for range 1 + rng.IntN(5) {
						day := time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, rng.IntN(42)-7)
						for range 1 + rng.IntN(4) {
							ex.dates[day.Format(time.DateOnly)] = true
							dates = append(dates, ExcludedDate{Date: day, Calendar: "holidays"})
							day = day.AddDate(0, 0, 1)
						}
					}
					if spec, err = spec.WithExclusions(dates, ex.on); err != nil {
						t.Fatal(err)
					}
				}

				want := oracleFires(t, expr, loc, policy, ex, from, to)
				var got []Occurrence
				for after := from.Add(-time.Second); ; {
					occurrence, ok := spec.Next(after)
					if !ok || !occurrence.At.Before(to) {
						break
					}
					got = append(got, occurrence)
					after = occurrence.At
				}
				describe := func() string {
					var b strings.Builder
					fmt.Fprintf(&b, "%q in %s, %+v, from %s, excluding %v:\n", expr, zone, policy, from, ex)
					for _, w := range want {
						fmt.Fprintf(&b, "  want %s %s skipped=%v\n", w.at.Format(time.RFC3339), w.nominal, w.skipped)
					}
					for _, g := range got {
						fmt.Fprintf(&b, "  got  %s %s skipped=%v %s\n", g.At.Format(time.RFC3339), g.Nominal, g.Skipped, g.Note)
					}
					return b.String()
				}
				if len(got) != len(want) {
					t.Fatal(describe())
				}
				cases, fires = cases+1, fires+len(got)
				for i, g := range got {
					switch {
					case g.Excluded != "" && !g.Skipped:
						moved++
					case g.Skipped:
						skipped++
					case g.Shifted:
						shifted++
					case i > 0 && g.Nominal == got[i-1].Nominal:
						twice++
					}
				}
				for i, w := range want {
					if !w.at.Equal(got[i].At) || w.skipped != got[i].Skipped || (!w.merged && w.nominal != got[i].Nominal) {
						t.Fatalf("fire %d differs: %s", i, describe())
					}
				}
			}
		})
	}
}
