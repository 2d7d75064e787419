package schedule

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// TestScheduleOfAnUnservedType is issue 12's trap 2 for schedules: a
// schedule of a workflow type no live client serves is refused on request,
// and otherwise flagged in the working clients' logs at each repair pass.
func TestScheduleOfAnUnservedType(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	var logs lockedBuffer
	sc := startClient(t, db, &Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := ctxT(t, 30*time.Second)

	params := func(name, typ string) *Params {
		return &Params{Name: name, Cron: "0 0 1 1 *", Workflow: typ, RequireWorker: true}
	}
	_, err := sc.Create(ctx, params("served", "tick"))
	require.NoError(t, err, "a client of this test serves tick")

	// A client that registers no types (the CLI, an API) takes any name.
	creator := insertOnly(t, db)
	_, err = creator.Create(ctx, params("ghost", "no_such_type"))
	var noWorker *workflow.NoWorkerError
	require.ErrorAs(t, err, &noWorker)
	require.Equal(t, "no_such_type", noWorker.WorkflowType)
	var n int
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT count(*) FROM schedules WHERE workflow_type = 'no_such_type'").Scan(&n))
	require.Zero(t, n, "a refused create writes nothing")

	ghost := params("ghost", "no_such_type")
	ghost.RequireWorker = false
	_, err = creator.Create(ctx, ghost)
	require.NoError(t, err, "without RequireWorker the schedule is created: its worker may be deployed later")

	_, err = sc.Reconcile(ctx)
	require.NoError(t, err)
	require.Contains(t, logs.String(), `msg="tributary: Live schedules start a workflow type that no live worker serves; their runs stay pending until a client that registers it starts" workflow=no_such_type schedules=1`)
	require.NotContains(t, logs.String(), "workflow=tick")
}

// TestInputCheckedAgainstTheWorkers is issue 16's item 1: a schedule whose
// input the working clients refuse used to be created, and every slot then
// failed at fire time. Create, Update, Backfill and CreateMany now check the
// input against the limit the live workers of the type record in the
// worker registry, and, where the creating client registers the type,
// against its input type.
func TestInputCheckedAgainstTheWorkers(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t, 30*time.Second)
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		MaxInputBytes: 1024,
		River:         &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}, TestOnly: true},
		Schema:        db.Schema,
		Workflows:     []workflow.Registrable{tick},
	})
	require.NoError(t, err)
	sc, err := New(wf, nil)
	require.NoError(t, err)
	require.NoError(t, wf.Start(ctx))
	t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })

	creator := insertOnly(t, db) // the CLI: 1 MiB of its own, no types
	big := map[string]string{"blob": strings.Repeat("x", 4096)}
	requireInputRefused := func(t *testing.T, err error, field, problem string) {
		t.Helper()
		var verr *ValidationError
		require.ErrorAs(t, err, &verr)
		require.Equal(t, field, verr.Field)
		require.Contains(t, verr.Problem, problem)
	}
	const overLimit = `is 4107 bytes encoded, the limit is 1024 (the limit of the workers that serve "tick": their program's Config.MaxInputBytes)`

	_, err = creator.Create(ctx, &Params{Name: "big", Cron: "@daily", Workflow: "tick", Input: big})
	requireInputRefused(t, err, "Input", overLimit)
	_, err = creator.CreateMany(ctx, []*Params{{Name: "ok", Cron: "@daily", Workflow: "tick"}, {Name: "big", Cron: "@daily", Workflow: "tick", Input: big}})
	var item *ItemError
	require.ErrorAs(t, err, &item)
	require.Equal(t, 1, item.Index)
	requireInputRefused(t, err, "Input", overLimit)
	require.Zero(t, countOf(t, db, "SELECT count(*) FROM schedules"), "a refused create writes nothing")

	// A client that registers the type also checks that the input decodes.
	_, err = sc.Create(ctx, &Params{Name: "bad", Cron: "@daily", Workflow: "tick", Input: []int{1, 2}})
	requireInputRefused(t, err, "Input", `does not decode into struct {}, the input of workflow "tick"`)

	s, err := creator.Create(ctx, &Params{Name: "small", Cron: "@daily", Workflow: "tick", Paused: true})
	require.NoError(t, err)
	_, err = creator.Update(ctx, ByID(s.ID), &UpdateParams{Input: big})
	requireInputRefused(t, err, "Input", "the limit is 1024")
	_, err = creator.Backfill(ctx, ByID(s.ID), time.Now().Add(-48*time.Hour), time.Now(), &BackfillOpts{Input: big})
	requireInputRefused(t, err, "BackfillOpts.Input", "the limit is 1024")
	require.Zero(t, countOf(t, db, "SELECT count(*) FROM workflow_runs"), "a refused backfill writes nothing")
}
