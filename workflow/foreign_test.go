package workflow

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/internal/testlog"
)

type plainArgs struct{}

func (plainArgs) Kind() string { return "plain_app_job" }

type plainWorker struct {
	river.WorkerDefaults[plainArgs]
}

func (plainWorker) Work(context.Context, *river.Job[plainArgs]) error { return nil }

// TestForeignFetchIsLogged: a plain River client (the application's, without
// Tributary's workers or FetchOnlyKnownKinds) working the runs' queue
// fetches a workflow job and fails it as an unknown kind. The run still
// completes on a Tributary client, which logs an error naming the plain
// client and what to change.
func TestForeignFetchIsLogged(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx := ctxT(t)

	workers := river.NewWorkers()
	river.AddWorker(workers, plainWorker{})
	plain, err := river.NewClient[pgx.Tx](riverpgxv5.New(db.Pool), &river.Config{
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 1}}, RetryPolicy: fastRetry{},
		Schema: db.Schema, TestOnly: true, Workers: workers, Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	failed, cancel := plain.Subscribe(river.EventKindJobFailed)
	defer cancel()
	require.NoError(t, plain.Start(ctx))

	inserter, err := NewClient(db.Pool, &Config{Schema: db.Schema})
	require.NoError(t, err)
	t.Cleanup(func() { stopClient(t, inserter) })
	h, err := echo.Start(ctx, inserter, greetIn{Name: "Ada"}, nil)
	require.NoError(t, err)
	select {
	case ev := <-failed:
		require.Equal(t, "workflow:echo", ev.Job.Kind)
	case <-ctx.Done():
		t.Fatal("the plain River client did not fetch the workflow job")
	}
	stopCtx, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	require.NoError(t, plain.Stop(stopCtx))

	var logs testlog.Buffer
	config := testConfig(t, db, echo)
	config.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c, err := NewClient(db.Pool, config)
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() { stopClient(t, c) })

	out, err := h.Result(ctx)
	require.NoError(t, err, "the run completes on the Tributary client")
	require.Equal(t, "hi Ada", out.Greeting)
	require.Contains(t, logs.String(), "A River client without Tributary's workers fetched a workflow job and failed it as an unknown kind")
	require.Contains(t, logs.String(), "FetchOnlyKnownKinds: true")
	require.Contains(t, logs.String(), "river_client_id="+plain.ID())
}
