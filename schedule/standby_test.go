package schedule

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/pgcluster"
	"github.com/tributary-go/tributary/migrations"
	"github.com/tributary-go/tributary/workflow"
)

// failoverFlow is the load of TestFailoverToAStandby: three steps around a
// short sleep.
var failoverFlow = workflow.Define("failover_flow", func(ctx workflow.Context, n int) (int, error) {
	a, err := workflow.Step(ctx, "one", func(context.Context) (int, error) { return n, nil })
	if err != nil {
		return 0, err
	}
	if err := workflow.Sleep(ctx, "nap", 200*time.Millisecond); err != nil {
		return 0, err
	}
	b, err := workflow.Step(ctx, "two", func(context.Context) (int, error) { return a + 1, nil })
	if err != nil {
		return 0, err
	}
	return workflow.Step(ctx, "three", func(context.Context) (int, error) { return b * 2, nil })
}, nil)

// TestFailoverToAStandby fails a primary over to its streaming standby, as
// managed Postgres and Patroni do, under load: two working clients, each a
// process of its own (TestWorkerHelperProcess) on a pool whose connection
// string names both hosts with target_session_attrs=read-write, run a
// stream of three-step workflows and an every-second schedule, which the
// application, an insert-only client in the test's process on such a pool
// too, starts and awaits; the primary is stopped hard (pg_ctl stop -m
// immediate) and the standby promoted. Replication is synchronous
// (synchronous_standby_names), so a commit the primary acknowledged is on
// the standby. Every component of each worker process reconnects by
// itself (recoveryChecks: its registry row and liveness lock, River's
// producer and notifier, Tributary's listener, and River's leader
// election); every run whose start was acknowledged completes on the new
// primary, once, with its steps' output, those whose Result had returned
// before the crash with that same output; the schedule fires again within
// 10 s of the promotion; no slot has two runs.
func TestFailoverToAStandby(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a primary and a standby cluster and fails over under load; skipped under -short")
	}
	t.Parallel()

	ctx := ctxT(t, 3*time.Minute)
	primary, standby := startPrimaryAndStandby(ctx, t, true)
	workers, app, s := startFailoverProcesses(ctx, t, primary, standby)
	load := startFailoverLoad(ctx, app)

	time.Sleep(4 * time.Second) // load before the crash: a timed phase of the test
	crashedAt := time.Now()
	require.NoError(t, primary.Crash(ctx))
	require.NoError(t, standby.Promote(ctx))
	promotedAt := time.Now()
	t.Logf("primary crashed, standby promoted in %s", promotedAt.Sub(crashedAt).Round(time.Millisecond))

	after, err := pgxpool.New(ctx, standby.URL)
	require.NoError(t, err)
	t.Cleanup(after.Close)
	checks := append(newBackendWatch(after, workers).recoveryChecks(promotedAt), slotAfter(after, s.ID, promotedAt))
	recovered := waitRecovered(t, "every worker process to reconnect and a slot to run on the new primary", promotedAt, checks)
	time.Sleep(3 * time.Second) // more load on the new primary
	load.finish()

	load.mu.Lock()
	defer load.mu.Unlock()
	ackedBeforeCrash := 0
	for _, a := range load.acks {
		require.NoError(t, a.err, "run %d (%s)", a.n, a.id)
		require.Equal(t, (a.n+1)*2, a.out, "run %d", a.n)
		if a.at.Before(crashedAt) {
			ackedBeforeCrash++
		}
	}
	require.Len(t, load.acks, len(load.started), "every acknowledged start has its Result")
	// On the new primary: each acknowledged run once, completed, with
	// its output.
	for id, n := range load.started {
		var status string
		var out []byte
		require.NoError(t, after.QueryRow(ctx, "SELECT status, output FROM workflow_runs WHERE id = $1", id).Scan(&status, &out), "run %d", n)
		require.Equal(t, "completed", status, "run %d", n)
		require.JSONEq(t, fmt.Sprint((n+1)*2), string(out), "run %d", n)
	}
	slots := requireSlotsOnce(t, after, s.ID)
	requireNoneTakenForDead(t, workers)
	t.Logf("recovered after the promotion: %s", formatRecovery(checks, recovered))
	t.Logf("%d runs acknowledged (%d of them before the crash), %d starts refused during the failover; the schedule fired again %s after the promotion; %d slots",
		len(load.started), ackedBeforeCrash, load.refused, recovered[slotCheck].Round(10*time.Millisecond), slots)
	require.Less(t, recovered[slotCheck], 10*time.Second, "slots resume within 10 s of the promotion")
}

// TestFailoverToALaggingStandby fails over to an asynchronous standby that
// fell behind: its replication is cut for the last two seconds before the
// primary crashes, and it is promoted without them. The working clients
// are processes of their own, the application an insert-only client in
// the test's process, as in TestFailoverToAStandby. What the primary
// acknowledged in those seconds is gone: the runs started then do not
// exist on the new primary, and the completions written then are lost,
// leaving their runs unfinished and their River jobs running under live
// clients. Each client notices that the server changed (its heartbeat
// reads pg_postmaster_start_time) and makes its own running jobs that it
// no longer works available again: every run the new primary holds
// completes, replaying from its memos, with its steps' output, and no job
// stays running. Every component of each worker process reconnects
// (recoveryChecks). The test measures what was lost.
func TestFailoverToALaggingStandby(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a primary and a standby cluster and fails over under load; skipped under -short")
	}
	t.Parallel()

	ctx := ctxT(t, 3*time.Minute)
	primary, standby := startPrimaryAndStandby(ctx, t, false)
	workers, app, s := startFailoverProcesses(ctx, t, primary, standby)
	load := startFailoverLoad(ctx, app)

	time.Sleep(3 * time.Second) // load before the lag: a timed phase of the test
	standbyConn, err := pgxpool.New(ctx, standby.URL)
	require.NoError(t, err)
	t.Cleanup(standbyConn.Close)
	_, err = standbyConn.Exec(ctx, "ALTER SYSTEM SET primary_conninfo = ''")
	require.NoError(t, err)
	_, err = standbyConn.Exec(ctx, "SELECT pg_reload_conf()")
	require.NoError(t, err)
	pollFor(t, "the standby to stop receiving", func(ctx context.Context) bool {
		var receiving bool
		return standbyConn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_stat_wal_receiver)").Scan(&receiving) == nil && !receiving
	})
	laggingAt := time.Now()
	time.Sleep(2 * time.Second) // what the primary acknowledges now is lost
	crashedAt := time.Now()
	require.NoError(t, primary.Crash(ctx))
	require.NoError(t, standby.Promote(ctx))
	promotedAt := time.Now()
	standbyConn.Close()

	after, err := pgxpool.New(ctx, standby.URL)
	require.NoError(t, err)
	t.Cleanup(after.Close)
	checks := append(newBackendWatch(after, workers).recoveryChecks(promotedAt), slotAfter(after, s.ID, promotedAt))
	recovered := waitRecovered(t, "every worker process to reconnect and a slot to run on the new primary", promotedAt, checks)
	time.Sleep(2 * time.Second) // more load on the new primary
	load.finish()

	// Every run the new primary holds completes, and no Tributary job
	// stays running.
	var settled time.Duration
	pollFor(t, "every run on the new primary to complete", func(ctx context.Context) bool {
		var unfinished, running int
		err := after.QueryRow(ctx, `SELECT
			(SELECT count(*) FROM workflow_runs WHERE workflow_type = $1 AND status <> 'completed'),
			(SELECT count(*) FROM river_job WHERE state = 'running' AND kind LIKE 'workflow:%')`, failoverFlow.Name()).Scan(&unfinished, &running)
		settled = time.Since(promotedAt)
		return err == nil && unfinished == 0 && running == 0
	})
	rows, err := after.Query(ctx, "SELECT input, output FROM workflow_runs WHERE workflow_type = $1", failoverFlow.Name())
	require.NoError(t, err)
	onNew := map[int]bool{}
	for rows.Next() {
		var n int
		var out []byte
		require.NoError(t, rows.Scan(&n, &out))
		require.JSONEq(t, fmt.Sprint((n+1)*2), string(out), "run %d", n)
		onNew[n] = true
	}
	require.NoError(t, rows.Err())
	var replayed int
	require.NoError(t, after.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE kind LIKE 'workflow:%' AND errors::text LIKE '%lost this attempt''s outcome%'`).Scan(&replayed))
	slots := requireSlotsOnce(t, after, s.ID)
	requireNoneTakenForDead(t, workers)

	load.mu.Lock()
	defer load.mu.Unlock()
	var beforeLag, inLag, lostStarts, lostBeforeLag int
	for _, a := range load.acks {
		if onNew[a.n] {
			require.NoError(t, a.err, "run %d (%s)", a.n, a.id)
			require.Equal(t, (a.n+1)*2, a.out, "run %d", a.n)
		} else if a.err != nil {
			t.Logf("run %d, gone with the lag: its Result said %v", a.n, a.err)
		}
		switch {
		case a.at.Before(laggingAt):
			beforeLag++
			if !onNew[a.n] {
				lostBeforeLag++
			}
		case a.at.Before(crashedAt):
			inLag++
			if !onNew[a.n] {
				lostStarts++
			}
		}
	}
	require.Zero(t, lostBeforeLag, "a run acknowledged while the standby was in step is gone")
	t.Logf("recovered after the promotion: %s", formatRecovery(checks, recovered))
	t.Logf("acknowledged before the lag: %d, all on the new primary; during the 2 s lag: %d, of which %d runs are gone (started in the lag); %d jobs whose completion was lost made available again and replayed; every run settled %s after the promotion; the schedule fired again %s after it; %d slots",
		beforeLag, inLag, lostStarts, replayed, settled.Round(10*time.Millisecond), recovered[slotCheck].Round(10*time.Millisecond), slots)
}

// startFailoverProcesses starts two worker processes, tributary-worker-1
// and tributary-worker-2, and the application, each connected with a URL
// that names both the primary and the standby with
// target_session_attrs=read-write.
func startFailoverProcesses(ctx context.Context, t *testing.T, primary, standby *pgcluster.Cluster) ([]*workerProcess, *workflow.Client, *Schedule) {
	t.Helper()
	both := fmt.Sprintf("postgres://postgres@127.0.0.1:%s,127.0.0.1:%s/postgres?sslmode=disable&target_session_attrs=read-write",
		primary.Port(), standby.Port())
	workers := startWorkerProcesses(t, both, "", "tributary-worker-1", "tributary-worker-2")
	app, s := startFailoverApp(ctx, t, both, "")
	return workers, app, s
}

// failoverLoad starts a run of failoverFlow every 20 ms, and awaits each
// one's Result.
type failoverLoad struct {
	mu      sync.Mutex
	started map[uuid.UUID]int // acknowledged starts: the run's input
	acks    []failoverAck
	refused int // starts that failed (no primary answered)
	wg      sync.WaitGroup
	stop    chan struct{}
}

type failoverAck struct {
	id  uuid.UUID
	n   int
	out int
	at  time.Time // when Result returned
	err error
}

// startFailoverLoad starts the load on client app, which may work nothing:
// the worker processes work the runs.
func startFailoverLoad(ctx context.Context, app *workflow.Client) *failoverLoad {
	l := &failoverLoad{started: map[uuid.UUID]int{}, stop: make(chan struct{})}
	l.wg.Go(func() {
		for n := 0; ; n++ {
			select {
			case <-l.stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			h, err := failoverFlow.Start(ctx, app, n, nil)
			l.mu.Lock()
			if err != nil {
				l.refused++
				l.mu.Unlock()
				continue
			}
			l.started[h.ID] = n
			l.mu.Unlock()
			l.wg.Go(func() {
				// A run whose start the failover lost never finishes: its
				// Result gives up with the load.
				waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				out, err := h.Result(waitCtx)
				l.mu.Lock()
				l.acks = append(l.acks, failoverAck{id: h.ID, n: n, out: out, at: time.Now(), err: err})
				l.mu.Unlock()
			})
		}
	})
	return l
}

// finish stops starting runs and waits for the Results.
func (l *failoverLoad) finish() {
	close(l.stop)
	l.wg.Wait()
}

// slotCheck names the check of slotAfter.
const slotCheck = "a slot"

// slotAfter checks that a slot of schedule id due after promotedAt has
// completed on pool.
func slotAfter(pool *pgxpool.Pool, id uuid.UUID, promotedAt time.Time) recoveryCheck {
	return recoveryCheck{slotCheck, func(ctx context.Context) bool {
		var ok bool
		err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM workflow_runs WHERE schedule_id = $1 AND status = 'completed' AND fire_at > $2)`,
			id, promotedAt).Scan(&ok)
		return err == nil && ok
	}}
}

// requireSlotsOnce fails the test when a slot of schedule id has two runs
// on pool, and returns how many slots it recorded.
func requireSlotsOnce(t *testing.T, pool *pgxpool.Pool, id uuid.UUID) int {
	t.Helper()
	var slots, distinct int
	require.NoError(t, pool.QueryRow(ctxT(t, 10*time.Second), "SELECT count(*), count(DISTINCT fire_at) FROM workflow_runs WHERE schedule_id = $1", id).Scan(&slots, &distinct))
	require.Equal(t, slots, distinct, "a slot has two runs")
	return slots
}

// startPrimaryAndStandby starts a primary cluster, migrated, and its
// streaming standby, synchronous when sync; both stop when the test ends.
// It skips the test when there are no Postgres binaries.
func startPrimaryAndStandby(ctx context.Context, t *testing.T, sync bool) (*pgcluster.Cluster, *pgcluster.Cluster) {
	t.Helper()
	primary, err := pgcluster.Start(ctx, nil)
	if errors.Is(err, pgcluster.ErrNoPostgres) {
		t.Skipf("no Postgres binaries to start a primary and a standby: %v", err)
	}
	require.NoError(t, err)
	t.Cleanup(func() { _ = primary.Stop(context.Background()) })
	setup, err := pgxpool.New(ctx, primary.URL)
	require.NoError(t, err)
	defer setup.Close()
	migrator, err := migrations.New(setup, nil)
	require.NoError(t, err)
	_, err = migrator.Up(ctx)
	require.NoError(t, err)
	standby, err := primary.StartStandby(ctx, "standby")
	require.NoError(t, err)
	t.Cleanup(func() { _ = standby.Stop(context.Background()) })
	want := "async"
	if sync {
		want = "sync"
		_, err = setup.Exec(ctx, "ALTER SYSTEM SET synchronous_standby_names = 'standby'")
		require.NoError(t, err)
		_, err = setup.Exec(ctx, "SELECT pg_reload_conf()")
		require.NoError(t, err)
	}
	pollFor(t, "the standby to stream ("+want+")", func(ctx context.Context) bool {
		var state string
		return setup.QueryRow(ctx, "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'standby'").Scan(&state) == nil && state == want
	})
	return primary, standby
}
