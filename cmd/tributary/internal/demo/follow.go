package demo

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/workflow"
)

// maxOutputWidth is where the live log cuts a run's output or error.
const maxOutputWidth = 80

// Follow prints a line on out for each slot a schedule fires (or records
// as skipped) and each run that starts or finishes, as it happens: it
// looks at the newest runs every FollowInterval. Runs the database had
// before Start, and the runs Script reported, are not repeated. It returns
// nil once stop, when not nil, reports true for a run it has just printed,
// and ctx's error when ctx ends.
func (d *Demo) Follow(ctx context.Context, out io.Writer, stop func(*workflow.Run) bool) error {
	ticker := time.NewTicker(FollowInterval)
	defer ticker.Stop()
	for {
		runs, err := d.Workflows.ListRuns(ctx, &workflow.ListParams{Limit: 100})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		slices.Reverse(runs) // oldest first
		stopped := false
		for _, run := range runs {
			if d.report(ctx, out, run) && stop != nil && stop(run) {
				stopped = true
			}
		}
		if stopped {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ticker.C:
		}
	}
}

// HeartbeatRan reports whether run is a completed run of the
// demo-heartbeat schedule. Pass it to Follow to stop after a heartbeat.
func (d *Demo) HeartbeatRan(run *workflow.Run) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return run.ScheduleID != nil && *run.ScheduleID == d.heartbeat && run.Status == workflow.StatusCompleted
}

// report prints what happened to run since it was last seen, and reports
// whether it printed anything.
func (d *Demo) report(ctx context.Context, out io.Writer, run *workflow.Run) bool {
	d.mu.Lock()
	prev, known := d.seen[run.ID]
	d.seen[run.ID] = run.Status
	d.mu.Unlock()

	printed := false
	line := func(at time.Time, format string, args ...any) {
		fmt.Fprintf(out, "%s  run %s  %s\n", at.Local().Format(time.TimeOnly), run.ID, fmt.Sprintf(format, args...))
		printed = true
	}
	if !known {
		switch {
		case run.ScheduleID != nil && run.Status == workflow.StatusSkipped:
			line(run.CreatedAt, "%s skipped its %s slot (%s)", d.scheduleName(ctx, *run.ScheduleID), slotText(run), run.SkipReason)
		case run.ScheduleID != nil:
			line(run.CreatedAt, "%s fired its %s slot", d.scheduleName(ctx, *run.ScheduleID), slotText(run))
		default:
			line(run.CreatedAt, "%s started", run.Type)
		}
	}
	if run.Status.Finished() && run.Status != workflow.StatusSkipped && prev != run.Status {
		finishedAt := run.UpdatedAt
		if run.FinishedAt != nil {
			finishedAt = *run.FinishedAt
		}
		took := finishedAt.Sub(run.CreatedAt)
		if run.StartedAt != nil {
			took = finishedAt.Sub(*run.StartedAt)
		}
		result := cut(string(run.Output))
		if run.Error != nil {
			result = cut(run.Error.Message)
		}
		line(finishedAt, "%s %s in %s: %s", run.Type, run.Status, roundDuration(took), result)
	}
	return printed
}

// scheduleName is the name of the schedule id, or its id when it can't be
// read.
func (d *Demo) scheduleName(ctx context.Context, id uuid.UUID) string {
	d.mu.Lock()
	name, ok := d.names[id]
	d.mu.Unlock()
	if ok {
		return name
	}
	s, err := d.Schedules.Get(ctx, schedule.ByID(id))
	if err != nil {
		return "schedule " + id.String()
	}
	d.mu.Lock()
	d.names[id] = s.Name
	d.mu.Unlock()
	return s.Name
}

// slotText is the time of a scheduled run's slot.
func slotText(run *workflow.Run) string {
	if run.FireAt == nil {
		return "triggered"
	}
	return run.FireAt.Local().Format(time.TimeOnly)
}

// roundDuration rounds d to milliseconds under a second, else to tenths
// of a second: "4ms", "13.2s".
func roundDuration(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// cut shortens s to maxOutputWidth runes.
func cut(s string) string {
	n := 0
	for i := range s {
		if n == maxOutputWidth-1 {
			if utf8.RuneCountInString(s[i:]) > 1 {
				return s[:i] + "…"
			}
			return s
		}
		n++
	}
	return s
}
