package workflow

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// errHistoryEnd stops a replay of a recorded history (replayHistory) where
// the history ends: at the first boundary it does not record as done.
var errHistoryEnd = errors.New("workflow: the replay reached the end of the recorded history")

// replayHistory replays run, a recorded run with its steps in order (the
// Run that GetRun returns, as `tributary workflow get --json` prints it),
// against this client's code for run.Type, in this process and touching
// no database: every step, sleep, signal wait, child run and version the
// code reaches is matched to the history as a real replay matches it, and
// returns its recorded result. Nothing the history does not record as done
// runs: the replay stops at the first boundary past it, or at one the
// history left unfinished (a sleep in progress).
//
// It returns nil when the code fits the history; the *DivergenceError the
// next attempt of the run would fail with after a deploy of this code when
// it does not; an error when a finished run's code goes on past its
// history, or a completed run's code returns another output than the one
// recorded. Package tributarytest calls it (Replay), through
// wfruntime.Runtime.ReplayHistory.
func (c *Client) replayHistory(ctx context.Context, run *Run) error {
	reg, ok := c.types[run.Type]
	if !ok {
		return fmt.Errorf("workflow: replay run %s: this client does not register workflow type %q; add its Definition to Config.Workflows", run.ID, run.Type)
	}
	w := &wfContext{
		Context:     ctx,
		c:           c,
		info:        RunInfo{ID: run.ID, Type: run.Type, Attempt: run.Attempt, MaxAttempts: run.MaxAttempts, JobID: run.JobID, ScheduleID: run.ScheduleID, FireAt: run.FireAt, ParentID: run.ParentID, Metadata: run.Metadata, Tenant: run.Tenant},
		logger:      c.logger,
		memos:       make(map[string]*memo, len(run.Steps)),
		seen:        make(map[string]struct{}, len(run.Steps)),
		historyOnly: true,
	}
	for i, s := range run.Steps {
		seq := i
		w.memos[s.Name] = &memo{ChildRunID: s.ChildRunID, Error: s.Error, Kind: s.Kind, Name: s.Name, Output: s.Output,
			ResultType: s.ResultType, Status: s.Status, WakeAt: s.WakeAt, Seq: &seq}
	}
	out, err := (&worker{reg: reg}).call(w, run.Input)
	w.mu.Lock()
	diverged, failErr := w.diverged, w.failErr
	w.mu.Unlock()
	switch {
	case diverged != nil:
		return diverged
	case errors.Is(err, errHistoryEnd) || errors.Is(failErr, errHistoryEnd):
		if run.Status.Finished() {
			return fmt.Errorf("workflow: replay run %s: the recorded run is %s after %d steps, but this code goes on past them; a deploy of it would not change the run, but the code no longer describes it",
				run.ID, run.Status, len(run.Steps))
		}
		return nil
	case failErr != nil:
		return fmt.Errorf("workflow: replay run %s: %w", run.ID, failErr)
	}
	if run.Status != StatusCompleted {
		return nil // the run failed, was cancelled, or is in progress: its own outcome is not the code's to match
	}
	if err != nil {
		return fmt.Errorf("workflow: replay run %s: the recorded run completed, and this code returns an error from the same history: %w", run.ID, err)
	}
	if !jsonEqual(out, run.Output) {
		return fmt.Errorf("workflow: replay run %s: the recorded run completed with %s, and this code returns %s from the same history", run.ID, run.Output, out)
	}
	return nil
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(a, b json.RawMessage) bool {
	if bytes.Equal(a, b) {
		return true
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ax, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return bytes.Equal(ax, by)
}
