package riverui

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tributary-go/tributary/internal/durfmt"
	"github.com/tributary-go/tributary/workflow"
)

// timeline is a run's steps drawn on a time axis: one bar per step from
// its start to its end, on an axis from the run's creation to what has
// happened: its end, or now while it is live. What is still to come (the
// wake time of a sleep, the timeout of a wait for a signal) does not
// stretch the axis, or an hour's timeout would make a 2 s sleep a sliver:
// its bar runs to the axis's end, open-ended, and its label says when it
// wakes or times out. Nor do a fork's step records copied from its origin
// (those that began before the fork was created), which keep the origin's
// times, maybe days old: each is a thin bar at the axis's start, labelled
// with how long it took in the origin. The bars are SVG rectangles placed
// by attributes, in a viewBox 100 units wide, so the page needs no inline
// style (the CSP allows none).
type timeline struct {
	// Start is when the axis starts: the run's creation.
	Start *moment
	// Span is the axis's length, as a duration.
	Span string
	// Mid is the duration at the middle of the axis.
	Mid string
	// Live says the axis ends now: the run is in flight.
	Live bool
	// Copied says some rows are step records copied from the fork's
	// origin (timelineRow.Copied).
	Copied bool
	// Rows are the run itself, then its steps in start order.
	Rows []timelineRow
}

// timelineRow is one bar of the timeline.
type timelineRow struct {
	Name  string
	Kind  string
	Class string // the bar's colour: a run or step status
	// X and W place the bar: its start and width, in percent of the axis.
	X, W string
	// Open says the bar goes on past the axis's end: a sleep or a wait
	// still pending, drawn open-ended.
	Open bool
	// Copied says the step record was copied from the fork's origin: its
	// bar stands at the axis's start, whatever its times.
	Copied bool
	// Label is the bar's duration or state, written beside it.
	Label string
	Title string
}

// minBarWidth is the width of a bar too short to see, in percent.
const minBarWidth = 0.4

// runTimeline lays out run's steps on a time axis at now; nil when the run
// has no step.
func runTimeline(run *workflow.Run, now time.Time) *timeline {
	if len(run.Steps) == 0 {
		return nil
	}
	copied := func(st workflow.StepRun) bool { return run.ForkedFrom != nil && st.StartedAt.Before(run.CreatedAt) }
	start := run.CreatedAt
	for _, st := range run.Steps {
		if st.StartedAt.Before(start) && !copied(st) {
			start = st.StartedAt
		}
	}
	end := now
	if run.FinishedAt != nil {
		end = *run.FinishedAt
	}
	axisEnd := end
	for _, st := range run.Steps {
		if st.FinishedAt != nil && st.FinishedAt.After(axisEnd) && !copied(st) {
			axisEnd = *st.FinishedAt
		}
	}
	span := axisEnd.Sub(start)
	if span <= 0 {
		span = time.Millisecond
	}
	pct := func(t time.Time) float64 {
		p := 100 * float64(t.Sub(start)) / float64(span)
		return min(max(p, 0), 100)
	}
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', 2, 64) }
	place := func(row *timelineRow, from, to time.Time) {
		x, w := pct(from), pct(to)-pct(from)
		if w < minBarWidth {
			w = minBarWidth
			x = min(x, 100-minBarWidth)
		}
		row.X, row.W = num(x), num(w)
	}

	t := &timeline{Start: momentIn(&start, time.UTC, now), Span: durfmt.Human(span), Mid: durfmt.Human(span / 2), Live: !run.Status.Finished()}

	runRow := timelineRow{Name: "run", Kind: "run", Class: string(run.Status)}
	runFrom := run.CreatedAt
	if run.StartedAt != nil {
		runFrom = *run.StartedAt
	}
	place(&runRow, runFrom, end)
	runRow.Label = durfmt.Human(end.Sub(runFrom))
	if !run.Status.Finished() {
		runRow.Label += " so far"
		runRow.Open = true
	}
	runRow.Title = fmt.Sprintf("run %s: %s", run.Status, runRow.Label)
	t.Rows = append(t.Rows, runRow)

	for _, st := range run.Steps {
		row := timelineRow{Name: st.Name, Kind: string(st.Kind), Class: string(st.Status)}
		from, to := st.StartedAt, end
		switch {
		case copied(st):
			from, to, row.Copied, t.Copied = start, start, true, true
			row.Label = "copied from " + shortID(*run.ForkedFrom)
			if st.FinishedAt != nil {
				row.Label += " (took " + durfmt.Human(st.Duration()) + " there)"
			}
		case st.FinishedAt != nil:
			to = *st.FinishedAt
			row.Label = durfmt.Human(st.Duration())
		case st.Status == workflow.StepStatusSleeping || st.Status == workflow.StepStatusWaiting:
			to, row.Open = now, true
			row.Label = pendingLabel(st, now)
		default: // interrupted by the run's end
			row.Label = string(st.Status)
		}
		place(&row, from, to)
		if st.Attempts > 1 && !row.Copied {
			row.Label += fmt.Sprintf(" (%d attempts)", st.Attempts)
		}
		row.Title = fmt.Sprintf("%s %s: %s, %s", st.Kind, st.Name, st.Status, row.Label)
		t.Rows = append(t.Rows, row)
	}
	return t
}

// pendingLabel says how long step st has slept or waited at now, and when
// it wakes or times out: "sleeping 10s, wakes in 20s", "waiting 26.4s
// for signal decision, times out in 59m".
func pendingLabel(st workflow.StepRun, now time.Time) string {
	label := string(st.Status) + " " + durfmt.Human(now.Sub(st.StartedAt))
	wait := st.Kind == workflow.StepKindSignal
	if name, ok := strings.CutPrefix(st.Name, "signal:"); ok && wait {
		label += " for signal " + name
	}
	switch {
	case st.WakeAt == nil:
	case !st.WakeAt.After(now):
		label += ", due now"
	case wait:
		label += ", times out " + durfmt.Relative(*st.WakeAt, now)
	default:
		label += ", wakes " + durfmt.Relative(*st.WakeAt, now)
	}
	return label
}
