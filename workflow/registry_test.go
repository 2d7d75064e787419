package workflow

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/testdb"
	"github.com/tributary-go/tributary/internal/wfruntime"
)

// waitBeats waits until c's registry has completed n more heartbeat passes.
func waitBeats(t *testing.T, c *Client, n int) {
	t.Helper()
	ctx := ctxT(t)
	for range n {
		select {
		case <-c.registry.Beats():
		case <-ctx.Done():
			t.Fatalf("the worker registry's heartbeat did not come: %v", ctx.Err())
		}
	}
}

func TestWorkerRegistry(t *testing.T) {
	t.Parallel()

	t.Run("ListsLiveClientsAndTheTypesTheyServe", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		served := Define("served_type", func(ctx Context, in greetIn) (greetOut, error) { return greetOut{}, nil }, nil)
		elsewhere := Define("other_queue_type", func(ctx Context, in greetIn) (greetOut, error) { return greetOut{}, nil },
			&DefineOpts{Queue: "not_worked_here"})
		c := startClient(t, db, served, elsewhere)
		waitBeats(t, c, 1)
		ctx := ctxT(t)

		workers, err := c.Workers(ctx)
		require.NoError(t, err)
		require.Len(t, workers, 1)
		w := workers[0]
		require.Equal(t, c.River().ID(), w.ClientID)
		require.True(t, w.Live)
		require.Equal(t, []string{"served_type"}, w.WorkflowTypes, "a type whose queue the client does not work is not served by it")
		require.Equal(t, []string{"default"}, w.Queues)
		require.NotZero(t, w.PID)

		servedBy, err := c.typesServed(ctx, []string{"served_type", "other_queue_type", "no_such_type"})
		require.NoError(t, err)
		require.Equal(t, map[string]bool{"served_type": true, "other_queue_type": false, "no_such_type": false}, servedBy)

		// A client that stops cleanly leaves nothing behind.
		stopClient(t, c)
		workers, err = c.Workers(ctx)
		require.NoError(t, err)
		require.Empty(t, workers)
		ok, err := c.TypeServed(ctx, "served_type")
		require.NoError(t, err)
		require.False(t, ok)
	})

	t.Run("ClientWithoutTypes", func(t *testing.T) {
		t.Parallel()

		// tributary serve works the schedule machinery and no workflow type.
		db := testdb.New(t)
		c := startClient(t, db)
		workers, err := c.Workers(ctxT(t))
		require.NoError(t, err)
		require.Len(t, workers, 1)
		require.Empty(t, workers[0].WorkflowTypes)
		require.True(t, workers[0].Live)
	})

	t.Run("RequireWorkerRefusesATypeNobodyServes", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		ghost := Define("ghost_type", func(ctx Context, in greetIn) (greetOut, error) { return greetOut{}, nil }, nil)
		insertOnly, err := NewClient(db.Pool, &Config{Schema: db.Schema, Logger: testLogger(t)})
		require.NoError(t, err)
		t.Cleanup(func() { stopClient(t, insertOnly) })
		ctx := ctxT(t)

		_, err = ghost.Start(ctx, insertOnly, greetIn{Name: "x"}, &StartOpts{RequireWorker: true})
		var noWorker *NoWorkerError
		require.ErrorAs(t, err, &noWorker)
		require.Equal(t, "ghost_type", noWorker.WorkflowType)
		require.Contains(t, err.Error(), "start a client that registers it")
		require.Zero(t, countRows(t, db.Pool, "SELECT count(*) FROM workflow_runs"), "a refused start writes nothing")
		require.Zero(t, countRows(t, db.Pool, "SELECT count(*) FROM river_job"))

		// Without RequireWorker the run is accepted, as before: the worker
		// may simply not be deployed yet.
		_, err = ghost.Start(ctx, insertOnly, greetIn{Name: "x"}, nil)
		require.NoError(t, err)

		// Once a client serves the type, RequireWorker starts it.
		startClient(t, db, ghost)
		h, err := ghost.Start(ctx, insertOnly, greetIn{Name: "y"}, &StartOpts{RequireWorker: true})
		require.NoError(t, err)
		_, err = h.Result(ctx)
		require.NoError(t, err)
	})

	t.Run("LongStepOfALiveClientIsNeverRescued", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		long := newLongStep("long_step")
		release, started := long.release, long.started
		worker := startClient(t, db, long.def)
		watcher := startClient(t, db, Define("watcher_type", func(ctx Context, in greetIn) (greetOut, error) { return greetOut{}, nil }, nil))
		ctx := ctxT(t)

		h, err := long.def.Start(ctx, worker, greetIn{Name: "x"}, nil)
		require.NoError(t, err)
		select {
		case <-started:
		case <-ctx.Done():
			t.Fatal("the long step did not start")
		}
		// Several of the watcher's passes see the step running, each with
		// the worker's heartbeat fresh and its lock held.
		waitBeats(t, watcher, 4)
		close(release)
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, "done", out.Greeting)

		run, err := worker.GetRun(ctx, h.ID)
		require.NoError(t, err)
		require.Equal(t, 1, run.Attempt, "the step ran in one attempt, never rescued")
		require.Zero(t, countRows(t, db.Pool, "SELECT count(*) FROM river_job WHERE metadata ? 'river:rescue_count'"))
	})

	t.Run("CutSessionOfALiveClientIsNotDeath", func(t *testing.T) {
		t.Parallel()

		db := testdb.New(t)
		long := newLongStep("cut_step")
		release, started := long.release, long.started
		worker := startClient(t, db, long.def)
		// The watcher beats three quarters of an interval after the
		// worker: a pass then comes when the worker's last beat is 1.75
		// intervals old, the moment a client that registers again only at
		// the beat after the failing one is still gone (and was taken for
		// dead, before the fix). The one sleep here sets that phase.
		waitBeats(t, worker, 1)
		time.Sleep(3 * WorkerHeartbeatInterval / 4)
		watcher := startClient(t, db, Define("cut_watcher", func(ctx Context, in greetIn) (greetOut, error) { return greetOut{}, nil }, nil))
		ctx := ctxT(t)

		h, err := long.def.Start(ctx, worker, greetIn{Name: "x"}, nil)
		require.NoError(t, err)
		select {
		case <-started:
		case <-ctx.Done():
			t.Fatal("the long step did not start")
		}
		// The worker's registry session is cut again and again (a proxy, a
		// pooler, pg_terminate_backend): its liveness lock goes each time.
		// It registers again before any watcher pass takes it for dead.
		for kill := range 5 {
			waitBeats(t, worker, 1) // cut right after a beat
			var killed int
			require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(pg_terminate_backend(l.pid)) FROM pg_locks l
				JOIN tributary_workers w ON ((l.classid::int8 << 32) | l.objid::int8) = w.lock_key
				WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND w.client_id = $1`, worker.River().ID()).Scan(&killed))
			require.Equal(t, 1, killed, "kill %d: the worker's registry session", kill)
			// Past wfruntime's workerDeadAfter of the watcher's passes.
			waitBeats(t, watcher, 4)
		}
		close(release)
		out, err := h.Result(ctx)
		require.NoError(t, err)
		require.Equal(t, "done", out.Greeting)

		run, err := worker.GetRun(ctx, h.ID)
		require.NoError(t, err)
		require.Equal(t, 1, run.Attempt, "the step ran in one attempt, never rescued")
		require.EqualValues(t, 1, long.calls.Load(), "the step's function ran once")
		require.Zero(t, countRows(t, db.Pool, "SELECT count(*) FROM river_job WHERE metadata ? 'river:rescue_count'"))
		require.Equal(t, 2, countRows(t, db.Pool, "SELECT count(*) FROM tributary_workers"), "both clients registered")
	})
}

// longStep is a workflow whose one step runs until release is closed,
// saying on started each time its function begins.
type longStep struct {
	def     *Definition[greetIn, greetOut]
	release chan struct{}
	started chan struct{}
	calls   atomic.Int32 // how many times the step's function ran
}

func newLongStep(name string) *longStep {
	l := &longStep{release: make(chan struct{}), started: make(chan struct{}, 1)}
	l.def = Define(name, func(ctx Context, in greetIn) (greetOut, error) {
		out, err := Step(ctx, "long", func(ctx context.Context) (string, error) {
			l.calls.Add(1)
			l.started <- struct{}{}
			select {
			case <-l.release:
				return "done", nil
			case <-ctx.Done():
				return "", ctx.Err()
			}
		})
		return greetOut{Greeting: out}, err
	}, nil)
	return l
}

// TestHeartbeatIntervalIsTheRuntimes keeps WorkerHeartbeatInterval the
// interval the registry beats at: it is spelled out here so that go doc
// shows its value, not an internal name.
func TestHeartbeatIntervalIsTheRuntimes(t *testing.T) {
	t.Parallel()

	require.Equal(t, wfruntime.HeartbeatInterval, WorkerHeartbeatInterval)
	require.Equal(t, wfruntime.LiveWithin, 5*WorkerHeartbeatInterval, "Worker.Live's doc: within five heartbeat intervals")
}
