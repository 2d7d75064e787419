package cli

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/workflow"
)

// TestRetryFlags: workflow start and schedule create/update take a retry
// policy from --retry-delay, --retry-backoff and --retry-jitter, refuse a
// bad one naming the flag, and workflow get says when a failed run's next
// attempt is due.
func TestRetryFlags(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	db, vars := migratedDB(t)
	flaky := workflow.Define("cli_flaky", func(ctx workflow.Context, _ any) (string, error) {
		return "", errors.New("upstream timed out")
	}, nil)
	client := startWorkingClient(ctx, t, db, &workflow.Config{Workflows: []workflow.Registrable{flaky}})

	res := runCLI(t, vars, "workflow", "start", "cli_flaky", "--retry-delay", "1h", "--max-attempts", "5")
	require.Equal(t, ExitOK, res.code, res.stderr)
	id, err := uuid.Parse(res.stdout[:36])
	require.NoError(t, err)

	events, unsubscribe := client.River().Subscribe(river.EventKindJobFailed)
	defer unsubscribe()
	for {
		run, err := client.GetRun(ctx, id)
		require.NoError(t, err)
		if run.NextAttemptAt != nil {
			require.Equal(t, &workflow.RetryPolicy{Delay: time.Hour}, retryOfJob(ctx, t, client, run.JobID))
			require.Equal(t, &workflow.RetryPolicy{Delay: time.Hour}, run.Retry, "the run reads its job's policy")
			break
		}
		select {
		case <-events:
		case <-ctx.Done():
			t.Fatalf("run %s did not fail its first attempt", id)
		}
	}
	res = runCLI(t, vars, "workflow", "get", id.String())
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `(?m)^Attempts: +attempt 1 of 5, next in (1h|59m\d+s)$`, res.stdout)
	require.Regexp(t, `(?m)^Retry: +retries after 1h$`, res.stdout)

	res = runCLI(t, vars, "workflow", "start", "cli_flaky", "--retry-backoff", "base=1s,factor=0.5")
	requireFailed(t, res, ExitUsage, "re:^tributary: --retry-backoff: is 0.5; use 1 or more")
	res = runCLI(t, vars, "workflow", "start", "cli_flaky", "--retry-backoff", "base=1s,speed=2")
	requireFailed(t, res, ExitUsage, `re:^tributary: --retry-backoff "base=1s,speed=2": "speed=2": not base, factor or max`)
	res = runCLI(t, vars, "workflow", "start", "cli_flaky", "--retry-delay", "1s", "--retry-jitter", "2")
	requireFailed(t, res, ExitUsage, "re:^tributary: --retry-jitter: is 2; give a fraction from 0")

	res = runCLI(t, vars, "schedule", "create", "--name", "flaky", "--workflow", "cli_flaky", "--cron", "0 9 * * *",
		"--retry-backoff", "base=1s,factor=2,max=5m", "--retry-jitter", "0.1")
	require.Equal(t, ExitOK, res.code, res.stderr)
	ref := res.stdout[:36]
	res = runCLI(t, vars, "schedule", "get", ref)
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.Regexp(t, `(?m)^Run policy: +retries after 1s, ×2 each time, at most 5m, less up to 10 % \(the rest: the workflow type's defaults\)$`, res.stdout)

	res = runCLI(t, vars, "schedule", "update", ref, "--retry-delay", "30s")
	require.Equal(t, ExitOK, res.code, res.stderr)
	res = runCLI(t, vars, "schedule", "get", ref)
	require.Regexp(t, `(?m)^Run policy: +retries after 30s `, res.stdout)

	res = runCLI(t, vars, "schedule", "update", ref, "--retry-delay", "0")
	require.Equal(t, ExitOK, res.code, res.stderr)
	res = runCLI(t, vars, "schedule", "get", ref)
	require.Regexp(t, `(?m)^Run policy: +the workflow type's defaults$`, res.stdout)
}

// retryOfJob is the retry policy River job id carries.
func retryOfJob(ctx context.Context, t *testing.T, client *workflow.Client, id int64) *workflow.RetryPolicy {
	t.Helper()
	job, err := client.River().JobGet(ctx, id)
	require.NoError(t, err)
	var args struct {
		Retry *workflow.RetryPolicy `json:"retry"`
	}
	require.NoError(t, json.Unmarshal(job.EncodedArgs, &args))
	return args.Retry
}
