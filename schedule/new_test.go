package schedule

import (
	"context"
	"testing"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/workflow"
)

// TestNew checks how a schedule client binds to its workflow client: once,
// before the workflow client starts, with errors that say what to do.
func TestNew(t *testing.T) {
	t.Parallel()

	working := func(t *testing.T, queues map[string]river.QueueConfig) *workflow.Client {
		t.Helper()
		wf, err := workflow.NewClient(testdb.New(t).Pool, &workflow.Config{
			River:     &river.Config{Queues: queues, TestOnly: true},
			Workflows: []workflow.Registrable{tick},
		})
		require.NoError(t, err)
		t.Cleanup(func() { require.NoError(t, wf.Stop(context.Background())) })
		return wf
	}

	t.Run("NilWorkflowClient", func(t *testing.T) {
		t.Parallel()
		_, err := New(nil, nil)
		require.ErrorContains(t, err, "build one with workflow.NewClient")
	})

	t.Run("AddsTheQueue", func(t *testing.T) {
		t.Parallel()
		wf := working(t, map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}})
		_, err := New(wf, nil)
		require.NoError(t, err)
		queues := wf.River().Queues()
		require.NoError(t, wf.Start(context.Background()))
		// The queue is River's now: adding it again is refused.
		require.Error(t, queues.Add(Queue, river.QueueConfig{MaxWorkers: 1}))
	})

	t.Run("KeepsTheApplicationsQueueConfig", func(t *testing.T) {
		t.Parallel()
		wf := working(t, map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}, Queue: {MaxWorkers: 3}})
		_, err := New(wf, nil)
		require.NoError(t, err)
		require.NoError(t, wf.Start(context.Background()))
	})

	t.Run("Twice", func(t *testing.T) {
		t.Parallel()
		wf := working(t, map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}})
		_, err := New(wf, nil)
		require.NoError(t, err)
		_, err = New(wf, nil)
		require.ErrorContains(t, err, "has a schedule client already; make one schedule client per workflow client")
	})

	t.Run("AfterStart", func(t *testing.T) {
		t.Parallel()
		wf := working(t, map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}})
		require.NoError(t, wf.Start(context.Background()))
		_, err := New(wf, nil)
		require.ErrorContains(t, err, "create the schedule client before calling the workflow client's Start")
	})
}
