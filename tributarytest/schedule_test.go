package tributarytest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/schedule"
	"github.com/tributary-go/tributary/tributarytest"
	"github.com/tributary-go/tributary/workflow"
)

var digest = workflow.Define("digest", func(ctx workflow.Context, _ struct{}) (string, error) {
	return workflow.Step(ctx, "send", func(context.Context) (string, error) { return "sent", nil })
}, nil)

// The schedule target: `0 8 * * *` in Europe/Paris from
// 2027-03-25 to 2027-04-02 (clocks change on 2027-03-28) fires exactly
// the 8 slots of those days, at 08:00 local: 07:00 UTC before the change,
// 06:00 after.
func TestScheduleAcrossDST(t *testing.T) {
	t.Parallel()

	paris, err := time.LoadLocation("Europe/Paris")
	require.NoError(t, err)
	env := tributarytest.New(t, &tributarytest.Config{
		Workflows: []workflow.Registrable{digest},
		Start:     time.Date(2027, 3, 25, 0, 0, 0, 0, paris),
	})
	ctx := env.Context()
	s, err := env.Schedules.Create(ctx, &schedule.Params{Name: "digest", Workflow: "digest", Cron: "0 8 * * *", TimeZone: "Europe/Paris"})
	require.NoError(t, err)

	env.AdvanceTo(time.Date(2027, 4, 2, 0, 0, 0, 0, paris))

	var fired []time.Time
	for _, slot := range env.Slots(schedule.Ref{ID: s.ID}) {
		require.Equal(t, workflow.StatusCompleted, slot.Status, "slot %s", slot.At)
		fired = append(fired, slot.At)
		require.Equal(t, slot.At, env.Run(slot.RunID).CreatedAt.UTC(), "the slot's run started at its time on the virtual clock")
	}
	var want []time.Time
	for day := 25; day <= 31; day++ {
		want = append(want, time.Date(2027, 3, day, 8, 0, 0, 0, paris).UTC())
	}
	want = append(want, time.Date(2027, 4, 1, 8, 0, 0, 0, paris).UTC())
	require.Equal(t, want, fired)
	require.Equal(t, 7, want[0].Hour(), "08:00 in Paris is 07:00 UTC before the change")
	require.Equal(t, 6, want[7].Hour(), "and 06:00 UTC after")
}
