package schedule

import (
	"time"
)

// LoadZone returns the location of a schedule's time zone name, by the
// rules every schedule is held to: "" and "UTC" are UTC, "Local" is refused
// (the server's own zone differs from machine to machine), and any other
// name is an IANA name known to this machine's time zone database, such as
// "Europe/Paris". The error is a *ZoneError, which matches ErrInvalid.
// Read every schedule's zone with it, so that what is accepted and how it
// reads are the same everywhere.
func LoadZone(zone string) (*time.Location, error) {
	switch zone {
	case "", "UTC":
		return time.UTC, nil
	case "Local":
		return nil, &ZoneError{Zone: zone, Reason: "Local is the server's own zone, which differs from machine to machine"}
	}
	loc, err := time.LoadLocation(zone)
	if err != nil {
		return nil, &ZoneError{Zone: zone}
	}
	return loc, nil
}

// wallOf returns the wall time of t (whole seconds) in its location, as a
// time in UTC; see fields.
func wallOf(t time.Time) time.Time {
	_, offset := t.Zone()
	return wallAt(t, offset)
}

// wallAt returns the wall time of the instant t at a UTC offset in seconds.
func wallAt(t time.Time, offset int) time.Time {
	return time.Unix(t.Unix()+int64(offset), 0).UTC()
}

// instantAt returns the instant whose wall time at a UTC offset is w.
func instantAt(w time.Time, offset int) time.Time {
	return time.Unix(w.Unix()-int64(offset), 0)
}

// offsetAt returns the UTC offset in seconds of loc at the instant t.
func offsetAt(t time.Time, loc *time.Location) int {
	_, offset := t.In(loc).Zone()
	return offset
}

// zoneBounds is t.ZoneBounds: the period of t's zone, in which the UTC
// offset does not change, begins at start and the next begins at end (zero
// when there is none). It works around golang/go#81583: for instants after
// the zone's last listed transition (usually 2037), Go ends a leap year 365
// days after its start, so on 31 December (UTC) of a leap year end is not
// after t. The period really goes on at least to the end of that year.
func zoneBounds(t time.Time) (start, end time.Time) {
	start, end = t.ZoneBounds()
	if !end.IsZero() && !end.After(t) {
		end = time.Date(t.UTC().Year()+1, time.January, 1, 0, 0, 0, 0, time.UTC).In(t.Location())
	}
	return start, end
}

// maxOffset bounds the UTC offset of any zone in the time zone database
// (the largest, local mean times of the 19th century, are under 16 hours),
// so the instants with a given wall time lie within it of the wall time.
const maxOffset = 26 * time.Hour

// placement is where a wall time falls in a zone.
type placement struct {
	// first is the first instant with the wall time or, in a gap, the
	// instant the gap ends: the transition, whose wall time is the time the
	// clocks jump to.
	first time.Time

	// second is the other instant with the wall time when it occurs twice
	// (clocks went back); zero otherwise.
	second time.Time

	// gap is set when the wall time does not exist (clocks jumped over it).
	gap bool

	// transition is the instant the clocks changed, for a gap or a wall time
	// that occurs twice, with the offsets before and after it.
	transition                time.Time
	offsetBefore, offsetAfter int
}

// place finds the instants with wall time w in loc: one, two (the clocks
// went back over w) or none (the clocks jumped over w). It walks the zone's
// periods of constant offset around w: in each, at most one instant has
// wall time w.
func place(w time.Time, loc *time.Location) placement {
	var p placement
	end := w.Add(maxOffset)
	t := w.Add(-maxOffset).In(loc)
	for {
		_, offset := t.Zone()
		start, next := zoneBounds(t)
		if candidate := instantAt(w, offset); (start.IsZero() || !candidate.Before(start)) && (next.IsZero() || candidate.Before(next)) {
			if !p.first.IsZero() {
				p.second = candidate
				return p
			}
			p.first = candidate
		}
		if next.IsZero() || next.After(end) {
			return p
		}

		nextOffset := offsetAt(next, loc)
		before, after := wallAt(next, offset), wallAt(next, nextOffset)
		switch {
		case p.first.IsZero() && nextOffset > offset && !w.Before(before) && w.Before(after):
			// Clocks jumped from before to after, over w.
			return placement{first: next, gap: true, transition: next, offsetBefore: offset, offsetAfter: nextOffset}
		case !p.first.IsZero() && nextOffset < offset && !w.Before(after) && w.Before(before):
			// Clocks went back from before to after: w comes again.
			p.transition, p.offsetBefore, p.offsetAfter = next, offset, nextOffset
		}
		t = next.In(loc)
	}
}
