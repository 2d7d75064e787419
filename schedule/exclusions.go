package schedule

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/tributary-go/tributary/internal/durfmt"
)

// Excluded dates.
//
// A spec may exclude dates, named by holiday calendars: a slot whose
// nominal local date (Occurrence.Nominal's) is excluded does not run as
// it is. With ExcludedSkip it is recorded as skipped, naming the calendar
// and the date; with ExcludedNextBusinessDay it moves to the same wall
// time on the next Monday-to-Friday date that is not excluded, placed in
// the zone like any slot of that date (with the spec's DST policy), and a
// moved slot that falls on the instant of another slot is one slot with
// it. Exclusions apply to every spec, fixed-time or not; an @every spec's
// slots are excluded by their local date too, and skipped (they follow
// each other by their interval, so they have no wall time to move).

// OnExcluded says what a slot on an excluded date does.
type OnExcluded string

// What a slot on an excluded date does.
const (
	// ExcludedSkip, the default, records the slot as skipped
	// (Occurrence.Skipped), naming the calendar and the date.
	ExcludedSkip OnExcluded = "skip"
	// ExcludedNextBusinessDay moves the slot to the same wall time on the
	// next Monday-to-Friday date that is not excluded.
	ExcludedNextBusinessDay OnExcluded = "next-business-day"
)

// ExcludedDate is a local date a spec does not fire on, and the calendar
// that excludes it.
type ExcludedDate struct {
	// Date is the date: its year, month and day, whatever its zone and
	// time of day.
	Date time.Time
	// Calendar names the calendar that excludes the date, for the notes.
	Calendar string
}

// exclusions are a spec's excluded dates, by day number (days since
// 1970-01-01), and what their slots do.
type exclusions struct {
	days map[int64]string // the calendar of each excluded day
	on   OnExcluded
	// lookback is the most days a slot moves (ExcludedNextBusinessDay):
	// Next looks that far back for a moved slot that lands after after.
	lookback int64
}

// WithExclusions returns a copy of the spec that does not fire on dates,
// doing on with their slots ("" is ExcludedSkip). The error is a
// *ValidationError naming OnExcluded when it is not a policy. A date
// excluded twice names the first calendar given.
func (s *Spec) WithExclusions(dates []ExcludedDate, on OnExcluded) (*Spec, error) {
	switch on {
	case "":
		on = ExcludedSkip
	case ExcludedSkip, ExcludedNextBusinessDay:
	default:
		return nil, &ValidationError{Field: "OnExcluded", Problem: fmt.Sprintf("%q is not a policy for excluded dates; use skip or next-business-day", on)}
	}
	if on == ExcludedNextBusinessDay && s.every != 0 {
		return nil, &ValidationError{Field: "OnExcluded", Problem: fmt.Sprintf(
			"an @every schedule's slots follow each other by %s, not by the calendar, so they cannot move to the next business day; use skip", s.every)}
	}
	c := *s
	c.excluded = nil
	if len(dates) == 0 {
		return &c, nil
	}
	e := &exclusions{days: make(map[int64]string, len(dates)), on: on}
	for _, d := range dates {
		day := dayNumber(d.Date)
		if _, ok := e.days[day]; !ok {
			e.days[day] = d.Calendar
		}
	}
	for day := range e.days {
		e.lookback = max(e.lookback, e.nextBusinessDay(day)-day)
	}
	c.excluded = e
	return &c, nil
}

// dayNumber is the number of the civil date of t (its year, month and
// day) counted from 1970-01-01.
func dayNumber(t time.Time) int64 {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
}

// dayOf is the date of day number n, at 00:00 (a wall time, see fields).
func dayOf(n int64) time.Time { return time.Unix(n*86400, 0).UTC() }

// nextBusinessDay is the first Monday-to-Friday day after day that is not
// excluded.
func (e *exclusions) nextBusinessDay(day int64) int64 {
	for d := day + 1; ; d++ {
		if wd := dayOf(d).Weekday(); wd == time.Saturday || wd == time.Sunday {
			continue
		}
		if _, excluded := e.days[d]; !excluded {
			return d
		}
	}
}

// nominalDay is the day number of an occurrence's nominal date.
func nominalDay(o Occurrence) int64 {
	wall, err := time.Parse(nominalLayout, o.Nominal)
	if err != nil {
		return dayNumber(o.At)
	}
	return dayNumber(wall)
}

// name names an excluded day and its calendar: "2026-12-25 (us-holidays)".
func (e *exclusions) name(day int64) string {
	return fmt.Sprintf("%s (%s)", dayOf(day).Format(time.DateOnly), e.days[day])
}

// nextExcluding is Next with the spec's excluded dates.
func (s *Spec) nextExcluding(after time.Time) (Occurrence, bool) {
	e := s.excluded
	if e.on == ExcludedSkip {
		o, ok := s.nextIncluding(after)
		if !ok {
			return o, false
		}
		if day := nominalDay(o); e.has(day) {
			o.Skipped, o.Shifted, o.Excluded = true, false, e.name(day)
			o.Note = joinNotes(fmt.Sprintf("%s is excluded by calendar %s; skipped", dayOf(day).Format(time.DateOnly), e.days[day]), o.Note)
		}
		return o, true
	}

	// The first slot after after on a date that is not excluded...
	var best Occurrence
	found := false
	for from := after; ; {
		o, ok := s.nextIncluding(from)
		if !ok {
			break
		}
		if !e.has(nominalDay(o)) {
			best, found = o, true
			break
		}
		from = o.At
	}
	// ...or a slot moved from an excluded date, which may lie before after
	// (by e.lookback days at most), and not after best's date (a slot
	// moves to a later date).
	firstDay := dayNumber(after.In(s.loc)) - e.lookback - 1
	lastDay := firstDay + int64(s.horizon())*366 + e.lookback + 2
	if found {
		lastDay = nominalDay(best)
	}
	days := make([]int64, 0, 4)
	for day := range e.days {
		if day >= firstDay && day <= lastDay {
			days = append(days, day)
		}
	}
	slices.Sort(days)
	for _, day := range days {
		if o, ok := s.movedAfter(day, after); ok && (!found || o.At.Before(best.At)) {
			best, found = o, true
		} else if ok && o.At.Equal(best.At) {
			// One slot: the one of the date it lands on, whose note says
			// what DST did; the moved one adds why it moved.
			moved, _, _ := strings.Cut(o.Note, ". ")
			best.Note = joinNotes(best.Note, moved)
		}
	}
	return best, found
}

// has reports whether day is excluded.
func (e *exclusions) has(day int64) bool {
	_, ok := e.days[day]
	return ok
}

// movedAfter returns the first slot of excluded day moved to the next
// business day that falls after after. The slots of day are its wall
// times that match the spec, each resolved on its new date: a wall time
// the clocks skipped on day runs on the new date if it exists there.
func (s *Spec) movedAfter(day int64, after time.Time) (Occurrence, bool) {
	e := s.excluded
	to := e.nextBusinessDay(day)
	shift := time.Duration(to-day) * 24 * time.Hour
	note := fmt.Sprintf("%s is excluded by calendar %s; runs on the next business day, %s",
		dayOf(day).Format(time.DateOnly), e.days[day], dayOf(to).Format(time.DateOnly))
	start, end := dayOf(day), dayOf(day+1).Add(-time.Second)
	for wall := start.Add(-time.Second); ; {
		var ok bool
		if wall, ok = s.rule.next(wall, end); !ok {
			return Occurrence{}, false
		}
		for _, moved := range s.placeWall(wall.Add(shift)) {
			if moved.At.After(after) {
				moved.Nominal, moved.Excluded = nominal(wall), e.name(day)
				moved.Note = joinNotes(note, moved.Note)
				return moved, true
			}
		}
	}
}

// placeWall places a wall time as the spec places its own: with its DST
// policy for a fixed-time spec, at every instant with that wall time for
// one that follows elapsed time. It returns the occurrences in order: one,
// two (a fold both runs, or an elapsed spec's), or none (a gap an elapsed
// spec skips), each with a note when DST played a part.
func (s *Spec) placeWall(w time.Time) []Occurrence {
	p := place(w, s.loc)
	o := Occurrence{At: p.first.In(s.loc), Nominal: nominal(w)}
	gapFrom, gapTo := wallAt(p.transition, p.offsetBefore), wallAt(p.transition, p.offsetAfter)
	missing := fmt.Sprintf("%s does not exist on %s in %s (clocks jump from %s to %s)",
		clock(w), w.Format(time.DateOnly), s.loc, clock(gapFrom), clock(gapTo))
	switch {
	case p.gap && !s.fixed:
		return nil
	case p.gap && s.dst.Gap == DSTGapShift:
		o.At, o.Shifted = instantAt(w, p.offsetBefore).In(s.loc), true
		o.Note = fmt.Sprintf("%s; runs at %s, shifted by the jump's length (%s)", missing, clock(wallAt(o.At, p.offsetAfter)), durfmt.Short(gapTo.Sub(gapFrom)))
	case p.gap && s.dst.Gap == DSTGapSkip:
		o.Skipped = true
		o.Note = missing + "; skipped, as the schedule's DST policy says (gap: skip)"
	case p.gap:
		o.Shifted = true
		o.Note = fmt.Sprintf("%s; runs at %s, right after the jump", missing, clock(gapTo))
	case p.second.IsZero():
	case !s.fixed || s.dst.Fold == DSTFoldBoth:
		o.Note = s.foldNote(w, p, "first", p.offsetBefore)
		second := o
		second.At, second.Note = p.second.In(s.loc), s.foldNote(w, p, "second", p.offsetAfter)
		return []Occurrence{o, second}
	case s.dst.Fold == DSTFoldLast:
		o.At, o.Note = p.second.In(s.loc), s.foldNote(w, p, "second", p.offsetAfter)
	default:
		o.Note = s.foldNote(w, p, "first", p.offsetBefore)
	}
	return []Occurrence{o}
}
