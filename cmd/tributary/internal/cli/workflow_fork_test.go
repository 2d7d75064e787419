package cli

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/workflow"
)

func TestWorkflowFork(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	db, vars := migratedDB(t)
	var fixed atomic.Bool
	def := workflow.Define("cli_fork", func(ctx workflow.Context, in cliTestInput) (string, error) {
		if _, err := workflow.Step(ctx, "reserve", func(context.Context) (int, error) { return 1, nil }); err != nil {
			return "", err
		}
		return workflow.Step(ctx, "charge", func(context.Context) (string, error) {
			if !fixed.Load() {
				return "", workflow.NonRetryable(errors.New("card declined for " + in.Name))
			}
			return "charged " + in.Name, nil
		})
	}, nil)
	client := startWorkingClient(ctx, t, db, &workflow.Config{Workflows: []workflow.Registrable{def}})

	failed, err := def.Start(ctx, client, cliTestInput{Name: "Ada"}, nil)
	require.NoError(t, err)
	waitRunStatus(ctx, t, client, failed.ID, workflow.StatusFailed)
	fixed.Store(true)

	res := runCLI(t, vars, "workflow", "fork", failed.ID.String())
	require.Equal(t, ExitUsage, res.code)
	require.Equal(t, "tributary: workflow fork needs --from-step; name the step to run again, as 'tributary workflow get "+failed.ID.String()+"' lists it\n", res.stderr)

	res = runCLI(t, vars, "workflow", "fork", failed.ID.String(), "--from-step", "ship")
	require.Equal(t, ExitUsage, res.code)
	require.Equal(t, "tributary: run "+failed.ID.String()+` has no step "ship"; it recorded "reserve", "charge"; fork from one of them`+"\n", res.stderr)

	res = runCLI(t, vars, "workflow", "fork", failed.ID.String(), "--from-step", "charge")
	require.Equal(t, ExitOK, res.code, res.stderr)
	t.Logf("workflow fork:\n%s", res.stdout)
	m := regexp.MustCompile(`^forked run ` + failed.ID.String() + ` at step "charge": new run (\S+) \(pending\)\nfollow it with: tributary workflow get (\S+)\n$`).FindStringSubmatch(res.stdout)
	require.NotNil(t, m, res.stdout)
	require.Equal(t, m[1], m[2])
	forkID := m[1]

	var run wire.Run
	res = runCLI(t, vars, "workflow", "fork", "--json", failed.ID.String(), "--from-step", "reserve")
	require.Equal(t, ExitOK, res.code, res.stderr)
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &run))
	require.Equal(t, &failed.ID, run.ForkedFrom)
	require.Equal(t, "reserve", run.ForkedFromStep)
	secondID := run.ID.String()

	waitRunStatus(ctx, t, client, run.ID, workflow.StatusCompleted)
	res = runCLI(t, vars, "workflow", "get", forkID)
	require.Equal(t, ExitOK, res.code, res.stderr)
	t.Logf("workflow get (fork):\n%s", res.stdout)
	require.Regexp(t, `(?m)^Forked from: +`+failed.ID.String()+` at step "charge"$`, res.stdout)

	res = runCLI(t, vars, "workflow", "get", failed.ID.String())
	require.Equal(t, ExitOK, res.code, res.stderr)
	t.Logf("workflow get (origin):\n%s", res.stdout)
	require.Regexp(t, `(?m)^Forks: +`+secondID+` at step "reserve" \(completed\)\n +`+forkID+` at step "charge" \(\w+\)$`, res.stdout)

	// An unknown run.
	res = runCLI(t, vars, "workflow", "fork", "01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e", "--from-step", "charge")
	require.Equal(t, ExitError, res.code)
	require.Contains(t, res.stderr, "no run 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e")
}
