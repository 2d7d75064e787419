package riverui_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/riverui"
	"github.com/tributary-go/tributary/workflow"
)

// flaky fails every attempt, and waits an hour before the next.
var flaky = workflow.Define("dash_flaky", func(ctx workflow.Context, _ any) (string, error) {
	return "", errors.New("upstream timed out")
}, &workflow.DefineOpts{MaxAttempts: 5, Retry: &workflow.RetryPolicy{Delay: time.Hour}})

// TestRunWaitingToRetry: the API's run carries attempt, max_attempts and
// next_attempt_at, and the run's page says "attempt 1 of 5, next in 59m",
// for a run whose attempt failed and waits to retry, and how it retries
// (its job's policy).
func TestRunWaitingToRetry(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	db := testdb.New(t)
	wf, err := workflow.NewClient(db.Pool, &workflow.Config{
		River:     &river.Config{Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}},
		Schema:    db.Schema,
		Workflows: []workflow.Registrable{flaky},
	})
	require.NoError(t, err)
	require.NoError(t, wf.Start(ctx))
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, wf.Stop(stopCtx))
	})
	h, err := riverui.New(wf, nil, &riverui.Config{Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))})
	require.NoError(t, err)
	uiCtx, stopUI := context.WithCancel(context.Background())
	require.NoError(t, h.Start(uiCtx))
	server := httptest.NewServer(h)
	t.Cleanup(func() {
		server.Close()
		stopUI()
	})
	d := &dash{client: server.Client(), server: server, wf: wf}

	events, unsubscribe := wf.River().Subscribe(river.EventKindJobFailed)
	defer unsubscribe()
	handle, err := flaky.Start(ctx, wf, nil, nil)
	require.NoError(t, err)
	var run *workflow.Run
	for run == nil || run.NextAttemptAt == nil {
		if run != nil {
			select {
			case <-events:
			case <-ctx.Done():
				t.Fatalf("run %s did not fail its first attempt", handle.ID)
			}
		}
		run, err = handle.Get(ctx)
		require.NoError(t, err)
	}

	path := "/api/runs/" + handle.ID.String()
	resp := d.send(t, http.MethodGet, path, nil, nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	checkAnswer(t, http.MethodGet, path, resp.status, resp.header.Get("Content-Type"), resp.body)
	var wire struct {
		Attempt       int             `json:"attempt"`
		MaxAttempts   int             `json:"max_attempts"`
		NextAttemptAt *time.Time      `json:"next_attempt_at"`
		Retry         json.RawMessage `json:"retry"`
	}
	require.NoError(t, json.Unmarshal([]byte(resp.body), &wire))
	require.JSONEq(t, `{"delay": "1h0m0s"}`, string(wire.Retry), "the type's policy, carried by the run's job")
	require.Equal(t, 1, wire.Attempt)
	require.Equal(t, 5, wire.MaxAttempts)
	require.NotNil(t, wire.NextAttemptAt)
	require.True(t, wire.NextAttemptAt.Equal(*run.NextAttemptAt))
	require.Equal(t, time.UTC, wire.NextAttemptAt.Location())

	page := d.page(t, "/runs/"+handle.ID.String(), nil)
	require.Equal(t, []string{"attempt 1 of 5, next in 59m"}, texts(page, "run-attempts"))
	require.Equal(t, []string{"retries after 1h"}, texts(page, "run-retry"), "the type's policy, carried by the run's job")

	// A run not waiting to retry has none.
	later, err := flaky.Start(ctx, wf, nil, &workflow.StartOpts{ScheduledAt: time.Now().Add(time.Hour)})
	require.NoError(t, err)
	resp = d.send(t, http.MethodGet, "/api/runs/"+later.ID.String(), nil, nil)
	require.Equal(t, http.StatusOK, resp.status, resp.body)
	wire.NextAttemptAt = &time.Time{}
	require.NoError(t, json.Unmarshal([]byte(resp.body), &wire))
	require.Nil(t, wire.NextAttemptAt)
	require.Equal(t, []string{"attempt 0 of 5"}, texts(d.page(t, "/runs/"+later.ID.String(), nil), "run-attempts"))

	// A run's own policy is the one its page says.
	own, err := flaky.Start(ctx, wf, nil, &workflow.StartOpts{ScheduledAt: time.Now().Add(time.Hour),
		Retry: &workflow.RetryPolicy{Base: time.Second, Factor: 3, Max: time.Minute}})
	require.NoError(t, err)
	require.Equal(t, []string{"retries after 1s, ×3 each time, at most 1m"}, texts(d.page(t, "/runs/"+own.ID.String(), nil), "run-retry"))
}
