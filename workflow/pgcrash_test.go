package workflow

// Tests of what a crash of Postgres itself (not of a worker process, see
// crash_test.go) keeps. They start a throw-away cluster (internal/pgcluster),
// work runs on it, crash the server (pg_ctl stop -m immediate: the WAL the
// server had not written out is lost, as in a crash) right after Result
// returned every run's output, restart it, let the client recover, and
// check what the runs read.

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/tributary-go/tributary/internal/pgcluster"
	"github.com/tributary-go/tributary/internal/testlog"
	"github.com/tributary-go/tributary/migrations"

	"github.com/tributary-go/tributary/internal/wfruntime"
)

const (
	// pgCrashRounds is how many times each test crashes its server: the
	// completions a crash loses are those the WAL writer had not written
	// out yet, a few per crash, so one crash may lose none.
	pgCrashRounds = 3

	// pgCrashRuns is how many runs each round starts at once.
	pgCrashRuns = 50
)

type pgCrashOut struct {
	Sum int `json:"sum"`
	// Token is new each time step "three" runs: a run whose last step ran
	// again after the crash would read another output.
	Token string `json:"token"`
}

// pgCrashDef is a three-step workflow.
func pgCrashDef() *Definition[int, pgCrashOut] {
	return Define("pg_crash", func(ctx Context, n int) (pgCrashOut, error) {
		a, err := Step(ctx, "one", func(context.Context) (int, error) { return n + 1, nil })
		if err != nil {
			return pgCrashOut{}, err
		}
		b, err := Step(ctx, "two", func(context.Context) (int, error) { return 2 * a, nil })
		if err != nil {
			return pgCrashOut{}, err
		}
		token, err := Step(ctx, "three", func(context.Context) (string, error) { return uuid.NewString(), nil })
		if err != nil {
			return pgCrashOut{}, err
		}
		return pgCrashOut{Sum: b, Token: token}, nil
	}, nil)
}

// TestPostgresCrashKeepsCompletedRuns crashes Postgres right after Result
// returned the output of every run of a batch, with completions committed
// asynchronously (AsyncCompletion) and synchronously. Every run that Result
// reported completed must read completed with the same output once the
// client has recovered, and none may be failed, by River or by RepairRuns.
// With AsyncCompletion a crash loses the last completions; the client must
// complete those runs again, with the completion it had committed. Without
// it, and for completions their workers wait for, a crash loses none.
func TestPostgresCrashKeepsCompletedRuns(t *testing.T) {
	t.Parallel()

	cluster := startCrashCluster(t)
	// The cases share the cluster, which each of them crashes: they run one
	// after the other, each in a database of its own.
	for _, tc := range []pgCrashCase{
		{name: "AsyncCompletion", async: true},
		{name: "SyncCompletion"},
		// Past maxPendingCompletions, a worker waits for its own completion,
		// and no one else holds it: it must be durable.
		{name: "AsyncCompletionWorkersWait", async: true, workersWait: true},
		// Once River's completer has forgotten a run, its completion must be
		// durable, even though the WAL writer has not flushed it.
		{name: "AsyncCompletionAfterRiversCompleter", async: true, afterPilot: true},
	} {
		t.Run(tc.name, func(t *testing.T) { testPostgresCrash(t, cluster, tc) })
	}
}

type pgCrashCase struct {
	name        string
	async       bool // Config.AsyncCompletion
	workersWait bool // no room for pending completions: every worker waits for its own
	// afterPilot crashes once River's completer has forgotten every run,
	// with a WAL writer that flushes every 10 s only.
	afterPilot bool
}

func testPostgresCrash(t *testing.T, cluster *pgcluster.Cluster, tc pgCrashCase) {
	pool := crashDatabase(t, cluster, strings.ToLower(tc.name))
	if tc.afterPilot {
		_, err := pool.Exec(ctxT(t), "ALTER SYSTEM SET wal_writer_delay = '10s'")
		require.NoError(t, err)
		_, err = pool.Exec(ctxT(t), "SELECT pg_reload_conf()")
		require.NoError(t, err)
		t.Cleanup(func() {
			_, err := pool.Exec(context.Background(), "ALTER SYSTEM RESET wal_writer_delay")
			require.NoError(t, err)
			_, err = pool.Exec(context.Background(), "SELECT pg_reload_conf()")
			require.NoError(t, err)
		})
	}
	def := pgCrashDef()
	logs := &testlog.Buffer{}
	restored := &atomic.Int64{}
	c, err := NewClient(pool, &Config{
		AsyncCompletion: tc.async,
		Logger:          slog.New(&countingHandler{Handler: slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}), msg: wfruntime.RestoredCompletionsMsg, n: restored}),
		River: &river.Config{
			Queues:      map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 20}},
			RetryPolicy: fastRetry{},
			TestOnly:    true,
		},
		Workflows: []Registrable{def},
	})
	require.NoError(t, err)
	if tc.workersWait {
		c.pending.Limit = 0
	}
	require.NoError(t, c.Start(context.Background()))
	t.Cleanup(func() {
		stopClient(t, c)
		if t.Failed() {
			t.Logf("client logs:\n%s", logs.String())
		}
	})
	want := map[uuid.UUID]pgCrashOut{}
	var lostTotal, restoredTotal, badTotal int
	for round := 1; round <= pgCrashRounds; round++ {
		ctx := ctxT(t)
		ids := make([]uuid.UUID, pgCrashRuns)
		handles := make([]*Handle[pgCrashOut], pgCrashRuns)
		for i := range handles {
			handles[i], err = def.Start(ctx, c, i, nil)
			require.NoError(t, err)
			ids[i] = handles[i].ID
		}
		for i, h := range handles {
			out, err := h.Result(ctx)
			require.NoError(t, err)
			require.Equal(t, 2*(i+1), out.Sum)
			want[h.ID] = out
		}

		if tc.afterPilot {
			waitCond(t, "River's completer to forget every run", nil, func(context.Context) (bool, error) {
				return c.pending.Len() == 0, nil
			})
		}
		restoredBefore := restored.Load()
		crashedAt := time.Now()
		require.NoError(t, cluster.Crash(ctx))
		require.NoError(t, cluster.Restart(ctx))
		restartedAt := time.Now()

		// What the crash kept, read before the client could complete
		// anything again (River's completer waits a second after a failed
		// batch; it may come first all the same, and this undercounts).
		lost := pgCrashNotCompleted(t, pool, ids)

		// The client recovers: River's completer completes the jobs it
		// held when the server went down.
		settled := pgCrashSettle(t, pool, ids)
		bad := pgCrashCheck(t, pool, want, ids)
		t.Logf("round %d: %d of %d completions lost in the crash (read at restart); %d completed again by the client; settled %s after the restart (down %s); %d runs not completed with their output",
			round, lost, pgCrashRuns, restored.Load()-restoredBefore, settled.Sub(restartedAt).Round(time.Millisecond),
			restartedAt.Sub(crashedAt).Round(time.Millisecond), len(bad))
		for _, b := range bad {
			t.Log("  " + b)
		}
		lostTotal += lost
		restoredTotal += int(restored.Load() - restoredBefore)
		badTotal += len(bad)
	}
	t.Logf("%d rounds of %d runs: %d completions lost in the crashes, %d completed again by the client, %d runs not completed with their output",
		pgCrashRounds, pgCrashRuns, lostTotal, restoredTotal, badTotal)
	require.Zero(t, badTotal, "every run that Result reported completed must read completed with the same output")
	if !tc.async || tc.workersWait || tc.afterPilot {
		require.Zero(t, lostTotal, "a crash lost completions that no one held any more")
		require.Zero(t, restored.Load())
	}

	// RepairRuns, once its grace period has passed, finds nothing to
	// repair: no run has a job that ended without it.
	var broken int
	pgCrashQuery(t, "look for runs to repair", func(ctx context.Context) error {
		found, err := c.db.BrokenRuns(ctx, pool, 0, nil)
		broken = len(found)
		return err
	})
	require.Zero(t, broken, "runs whose River job ended without them, which RepairRuns would fail")
	ids := make([]uuid.UUID, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	require.Empty(t, pgCrashCheck(t, pool, want, ids))
}

// startCrashCluster starts a throw-away cluster, stopped when the test ends.
// It runs with fsync off, which spares the disk (and the whole data
// directory's fsync before each crash recovery) and changes nothing that
// the tests look at: Crash loses what the server had not yet written to
// the operating system, and the server writes its WAL at the same moments
// with fsync on or off.
func startCrashCluster(t *testing.T) *pgcluster.Cluster {
	t.Helper()
	cluster, err := pgcluster.Start(ctxT(t), &pgcluster.Config{ExtraArgs: []string{"-c", "fsync=off"}})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, cluster.Stop(context.Background())) })
	return cluster
}

// crashDatabase creates database name on cluster with River's and
// Tributary's tables, and returns a pool on it, closed when the test ends.
func crashDatabase(t *testing.T, cluster *pgcluster.Cluster, name string) *pgxpool.Pool {
	t.Helper()
	ctx := ctxT(t)
	conn, err := pgx.Connect(ctx, cluster.URL)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	require.NoError(t, err)
	require.NoError(t, conn.Close(ctx))

	config, err := pgxpool.ParseConfig(cluster.URL)
	require.NoError(t, err)
	config.ConnConfig.Database = name
	pool, err := pgxpool.NewWithConfig(ctx, config)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	migrator, err := migrations.New(pool, nil)
	require.NoError(t, err)
	_, err = migrator.Up(ctx)
	require.NoError(t, err)
	return pool
}

// pgCrashQuery runs fn until it succeeds: after a restart, a pool hands out
// connections to the old server, which fail once each. (No event says the
// pool's connections are all new.)
func pgCrashQuery(t *testing.T, what string, fn func(ctx context.Context) error) {
	t.Helper()
	var last error
	if err := poll(ctxT(t), nil, func(ctx context.Context) (bool, error) {
		last = fn(ctx)
		return last == nil, nil
	}); err != nil {
		t.Fatalf("%s: %v", what, last)
	}
}

// pgCrashNotCompleted counts the runs of ids that do not read completed.
func pgCrashNotCompleted(t *testing.T, pool *pgxpool.Pool, ids []uuid.UUID) int {
	t.Helper()
	var n int
	pgCrashQuery(t, "count the runs not completed", func(ctx context.Context) error {
		return pool.QueryRow(ctx, `SELECT count(*) FROM workflow_runs WHERE id = ANY($1) AND status <> 'completed'`, ids).Scan(&n)
	})
	return n
}

// pgCrashSettle waits until no job of the runs of ids is running: River's
// completer has finished what it held when the server went down. It gives
// up after 20 s (a job left running waits for River's rescuer, minutes
// later) and returns when it stopped waiting. It polls: River's completer
// retries through the outage without an event for the test.
func pgCrashSettle(t *testing.T, pool *pgxpool.Pool, ids []uuid.UUID) time.Time {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctxT(t), 20*time.Second)
	defer cancel()
	_ = poll(ctx, nil, func(context.Context) (bool, error) { // past the deadline it gives up, as said
		var running int
		pgCrashQuery(t, "count the running jobs", func(ctx context.Context) error {
			return pool.QueryRow(ctx, `SELECT count(*) FROM workflow_runs r JOIN river_job j ON j.id = r.job_id
				WHERE r.id = ANY($1) AND j.state = 'running'`, ids).Scan(&running)
		})
		return running == 0, nil
	})
	return time.Now()
}

// pgCrashCheck describes each run of ids that does not read completed with
// the output in want, or whose job is not completed.
func pgCrashCheck(t *testing.T, pool *pgxpool.Pool, want map[uuid.UUID]pgCrashOut, ids []uuid.UUID) []string {
	t.Helper()
	type row struct {
		id       uuid.UUID
		status   string
		output   []byte
		runErr   []byte
		jobState *string
	}
	var rows []row
	pgCrashQuery(t, "read the runs", func(ctx context.Context) error {
		rows = rows[:0]
		res, err := pool.Query(ctx, `SELECT r.id, r.status, r.output, r.error, j.state::text
			FROM workflow_runs r LEFT JOIN river_job j ON j.id = r.job_id WHERE r.id = ANY($1) ORDER BY r.id`, ids)
		if err != nil {
			return err
		}
		defer res.Close()
		for res.Next() {
			var r row
			if err := res.Scan(&r.id, &r.status, &r.output, &r.runErr, &r.jobState); err != nil {
				return err
			}
			rows = append(rows, r)
		}
		return res.Err()
	})
	require.Len(t, rows, len(ids))
	var bad []string
	for _, r := range rows {
		var out pgCrashOut
		if r.output != nil {
			require.NoError(t, json.Unmarshal(r.output, &out))
		}
		jobState := "deleted"
		if r.jobState != nil {
			jobState = *r.jobState
		}
		if r.status != string(StatusCompleted) || out != want[r.id] || jobState != "completed" {
			bad = append(bad, fmt.Sprintf("run %s: %s (job %s), output %s, error %s; Result returned %+v", r.id, r.status, jobState, r.output, r.runErr, want[r.id]))
		}
	}
	return bad
}

// countingHandler passes records on to Handler and adds up the attribute
// "runs" of those whose message is msg.
type countingHandler struct {
	slog.Handler
	msg string
	n   *atomic.Int64
}

func (h *countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == h.msg {
		r.Attrs(func(a slog.Attr) bool {
			if a.Key == "runs" {
				h.n.Add(a.Value.Int64())
			}
			return true
		})
	}
	return h.Handler.Handle(ctx, r)
}

func (h *countingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &countingHandler{Handler: h.Handler.WithAttrs(attrs), msg: h.msg, n: h.n}
}

func (h *countingHandler) WithGroup(name string) slog.Handler {
	return &countingHandler{Handler: h.Handler.WithGroup(name), msg: h.msg, n: h.n}
}
