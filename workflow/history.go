package workflow

import (
	"cmp"
	"slices"
)

// A run's history is the ordered list of its step records that bind a
// replay: every step boundary (Step, StepTx, Sleep, SleepUntil, WaitSignal,
// RunChild, Version) writes a record with its position, the number of
// boundaries the workflow passed before it. A replay consumes the history
// in order: each boundary the code reaches must be the next recorded one,
// by name, or the replay has diverged (a step renamed, inserted before
// recorded ones, or moved). Past the end of the history the code is free:
// steps added after the recorded ones run as new steps.
//
// What binds:
//
//   - Completed steps, sleeps, signal waits and child runs, and the ones
//     parked (a sleeping sleep, a waiting signal wait, a started child):
//     their wake time, their wait or their child is part of the run.
//   - Version records (see Version). A version record the code no longer
//     asks for is passed over: it records a choice, no side effect, so
//     that a Version call may be removed once no run needs its old branch.
//
// What does not bind:
//
//   - A failed step's record: the step did not complete, and the attempt
//     it failed in ended there. The next attempt may run it again, or run
//     another step in its place (a fix deployed in between).
//   - Records written before migration 007, which have no position: they
//     are matched by name alone, as they were when they were written.

// replayState is where an attempt is in its run's history.
type replayState struct {
	loaded  bool
	history []*memo // the binding records with a position, in order
	next    int     // the first record of history not reached yet
	pos     int     // the position the next new record takes
}

// placement is where a boundary stands in the run's history.
type placement int

const (
	// placeNew: past the recorded history; the boundary writes a new
	// record (or retries a failed one) at the position returned.
	placeNew placement = iota
	// placeRecorded: the next record of the history is the boundary's.
	placeRecorded
	// placeAhead: only for a version record: the history goes on past
	// this point without one, so the run was recorded by code that did not
	// ask for it here. Nothing is consumed.
	placeAhead
)

// loadLocked builds the history from the memos the attempt started with.
// It runs at the first boundary, before any record of this attempt is
// added to memos.
func (r *replayState) loadLocked(memos map[string]*memo) {
	r.loaded = true
	for _, m := range memos {
		if m.Seq != nil && m.Status != StepStatusFailed {
			r.history = append(r.history, m)
		}
	}
	slices.SortFunc(r.history, func(a, b *memo) int {
		return cmp.Or(cmp.Compare(*a.Seq, *b.Seq), cmp.Compare(a.Name, b.Name))
	})
}

// consumeLocked moves past the history's records up to and including i
// and returns the position of record i, or, for i == len(history), moves
// past all of them and returns the position for a new record.
func (r *replayState) consumeLocked(i int) int {
	for ; r.next < i; r.next++ {
		r.pos = max(r.pos, *r.history[r.next].Seq+1)
	}
	if i == len(r.history) {
		seq := r.pos
		r.pos++
		return seq
	}
	seq := *r.history[i].Seq
	r.next, r.pos = i+1, max(r.pos, seq+1)
	return seq
}

// matchLocked places the boundary name of kind in the run's history (see
// the top of this file) and returns the position of its record. A
// boundary that does not fit the history is a *DivergenceError, which
// fails the run.
func (w *wfContext) matchLocked(name string, kind StepKind, asked string) (int, placement, error) {
	r := &w.replay
	if !r.loaded {
		r.loadLocked(w.memos)
	}
	if m := w.memos[name]; m != nil && m.Seq == nil && m.Status != StepStatusFailed {
		// Written before positions were recorded: matched by name.
		seq := r.pos
		r.pos++
		return seq, placeRecorded, nil
	}

	// Version records the code no longer asks for are passed over.
	i := r.next
	for i < len(r.history) && r.history[i].Kind == StepKindVersion && r.history[i].Name != name {
		i++
	}
	switch {
	case i == len(r.history):
		if kind == StepKindVersion && w.recordedLocked(name) {
			return 0, 0, w.movedLocked(name, asked)
		}
		if kind == StepKindVersion && w.legacyAheadLocked() {
			return 0, placeAhead, nil
		}
		return r.consumeLocked(i), placeNew, nil
	case r.history[i].Name == name:
		return r.consumeLocked(i), placeRecorded, nil
	case kind == StepKindVersion:
		if w.recordedLocked(name) {
			return 0, 0, w.movedLocked(name, asked)
		}
		return 0, placeAhead, nil
	}
	expected := r.history[i]
	return 0, 0, w.divergeLocked(&DivergenceError{
		Step:     name,
		Replayed: asked,
		Expected: expected.Name,
		Recorded: describeRecord(expected),
		Position: *expected.Seq + 1,
	})
}

// recordedLocked says whether the history has a binding record of name
// with a position: one the replay has passed over or not reached yet,
// since a name reached is a duplicate.
func (w *wfContext) recordedLocked(name string) bool {
	m := w.memos[name]
	return m != nil && m.Seq != nil && m.Status != StepStatusFailed
}

// legacyAheadLocked says whether the run has binding records without a
// position (written before migration 007) that the replay has not
// reached: the run's history then goes on past the current point.
func (w *wfContext) legacyAheadLocked() bool {
	for name, m := range w.memos {
		if _, reached := w.seen[name]; !reached && m.Seq == nil && m.Status != StepStatusFailed {
			return true
		}
	}
	return false
}

// movedLocked is the divergence of a version record that the history has
// at another point than the code asks for it.
func (w *wfContext) movedLocked(name, asked string) error {
	m := w.memos[name]
	return w.divergeLocked(&DivergenceError{
		Step:     name,
		Replayed: asked + " here",
		Recorded: describeRecord(m) + " at another point",
		Position: *m.Seq + 1,
	})
}

// describeRecord says what a record is, for a *DivergenceError.
func describeRecord(m *memo) string {
	switch m.Kind {
	case StepKindStep:
		return "step returning " + m.ResultType
	case StepKindSignal:
		return "signal wait"
	case StepKindChild:
		return "child run returning " + m.ResultType
	case StepKindVersion:
		return "version " + string(m.Output)
	}
	return string(m.Kind)
}
