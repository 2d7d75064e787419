package tributarytest

import (
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// Run reads run id, with its steps, failing the test when it cannot.
func (e *Env) Run(id uuid.UUID) *workflow.Run {
	e.t.Helper()
	run, err := e.Workflows.GetRun(e.Context(), id)
	if err != nil {
		e.t.Fatalf("tributarytest: read run %s: %v", id, err)
	}
	return run
}

// RequireStatus fails the test unless run id's status is want, saying
// what it is instead (and its error, for a failed run); it returns the
// run.
func (e *Env) RequireStatus(id uuid.UUID, want workflow.Status) *workflow.Run {
	e.t.Helper()
	run := e.Run(id)
	if run.Status != want {
		why := ""
		if run.Error != nil {
			why = ": " + run.Error.Message
		}
		if run.Held != "" {
			why += " (held: " + run.Held + ")"
		}
		e.t.Fatalf("tributarytest: run %s is %s%s, want %s", id, run.Status, why, want)
	}
	return run
}

// RequireSteps fails the test unless run id's steps are, in the order the
// run took them, exactly names (sleeps, signal waits and child runs are
// steps too: "signal:" + name for a wait without WaitOpts.Step), and
// returns them.
func (e *Env) RequireSteps(id uuid.UUID, names ...string) []workflow.StepRun {
	e.t.Helper()
	steps := e.Run(id).Steps
	got := make([]string, len(steps))
	for i, s := range steps {
		got[i] = s.Name
	}
	if !slices.Equal(got, names) {
		e.t.Fatalf("tributarytest: run %s took the steps %q, want %q", id, got, names)
	}
	return steps
}

// Slot is one slot of a schedule as its ledger records it: a run, or a
// skip and why.
type Slot struct {
	// At is the slot's time.
	At time.Time
	// Status is its run's status, or workflow.StatusSkipped.
	Status workflow.Status
	// RunID is its run (a skipped slot's ledger row has one too).
	RunID uuid.UUID
	// SkipReason says why a skipped slot did not run.
	SkipReason string
}

// Slots returns the slots schedule ref fired or skipped so far, oldest
// first, failing the test when it cannot read them.
func (e *Env) Slots(ref schedule.Ref) []Slot {
	e.t.Helper()
	ctx := e.Context()
	var slots []Slot
	params := &workflow.ListParams{Limit: 1000}
	for {
		runs, err := e.Schedules.History(ctx, ref, params)
		if err != nil {
			e.t.Fatalf("tributarytest: read the slots of schedule %v: %v", ref, err)
		}
		for _, run := range runs {
			slot := Slot{Status: run.Status, RunID: run.ID, SkipReason: run.SkipReason}
			if run.FireAt != nil {
				slot.At = run.FireAt.UTC()
			}
			slots = append(slots, slot)
		}
		if len(runs) < params.Limit {
			break
		}
		params.After = &runs[len(runs)-1].ID
	}
	slices.SortFunc(slots, func(a, b Slot) int { return a.At.Compare(b.At) })
	return slots
}
