package workflow

// This file holds the machinery of the crash tests (crash_test.go): the
// workflows they run, the worker process they SIGKILL (the test binary
// re-executed as TestCrashHelperProcess) and the parent's handle on it.

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/internal/testlog"
)

// Environment of the helper process.
const (
	crashHelperEnv   = "TRIBUTARY_CRASH_HELPER"   // "1" in the helper process only
	crashDBURLEnv    = "TRIBUTARY_CRASH_DB_URL"   // testdb.DB.URL: selects the test's schema
	crashSchemaEnv   = "TRIBUTARY_CRASH_SCHEMA"   // testdb.DB.Schema
	crashScenarioEnv = "TRIBUTARY_CRASH_SCENARIO" // which workflow the helper works
)

// Scenarios: the workflow a helper process registers and works.
const (
	crashScenarioReplay = "replay"
	crashScenarioStepTx = "steptx"
	crashScenarioSleep  = "sleep"
	crashScenarioOpenTx = "open-steptx"
	crashScenarioEnd    = "end" // the attempt ends; its completion never commits
)

// crashCompletionFailed is what the helper of the "end" scenario logs when
// River's completer tries to complete the ended attempt's job.
const crashCompletionFailed = "River's completer failed by the test"

const (
	// crashHelperLifetime bounds a helper process that nobody kills: it
	// fails and exits instead of blocking forever.
	crashHelperLifetime = 2 * time.Minute

	// crashChildDeadline is the deadline of exec.CommandContext: the parent
	// kills the helper at the latest then.
	crashChildDeadline = crashHelperLifetime + 30*time.Second

	// crashNap is how long the sleep scenario's workflow sleeps.
	crashNap = 2 * time.Second
)

// crashSetupTables creates the application tables the crash workflows write:
// effects counts step executions across processes (memory does not survive
// SIGKILL), orders is the StepTx scenario's business table.
func crashSetupTables(t *testing.T, db *testdb.DB) {
	t.Helper()
	_, err := db.Pool.Exec(ctxT(t), `
CREATE TABLE effects (run_id uuid NOT NULL, step text NOT NULL, pid integer NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE TABLE orders (id bigserial PRIMARY KEY, run_id uuid NOT NULL, customer text NOT NULL);`)
	require.NoError(t, err)
}

// recordEffect commits a step's side effect on its own (autocommit, not in
// StepTx), as a call to an external system would: it stays even if the
// process dies before the step's memo is stored.
func recordEffect(ctx context.Context, pool *pgxpool.Pool, runID uuid.UUID, step string) error {
	_, err := pool.Exec(ctx, "INSERT INTO effects (run_id, step, pid) VALUES ($1, $2, $3)", runID, step, os.Getpid())
	return err
}

func effectCount(t *testing.T, db *testdb.DB, runID uuid.UUID, step string) int {
	t.Helper()
	return countRows(t, db.Pool, "SELECT count(*) FROM effects WHERE run_id = $1 AND step = $2", runID, step)
}

// effectPIDs returns the processes that recorded step's effects for the
// run, oldest first.
func effectPIDs(t *testing.T, db *testdb.DB, runID uuid.UUID, step string) []int {
	t.Helper()
	rows, err := db.Pool.Query(ctxT(t), "SELECT pid FROM effects WHERE run_id = $1 AND step = $2 ORDER BY at", runID, step)
	require.NoError(t, err)
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	require.NoError(t, err)
	return pids
}

// crashSecondStep is step "two" of the replay and StepTx scenarios: it
// records its effect, then, in the helper process, blocks until the process
// is killed. Anywhere else it returns at once.
func crashSecondStep(ctx Context, pool *pgxpool.Pool, inHelper bool, name string) (string, error) {
	runID := ctx.Run().ID
	return Step(ctx, "two", func(ctx context.Context) (string, error) {
		if err := recordEffect(ctx, pool, runID, "two"); err != nil {
			return "", err
		}
		if inHelper {
			<-ctx.Done() // the test SIGKILLs the process while we wait here
			return "", context.Cause(ctx)
		}
		return strings.ToUpper(name), nil
	})
}

type crashIn struct {
	Name string `json:"name"`
}

type crashOut struct {
	Greeting string `json:"greeting"`
}

// crashReplayDef: step "one" then step "two" (which the crash interrupts).
// inHelper is true only in the helper process.
func crashReplayDef(pool *pgxpool.Pool, inHelper bool) *Definition[crashIn, crashOut] {
	return Define("crash_replay", func(ctx Context, in crashIn) (crashOut, error) {
		runID := ctx.Run().ID
		greeting, err := Step(ctx, "one", func(ctx context.Context) (string, error) {
			return "hello", recordEffect(ctx, pool, runID, "one")
		})
		if err != nil {
			return crashOut{}, err
		}
		name, err := crashSecondStep(ctx, pool, inHelper, in.Name)
		if err != nil {
			return crashOut{}, err
		}
		return crashOut{Greeting: greeting + " " + name}, nil
	}, nil)
}

type crashOrder struct {
	OrderID  int64  `json:"order_id"`
	Customer string `json:"customer"`
}

// crashStepTxDef: StepTx "order" inserts an order, then step "two" (which the
// crash interrupts).
func crashStepTxDef(pool *pgxpool.Pool, inHelper bool) *Definition[crashIn, crashOrder] {
	return Define("crash_steptx", func(ctx Context, in crashIn) (crashOrder, error) {
		runID := ctx.Run().ID
		orderID, err := StepTx(ctx, "order", func(ctx context.Context, tx pgx.Tx) (int64, error) {
			var id int64
			err := tx.QueryRow(ctx, "INSERT INTO orders (run_id, customer) VALUES ($1, $2) RETURNING id", runID, in.Name).Scan(&id)
			return id, err
		})
		if err != nil {
			return crashOrder{}, err
		}
		customer, err := crashSecondStep(ctx, pool, inHelper, in.Name)
		if err != nil {
			return crashOrder{}, err
		}
		return crashOrder{OrderID: orderID, Customer: customer}, nil
	}, nil)
}

// crashOpenTxDef: StepTx "order" inserts an order, records its effect on
// another connection and, in the helper process, blocks before its
// transaction commits.
func crashOpenTxDef(pool *pgxpool.Pool, inHelper bool) *Definition[crashIn, crashOrder] {
	return Define("crash_open_steptx", func(ctx Context, in crashIn) (crashOrder, error) {
		runID := ctx.Run().ID
		orderID, err := StepTx(ctx, "order", func(ctx context.Context, tx pgx.Tx) (int64, error) {
			var id int64
			if err := tx.QueryRow(ctx, "INSERT INTO orders (run_id, customer) VALUES ($1, $2) RETURNING id", runID, in.Name).Scan(&id); err != nil {
				return 0, err
			}
			if err := recordEffect(ctx, pool, runID, "order"); err != nil {
				return 0, err
			}
			if inHelper {
				<-ctx.Done() // the test SIGKILLs the process while the transaction is open
				return 0, context.Cause(ctx)
			}
			return id, nil
		})
		if err != nil {
			return crashOrder{}, err
		}
		return crashOrder{OrderID: orderID, Customer: in.Name}, nil
	}, nil)
}

// crashEndDef: steps "one" and "two", an effect recorded outside any step
// (so on every attempt), and the function returns.
func crashEndDef(pool *pgxpool.Pool) *Definition[crashIn, crashOut] {
	return Define("crash_end", func(ctx Context, in crashIn) (crashOut, error) {
		runID := ctx.Run().ID
		greeting, err := Step(ctx, "one", func(ctx context.Context) (string, error) {
			return "hello", recordEffect(ctx, pool, runID, "one")
		})
		if err != nil {
			return crashOut{}, err
		}
		name, err := Step(ctx, "two", func(ctx context.Context) (string, error) {
			return in.Name, recordEffect(ctx, pool, runID, "two")
		})
		if err != nil {
			return crashOut{}, err
		}
		if err := recordEffect(ctx, pool, runID, "end"); err != nil {
			return crashOut{}, err
		}
		return crashOut{Greeting: greeting + " " + name}, nil
	}, nil)
}

// crashSleepDef: step "before", a sleep of crashNap, step "after".
func crashSleepDef(pool *pgxpool.Pool) *Definition[struct{}, string] {
	return Define("crash_sleep", func(ctx Context, _ struct{}) (string, error) {
		runID := ctx.Run().ID
		if _, err := Step(ctx, "before", func(ctx context.Context) (int, error) {
			return 1, recordEffect(ctx, pool, runID, "before")
		}); err != nil {
			return "", err
		}
		if err := Sleep(ctx, "nap", crashNap); err != nil {
			return "", err
		}
		if _, err := Step(ctx, "after", func(ctx context.Context) (int, error) {
			return 2, recordEffect(ctx, pool, runID, "after")
		}); err != nil {
			return "", err
		}
		return "rested", nil
	}, nil)
}

// TestCrashHelperProcess is the worker process of the crash tests, which
// start the test binary again with only this test selected and SIGKILL it.
func TestCrashHelperProcess(t *testing.T) {
	t.Parallel()
	if os.Getenv(crashHelperEnv) != "1" {
		// Not started by a crash test: this is only the helper process's
		// entry point, and there is nothing to test here.
		return
	}
	runCrashHelper(t)
}

// runCrashHelper works the runs of its scenario's workflow in the test's
// schema until the parent kills the process.
func runCrashHelper(t *testing.T) {
	dbURL, schema, scenario := os.Getenv(crashDBURLEnv), os.Getenv(crashSchemaEnv), os.Getenv(crashScenarioEnv)
	require.NotEmpty(t, dbURL, crashDBURLEnv)
	require.NotEmpty(t, schema, crashSchemaEnv)

	ctx, cancel := context.WithTimeout(context.Background(), crashHelperLifetime)
	defer cancel()

	// An orphan must not outlive the test run: the parent holds our stdin
	// open, so EOF means it is gone.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		fmt.Fprintln(os.Stderr, "crash helper: parent closed stdin; exiting")
		os.Exit(3)
	}()

	pool, err := pgxpool.New(ctx, dbURL)
	require.NoError(t, err)

	var def Registrable
	switch scenario {
	case crashScenarioReplay:
		def = crashReplayDef(pool, true)
	case crashScenarioStepTx:
		def = crashStepTxDef(pool, true)
	case crashScenarioSleep:
		def = crashSleepDef(pool)
	case crashScenarioOpenTx:
		def = crashOpenTxDef(pool, true)
	case crashScenarioEnd:
		def = crashEndDef(pool)
	default:
		t.Fatalf("crash helper: unknown scenario %q in %s", scenario, crashScenarioEnv)
	}

	client, err := NewClient(pool, &Config{
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})),
		River: &river.Config{
			// No leader election, hence no maintenance services here: the
			// test's fresh client becomes leader as soon as it starts and
			// runs the job rescuer at once.
			LeaderElectionDisabled: true,
			// The attempt stays in step "two" until the process is killed.
			JobTimeout:  -1,
			Queues:      map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 10}},
			RetryPolicy: fastRetry{},
			TestOnly:    true,
		},
		Schema:    schema,
		Workflows: []Registrable{def},
	})
	require.NoError(t, err)
	if scenario == crashScenarioEnd {
		// Neither the engine's batch nor River's completer may complete
		// the run: the attempt ends, and the process dies before its
		// completion commits.
		client.testFailCompletions.Store(true)
		client.testFailPilot.Store(true)
	}
	require.NoError(t, client.Start(ctx))
	fmt.Printf("crash helper: pid %d working %s runs in schema %s\n", os.Getpid(), def.Name(), schema)

	<-ctx.Done()
	t.Fatalf("crash helper: not killed within %s", crashHelperLifetime)
}

// crashChild is the parent's handle on a helper process.
type crashChild struct {
	cmd    *exec.Cmd
	out    *testlog.Buffer
	exited chan struct{} // closed once the process has been reaped
}

// startCrashHelper starts a helper process working scenario's workflow in
// db's schema. The process is killed and reaped when the test ends, and its
// output goes to the test log if the test failed.
func startCrashHelper(t *testing.T, db *testdb.DB, scenario string) *crashChild {
	t.Helper()
	return startChild(t, "crash helper", "TestCrashHelperProcess", crashChildDeadline,
		crashHelperEnv+"=1", crashDBURLEnv+"="+db.URL, crashSchemaEnv+"="+db.Schema, crashScenarioEnv+"="+scenario)
}

// startChild starts the test binary again as a helper process running only
// test entry, with env added to the environment and its stdin held open
// (a helper exits when it closes), for at most deadline. The process is
// killed and reaped when the test ends, and its output, under name, goes
// to the test log if the test failed.
func startChild(t *testing.T, name, entry string, deadline time.Duration, env ...string) *crashChild {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	cmd := exec.CommandContext(ctx, os.Args[0],
		"-test.run=^"+entry+"$", "-test.v", "-test.count=1", "-test.timeout="+deadline.String())
	cmd.Env = append(os.Environ(), env...)
	out := &testlog.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe() // held open: the helper exits on EOF
	require.NoError(t, err)
	require.NoError(t, cmd.Start())

	c := &crashChild{cmd: cmd, out: out, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // ErrProcessDone when already killed
		select {
		case <-c.exited:
		case <-time.After(15 * time.Second):
			t.Errorf("%s pid %d not reaped after SIGKILL", name, cmd.Process.Pid)
		}
		_ = stdin.Close()
		cancel()
		if t.Failed() {
			t.Logf("%s (pid %d) output:\n%s", name, cmd.Process.Pid, out.String())
		}
	})
	return c
}

// waitFor polls cond until it holds, failing the test if the helper exits
// first or after ctxT's deadline.
func (c *crashChild) waitFor(t *testing.T, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	waitCond(t, what, c.exited, cond)
}

func (c *crashChild) pid() int { return c.cmd.Process.Pid }

// kill SIGKILLs the helper and waits until it is gone.
func (c *crashChild) kill(t *testing.T) {
	t.Helper()
	select {
	case <-c.exited:
		t.Fatalf("crash helper exited by itself (%s) before the kill", c.cmd.ProcessState)
	default:
	}
	require.NoError(t, c.cmd.Process.Kill())
	select {
	case <-c.exited:
	case <-time.After(15 * time.Second):
		t.Fatalf("crash helper pid %d not reaped after SIGKILL", c.cmd.Process.Pid)
	}
	require.Equal(t, -1, c.cmd.ProcessState.ExitCode(), "the helper must die of the signal, not exit: %s", c.cmd.ProcessState)
}
