package schedule

import (
	"errors"
	"fmt"
	"time"
)

// Window is a span of time [From, To).
type Window struct {
	From, To time.Time
}

// SimulateOpts describe a simulated stretch of time for Simulate.
type SimulateOpts struct {
	// From and To bound the simulation: slots from From (exclusive) up to
	// To (exclusive). Required.
	From, To time.Time

	// Down are windows when no Tributary process runs: a slot due in one
	// is found when the window ends, late, and the catch-up rules apply.
	Down []Window

	// Paused are windows when the schedule is paused; it resumes at each
	// window's end with Missed.
	Paused []Window

	// Missed is what resuming does with slots missed while paused.
	// Defaults to MissedSkip.
	Missed MissedPolicy
}

// SimulatedSlot is one slot of a simulation.
type SimulatedSlot struct {
	// At is the slot's instant; Nominal its wall time in the schedule's
	// zone; Note the DST note when the rule moved or merged it.
	At      time.Time
	Nominal string
	Note    string
	// FiredAt is when the slot was found (At, or the end of a downtime).
	FiredAt time.Time
	// Skipped is the skip reason ("missed", or "dst gap" for a slot the
	// DST policy skips), or "" for a slot that ran.
	Skipped string
}

// MaxSimulatedSlots bounds a simulation.
const MaxSimulatedSlots = 1_000_000

// Simulate drives a schedule through a simulated clock and returns the slots
// that fired (or were recorded as skipped), with the same evaluation and the
// same catch-up and resume rules the engine applies, in microseconds per
// slot and without a database: a year of an hourly schedule, DST days
// included, in milliseconds. It is the test kit for schedules: assert which
// slots fire in your users' zones.
//
// It assumes every run finishes before its next slot (overlap policies and
// grants need real runs: see the package's tests for those).
func Simulate(p *Params, opts *SimulateOpts) ([]SimulatedSlot, error) {
	if p == nil || opts == nil {
		return nil, errors.New("schedule: Simulate needs Params and SimulateOpts")
	}
	if !opts.To.After(opts.From) {
		return nil, &ValidationError{Field: "SimulateOpts.To", Problem: "is not after From"}
	}
	rule := p.Cron
	if p.RRule != "" {
		rule = p.RRule
	}
	spec, err := parseRule(rule, p.TimeZone)
	if err != nil {
		return nil, err
	}
	if spec, err = spec.WithDST(DSTPolicy{Gap: p.DSTGap, Fold: p.DSTFold}); err != nil {
		return nil, err
	}
	window := p.CatchUpWindow
	if window == 0 {
		window = DefaultCatchUpWindow
	}
	policy := p.CatchUp
	if policy == "" {
		policy = CatchUpWindow
	}
	inside := func(ws []Window, t time.Time) (Window, bool) {
		for _, w := range ws {
			if !t.Before(w.From) && t.Before(w.To) {
				return w, true
			}
		}
		return Window{}, false
	}
	end := opts.To
	if !p.EndAt.IsZero() && p.EndAt.Before(end) {
		end = p.EndAt
	}

	var out []SimulatedSlot
	first, ok := firstSlot(spec, p.StartAt, p.EndAt, opts.From)
	caughtUp := false
	for at := first; ok && at.Before(end); {
		if len(out) == MaxSimulatedSlots {
			return out, fmt.Errorf("schedule: simulation stopped after %d slots; simulate a shorter span", MaxSimulatedSlots)
		}
		if w, paused := inside(opts.Paused, at); paused {
			// Paused: no slot fires until the window ends; then Resume.
			resumed := w.To
			missed := spec.NextN(at.Add(-time.Second), MaxSimulatedSlots)
			var due []Occurrence
			for _, occ := range missed {
				if !occ.At.Before(resumed) || !occ.At.Before(end) {
					break
				}
				due = append(due, occ)
			}
			switch opts.Missed {
			case MissedLatest:
				if len(due) > 0 {
					due = due[len(due)-1:]
				}
			case MissedBackfill:
			default:
				due = nil
			}
			for _, occ := range due {
				slot := SimulatedSlot{At: occ.At, Nominal: occ.Nominal, Note: occ.Note, FiredAt: resumed}
				if occ.Skipped {
					slot.Skipped = SkipReasonDSTGap
				}
				out = append(out, slot)
			}
			var next Occurrence
			next, ok = spec.Next(resumed.Add(-time.Nanosecond))
			at, caughtUp = next.At, false
			continue
		}
		firedAt := at
		if w, down := inside(opts.Down, at); down {
			firedAt = w.To
		}
		d := decideSlot(spec, window, policy, followingOf(spec, at), firedAt, firedAt, caughtUp)
		occ, _ := spec.Next(at.Add(-time.Second))
		slot := SimulatedSlot{At: at, FiredAt: firedAt}
		if occ.At.Equal(at) {
			slot.Nominal, slot.Note = occ.Nominal, occ.Note
		}
		switch {
		case occ.At.Equal(at) && occ.Skipped:
			slot.Skipped = SkipReasonDSTGap
		case d.missed:
			slot.Skipped = SkipReasonMissed
		}
		out = append(out, slot)
		at, ok, caughtUp = d.next.At, d.hasNext, d.nextIsCatchUp
	}
	return out, nil
}
