package cli

import (
	"context"
	"errors"
	"log/slog"
	"regexp"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// TestWatchFailures fails a run in a working client and expects serve's
// failure watcher, which reads the database, to log it at warn with its
// kind and step.
func TestWatchFailures(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	fails := workflow.Define("watched_fail", func(ctx workflow.Context, _ struct{}) (int, error) {
		return workflow.Step(ctx, "explode", func(context.Context) (int, error) {
			return 0, workflow.NonRetryable(errors.New("kaboom"))
		})
	}, nil)
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		Logger:    slog.New(slog.DiscardHandler),
		River:     &river.Config{Logger: slog.New(slog.DiscardHandler), Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}, TestOnly: true},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{fails},
	})
	require.NoError(t, err)
	require.NoError(t, wf.Start(ctx))
	t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })

	out := &syncBuffer{pause: regexp.MustCompile(`(?m)^.*Run failed.*$`), paused: make(chan []string, 1), resume: make(chan struct{})}
	watchCtx, stopWatch := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		watchFailures(watchCtx, slog.New(slog.NewTextHandler(out, nil)), wf, 10*time.Millisecond)
	}()
	defer func() {
		stopWatch()
		<-watched
	}()

	h, err := fails.Start(ctx, wf, struct{}{}, nil)
	require.NoError(t, err)
	_, err = h.Result(ctx)
	require.Error(t, err)

	select {
	case match := <-out.paused:
		close(out.resume)
		line := match[0]
		require.Contains(t, line, "level=WARN")
		require.Contains(t, line, "run_id="+h.ID.String())
		require.Contains(t, line, "workflow=watched_fail")
		require.Contains(t, line, "kind=non_retryable")
		require.Contains(t, line, "step=explode")
		require.Contains(t, line, "kaboom")
	case <-ctx.Done():
		close(out.resume)
		t.Fatal("the failure was not logged")
	}
}
