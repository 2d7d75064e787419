package cli

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/internal/wire"
	"github.com/tributary-go/tributary/workflow"
)

type cliTestInput struct {
	Name string `json:"name"`
}

type cliTestApproval struct {
	By string `json:"by"`
}

// cliTestWorkflows are the workflows the CLI tests run: one that completes
// at once, one that fails, one that waits for a signal, and one whose step
// blocks until release is closed and then until its attempt is cancelled.
type cliTestWorkflows struct {
	quick    *workflow.Definition[cliTestInput, string]
	fail     *workflow.Definition[cliTestInput, string]
	approval *workflow.Definition[cliTestInput, string]
	block    *workflow.Definition[cliTestInput, string]

	// blocking receives when block's step starts: its run reads running.
	blocking chan struct{}
}

func newCLITestWorkflows(release <-chan struct{}) *cliTestWorkflows {
	blocking := make(chan struct{}, 1)
	return &cliTestWorkflows{
		blocking: blocking,
		quick: workflow.Define("cli_quick", func(ctx workflow.Context, in cliTestInput) (string, error) {
			return "hello " + in.Name, nil
		}, nil),
		fail: workflow.Define("cli_fail", func(ctx workflow.Context, in cliTestInput) (string, error) {
			return workflow.Step(ctx, "charge", func(context.Context) (string, error) {
				return "", workflow.NonRetryable(errors.New("card declined by the issuing bank after three fraud checks for " + in.Name))
			})
		}, nil),
		approval: workflow.Define("cli_approval", func(ctx workflow.Context, in cliTestInput) (string, error) {
			if _, err := workflow.Step(ctx, "prepare", func(context.Context) (int, error) { return 1, nil }); err != nil {
				return "", err
			}
			approval, err := workflow.WaitSignal[cliTestApproval](ctx, "approve", nil)
			if err != nil {
				return "", err
			}
			return in.Name + " approved by " + approval.By, nil
		}, nil),
		block: workflow.Define("cli_block", func(ctx workflow.Context, in cliTestInput) (string, error) {
			return workflow.Step(ctx, "block", func(ctx context.Context) (string, error) {
				select {
				case blocking <- struct{}{}:
				default:
				}
				select {
				case <-release:
				case <-time.After(30 * time.Second):
				}
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(30 * time.Second):
					return "", errors.New("the attempt was not cancelled")
				}
			})
		}, nil),
	}
}

// startWorkingClient starts a workflow client on db that works runs, with
// config's Workflows, after calling each of before on it (to bind a
// schedule client, say); it is stopped when the test ends.
func startWorkingClient(ctx context.Context, t *testing.T, db *testdb.DB, config *workflow.Config, before ...func(*workflow.Client) error) *workflow.Client {
	t.Helper()

	config.Schema = db.Schema
	config.River = &river.Config{
		// River would log to stdout: workflow.Config.Logger does not
		// reach it when River is set.
		Logger: slog.New(slog.DiscardHandler),
		Queues: map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 5}},
	}
	client, err := workflow.NewClient(db.Pool, config)
	require.NoError(t, err)
	for _, f := range before {
		require.NoError(t, f(client))
	}
	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, client.Stop(stopCtx))
	})
	return client
}

// waitRunStatus waits until a run worked by client has status want, a
// status the run reaches as its River job ends: parked (waiting, sleeping)
// or finished. It reads the run, then again after each River job event of
// client, which comes after the run's new status committed; it fails the
// test when ctx ends first.
func waitRunStatus(ctx context.Context, t *testing.T, client *workflow.Client, id uuid.UUID, want workflow.Status) *workflow.Run {
	t.Helper()
	events, cancel := client.River().Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed,
		river.EventKindJobCancelled, river.EventKindJobSnoozed)
	defer cancel()
	for {
		run, err := client.GetRun(ctx, id)
		require.NoError(t, err)
		if run.Status == want {
			return run
		}
		select {
		case _, ok := <-events:
			if !ok {
				t.Fatalf("run %s is %s, want %s; the client stopped", id, run.Status, want)
			}
		case <-ctx.Done():
			t.Fatalf("run %s stayed %s, want %s", id, run.Status, want)
		}
	}
}

func TestWorkflowCommands(t *testing.T) {
	t.Parallel()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	db, vars := migratedDB(t)
	release := make(chan struct{})
	defs := newCLITestWorkflows(release)
	client := startWorkingClient(ctx, t, db, &workflow.Config{Workflows: []workflow.Registrable{defs.quick, defs.fail, defs.approval, defs.block}})
	// Let a blocked step go on before Stop waits for it, also when a
	// check failed.
	releaseBlocked := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseBlocked)

	quick, err := defs.quick.Start(ctx, client, cliTestInput{Name: "Ada"}, nil)
	require.NoError(t, err)
	out, err := quick.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, "hello Ada", out)

	failed, err := defs.fail.Start(ctx, client, cliTestInput{Name: "Eve"}, nil)
	require.NoError(t, err)
	_, err = failed.Result(ctx)
	require.Error(t, err)

	approveA, err := defs.approval.Start(ctx, client, cliTestInput{Name: "Ann"}, nil)
	require.NoError(t, err)
	waitRunStatus(ctx, t, client, approveA.ID, workflow.StatusWaiting)
	approveB, err := defs.approval.Start(ctx, client, cliTestInput{Name: "Bob"}, nil)
	require.NoError(t, err)
	waitRunStatus(ctx, t, client, approveB.ID, workflow.StatusWaiting)

	t.Run("List", func(t *testing.T) {
		res := runCLI(t, vars, "workflow", "list")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		t.Logf("workflow list:\n%s", res.stdout)
		require.Regexp(t, `^ID +TYPE +TENANT +STATUS +ATTEMPT +CREATED +FINISHED +ERROR\n`, res.stdout)
		ago := `(just now|\d+s ago)`
		rows := []string{
			approveB.ID.String() + ` +cli_approval +- +waiting +1/10 +` + ago + ` +- +-`,
			approveA.ID.String() + ` +cli_approval +- +waiting +1/10 +` + ago + ` +- +-`,
			failed.ID.String() + ` +cli_fail +- +failed +1/10 +` + ago + ` +` + ago + ` +non_retryable: card declined by the issuing bank after thre…`,
			quick.ID.String() + ` +cli_quick +- +completed +1/10 +` + ago + ` +` + ago + ` +-`,
		}
		require.Regexp(t, `\n`+rows[0]+`\n`+rows[1]+`\n`+rows[2]+`\n`+rows[3]+`\n$`, res.stdout)

		res = runCLI(t, vars, "workflow", "list", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		var page wire.RunList
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &page))
		runs := page.Runs
		require.Len(t, runs, 4)
		require.Equal(t, []uuid.UUID{approveB.ID, approveA.ID, failed.ID, quick.ID}, []uuid.UUID{runs[0].ID, runs[1].ID, runs[2].ID, runs[3].ID})
		require.Equal(t, workflow.StatusCompleted, runs[3].Status)
		require.JSONEq(t, `"hello Ada"`, string(runs[3].Output))
		require.JSONEq(t, `{"name": "Ada"}`, string(runs[3].Input))
		require.Nil(t, runs[3].Steps) // list does not read steps
		require.Equal(t, "non_retryable", runs[2].Error.Kind)

		res = runCLI(t, vars, "workflow", "list", "--type", "cli_approval", "--status", "waiting", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &page))
		require.Len(t, page.Runs, 2)
		require.Nil(t, page.NextAfter) // not a full page

		// Paging: the note says how to go on.
		res = runCLI(t, vars, "workflow", "list", "--limit", "1")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `^ID +TYPE.*\n`+approveB.ID.String()+` .*\n$`, res.stdout)
		require.Equal(t, "note: there may be more runs; see them with --after "+approveB.ID.String()+"\n", res.stderr)
		res = runCLI(t, vars, "workflow", "list", "--limit", "2", "--after", approveB.ID.String(), "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &page))
		require.Len(t, page.Runs, 2)
		require.Equal(t, approveA.ID, page.Runs[0].ID)
		require.Equal(t, failed.ID, page.Runs[1].ID)
		require.Equal(t, failed.ID, *page.NextAfter) // a full page: the next starts after its last

		res = runCLI(t, vars, "workflow", "list", "--type", "no_such_type")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "no runs\n", res.stdout)
		res = runCLI(t, vars, "workflow", "list", "--type", "no_such_type", "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.JSONEq(t, `{"runs": [], "next_after": null}`, res.stdout)

		res = runCLI(t, vars, "workflow", "list", "--schedule", uuid.New().String(), "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.JSONEq(t, `{"runs": [], "next_after": null}`, res.stdout)
	})

	t.Run("Get", func(t *testing.T) {
		res := runCLI(t, vars, "workflow", "get", quick.ID.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		t.Logf("workflow get (completed):\n%s", res.stdout)
		require.Regexp(t, `^ID: +`+quick.ID.String()+`\nType: +cli_quick\nStatus: +completed\nAttempts: +1/10\n`, res.stdout)
		require.Regexp(t, `(?m)^Created: +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \((just now|\d+s ago)\)$`, res.stdout)
		require.Regexp(t, `(?m)^Input: +\{"name": "Ada"\}$`, res.stdout)
		require.Regexp(t, `(?m)^Output: +"hello Ada"$`, res.stdout)
		require.Regexp(t, `\n\nno steps recorded yet\n$`, res.stdout)

		// Flags after the id work too.
		res = runCLI(t, vars, "workflow", "get", quick.ID.String(), "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		var run wire.Run
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &run))
		require.Equal(t, quick.ID, run.ID)

		// workflow history is another name for it: the file
		// tributarytest.Replay reads.
		history := runCLI(t, vars, "workflow", "history", "--json", quick.ID.String())
		require.Equal(t, ExitOK, history.code, history.stderr)
		require.Equal(t, res.stdout, history.stdout)
		require.JSONEq(t, `"hello Ada"`, string(run.Output))

		res = runCLI(t, vars, "workflow", "get", failed.ID.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		t.Logf("workflow get (failed):\n%s", res.stdout)
		require.Regexp(t, `(?m)^Error: +non_retryable: card declined by the issuing bank after three fraud checks for Eve$`, res.stdout)
		require.Regexp(t, `(?m)^Failed step: +charge \(attempt 1\)$`, res.stdout)
		require.Regexp(t, `(?m)^charge +step +failed +1 +`, res.stdout)
	})

	t.Run("Steps", func(t *testing.T) {
		res := runCLI(t, vars, "workflow", "steps", approveA.ID.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		t.Logf("workflow steps (waiting):\n%s", res.stdout)
		require.Regexp(t, `^NAME +KIND +STATUS +ATTEMPTS +STARTED +DURATION +WAKE +CHILD\n`+
			`prepare +step +completed +1 +(just now|\d+s ago) +\d\S* +- +-\n`+
			`signal:approve +signal +waiting +\d +(just now|\d+s ago) +- +- +-\n$`, res.stdout)

		res = runCLI(t, vars, "workflow", "steps", "--json", approveA.ID.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		var steps []wire.Step
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &steps))
		require.Len(t, steps, 2)
		require.Equal(t, "prepare", steps[0].Name)
		require.Equal(t, workflow.StepStatusWaiting, steps[1].Status)

		res = runCLI(t, vars, "workflow", "steps", quick.ID.String(), "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "[]\n", res.stdout)
	})

	t.Run("SignalWakesWaitingRun", func(t *testing.T) {
		// A signal the run is not waiting for is kept, and the command says so.
		for _, pending := range []string{"", " (2 of that name are pending)"} {
			res := runCLI(t, vars, "workflow", "signal", approveA.ID.String(), "nudge")
			require.Equal(t, ExitOK, res.code, res.stderr)
			require.Equal(t, `sent signal "nudge" to run `+approveA.ID.String()+`; it is waiting for signal "approve", not for this one, `+
				`so the signal is kept until the run waits for "nudge"`+pending+"\n", res.stdout)
		}

		res := runCLI(t, vars, "workflow", "signal", approveA.ID.String(), "approve", "--payload", `{"by": "ops"}`)
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, `sent signal "approve" to run `+approveA.ID.String()+"\n", res.stdout)

		out, err := approveA.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, "Ann approved by ops", out)

		res = runCLI(t, vars, "workflow", "steps", approveA.ID.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `(?m)^signal:approve +signal +completed +`, res.stdout)

		// A finished run takes no signal.
		res = runCLI(t, vars, "workflow", "signal", approveA.ID.String(), "approve")
		require.Equal(t, ExitError, res.code)
		require.Empty(t, res.stdout)
		require.Equal(t, "tributary: run "+approveA.ID.String()+` has already finished (completed), so signal "approve" was not sent; `+
			"only a run that has not finished can receive signals\n", res.stderr)
	})

	t.Run("CancelRetryWaitingRun", func(t *testing.T) {
		res := runCLI(t, vars, "workflow", "cancel", approveB.ID.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "cancelled run "+approveB.ID.String()+"\n", res.stdout)
		_, err := approveB.Result(ctx)
		require.ErrorIs(t, err, workflow.ErrCancelled)

		// Cancelling it again answers as pausing a paused schedule does.
		res = runCLI(t, vars, "workflow", "cancel", approveB.ID.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Empty(t, res.stderr)
		require.Equal(t, "run "+approveB.ID.String()+" has already finished (cancelled); nothing to cancel\n", res.stdout)

		res = runCLI(t, vars, "workflow", "list", "--status", "cancelled")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `\n`+approveB.ID.String()+` +cli_approval +- +cancelled +1/10 +(just now|\d+s ago) +(just now|\d+s ago) +cancelled: run cancelled while waiting\n$`, res.stdout)

		res = runCLI(t, vars, "workflow", "retry", approveB.ID.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `^retrying run `+approveB.ID.String()+` \(River job \d+\); its completed steps are not run again\n$`, res.stdout)

		waitRunStatus(ctx, t, client, approveB.ID, workflow.StatusWaiting)
		res = runCLI(t, vars, "workflow", "signal", approveB.ID.String(), "approve", "--payload", `{"by": "lead"}`, "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		var run wire.Run
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &run))
		require.Equal(t, approveB.ID, run.ID)

		done := waitRunStatus(ctx, t, client, approveB.ID, workflow.StatusCompleted)
		require.JSONEq(t, `"Bob approved by lead"`, string(done.Output))

		// Only failed and cancelled runs can be retried.
		res = runCLI(t, vars, "workflow", "retry", approveB.ID.String())
		require.Equal(t, ExitError, res.code)
		require.Equal(t, "tributary: run "+approveB.ID.String()+" is completed; only a failed or cancelled run can be retried\n", res.stderr)
	})

	t.Run("RetryFailedRunJSON", func(t *testing.T) {
		res := runCLI(t, vars, "workflow", "retry", "--json", failed.ID.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		var run wire.Run
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &run))
		require.Equal(t, failed.ID, run.ID)
		require.Contains(t, []workflow.Status{workflow.StatusPending, workflow.StatusRunning, workflow.StatusFailed}, run.Status)

		// The step fails again: the attempt numbers go on from the first run.
		waitRunStatus(ctx, t, client, failed.ID, workflow.StatusFailed)
		res = runCLI(t, vars, "workflow", "get", failed.ID.String(), "--json")
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &run))
		require.Equal(t, 2, run.Attempt)
	})

	t.Run("CancelRunningRun", func(t *testing.T) {
		blocked, err := defs.block.Start(ctx, client, cliTestInput{Name: "Cy"}, nil)
		require.NoError(t, err)
		select {
		case <-defs.blocking:
		case <-ctx.Done():
			t.Fatal("the blocking step did not start")
		}

		res := runCLI(t, vars, "workflow", "cancel", blocked.ID.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Equal(t, "cancellation of run "+blocked.ID.String()+" requested; the run stops at its next step boundary\n", res.stdout)

		res = runCLI(t, vars, "workflow", "get", blocked.ID.String())
		require.Equal(t, ExitOK, res.code, res.stderr)
		require.Regexp(t, `(?m)^Status: +running\nCancel requested: +\S+Z \(`, res.stdout)
		require.Regexp(t, `\n\nno steps recorded yet\n$`, res.stdout) // a step is recorded when it ends

		releaseBlocked()
		_, err = blocked.Result(ctx)
		require.ErrorIs(t, err, workflow.ErrCancelled)
	})

	t.Run("UnknownRun", func(t *testing.T) {
		id := uuid.Must(uuid.NewV7())
		for _, args := range [][]string{
			{"get", id.String()},
			{"steps", id.String()},
			{"cancel", id.String()},
			{"signal", id.String(), "approve"},
			{"retry", id.String()},
		} {
			res := runCLI(t, vars, append([]string{"workflow"}, args...)...)
			require.Equal(t, ExitError, res.code, "%v", args)
			require.Empty(t, res.stdout, "%v", args)
			require.Equal(t, "tributary: no run "+id.String()+"; check the id with 'tributary workflow list'\n", res.stderr, "%v", args)
		}
	})

	t.Run("BadSignalName", func(t *testing.T) {
		res := runCLI(t, vars, "workflow", "signal", approveA.ID.String(), string(make([]byte, 300)))
		require.Equal(t, ExitUsage, res.code)
		require.Regexp(t, `^tributary: workflow: invalid signal name: must be 1 to \d+ bytes, got 300; see 'tributary workflow signal --help'\n$`, res.stderr)
	})

	t.Run("MissingTables", func(t *testing.T) {
		res := runCLI(t, vars, "workflow", "list", "--schema", db.Schema+"_missing")
		require.Equal(t, ExitError, res.code)
		require.Regexp(t, `^tributary: .*; check --schema or TRIBUTARY_SCHEMA, and that 'tributary migrate up' has run\n$`, res.stderr)
	})
}

func TestWorkflowCommandsUsage(t *testing.T) {
	t.Parallel()

	const id = "01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e"

	runFailureCases(t, []string{"workflow"}, []failureCase{
		{
			name: "BadRunID", args: []string{"get", "01a1ffb2"}, code: ExitUsage,
			stderr: `tributary: "01a1ffb2" is not a run id; run ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e`,
		},
		{
			name: "BadRunIDForSignal", args: []string{"signal", "run-1", "approve"}, code: ExitUsage,
			stderr: `tributary: "run-1" is not a run id; run ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e`,
		},
		{
			name: "BadAfter", args: []string{"list", "--after", "x"}, code: ExitUsage,
			stderr: `tributary: --after "x" is not a run id; run ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e`,
		},
		{
			name: "BadSchedule", args: []string{"list", "--schedule", "x"}, code: ExitUsage,
			stderr: `tributary: --schedule "x" is not a schedule id; schedule ids look like 01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e`,
		},
		{
			name: "NoRunID", args: []string{"cancel"}, code: ExitUsage,
			stderr: "tributary: workflow cancel needs <run-id>; run it as 'tributary workflow cancel <run-id>'; find run ids with 'tributary workflow list'",
		},
		{
			name: "NoSignalName", args: []string{"signal", id}, code: ExitUsage,
			stderr: "tributary: workflow signal needs <signal-name>; run it as 'tributary workflow signal <run-id> <signal-name>'; find run ids with 'tributary workflow list'",
		},
		{
			name: "ExtraArgument", args: []string{"get", id, "extra"}, code: ExitUsage,
			stderr: `tributary: unexpected argument "extra"; see 'tributary workflow get --help'`,
		},
		{
			name: "BadPayload", args: []string{"signal", id, "approve", "--payload", "{by: ops}"}, code: ExitUsage,
			stderr: `tributary: --payload is not valid JSON: {by: ops}; pass a JSON value, quoted for the shell: --payload '{"approved": true}', --payload '"text"' or --payload 42; or @file.json, or - for standard input`,
		},
		{
			name: "BadStatus", args: []string{"list", "--status", "done"}, code: ExitUsage,
			stderr: `tributary: --status "done" is not a run status; use one of pending, running, sleeping, waiting, completed, failed, cancelled or skipped`,
		},
		{
			name: "LimitTooLarge", args: []string{"list", "--limit", "1001"}, code: ExitUsage,
			stderr: "tributary: --limit must be from 1 to 1000, not 1001; pass --limit 50, or up to --limit 1000 and page with --after",
		},
		{
			name: "FlagAfterIDUnknown", args: []string{"get", id, "--nope"}, code: ExitUsage,
			stderr: "tributary: flag provided but not defined: -nope; see 'tributary workflow get --help'",
		},
		{
			name: "NoDatabaseURL", args: []string{"get", id}, code: ExitError,
			stderr: noDatabaseURL,
		},
		{
			name: "NoDatabaseURLList", args: []string{"list"}, code: ExitError,
			stderr: noDatabaseURL,
		},
		{
			name: "UnreachableDatabase", args: []string{"list", "--database-url", "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=1"},
			code: ExitError, stderr: `re:^tributary: connecting to the database: .*; check the database URL and that Postgres is running$`,
		},
	})

	t.Run("Help", func(t *testing.T) {
		t.Parallel()

		res := runCLI(t, nil, "workflow", "--help")
		require.Equal(t, ExitOK, res.code)
		for _, name := range []string{"cancel", "get", "list", "retry", "signal", "steps"} {
			require.Regexp(t, regexp.MustCompile(`(?m)^  `+name+` +\S`), res.stdout)
		}
		res = runCLI(t, nil, "workflow", "signal", "--help")
		require.Equal(t, ExitOK, res.code)
		require.Contains(t, res.stdout, "Usage:\n  tributary workflow signal <run-id> <signal-name> [--payload <json>] [flags]\n")
		require.Contains(t, res.stdout, "  --payload JSON\n")

		// --help after the arguments prints the same help.
		requireSameHelp(t, res, "workflow", "signal", "01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e", "approve", "--help")
		requireSameHelp(t, runCLI(t, nil, "workflow", "get", "--help"), "workflow", "get", "not-an-id", "-h")
	})
}

func TestShorten(t *testing.T) {
	t.Parallel()

	require.Equal(t, "abc…", shorten("abcdef", 4))
	require.Equal(t, "héllo", shorten("héllo", 5))
}

func TestWorkflowTables(t *testing.T) {
	t.Parallel()

	now := time.Date(2026, 3, 8, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { t := now.Add(d); return &t }
	child := uuid.MustParse("01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e")
	steps := []workflow.StepRun{
		{Name: "charge", Kind: workflow.StepKindStep, Status: workflow.StepStatusCompleted, Attempts: 2, StartedAt: now.Add(-3 * time.Hour), FinishedAt: at(-3*time.Hour + 1254*time.Millisecond)},
		{Name: "signal:approved", Kind: workflow.StepKindSignal, Status: workflow.StepStatusCompleted, Attempts: 1, StartedAt: now.Add(-2 * time.Hour), FinishedAt: at(-time.Hour), WakeAt: at(22 * time.Hour)},
		{Name: "ship", Kind: workflow.StepKindChild, Status: workflow.StepStatusCompleted, Attempts: 1, StartedAt: now.Add(-time.Hour), FinishedAt: at(-10 * time.Minute), ChildRunID: &child},
		{Name: "cool-off", Kind: workflow.StepKindSleep, Status: workflow.StepStatusSleeping, Attempts: 1, StartedAt: now.Add(-10 * time.Minute), WakeAt: at(50 * time.Minute)},
	}
	var out strings.Builder
	require.NoError(t, printSteps(&out, steps, now))
	require.Equal(t, ""+
		"NAME             KIND    STATUS     ATTEMPTS  STARTED  DURATION  WAKE    CHILD\n"+
		"charge           step    completed  2         3h ago   1.25s     -       -\n"+
		"signal:approved  signal  completed  1         2h ago   1h        -       -\n"+
		"ship             child   completed  1         1h ago   50m       -       01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e\n"+
		"cool-off         sleep   sleeping   1         10m ago  -         in 50m  -\n", out.String())

	out.Reset()
	require.NoError(t, printSteps(&out, []workflow.StepRun{}, now))
	require.Equal(t, "no steps recorded yet\n", out.String())

	out.Reset()
	runs := []*workflow.Run{{
		ID: child, Type: "process_order", Tenant: "acme", Status: workflow.StatusFailed, Attempt: 3, MaxAttempts: 3,
		CreatedAt: now.Add(-26 * time.Hour), FinishedAt: at(-5 * time.Second),
		Error: &workflow.RunError{Kind: "error", Message: "charge:\tgateway timeout\nafter 30s"},
	}}
	require.NoError(t, printRunsTable(&out, runs, now))
	require.Equal(t, ""+
		"ID                                    TYPE           TENANT  STATUS  ATTEMPT  CREATED  FINISHED  ERROR\n"+
		"01a1ffb2-3fa1-781c-b9a9-3cd3e9d0123e  process_order  acme    failed  3/3      26h ago  5s ago    error: charge: gateway timeout after 30s\n", out.String())
}
