package schedule

import (
	"log/slog"
	"testing"
	"time"

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
