package tributarytest_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/tributarytest"
	"github.com/tributary-go/tributary/workflow"
)

var (
	nap = workflow.Define("nap", func(ctx workflow.Context, d time.Duration) (string, error) {
		if err := workflow.Sleep(ctx, "nap", d); err != nil {
			return "", err
		}
		return "rested", nil
	}, nil)
	family = workflow.Define("family", func(ctx workflow.Context, _ struct{}) (string, error) {
		return workflow.RunChild(ctx, "child", nap, 48*time.Hour, nil)
	}, nil)
)

// A child run's sleep follows the virtual clock, and its parent wakes when
// it ends.
func TestChildRun(t *testing.T) {
	t.Parallel()

	start := time.Date(2031, 3, 1, 12, 0, 0, 0, time.UTC)
	env := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{family, nap}, Start: start})
	h, err := family.Start(env.Context(), env.Workflows, struct{}{}, nil)
	require.NoError(t, err)
	out, err := tributarytest.Result(env, h)
	require.NoError(t, err)
	require.Equal(t, "rested", out)
	require.Equal(t, start.Add(48*time.Hour), env.Now())
	steps := env.RequireSteps(h.ID, "child")
	require.NotNil(t, steps[0].ChildRunID)
	child := env.RequireStatus(*steps[0].ChildRunID, workflow.StatusCompleted)
	require.Equal(t, start.Add(48*time.Hour), child.FinishedAt.UTC())
}

// A test cancels a sleeping run at a virtual time.
func TestCancelWhileSleeping(t *testing.T) {
	t.Parallel()

	start := time.Date(2031, 3, 1, 12, 0, 0, 0, time.UTC)
	env := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{nap}, Start: start})
	h, err := nap.Start(env.Context(), env.Workflows, 7*24*time.Hour, nil)
	require.NoError(t, err)
	env.Advance(24 * time.Hour)
	env.RequireStatus(h.ID, workflow.StatusSleeping)
	require.NoError(t, env.Workflows.Cancel(env.Context(), h.ID))
	_, err = tributarytest.Result(env, h)
	require.Error(t, err)
	run := env.RequireStatus(h.ID, workflow.StatusCancelled)
	require.Equal(t, start.Add(24*time.Hour), run.FinishedAt.UTC(), "cancelled at the virtual time")
}

// A schedule's grant expires on the virtual calendar: the slots after its
// expiry are recorded as skipped, saying why.
func TestGrantExpiry(t *testing.T) {
	t.Parallel()

	start := time.Date(2031, 3, 1, 0, 0, 0, 0, time.UTC)
	env := tributarytest.New(t, &tributarytest.Config{Workflows: []workflow.Registrable{digest}, Start: start})
	ctx := env.Context()
	grant, err := env.Schedules.CreateGrant(ctx, &schedule.GrantParams{
		Subject: "user-1", Scopes: []string{schedule.ScopeExecute("digest")}, ExpiresAt: start.Add(36 * time.Hour),
	})
	require.NoError(t, err)
	s, err := env.Schedules.Create(ctx, &schedule.Params{Name: "daily", Workflow: "digest", Cron: "0 8 * * *", GrantID: &grant.ID})
	require.NoError(t, err)

	env.AdvanceTo(start.Add(72 * time.Hour))
	slots := env.Slots(schedule.Ref{ID: s.ID})
	require.Len(t, slots, 3)
	require.Equal(t, workflow.StatusCompleted, slots[0].Status, "1 March, 08:00: the grant is valid")
	require.Equal(t, workflow.StatusCompleted, slots[1].Status, "2 March, 08:00: valid until 12:00")
	require.Equal(t, workflow.StatusSkipped, slots[2].Status, "3 March, 08:00: expired")
	require.Contains(t, slots[2].SkipReason, schedule.SkipReasonGrantExpired)
}
