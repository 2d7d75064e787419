package schedule

import (
	"fmt"
	"time"

	"github.com/tributary-go/tributary/internal/runmeta"
)

// later is the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// nextSlot is the first slot of s after after, within s's end; nil when
// there is none.
func nextSlot(spec *Spec, s *Schedule, after time.Time) *time.Time {
	occ, ok := spec.Next(after)
	return withinEnd(s, occ, ok)
}

// withinEnd is occ's time when ok and occ is before s's end; nil when the
// chain ends there.
func withinEnd(s *Schedule, occ Occurrence, ok bool) *time.Time {
	if !ok || (s.EndAt != nil && !occ.At.Before(*s.EndAt)) {
		return nil
	}
	return &occ.At
}

// following is the first occurrence of a spec after a slot: computed once
// per slot (followingOf), and read by each decision about the slot that
// needs it: whether a late slot is the latest due (latestDue), which later
// slots a missed one passed over (missedReason), and the chain's next slot
// when the chain goes on from the slot (decideSlot).
type following struct {
	slot time.Time
	occ  Occurrence
	ok   bool // false: the spec has no occurrence after slot
}

// followingOf is the occurrence of spec that follows the slot at slot.
func followingOf(spec *Spec, slot time.Time) following {
	occ, ok := spec.Next(slot)
	return following{slot: slot, occ: occ, ok: ok}
}

// after is the first occurrence of spec after t: f's own when t is f's
// slot, computed otherwise.
func (f following) after(spec *Spec, t time.Time) (Occurrence, bool) {
	if t.Equal(f.slot) {
		return f.occ, f.ok
	}
	return spec.Next(t)
}

// slotMetadata explains a slot in its run's metadata, so the ledger explains
// itself: the nominal wall time in the schedule's zone, the zone, and the
// note when the DST policy or a calendar moved, merged or skipped the
// slot. skipped is the skip reason of a slot the spec skips (DSTGapSkip:
// SkipReasonDSTGap; an excluded date: SkipReasonExcluded and the date):
// it is recorded, and does not run.
func slotMetadata(spec *Spec, fireAt time.Time) (meta runmeta.Meta, skipped string) {
	meta = runmeta.Meta{Zone: spec.Zone(), FireAt: fireAt.In(spec.Location()).Format(time.RFC3339)}
	if occ, ok := spec.Next(fireAt.Add(-time.Second)); ok && occ.At.Equal(fireAt) {
		meta.Nominal = occ.Nominal
		if occ.Note != "" {
			meta.DSTNote = occ.Note
		}
		switch {
		case occ.Skipped && occ.Excluded != "":
			skipped = SkipReasonExcluded + ": " + occ.Excluded
		case occ.Skipped:
			skipped = SkipReasonDSTGap
		}
	}
	return meta, skipped
}

// maxPassedOverCount bounds the slots missedReason counts one by one: a
// per-second schedule down for a day passes over 86,400, and the count
// then says "more than".
const maxPassedOverCount = 1000

// missedReason is the skip reason of a slot missed at f.slot whose chain
// goes on after through: "missed", and, when the chain passes over later
// slots (SKIP_MISSED_BY_DEFAULT moves it to the next future slot), which
// ones and how many, so that one ledger row accounts for every slot of an
// outage instead of one row per slot.
func missedReason(spec *Spec, f following, through time.Time) string {
	first := f.occ
	if !f.ok || first.At.After(through) {
		return SkipReasonMissed
	}
	last, _ := latestSlot(spec, f.slot, through)
	n := 0
	for occ, ok := first, true; ok && !occ.At.After(through) && n <= maxPassedOverCount; occ, ok = spec.Next(occ.At) {
		n++
	}
	count := fmt.Sprintf("%d later slots", n)
	switch {
	case n == 1:
		count = "1 later slot"
	case n > maxPassedOverCount:
		count = fmt.Sprintf("more than %d later slots", maxPassedOverCount)
	}
	return fmt.Sprintf("%s; the chain also passed over %s, from %s to %s", SkipReasonMissed, count,
		first.At.UTC().Format(time.RFC3339), last.UTC().Format(time.RFC3339))
}

// latestDue reports whether f's slot is the most recent slot at or
// before now.
func latestDue(f following, now time.Time) bool {
	return !f.ok || f.occ.At.After(now)
}

// latestSlot is the most recent slot after from and at or before now. It
// searches windows that grow from a minute to ten years back from now, so
// that a frequent schedule after a long outage costs a few steps, not one
// per missed slot.
func latestSlot(spec *Spec, from, now time.Time) (time.Time, bool) {
	for span := time.Minute; span <= 10*366*24*time.Hour; span *= 8 {
		start := now.Add(-span)
		if start.Before(from) {
			start = from
		}
		var (
			latest time.Time
			found  bool
		)
		for at := start; ; {
			occ, ok := spec.Next(at)
			if !ok || occ.At.After(now) {
				break
			}
			latest, found, at = occ.At, true, occ.At
		}
		if found || !start.After(from) {
			return latest, found
		}
	}
	return time.Time{}, false
}

// slotDecision is what firing a slot decides about time, before grants and
// overlap: whether the slot was missed, and where the chain goes next.
type slotDecision struct {
	// missed: the slot is found later than the catch-up window and is
	// recorded as skipped.
	missed bool
	// after: the next slot is the first one after this.
	after time.Time
	// nextIsCatchUp: the next slot is the one the "latest" policy jumped
	// to; it runs however late.
	nextIsCatchUp bool
	// next is the next slot, the first occurrence after after (before the
	// schedule's end or not); hasNext is false when the spec has none.
	next    Occurrence
	hasNext bool
}

// decideSlot applies the catch-up rules to the slot f follows, found due
// at foundAt (see pass.foundAt) and fired at now. caughtUp marks a slot the
// latest policy jumped to. A missed slot moves the chain to the next future
// slot (downtime never mass-fires), or, under CatchUpLatest, to the most
// recent missed slot; otherwise the chain goes slot by slot, so a catch-up
// window fires each slot it covers once, oldest first. Firing and Simulate
// share it.
func decideSlot(spec *Spec, window time.Duration, policy CatchUpPolicy, f following, foundAt, now time.Time, caughtUp bool) slotDecision {
	fireAt := f.slot
	d := slotDecision{after: fireAt}
	if caughtUp {
		d.after = later(now, fireAt) // the chain goes on from now, not from the slot caught up
	}
	late := foundAt.Sub(fireAt) > window
	if late && !caughtUp && (policy != CatchUpLatest || !latestDue(f, now)) {
		d.missed, d.after = true, now
		if policy == CatchUpLatest {
			if latest, ok := latestSlot(spec, fireAt, now); ok && latest.After(fireAt) {
				d.after, d.nextIsCatchUp = latest.Add(-time.Second), true
			}
		}
	}
	d.next, d.hasNext = f.after(spec, d.after)
	return d
}
