package jobs_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/jobs"
)

func TestMain(m *testing.M) { testdb.Main(m) }

func TestConfig(t *testing.T) {
	t.Parallel()

	var nilConfig *jobs.Config
	require.Equal(t, &jobs.Config{
		RepairInterval:     jobs.DefaultRepairInterval,
		RetentionInterval:  jobs.DefaultRetentionInterval,
		RetentionBatchSize: jobs.DefaultRetentionBatchSize,
	}, nilConfig.WithDefaults())
	require.Equal(t, 7, (&jobs.Config{RetentionBatchSize: 7}).WithDefaults().RetentionBatchSize)

	require.NoError(t, (&jobs.Config{}).Validate())
	require.ErrorContains(t, (&jobs.Config{RepairInterval: time.Millisecond}).Validate(), "Config.RepairInterval is 1ms; use at least 1s")
	require.ErrorContains(t, (&jobs.Config{RetentionInterval: -time.Minute}).Validate(), "Config.RetentionInterval")
	require.ErrorContains(t, (&jobs.Config{RetentionBatchSize: -1}).Validate(), "use 1 to 100000")
	require.ErrorContains(t, (&jobs.Config{RetentionBatchSize: 1_000_000}).Validate(), "use 1 to 100000")
}

// TestAdd runs a maintenance job on a River client's leader: the job runs
// once when the client starts leading, as River UI then shows it.
func TestAdd(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	var (
		passes atomic.Int32
		ran    = make(chan struct{}, 1)
	)
	job := jobs.Job{Kind: jobs.KindRunRetention, Interval: time.Hour, Run: func(context.Context) (int, error) {
		passes.Add(1)
		ran <- struct{}{}
		return 3, nil
	}}
	config := &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}, Schema: db.Schema, TestOnly: true}
	require.NoError(t, jobs.Add(config, job))
	require.ErrorContains(t, jobs.Add(config, job), "jobs: register tributary:run_retention")

	client, err := river.NewClient[pgx.Tx](riverpgxv5.New(db.Pool), config)
	require.NoError(t, err)
	events, cancel := client.Subscribe(river.EventKindJobCompleted)
	defer cancel()
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { require.NoError(t, client.Stop(context.Background())) })

	select {
	case <-ran:
	case <-ctx.Done():
		t.Fatal("the maintenance job did not run within 30s of the client's start")
	}
	select {
	case ev := <-events:
		require.Equal(t, jobs.KindRunRetention, ev.Job.Kind)
	case <-ctx.Done():
		t.Fatal("the maintenance job did not complete")
	}
	require.EqualValues(t, 1, passes.Load())
}

func TestJobNeedsItsFields(t *testing.T) {
	t.Parallel()

	err := jobs.Add(&river.Config{}, jobs.Job{Kind: jobs.KindRepairRuns, Interval: time.Millisecond, Run: func(context.Context) (int, error) { return 0, nil }})
	require.ErrorContains(t, err, "an Interval of at least a second")
}
