package riverui

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/workflow"
)

func TestRunTimeline(t *testing.T) {
	t.Parallel()

	t0 := time.Date(2026, 3, 29, 1, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	ptr := func(t time.Time) *time.Time { return &t }

	t.Run("NoSteps", func(t *testing.T) {
		t.Parallel()

		require.Nil(t, runTimeline(&workflow.Run{CreatedAt: t0}, at(5)))
	})

	t.Run("Finished", func(t *testing.T) {
		t.Parallel()

		run := &workflow.Run{
			Status: workflow.StatusFailed, CreatedAt: t0, StartedAt: ptr(at(2)), FinishedAt: ptr(at(10)),
			Steps: []workflow.StepRun{
				{Name: "load", Kind: workflow.StepKindStep, Status: workflow.StepStatusCompleted, Attempts: 1, StartedAt: at(2), FinishedAt: ptr(at(2))},
				{Name: "charge", Kind: workflow.StepKindStep, Status: workflow.StepStatusFailed, Attempts: 3, StartedAt: at(2), FinishedAt: ptr(at(10))},
				{Name: "nap", Kind: workflow.StepKindSleep, Status: workflow.StepStatusInterrupted, Attempts: 1, StartedAt: at(5)},
			},
		}
		tl := runTimeline(run, at(60)) // long after: the axis ends with the run
		require.Equal(t, "10s", tl.Span)
		require.Equal(t, "5s", tl.Mid)
		require.False(t, tl.Live)
		require.Len(t, tl.Rows, 4)
		for i, want := range []struct{ name, class, x, w, label string }{
			{"run", "failed", "20.00", "80.00", "8s"},
			{"load", "completed", "20.00", "0.40", "0s"}, // too short to see: the least width
			{"charge", "failed", "20.00", "80.00", "8s (3 attempts)"},
			{"nap", "interrupted", "50.00", "50.00", "interrupted"}, // until the run's end
		} {
			row := tl.Rows[i]
			require.Equal(t, want.name, row.Name)
			require.Equal(t, want.class, row.Class, want.name)
			require.Equal(t, want.x, row.X, want.name)
			require.Equal(t, want.w, row.W, want.name)
			require.Equal(t, want.label, row.Label, want.name)
			require.False(t, row.Open, want.name)
		}
	})

	t.Run("Sleeping", func(t *testing.T) {
		t.Parallel()

		// Asleep from 1 s until 31 s; now is 11 s: the axis ends now, not
		// at the wake time; the sleep so far is an open-ended bar.
		run := &workflow.Run{
			Status: workflow.StatusSleeping, CreatedAt: t0, StartedAt: ptr(at(0)),
			Steps: []workflow.StepRun{
				{Name: "nap", Kind: workflow.StepKindSleep, Status: workflow.StepStatusSleeping, Attempts: 1, StartedAt: at(1), WakeAt: ptr(at(31))},
			},
		}
		tl := runTimeline(run, at(11))
		require.Equal(t, "11s", tl.Span)
		require.True(t, tl.Live)
		nap := tl.Rows[1]
		require.Equal(t, "9.09", nap.X)
		require.Equal(t, "90.91", nap.W)
		require.True(t, nap.Open)
		require.Equal(t, "sleeping 10s, wakes in 20s", nap.Label)
		require.Equal(t, "11s so far", tl.Rows[0].Label)
	})

	t.Run("WaitingForSignal", func(t *testing.T) {
		t.Parallel()

		// A 2 s sleep, then a wait for a signal that times out in an hour;
		// now is 30 s: the axis is 30 s long, so the sleep is a fifteenth
		// of it, not a sliver of an hour.
		run := &workflow.Run{
			Status: workflow.StatusWaiting, CreatedAt: t0, StartedAt: ptr(at(0)),
			Steps: []workflow.StepRun{
				{Name: "cooling_off", Kind: workflow.StepKindSleep, Status: workflow.StepStatusCompleted, Attempts: 1, StartedAt: at(0), FinishedAt: ptr(at(2)), WakeAt: ptr(at(2))},
				{Name: "signal:approve", Kind: workflow.StepKindSignal, Status: workflow.StepStatusWaiting, Attempts: 1, StartedAt: at(2), WakeAt: ptr(at(3602))},
			},
		}
		tl := runTimeline(run, at(30))
		require.Equal(t, "30s", tl.Span)
		require.Equal(t, "15s", tl.Mid)
		sleep, wait := tl.Rows[1], tl.Rows[2]
		require.Equal(t, "0.00", sleep.X)
		require.Equal(t, "6.67", sleep.W)
		require.False(t, sleep.Open)
		require.Equal(t, "6.67", wait.X)
		require.Equal(t, "93.33", wait.W)
		require.True(t, wait.Open)
		require.Equal(t, "waiting 28s for signal approve, times out in 59m", wait.Label)
	})

	// A fork made a day after its origin ran: the origin's two step
	// records, copied, keep their times but do not stretch the axis, which
	// spans the fork's own 4 s; they stand at its start.
	t.Run("Fork", func(t *testing.T) {
		t.Parallel()

		origin := uuid.MustParse("01a22271-cd7f-7522-8913-c34493f6f43b")
		day := -24 * 3600.0
		run := &workflow.Run{
			Status: workflow.StatusCompleted, CreatedAt: t0, StartedAt: ptr(at(1)), FinishedAt: ptr(at(4)),
			ForkedFrom: &origin, ForkedFromStep: "render",
			Steps: []workflow.StepRun{
				{Name: "create", Kind: workflow.StepKindStep, Status: workflow.StepStatusCompleted, Attempts: 1, StartedAt: at(day), FinishedAt: ptr(at(day + 1.5))},
				{Name: "nap", Kind: workflow.StepKindSleep, Status: workflow.StepStatusCompleted, Attempts: 1, StartedAt: at(day + 2), FinishedAt: ptr(at(day + 62))},
				{Name: "render", Kind: workflow.StepKindStep, Status: workflow.StepStatusCompleted, Attempts: 1, StartedAt: at(2), FinishedAt: ptr(at(4))},
			},
		}
		tl := runTimeline(run, at(60))
		require.Equal(t, "4s", tl.Span, "the fork's own time, not the day since its origin ran")
		require.True(t, tl.Copied)
		require.Equal(t, t0.Format(time.RFC3339), tl.Start.ISO, "the axis starts at the fork's creation")
		for i, want := range []struct {
			name, x, w, label string
			copied            bool
		}{
			{"run", "25.00", "75.00", "3s", false},
			{"create", "0.00", "0.40", "copied from …c34493f6f43b (took 1.5s there)", true},
			{"nap", "0.00", "0.40", "copied from …c34493f6f43b (took 1m there)", true},
			{"render", "50.00", "50.00", "2s", false},
		} {
			row := tl.Rows[i]
			require.Equal(t, want.name, row.Name)
			require.Equal(t, want.x, row.X, want.name)
			require.Equal(t, want.w, row.W, want.name)
			require.Equal(t, want.label, row.Label, want.name)
			require.Equal(t, want.copied, row.Copied, want.name)
		}

		// A run that is no fork draws a step that began before its
		// creation (a clock behind the database's) on the axis, as before.
		run.ForkedFrom = nil
		require.Equal(t, "24h", runTimeline(run, at(60)).Span, "a day and 4 s, shown to the hour")
	})
}
