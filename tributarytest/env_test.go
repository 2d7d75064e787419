package tributarytest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/tributarytest"
	"github.com/tributary-go/tributary/workflow"
)

// longHaul sleeps 30 days, waits a week for a signal that never comes,
// then sleeps a year: the target for the kit, under 2 s of wall
// time.
var longHaul = workflow.Define("long_haul", func(ctx workflow.Context, user string) (string, error) {
	if _, err := workflow.Step(ctx, "welcome", func(context.Context) (string, error) { return "welcome " + user, nil }); err != nil {
		return "", err
	}
	if err := workflow.Sleep(ctx, "a month", 30*24*time.Hour); err != nil {
		return "", err
	}
	_, err := workflow.WaitSignal[string](ctx, "confirmed", &workflow.WaitOpts{Timeout: 7 * 24 * time.Hour})
	if !errors.Is(err, workflow.ErrSignalTimeout) {
		return "", err
	}
	if err := workflow.Sleep(ctx, "a year", 365*24*time.Hour); err != nil {
		return "", err
	}
	return workflow.Step(ctx, "reminder", func(context.Context) (string, error) { return "reminded " + user, nil })
}, nil)

func TestTimeSkipping(t *testing.T) {
	t.Parallel()

	start := time.Date(2031, 1, 1, 9, 0, 0, 0, time.UTC)
	env := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{longHaul}, Start: start})
	began := time.Now()
	h, err := longHaul.Start(env.Context(), env.Workflows, "ada", nil)
	require.NoError(t, err)
	out, err := tributarytest.Result(env, h)
	require.NoError(t, err)
	require.Equal(t, "reminded ada", out)
	t.Logf("30 days, a 7-day timeout and a year in %s of wall time", time.Since(began).Round(time.Millisecond))

	end := start.Add((30 + 7 + 365) * 24 * time.Hour)
	require.Equal(t, end, env.Now(), "the clock stopped at the last wake-up")
	run := env.RequireStatus(h.ID, workflow.StatusCompleted)
	require.Equal(t, start, run.CreatedAt.UTC(), "the run's times are the virtual calendar's")
	require.Equal(t, end, run.FinishedAt.UTC())
	steps := env.RequireSteps(h.ID, "welcome", "a month", "signal:confirmed", "a year", "reminder")
	finished := map[string]time.Time{}
	for _, s := range steps {
		require.NotNil(t, s.FinishedAt, "step %s", s.Name)
		finished[s.Name] = s.FinishedAt.UTC()
	}
	require.Equal(t, start, finished["welcome"])
	require.Equal(t, start.Add(30*24*time.Hour), finished["a month"])
	require.Equal(t, start.Add(37*24*time.Hour), finished["signal:confirmed"])
	require.Equal(t, end, finished["a year"])
	require.Equal(t, end, finished["reminder"])
}

// A signal sent before its timeout wakes the run at the clock's time.
func TestSignalBeforeTimeout(t *testing.T) {
	t.Parallel()

	waiter := workflow.Define("waiter", func(ctx workflow.Context, _ struct{}) (string, error) {
		return workflow.WaitSignal[string](ctx, "go", &workflow.WaitOpts{Timeout: 7 * 24 * time.Hour})
	}, nil)
	start := time.Date(2031, 6, 1, 0, 0, 0, 0, time.UTC)
	env := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{waiter}, Start: start})
	h, err := waiter.Start(env.Context(), env.Workflows, struct{}{}, nil)
	require.NoError(t, err)
	env.Advance(3 * 24 * time.Hour)
	env.RequireStatus(h.ID, workflow.StatusWaiting)
	require.NoError(t, env.Workflows.Signal(env.Context(), h.ID, "go", "now"))
	out, err := tributarytest.Result(env, h)
	require.NoError(t, err)
	require.Equal(t, "now", out)
	require.Equal(t, start.Add(3*24*time.Hour), env.Now(), "no time skipped: the signal woke it")
}
