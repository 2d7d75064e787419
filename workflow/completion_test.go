package workflow

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/engine"
	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/internal/testlog"
	"github.com/tributary-go/tributary/internal/wfruntime"
)

// TestAsyncCompletion runs a parent and its children with completions
// committed asynchronously (both paths: one statement, and a transaction
// that also wakes a parent), and checks that the completion statement turns
// synchronous_commit off for its own transaction only when asked.
func TestAsyncCompletion(t *testing.T) {
	t.Parallel()

	parent := Define("async_parent", func(ctx Context, n int) (int, error) {
		return RunChild(ctx, "child", childDouble, n, nil)
	}, nil)
	db := testdb.New(t)
	config := testConfig(t, db, parent, childDouble)
	config.AsyncCompletion = true
	c, err := NewClient(db.Pool, config)
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() { stopClient(t, c) })
	ctx := ctxT(t)

	h, err := parent.Start(ctx, c, 21, nil)
	require.NoError(t, err)
	out, err := h.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, 42, out)

	for _, async := range []bool{false, true} {
		err := pgx.BeginFunc(ctx, db.Pool, func(tx pgx.Tx) error {
			// A batch of one job that is not running: nothing completes.
			_, err := c.db.CompleteRuns(ctx, tx, &engine.CompleteRunsParams{
				JobIDs: []int64{-1}, RunIDs: [][16]byte{uuid.New()}, Outputs: []string{"null"}, Attempts: []int32{1},
				StartedAts: []*time.Time{nil}, Async: async,
			})
			if err != nil {
				return err
			}
			var mode string
			if err := tx.QueryRow(ctx, "SELECT current_setting('synchronous_commit')").Scan(&mode); err != nil {
				return err
			}
			want := map[bool]string{false: "on", true: "off"}[async]
			require.Equal(t, want, mode, "async=%t", async)
			return nil
		})
		require.NoError(t, err)
	}
}

// TestCompletionByRiverCompleter fails every completion batch of the
// engine: the runs must then complete with their jobs through River's own
// completer (the pilot), children waking their parent on the way. It fails
// if River stops routing its completions through the pilot: River would
// complete the jobs without their runs, and Result would never return.
func TestCompletionByRiverCompleter(t *testing.T) {
	t.Parallel()

	c := completeParents(t, "pilot_parent", 5, func(c *Client) { c.testFailCompletions.Store(true) })
	waitCond(t, "the pilot to forget the completions it committed", nil, func(context.Context) (bool, error) {
		return c.pending.Len() == 0, nil
	})
}

// TestCompletionWaitedFor runs with no room for pending completions: every
// worker then waits for its own run's completion to commit, as it does when
// more than maxPendingCompletions are pending.
func TestCompletionWaitedFor(t *testing.T) {
	t.Parallel()

	c := completeParents(t, "waited_parent", 2, func(c *Client) { c.pending.Limit = 0 })
	require.Zero(t, c.pending.Len())
}

// completeParents starts a client working a parent workflow (named name)
// that runs childDouble as its child, after tweak has adjusted the client;
// it then runs n parents, checks their results, and checks that every run
// and its River job completed.
func completeParents(t *testing.T, name string, n int, tweak func(*Client)) *Client {
	t.Helper()
	parent := Define(name, func(ctx Context, n int) (int, error) {
		return RunChild(ctx, "child", childDouble, n, nil)
	}, nil)
	db := testdb.New(t)
	c, err := NewClient(db.Pool, testConfig(t, db, parent, childDouble))
	require.NoError(t, err)
	tweak(c)
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() { stopClient(t, c) })
	ctx := ctxT(t)

	handles := make([]*Handle[int], n)
	for i := range handles {
		handles[i], err = parent.Start(ctx, c, i, nil)
		require.NoError(t, err)
	}
	for i, h := range handles {
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, 2*i, out)
	}
	require.Equal(t, 2*n, countRows(t, db.Pool, `SELECT count(*) FROM workflow_runs WHERE status = 'completed'`))
	require.Zero(t, countRows(t, db.Pool, `SELECT count(*) FROM workflow_runs r JOIN river_job j ON j.id = r.job_id WHERE j.state <> 'completed'`))
	// Each child's last step stored its memo with the child's completion.
	require.Equal(t, n, countRows(t, db.Pool, `SELECT count(*) FROM step_runs WHERE name = 'double' AND status = 'completed' AND output IS NOT NULL`))
	return c
}

// TestAsyncCompletionRestoredAfterLoss plays, without a real crash (see
// TestPostgresCrashKeepsCompletedRuns for one), what a crash of Postgres
// does to a completion committed asynchronously and not yet flushed: the
// run and its job read running again. The run stays pending in the client
// until River's completer has made its completion durable, so River's
// completer, retrying after the crash, completes it again with the output
// Result returned.
func TestAsyncCompletionRestoredAfterLoss(t *testing.T) {
	t.Parallel()

	def := pgCrashDef()
	db := testdb.New(t)
	config := testConfig(t, db, def)
	config.AsyncCompletion = true
	restored := &atomic.Int64{}
	config.Logger = slog.New(&countingHandler{Handler: config.Logger.Handler(), msg: wfruntime.RestoredCompletionsMsg, n: restored})
	c, err := NewClient(db.Pool, config)
	require.NoError(t, err)
	c.testFailPilot.Store(true) // River's completer cannot finish the job while the test plays the crash
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() { stopClient(t, c) })
	ctx := ctxT(t)

	h, err := def.Start(ctx, c, 1, nil)
	require.NoError(t, err)
	out, err := h.Result(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, c.pending.Len(), "the run stays pending until its completion is durable")

	// The crash takes the completion back.
	run := completedAgain(t, c, db, h, StatusPending)
	var again pgCrashOut
	require.NoError(t, json.Unmarshal(run.Output, &again))
	require.Equal(t, out, again, "completed again with the output Result returned, not replayed")
	require.Equal(t, 1, run.Attempt)
	require.Equal(t, "completed", jobState(t, db, run.JobID))
	// River's completer logs what it restored once its transaction has
	// committed, a moment after the run reads completed.
	waitCond(t, "River's completer to log the completion it restored", nil, func(context.Context) (bool, error) {
		return restored.Load() == 1, nil
	})
	require.Zero(t, c.pending.Len())
}

// completedAgain plays the loss of run h's completion (the run back to
// status, its job back to running), lets River's completer through, and
// waits for the run to complete again.
func completedAgain(t *testing.T, c *Client, db *testdb.DB, h *Handle[pgCrashOut], status Status) *Run {
	t.Helper()
	ctx := ctxT(t)
	run, err := h.Get(ctx)
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, `UPDATE workflow_runs SET status = $2, output = NULL, finished_at = NULL WHERE id = $1`, h.ID, string(status))
	require.NoError(t, err)
	_, err = db.Pool.Exec(ctx, `UPDATE river_job SET state = 'running', finalized_at = NULL WHERE id = $1`, run.JobID)
	require.NoError(t, err)
	c.testFailPilot.Store(false)
	return waitStatus(t, c, h, StatusCompleted)
}

func jobState(t *testing.T, db *testdb.DB, jobID int64) string {
	t.Helper()
	var state string
	require.NoError(t, db.Pool.QueryRow(ctxT(t), "SELECT state::text FROM river_job WHERE id = $1", jobID).Scan(&state))
	return state
}

// TestSyncCompletionLostToFailover plays what a failover to a standby that
// had not received the engine's last commits does to a synchronous
// completion: the run and its job read running again on the new primary,
// while the client has forgotten the completion, and River's completer,
// answered from memory (Completer.TakeCompleted), never writes the job
// again. The client must notice the new server and make the job available
// again, so that the run replays from its memos, instead of leaving it
// running until River's stuck-job rescuer, an hour later. The loss is
// played by rewriting the rows; the new server is real: a throw-away
// cluster, restarted.
func TestSyncCompletionLostToFailover(t *testing.T) {
	t.Parallel()

	cluster := startCrashCluster(t)
	pool := crashDatabase(t, cluster, "lost_to_failover")
	def := pgCrashDef()
	logs := &testlog.Buffer{}
	c, err := NewClient(pool, &Config{
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
		River: &river.Config{
			Queues:      map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 5}},
			RetryPolicy: fastRetry{},
			TestOnly:    true,
		},
		Workflows: []Registrable{def},
	})
	require.NoError(t, err)
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() {
		stopClient(t, c)
		if t.Failed() {
			t.Logf("client logs:\n%s", logs.String())
		}
	})
	ctx := ctxT(t)
	events, cancel := c.River().Subscribe(river.EventKindJobCompleted)
	defer cancel()

	h, err := def.Start(ctx, c, 1, nil)
	require.NoError(t, err)
	out, err := h.Result(ctx)
	require.NoError(t, err)
	run, err := h.Get(ctx)
	require.NoError(t, err)
	// River's completer has had the job once its completed event is out
	// (other jobs', the maintenance jobs', may come first).
	for reported := false; !reported; {
		select {
		case ev := <-events:
			reported = ev.Job.ID == run.JobID
		case <-ctx.Done():
			t.Fatal("River's completer did not report the job completed within 30 s")
		}
	}
	require.Zero(t, c.pending.Len(), "a synchronous completion is forgotten once committed")

	// The failover takes the completion back, and the client finds itself
	// on a new server.
	_, err = pool.Exec(ctx, `UPDATE workflow_runs SET status = 'running', output = NULL, finished_at = NULL WHERE id = $1`, h.ID)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `UPDATE river_job SET state = 'running', finalized_at = NULL WHERE id = $1`, run.JobID)
	require.NoError(t, err)
	require.NoError(t, cluster.Crash(ctx))
	require.NoError(t, cluster.Restart(ctx))

	// The registry notices the new server within a heartbeat and rescues
	// the job orphanSettle (2 s) later; the client's listeners reconnect
	// meanwhile, so the test polls.
	var again *Run
	pgCrashQuery(t, "wait for the run to replay and complete", func(ctx context.Context) error {
		var err error
		if again, err = c.GetRun(ctx, h.ID); err != nil {
			return err
		}
		if again.Status != StatusCompleted {
			return fmt.Errorf("run %s is %s", h.ID, again.Status)
		}
		return nil
	})
	var replayed pgCrashOut
	require.NoError(t, json.Unmarshal(again.Output, &replayed))
	require.Equal(t, out, replayed, "replayed from its memos")
	require.Equal(t, 2, again.Attempt, "a second attempt replayed the run")
	require.Contains(t, logs.String(), "lost the outcome of jobs this client worked before the server changed")
	require.NotContains(t, logs.String(), wfruntime.LostCompletionsMsg, "River's completer wrote the job again")
}
