package schedule

import (
	"fmt"
	"strings"
	"time"

	"github.com/tributary-go/tributary/internal/durfmt"
)

// nextFixedTime returns the first occurrence after the whole second after of
// a fixed-time spec: the first wall time that matches, placed in the zone
// by the spec's DST policy. It walks the zone's periods of constant
// offset, as nextElapsed does. In each, the wall times that match fire in
// order, but for a stretch of wall times that repeats (clocks went back)
// the policy picks the pass (first, last or both); and where the period
// begins with a jump forward, the wall times the clocks jumped over fire
// at its start (jump), shifted by the jump's length (shift), or are
// recorded as skipped at its start (skip). Of these, the earliest after
// after is the answer; two that fall on the same instant are one
// occurrence.
func (s *Spec) nextFixedTime(after time.Time) (Occurrence, bool) {
	limit := after.AddDate(s.horizon(), 0, 0)
	for t := after.Add(time.Second).In(s.loc); !t.After(limit); {
		_, offset := t.Zone()
		start, next := zoneBounds(t)
		end := limit
		if !next.IsZero() && next.Before(limit) {
			end = next.Add(-time.Second)
		}
		var best Occurrence
		if o, ok := s.nextInPeriod(t, end, start, next, offset); ok {
			best = o
		}
		if !start.IsZero() {
			if o, ok := s.nextFromGap(after, start, offset); ok && (best.At.IsZero() || !best.At.Before(o.At)) {
				if best.At.Equal(o.At) && s.dst.Gap != DSTGapJump {
					// A wall time that exists runs; the note says what
					// merged into it (shift) or was skipped (skip).
					best.Note = joinNotes(o.Note, best.Note)
				} else {
					best = o // jump: the note says it is merged with the time at the jump's end
				}
			}
		}
		if !best.At.IsZero() {
			return best, true
		}
		if next.IsZero() {
			break
		}
		// Nothing here: on to the period of the next wall time that
		// matches, past the periods between that hold none (a rare rule
		// years away crosses many clock changes).
		w, ok := s.rule.next(wallAt(end, offset).Add(-maxOffset), wallAt(limit, offset).Add(maxOffset))
		if !ok {
			break
		}
		if earliest := instantAt(w, int(maxOffset/time.Second)); earliest.After(next) {
			next = earliest
		}
		t = next.In(s.loc)
	}
	return Occurrence{}, false
}

// nextInPeriod returns the first occurrence at or after t and at or
// before end, in the zone period [start, next) of offset, from the wall
// times of the period itself, those of a repeated stretch as the fold
// policy says.
func (s *Spec) nextInPeriod(t, end, start, next time.Time, offset int) (Occurrence, bool) {
	// A stretch at the period's beginning repeats wall times of the
	// previous period (clocks went back at start); one at its end repeats
	// in the next (clocks go back at next).
	var againTo, firstFrom time.Time // wall times
	var before, after int
	if !start.IsZero() {
		if before = offsetAt(start.Add(-time.Second), s.loc); before > offset {
			againTo = wallAt(start, before)
		}
	}
	if !next.IsZero() {
		if after = offsetAt(next, s.loc); after < offset {
			firstFrom = wallAt(next, after)
		}
	}

	from, to := wallAt(t, offset).Add(-time.Second), wallAt(end, offset)
	for {
		wall, ok := s.rule.next(from, to)
		if !ok {
			return Occurrence{}, false
		}
		at := instantAt(wall, offset).In(s.loc)
		o := Occurrence{At: at, Nominal: nominal(wall)}
		switch {
		case !againTo.IsZero() && wall.Before(againTo):
			// The second pass of a repeated wall time.
			if s.dst.Fold == DSTFoldFirst {
				from = againTo.Add(-time.Second)
				continue
			}
			p := placement{transition: start, offsetBefore: before, offsetAfter: offset}
			o.Note = s.foldNote(wall, p, "second", offset)
		case !firstFrom.IsZero() && !wall.Before(firstFrom):
			// The first pass of a wall time that comes again.
			if s.dst.Fold == DSTFoldLast {
				return Occurrence{}, false
			}
			p := placement{transition: next, offsetBefore: offset, offsetAfter: after}
			o.Note = s.foldNote(wall, p, "first", offset)
		}
		return o, true
	}
}

// nextFromGap returns the first occurrence after after that the wall times
// of the jump forward at start (from offset before it to offset) make, if
// the period begins with one: at start (jump), shifted by the jump's
// length (shift), or skipped at start (skip).
func (s *Spec) nextFromGap(after, start time.Time, offset int) (Occurrence, bool) {
	before := offsetAt(start.Add(-time.Second), s.loc)
	if before >= offset {
		return Occurrence{}, false
	}
	p := placement{first: start, gap: true, transition: start, offsetBefore: before, offsetAfter: offset}
	gapFrom, gapTo := wallAt(start, before), wallAt(start, offset)
	switch s.dst.Gap {
	case DSTGapShift:
		// A wall time w of the gap runs at w + the gap's length, the
		// instant with wall time w at the offset before the jump.
		from := gapFrom.Add(-time.Second)
		if w := wallAt(after, before); w.After(from) {
			from = w
		}
		wall, ok := s.rule.next(from, gapTo.Add(-time.Second))
		if !ok {
			return Occurrence{}, false
		}
		at := instantAt(wall, before).In(s.loc)
		return Occurrence{At: at, Nominal: nominal(wall), Shifted: true,
			Note: fmt.Sprintf("%s does not exist on %s in %s (clocks jump from %s to %s); runs at %s, shifted by the jump's length (%s)",
				clock(wall), wall.Format(time.DateOnly), s.loc, clock(gapFrom), clock(gapTo), clock(wallAt(at, offset)), durfmt.Short(gapTo.Sub(gapFrom)))}, true
	default:
		if !start.After(after) {
			return Occurrence{}, false
		}
		wall, ok := s.rule.next(gapFrom.Add(-time.Second), gapTo.Add(-time.Second))
		if !ok {
			return Occurrence{}, false
		}
		o := Occurrence{At: start.In(s.loc), Nominal: nominal(wall), Shifted: true, Note: s.gapNote(p, true)}
		if s.dst.Gap == DSTGapSkip {
			o.Shifted, o.Skipped, o.Note = false, true, s.skipNote(p)
		}
		return o, true
	}
}

// foldNote explains which pass of a wall time that occurs twice an
// occurrence is, for the fold policy.
func (s *Spec) foldNote(wall time.Time, p placement, which string, offset int) string {
	runs := "runs once, at the " + which
	if s.dst.Fold == DSTFoldBoth {
		runs = "its DST policy runs it at both: this is the " + which
	}
	return fmt.Sprintf("%s occurs twice on %s in %s (%s); %s (%s)",
		clock(wall), wall.Format(time.DateOnly), s.loc, back(p), runs, utcOffset(offset))
}

// skipNote explains the wall times of p's gap that the skip policy
// skipped.
func (s *Spec) skipNote(p placement) string {
	note, _, _ := strings.Cut(s.gapNote(p, false), "; this schedule follows elapsed time")
	return note + "; skipped, as the schedule's DST policy says (gap: skip)"
}

// joinNotes joins two notes into one, either of which may be empty.
func joinNotes(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + ". " + b
}

// nextElapsed returns the first occurrence after the whole second after of
// a spec that follows real elapsed time: the first instant whose wall time
// matches. It walks the zone's periods of constant offset, in each of which
// wall time runs with real time.
func (s *Spec) nextElapsed(after time.Time) (Occurrence, bool) {
	limit := after.AddDate(s.horizon(), 0, 0)
	var notes []string
	for t := after.Add(time.Second).In(s.loc); !t.After(limit); {
		_, offset := t.Zone()
		_, next := zoneBounds(t)
		end := limit
		if !next.IsZero() && next.Before(limit) {
			end = next.Add(-time.Second)
		}
		if wall, ok := s.rule.next(wallAt(t, offset).Add(-time.Second), wallAt(end, offset)); ok {
			at := instantAt(wall, offset).In(s.loc)
			occurrence := Occurrence{At: at, Nominal: nominal(wall)}
			if p := place(wall, s.loc); !p.second.IsZero() {
				which, whichOffset := "first", p.offsetBefore
				if at.Equal(p.second) {
					which, whichOffset = "second", p.offsetAfter
				}
				notes = append(notes, fmt.Sprintf("%s occurs twice on %s in %s (%s); this schedule follows elapsed time, so it runs at both: this is the %s (%s)",
					clock(wall), wall.Format(time.DateOnly), s.loc, back(p), which, utcOffset(whichOffset)))
			}
			occurrence.Note = strings.Join(notes, ". ")
			return occurrence, true
		}
		if next.IsZero() {
			break
		}

		// Moving on to the next period: note the wall times it skips.
		if nextOffset := offsetAt(next, s.loc); nextOffset > offset {
			p := placement{first: next, gap: true, transition: next, offsetBefore: offset, offsetAfter: nextOffset}
			if note := s.gapNote(p, false); note != "" {
				notes = append(notes, note)
			}
		}
		t = next.In(s.loc)
	}
	return Occurrence{}, false
}

// gapNote explains what happened to the wall times that match the spec in
// the gap of p: shifted to its end (fixed-time specs), or skipped. It is
// empty when none match.
func (s *Spec) gapNote(p placement, shifted bool) string {
	from, to := wallAt(p.transition, p.offsetBefore), wallAt(p.transition, p.offsetAfter)
	first, ok := s.rule.next(from.Add(-time.Second), to.Add(-time.Second))
	if !ok {
		return ""
	}
	last, count := first, 1
	for {
		wall, ok := s.rule.next(last, to.Add(-time.Second))
		if !ok {
			break
		}
		last, count = wall, count+1
	}

	times := clock(first)
	switch count {
	case 1:
	case 2:
		times += " and " + clock(last)
	default:
		times = fmt.Sprintf("the %d times from %s to %s", count, clock(first), clock(last))
	}
	jump := fmt.Sprintf("(clocks jump from %s to %s)", clock(from), clock(to))

	if !shifted {
		verb, what := "does", "it does not run"
		if count > 1 {
			verb, what = "do", "they do not run"
		}
		return fmt.Sprintf("%s %s not exist on %s in %s %s; this schedule follows elapsed time, so %s",
			times, verb, from.Format(time.DateOnly), s.loc, jump, what)
	}

	verb, run := "does", "runs at"
	if count > 1 {
		verb, run = "do", "they run once, at"
	}
	merged := ""
	if s.rule.matches(to) {
		merged = ", merged with the " + clock(to) + " time"
	}
	return fmt.Sprintf("%s %s not exist on %s in %s %s; %s %s, right after the jump%s",
		times, verb, from.Format(time.DateOnly), s.loc, jump, run, clock(to), merged)
}

// back describes the clocks going back in p.
func back(p placement) string {
	return fmt.Sprintf("clocks go back from %s to %s", clock(wallAt(p.transition, p.offsetBefore)), clock(wallAt(p.transition, p.offsetAfter)))
}

// clock formats a wall time's time of day: "02:30", or "02:30:15" when it
// has seconds.
func clock(wall time.Time) string {
	if wall.Second() != 0 {
		return wall.Format(time.TimeOnly)
	}
	return wall.Format("15:04")
}

// utcOffset formats an offset in seconds like "-04:00".
func utcOffset(offset int) string {
	return time.Unix(0, 0).In(time.FixedZone("", offset)).Format("-07:00")
}
