package schedule

import (
	"time"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/runmeta"
)

// slot is one claimed schedule's due slot being decided.
type slot struct {
	s       *Schedule
	spec    *Spec
	fireAt  time.Time
	d       slotDecision
	skip    string
	startAt time.Time
	meta    runmeta.Meta
	// next is the slot after this one, nil when the chain ends (EndAt, a
	// spec that no longer parses).
	next *time.Time
	// pause, when set, pauses the schedule with this note: its spec cannot
	// be evaluated any more.
	pause string
}

// decideSlots decides the due slot of each claimed schedule as far as time
// goes, before fireBatchTx applies grants and overlap: its run's metadata,
// whether the spec or the catch-up window skips it, and the chain's next
// slot. A schedule whose spec cannot be evaluated any more has its slot
// skipped and is paused.
func (c *Client) decideSlots(claimed []*Schedule, foundAt, now time.Time) []*slot {
	slots := make([]*slot, 0, len(claimed))
	for _, s := range claimed {
		sl := &slot{s: s, fireAt: *s.NextFireAt}
		spec, err := c.spec(s)
		if err != nil {
			// Only a zone database that changed under a stored schedule gets
			// here: say so, keep the schedule, stop its chain.
			sl.skip = SkipReasonCannotFire + ": " + err.Error()
			sl.pause = "paused by Tributary: the schedule cannot be evaluated any more (" + err.Error() + "); fix its cron or time zone with Update, then Resume"
			slots = append(slots, sl)
			continue
		}
		sl.spec = spec
		var skipped string
		sl.meta, skipped = slotMetadata(spec, sl.fireAt)
		f := followingOf(spec, sl.fireAt)
		sl.d = decideSlot(spec, s.CatchUpWindow, s.CatchUp, f, foundAt, now, s.nextCatchUp)
		switch {
		case skipped != "":
			sl.skip = skipped
		case sl.d.missed:
			sl.skip = missedReason(spec, f, sl.d.after)
		}
		sl.next = withinEnd(s, sl.d.next, sl.d.hasNext)
		slots = append(slots, sl)
	}
	return slots
}

// advance adds sl's schedule, which started ran runs, to the batch's
// UPDATE of its schedules.
func advance(a *engine.AdvanceParams, sl *slot, ran int) {
	a.IDs = append(a.IDs, sl.s.ID)
	a.Next = append(a.Next, sl.next)
	a.Fired = append(a.Fired, sl.fireAt)
	a.Ran = append(a.Ran, int64(ran))
	a.CatchUp = append(a.CatchUp, sl.d.nextIsCatchUp)
	a.Pause = append(a.Pause, sl.pause)
}
