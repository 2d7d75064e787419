package workflow

// Crash tests: a worker PROCESS (the test binary re-executed as
// TestCrashHelperProcess, see crash_helper_test.go) is SIGKILLed mid-run, and
// a fresh client in the test process finishes the run. Side effects are
// counted in the database, because memory does not survive the kill.
//
// How a run killed mid-step comes back: its River job stays 'running' with
// the dead process as the last of its attempted_by. The helper registered
// in the worker registry (internal/wfruntime/registry.go) and held its
// liveness lock; the kill ends its session, so the lock is gone at once,
// and its heartbeat stops. The fresh client's first heartbeat after the
// dead one's is older than workerDeadAfter finds it dead, makes its running
// jobs available and tells the queue's producers: the run resumes within
// about two seconds of the kill, with River's default timeouts (its own
// rescuer would wait an hour).

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
)

// newCrashClient builds, without starting it, the test's working client
// with River's default timeouts: it starts the run (an unstarted River
// client can insert) and, once started after the crash, finishes it. It
// stops when the test ends.
func newCrashClient(t *testing.T, db *testdb.DB, def Registrable) *Client {
	t.Helper()
	c, err := NewClient(db.Pool, testConfig(t, db, def))
	require.NoError(t, err)
	t.Cleanup(func() { stopClient(t, c) })
	return c
}

// requireStillRunning checks that nothing touched the dead attempt's job
// while no live client was there to find the death.
func requireStillRunning(t *testing.T, db *testdb.DB, jobID int64) {
	t.Helper()
	var state string
	require.NoError(t, db.Pool.QueryRow(ctxT(t), "SELECT state FROM river_job WHERE id = $1", jobID).Scan(&state))
	require.Equal(t, "running", state, "nothing may touch the dead attempt's job before the fresh client starts")
}

// killAfterEffect kills the helper once step has recorded its side effect
// for the run: the helper is then inside (or just past) that step.
func killAfterEffect(t *testing.T, db *testdb.DB, child *crashChild, runID uuid.UUID, step string) {
	t.Helper()
	child.waitFor(t, fmt.Sprintf("step %q to run in the helper", step), func(ctx context.Context) (bool, error) {
		var n int
		err := db.Pool.QueryRow(ctx, "SELECT count(*) FROM effects WHERE run_id = $1 AND step = $2", runID, step).Scan(&n)
		return n > 0, err
	})
	child.kill(t)
}

// finishAfterRescue starts the fresh client once the helper is dead and
// waits for the run's result. It returns the result and when the client
// started.
func finishAfterRescue[Out any](t *testing.T, db *testdb.DB, c *Client, h *Handle[Out], jobID int64) (Out, time.Time) {
	t.Helper()
	requireStillRunning(t, db, jobID)
	freshStart := time.Now()
	require.NoError(t, c.Start(ctxT(t)))
	out, err := h.Result(ctxT(t))
	if err != nil {
		logRescueState(t, db, jobID)
	}
	require.NoError(t, err)
	t.Logf("fresh client finished the run in %s", time.Since(freshStart).Round(time.Millisecond))
	return out, freshStart
}

// logRescueState logs what a rescue that did not come decides on: the
// registry's rows (how old each heartbeat is, whether its session lock is
// held), the job, and the server's sessions, so that a failure says why.
func logRescueState(t *testing.T, db *testdb.DB, jobID int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	logRows := func(what, sql string, args ...any) {
		rows, err := db.Pool.Query(ctx, sql, args...)
		if err != nil {
			t.Logf("%s: %v", what, err)
			return
		}
		defer rows.Close()
		for rows.Next() {
			values, err := rows.Values()
			t.Logf("%s: %v %v", what, values, err)
		}
	}
	logRows("worker", `SELECT w.client_id, w.pid, now() - w.heartbeat_at, EXISTS (
		SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
			AND ((l.classid::int8 << 32) | l.objid::int8) = w.lock_key) FROM tributary_workers w`)
	logRows("job", `SELECT state, attempt, attempted_by, now() - attempted_at, errors FROM river_job WHERE id = $1`, jobID)
	logRows("session", `SELECT pid, state, now() - state_change, wait_event_type, wait_event, left(query, 120)
		FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()`)
}

// requireRescued checks that the worker registry's rescue (and not River's
// rescuer, or something else) brought the job back, and logs how long each
// stage took after the fresh client started.
func requireRescued(t *testing.T, db *testdb.DB, jobID int64, freshStart time.Time) {
	t.Helper()
	var (
		state                            string
		attempt                          int
		rescues                          *int
		rescueErr                        string
		rescuedAt, attemptedAt, finished time.Time
	)
	require.NoError(t, db.Pool.QueryRow(ctxT(t), `
SELECT state, attempt, (metadata->>'river:rescue_count')::int, errors[1]->>'error', (errors[1]->>'at')::timestamptz,
	attempted_at, finalized_at
FROM river_job WHERE id = $1`, jobID).Scan(&state, &attempt, &rescues, &rescueErr, &rescuedAt, &attemptedAt, &finished))
	require.Equal(t, "completed", state)
	require.Equal(t, 2, attempt)
	require.NotNil(t, rescues, "the job's metadata has no river:rescue_count")
	require.Equal(t, 1, *rescues)
	require.Contains(t, rescueErr, "died while working this job (its heartbeat stopped and its session is gone)")
	t.Logf("after the fresh client started: rescued in %s, attempt 2 started in %s, completed in %s",
		rescuedAt.Sub(freshStart).Round(time.Millisecond), attemptedAt.Sub(freshStart).Round(time.Millisecond),
		finished.Sub(freshStart).Round(time.Millisecond))
}

// requireKilledMidStepTwo checks the state the killed attempt left: the run
// is running its first attempt, step "first" is stored, "two" is not.
func requireKilledMidStepTwo(t *testing.T, c *Client, runID uuid.UUID, first string) *Run {
	t.Helper()
	run, err := c.GetRun(ctxT(t), runID)
	require.NoError(t, err)
	require.Equal(t, StatusRunning, run.Status)
	require.Equal(t, 1, run.Attempt)
	require.Len(t, run.Steps, 1, "only step %q may be stored before the crash: %+v", first, run.Steps)
	require.Equal(t, first, run.Steps[0].Name)
	require.Equal(t, StepStatusCompleted, run.Steps[0].Status)
	return run
}

// requireFinishedAfterCrash checks the run's record after the fresh client
// finished it: completed on the second attempt, each step stored once.
func requireFinishedAfterCrash(t *testing.T, c *Client, runID uuid.UUID, first string) *Run {
	t.Helper()
	run, err := c.GetRun(ctxT(t), runID)
	require.NoError(t, err)
	require.Equal(t, StatusCompleted, run.Status)
	require.Equal(t, 2, run.Attempt)
	require.Nil(t, run.Error)
	require.Len(t, run.Steps, 2)
	byName := map[string]StepRun{}
	for _, s := range run.Steps {
		require.Equal(t, StepStatusCompleted, s.Status, "step %q", s.Name)
		byName[s.Name] = s
	}
	require.Equal(t, 1, byName[first].Attempts, "step %q must be stored once", first)
	require.Equal(t, 1, byName["two"].Attempts, "the killed attempt stored nothing for step two")
	return run
}

func TestCrashReplay(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	crashSetupTables(t, db)
	def := crashReplayDef(db.Pool, false)
	client := newCrashClient(t, db, def)
	ctx := ctxT(t)

	h, err := def.Start(ctx, client, crashIn{Name: "ada"}, nil)
	require.NoError(t, err)

	child := startCrashHelper(t, db, crashScenarioReplay)
	killAfterEffect(t, db, child, h.ID, "two")

	run := requireKilledMidStepTwo(t, client, h.ID, "one")
	require.Equal(t, 1, effectCount(t, db, h.ID, "one"))
	require.Equal(t, 1, effectCount(t, db, h.ID, "two"))

	out, freshStart := finishAfterRescue(t, db, client, h, run.JobID)

	require.Equal(t, crashOut{Greeting: "hello ADA"}, out)
	require.Equal(t, 1, effectCount(t, db, h.ID, "one"), `step "one" ran before the crash and is replayed from its memo`)
	require.Equal(t, 2, effectCount(t, db, h.ID, "two"), `step "two" ran in the killed process and once more after`)
	require.Equal(t, []int{child.pid(), os.Getpid()}, effectPIDs(t, db, h.ID, "two"), `step "two" ran in the helper, then here`)
	require.Equal(t, []int{child.pid()}, effectPIDs(t, db, h.ID, "one"))
	requireFinishedAfterCrash(t, client, h.ID, "one")
	requireRescued(t, db, run.JobID, freshStart)
}

// TestCrashBeforeCompletionCommits kills a worker whose attempt has ended
// (River's completer has the job) but whose run's completion has not
// committed: the worker's River slot is free by then (see wfruntime.Completer), and
// the run must still finish, replayed from its memos.
func TestCrashBeforeCompletionCommits(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	crashSetupTables(t, db)
	def := crashEndDef(db.Pool)
	client := newCrashClient(t, db, def)
	ctx := ctxT(t)

	h, err := def.Start(ctx, client, crashIn{Name: "ada"}, nil)
	require.NoError(t, err)

	child := startCrashHelper(t, db, crashScenarioEnd)
	child.waitFor(t, "River's completer to try to complete the ended attempt", func(context.Context) (bool, error) {
		return strings.Contains(child.out.String(), crashCompletionFailed), nil
	})
	child.kill(t)

	run, err := client.GetRun(ctx, h.ID)
	require.NoError(t, err)
	require.Equal(t, StatusRunning, run.Status, "the ended attempt's completion never committed")
	require.Equal(t, 1, effectCount(t, db, h.ID, "end"))
	// Step two's memo was to commit with the completion, unless the helper
	// took longer than memoSaveDelay to end the function and it was stored
	// on its own (see Step).
	twoStored := countRows(t, db.Pool, `SELECT count(*) FROM step_runs WHERE run_id = $1 AND name = 'two'`, h.ID) == 1

	out, freshStart := finishAfterRescue(t, db, client, h, run.JobID)

	require.Equal(t, crashOut{Greeting: "hello ada"}, out)
	require.Equal(t, 1, effectCount(t, db, h.ID, "one"), `step "one" is replayed from its memo, stored before step "two" ran`)
	if twoStored {
		require.Equal(t, 1, effectCount(t, db, h.ID, "two"), `step "two" is replayed from its memo`)
	} else {
		require.Equal(t, 2, effectCount(t, db, h.ID, "two"), `step "two" runs again: its memo was lost with the completion`)
	}
	require.Equal(t, []int{child.pid(), os.Getpid()}, effectPIDs(t, db, h.ID, "end"), "the function ended in the helper, then here")
	run, err = client.GetRun(ctx, h.ID)
	require.NoError(t, err)
	require.Equal(t, StatusCompleted, run.Status)
	require.Equal(t, 2, run.Attempt)
	requireRescued(t, db, run.JobID, freshStart)
}

func TestCrashStepTxExactlyOnce(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	crashSetupTables(t, db)
	def := crashStepTxDef(db.Pool, false)
	client := newCrashClient(t, db, def)
	ctx := ctxT(t)

	h, err := def.Start(ctx, client, crashIn{Name: "grace"}, nil)
	require.NoError(t, err)

	child := startCrashHelper(t, db, crashScenarioStepTx)
	killAfterEffect(t, db, child, h.ID, "two")

	run := requireKilledMidStepTwo(t, client, h.ID, "order")
	require.Equal(t, 1, countRows(t, db.Pool, "SELECT count(*) FROM orders WHERE run_id = $1", h.ID))

	out, freshStart := finishAfterRescue(t, db, client, h, run.JobID)

	var orderID int64
	require.Equal(t, 1, countRows(t, db.Pool, "SELECT count(*) FROM orders WHERE run_id = $1", h.ID), "the StepTx write happens exactly once")
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT id FROM orders WHERE run_id = $1", h.ID).Scan(&orderID))
	require.Equal(t, crashOrder{OrderID: orderID, Customer: "GRACE"}, out, "the output carries the order written before the crash")
	require.Equal(t, []int{child.pid(), os.Getpid()}, effectPIDs(t, db, h.ID, "two"), `step "two" ran in the helper, then here`)
	requireFinishedAfterCrash(t, client, h.ID, "order")
	requireRescued(t, db, run.JobID, freshStart)
}

// TestCrashInsideStepTx kills the process inside a StepTx, before its
// transaction commits: Postgres rolls the write back with the dead
// connection, and the replay writes it once.
func TestCrashInsideStepTx(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	crashSetupTables(t, db)
	def := crashOpenTxDef(db.Pool, false)
	client := newCrashClient(t, db, def)
	ctx := ctxT(t)

	h, err := def.Start(ctx, client, crashIn{Name: "hopper"}, nil)
	require.NoError(t, err)

	child := startCrashHelper(t, db, crashScenarioOpenTx)
	killAfterEffect(t, db, child, h.ID, "order")

	run, err := client.GetRun(ctx, h.ID)
	require.NoError(t, err)
	require.Equal(t, StatusRunning, run.Status)
	require.Empty(t, run.Steps, "the StepTx's memo must not be stored: its transaction never committed")
	require.Equal(t, 0, countRows(t, db.Pool, "SELECT count(*) FROM orders WHERE run_id = $1", h.ID), "the uncommitted order is not visible")

	out, freshStart := finishAfterRescue(t, db, client, h, run.JobID)

	var orderID int64
	require.Equal(t, 1, countRows(t, db.Pool, "SELECT count(*) FROM orders WHERE run_id = $1", h.ID), "the StepTx write happens exactly once")
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT id FROM orders WHERE run_id = $1", h.ID).Scan(&orderID))
	require.Equal(t, crashOrder{OrderID: orderID, Customer: "hopper"}, out)
	require.Equal(t, []int{child.pid(), os.Getpid()}, effectPIDs(t, db, h.ID, "order"), "the StepTx function ran in the helper, then here")

	run, err = client.GetRun(ctx, h.ID)
	require.NoError(t, err)
	require.Equal(t, StatusCompleted, run.Status)
	require.Equal(t, 2, run.Attempt)
	require.Len(t, run.Steps, 1)
	require.Equal(t, StepStatusCompleted, run.Steps[0].Status)
	require.Equal(t, 1, run.Steps[0].Attempts)
	requireRescued(t, db, run.JobID, freshStart)
}

func TestCrashWhileSleeping(t *testing.T) {
	t.Parallel()

	db := testdb.New(t)
	crashSetupTables(t, db)
	def := crashSleepDef(db.Pool)
	// No short rescue settings: a parked run's job is not running, so
	// nothing needs rescuing.
	client := newCrashClient(t, db, def)
	ctx := ctxT(t)

	h, err := def.Start(ctx, client, struct{}{}, nil)
	require.NoError(t, err)

	child := startCrashHelper(t, db, crashScenarioSleep)
	child.waitFor(t, "the run to park in its sleep", func(ctx context.Context) (bool, error) {
		run, err := h.Get(ctx)
		if err != nil {
			return false, err
		}
		return run.Status == StatusSleeping, nil
	})
	child.kill(t)

	run, err := client.GetRun(ctx, h.ID)
	require.NoError(t, err)
	require.Equal(t, StatusSleeping, run.Status, "the helper must be killed while the run sleeps")
	require.Len(t, run.Steps, 2)
	nap := run.Steps[1]
	require.Equal(t, "nap", nap.Name)
	require.Equal(t, StepStatusSleeping, nap.Status)
	require.NotNil(t, nap.WakeAt)
	wakeAt := *nap.WakeAt
	var (
		jobState    string
		scheduledAt time.Time
	)
	require.NoError(t, db.Pool.QueryRow(ctx, "SELECT state, scheduled_at FROM river_job WHERE id = $1", run.JobID).Scan(&jobState, &scheduledAt))
	require.Contains(t, []string{"available", "scheduled"}, jobState, "a parked run's job is not running")
	require.WithinDuration(t, wakeAt, scheduledAt, time.Millisecond, "the job is due at the wake time")
	require.Equal(t, 1, effectCount(t, db, h.ID, "before"))
	require.Equal(t, 0, effectCount(t, db, h.ID, "after"))

	freshStart := time.Now()
	require.NoError(t, client.Start(ctx))
	out, err := h.Result(ctxT(t))
	require.NoError(t, err)
	t.Logf("fresh client finished the run in %s (%s after the wake time)",
		time.Since(freshStart).Round(time.Millisecond), time.Since(wakeAt).Round(time.Millisecond))
	require.Equal(t, "rested", out)

	require.Equal(t, 1, effectCount(t, db, h.ID, "before"), `step "before" ran once, in the killed process`)
	require.Equal(t, []int{child.pid()}, effectPIDs(t, db, h.ID, "before"))
	require.Equal(t, []int{os.Getpid()}, effectPIDs(t, db, h.ID, "after"))
	run, err = client.GetRun(ctx, h.ID)
	require.NoError(t, err)
	require.Equal(t, StatusCompleted, run.Status)
	require.Equal(t, 1, run.Attempt, "sleeping uses up no attempt, even across a crash")
	require.Len(t, run.Steps, 3)
	byName := map[string]StepRun{}
	for _, s := range run.Steps {
		require.Equal(t, StepStatusCompleted, s.Status, "step %q", s.Name)
		byName[s.Name] = s
	}
	require.Equal(t, 1, byName["before"].Attempts)
	require.NotNil(t, byName["nap"].WakeAt)
	require.True(t, byName["nap"].WakeAt.Equal(wakeAt), "the wake time is fixed when the sleep is first reached")
	require.False(t, byName["after"].StartedAt.Before(wakeAt), "step after ran at %s, before the wake time %s", byName["after"].StartedAt, wakeAt)
	require.NotNil(t, run.FinishedAt)
	require.False(t, run.FinishedAt.Before(wakeAt))
}
